//! Imports of other tools' configurations as blueprints: `eksynth import
//! eksctl` turns an eksctl `ClusterConfig` into a blueprint.
//!
//! An import writes a blueprint tree (`out`), then judges it with the
//! blueprint loader and the whole compile: whatever eksynth refuses is
//! traced back to the input key it came from, removed, and reported as a
//! warning at that key. The blueprint written therefore always loads,
//! synthesizes and validates.

pub mod eksctl;
pub mod out;
