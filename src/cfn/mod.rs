//! The CloudFormation template model: values and intrinsic functions, the
//! template itself, its emitters and its reader. Nothing here knows about
//! EKS.

pub mod expr;
pub mod json;
pub mod read;
pub mod sub;
pub mod template;
pub mod yaml;

pub use expr::{Expr, Pseudo};
pub use template::{Output, Parameter, Resource, Template};
