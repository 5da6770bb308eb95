//! eksynth compiles a blueprint of Amazon EKS worker node groups into a
//! deployable AWS CloudFormation template.
//!
//! The stages: [`syntax`] (YAML with spans) → [`blueprint`] (typed, checked
//! model) → [`eks`] (lowering to CloudFormation resources) → [`cfn`]
//! (template model and emitters) and [`validate`] (offline checks against
//! the provider schemas and beyond).
//!
//! Below [`blueprint`] and [`eks`] lies [`upstream`], the formats and
//! catalogues AWS and Kubernetes define, which both read.

pub mod blueprint;
pub mod cfn;
pub mod check;
pub mod cidr;
pub mod compile;
pub mod diagnostic;
pub mod diff;
pub mod ebs;
pub mod eks;
pub mod escape;
pub mod findings_reference;
pub mod import;
pub mod init;
pub mod output;
pub mod parallel;
pub mod policy;
pub mod report;
pub mod source;
pub mod suggest;
pub mod syntax;
pub mod upstream;
pub mod validate;
