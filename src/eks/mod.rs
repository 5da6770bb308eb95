//! EKS knowledge: how node groups become CloudFormation resources.

pub mod userdata;
