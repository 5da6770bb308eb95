//! What AWS and Kubernetes define, as eksynth knows it: the kubelet's
//! configuration fields and their types, nodeadm's `NodeConfig` API, and
//! the catalogue of EKS-optimized AMIs.
//!
//! Both the blueprint (which checks what a user writes against these
//! formats) and the lowering to CloudFormation (which writes them) read
//! this module; it reads neither of them, so the blueprint never depends on
//! the lowering.

pub mod ami_catalogue;
pub mod kubelet_config;
pub mod node_config;
