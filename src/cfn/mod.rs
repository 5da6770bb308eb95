//! The CloudFormation template model: values and intrinsic functions, the
//! template itself, its emitters and its reader. Nothing here knows about
//! EKS.

pub mod expr;
pub mod json;
pub mod patch;
pub mod read;
pub mod sub;
pub mod template;
pub mod yaml;

pub use expr::{Expr, Pseudo};
pub use template::{Output, Parameter, Resource, Template};

/// How a template is written out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// YAML with short-form intrinsics (`!Ref`, `!Sub`).
    #[default]
    Yaml,
    /// JSON with long-form intrinsics.
    Json,
}

impl Format {
    pub fn emit(self, template: &Template) -> String {
        match self {
            Format::Yaml => yaml::emit(template),
            Format::Json => json::emit(template),
        }
    }

    /// The file extension of a template in this format.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Yaml => "yaml",
            Format::Json => "json",
        }
    }
}
