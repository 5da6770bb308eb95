//! The JSON Schema of the blueprint format, for editors
//! (yaml-language-server), and the field reference, for readers. Both are
//! written from the field tables the loader decodes with (one `Field` per
//! field, beside its section's decoder), so neither can name a field the
//! loader does not know, miss one it does, or give it another type or
//! set of values.

use serde_json::{Map, Value, json};

use super::field::{Field, Kind, Need};
use super::hatches::{BOTTLEROCKET_FIELDS, USER_DATA_PART_FIELDS};
use super::load::*;

/// An object of the format: its definition's name, its table, and what
/// the reference says it is.
struct Object {
    name: &'static str,
    fields: &'static [Field],
    intro: &'static str,
}

/// The objects of the format, the top level first.
const OBJECTS: &[Object] = &[
    Object {
        name: "blueprint",
        fields: TOP_FIELDS,
        intro: "The top level of a blueprint file.",
    },
    Object {
        name: "suppression",
        fields: SUPPRESSION_FIELDS,
        intro: "An item of `suppressions`: a validation finding accepted, with the reason.",
    },
    Object {
        name: "override",
        fields: super::overrides::OVERRIDE_FIELDS,
        intro: "An item of `overrides`: a change to a generated resource, applied last.",
    },
    Object {
        name: "cluster",
        fields: CLUSTER_FIELDS,
        intro: "`cluster`: the cluster the nodes join. Each value is a literal, `{parameter: Name}` or `{import: ExportName}` unless said otherwise.",
    },
    Object {
        name: "awsAuthProvider",
        fields: PROVIDER_FIELDS,
        intro: "`cluster.awsAuthProvider`: the custom resource that writes the aws-auth ConfigMap.",
    },
    Object {
        name: "nodeGroup",
        fields: GROUP_FIELDS,
        intro: "An item of `nodeGroups` (self-managed) or `managedNodeGroups` (managed). Every field but the names of one group may also be written in `defaults`.",
    },
    Object {
        name: "ami",
        fields: AMI_FIELDS,
        intro: "`ami` written as a mapping: a custom image from an SSM parameter or a template parameter.",
    },
    Object {
        name: "taint",
        fields: TAINT_FIELDS,
        intro: "An item of a group's `taints`.",
    },
    Object {
        name: "efsMount",
        fields: EFS_FIELDS,
        intro: "An item of a group's `efsMounts`.",
    },
    Object {
        name: "userDataPart",
        fields: USER_DATA_PART_FIELDS,
        intro: "An item of a group's `userDataParts`.",
    },
    Object {
        name: "bottlerocket",
        fields: BOTTLEROCKET_FIELDS,
        intro: "A group's `bottlerocket` section.",
    },
    Object {
        name: "kubelet",
        fields: KUBELET_FIELDS,
        intro: "A group's `kubelet` section: the fields below are checked by eksynth itself; any other `KubeletConfiguration` (`kubelet.config.k8s.io/v1beta1`) field is taken too, with the kubelet's own type.",
    },
    Object {
        name: "rootVolume",
        fields: VOLUME_FIELDS,
        intro: "A group's `rootVolume` (on Bottlerocket: its data volume).",
    },
    Object {
        name: "volume",
        fields: DATA_VOLUME_FIELDS,
        intro: "An item of a group's `volumes`.",
    },
    Object {
        name: "imds",
        fields: IMDS_FIELDS,
        intro: "A group's `imds` section: the instance metadata service.",
    },
    Object {
        name: "cpuOptions",
        fields: CPU_OPTIONS_FIELDS,
        intro: "A group's `cpuOptions`.",
    },
    Object {
        name: "ssh",
        fields: SSH_FIELDS,
        intro: "A group's `ssh` section.",
    },
    Object {
        name: "iam",
        fields: IAM_FIELDS,
        intro: "A group's `iam` section.",
    },
    Object {
        name: "clusterAutoscaler",
        fields: CLUSTER_AUTOSCALER_FIELDS,
        intro: "A group's `clusterAutoscaler` written as a mapping.",
    },
    Object {
        name: "blueprintIam",
        fields: TOP_IAM_FIELDS,
        intro: "The blueprint-wide `iam` section.",
    },
    Object {
        name: "policyStatement",
        fields: STATEMENT_FIELDS,
        intro: "An item of `iam.policyStatements`, as IAM writes it.",
    },
    Object {
        name: "updatePolicy",
        fields: UPDATE_FIELDS,
        intro: "A self-managed group's `updatePolicy`: the rolling update.",
    },
    Object {
        name: "instancesDistribution",
        fields: DISTRIBUTION_FIELDS,
        intro: "A self-managed group's `instancesDistribution`.",
    },
    Object {
        name: "lifecycle",
        fields: LIFECYCLE_FIELDS,
        intro: "A group's `lifecycle`: a managed group takes only `warmPool`.",
    },
    Object {
        name: "warmPool",
        fields: WARM_POOL_FIELDS,
        intro: "`lifecycle.warmPool`: instances prepared ahead of a scale-out.",
    },
    Object {
        name: "instanceMaintenancePolicy",
        fields: MAINTENANCE_FIELDS,
        intro: "`lifecycle.instanceMaintenancePolicy` of a self-managed group.",
    },
    Object {
        name: "lifecycleHook",
        fields: HOOK_FIELDS,
        intro: "An item of `lifecycle.hooks` of a self-managed group.",
    },
    Object {
        name: "updateConfig",
        fields: UPDATE_CONFIG_FIELDS,
        intro: "A managed group's `updateConfig`.",
    },
    Object {
        name: "nodeRepair",
        fields: NODE_REPAIR_FIELDS,
        intro: "A managed group's `nodeRepair`.",
    },
    Object {
        name: "repairOverride",
        fields: REPAIR_OVERRIDE_FIELDS,
        intro: "An item of `nodeRepair.overrides`.",
    },
    Object {
        name: "weightedInstanceType",
        fields: INSTANCE_TYPE_FIELDS,
        intro: "An item of `instanceTypes` written as a mapping (self-managed).",
    },
    Object {
        name: "instanceRequirements",
        fields: REQUIREMENTS_FIELDS,
        intro: "A self-managed group's `instanceRequirements`.",
    },
    Object {
        name: "range",
        fields: RANGE_FIELDS,
        intro: "A range of `instanceRequirements` (`vCpuCount`, `memoryMiB`).",
    },
    Object {
        name: "capacityReservation",
        fields: CAPACITY_RESERVATION_FIELDS,
        intro: "`capacityReservation` written as a mapping.",
    },
    Object {
        name: "efa",
        fields: EFA_FIELDS,
        intro: "`efa` written as a mapping: EFA on, with the interfaces of the secondary network cards chosen. AWS recommends EFA with ENA on card 0 at device index 0 and, on each further card, device index 1 with EFA or EFA-only interfaces (Amazon EC2 User Guide, \"Maximize network bandwidth on Amazon EC2 instances with multiple network cards\").",
    },
    Object {
        name: "securityGroupRule",
        fields: SECURITY_GROUP_RULE_FIELDS,
        intro: "An item of a group's `securityGroupRules`: one inbound rule of the group's own security group.",
    },
    Object {
        name: "launchTemplate",
        fields: LAUNCH_TEMPLATE_FIELDS,
        intro: "A managed group's `launchTemplate`: a launch template made elsewhere, which the node group uses instead of eksynth's own. The group then takes only the fields EKS reads from the node group (`AWS::EKS::Nodegroup`): sizes, instance types, subnets, labels, taints, tags, IAM, capacity type, update and repair settings, the AMI type and release version; any field eksynth would write into its own launch template is an error at its line, and so is a custom `ami`. A note (`I5031`) says that eksynth cannot check that template's IMDS settings or volume encryption. `tags` then tag the node group only: its instances carry what the launch template gives them. Changing the ID or version updates the node group in place, which rolls its nodes.",
    },
    Object {
        name: "placement",
        fields: PLACEMENT_FIELDS,
        intro: "A group's `placement`: the tenancy of its instances and the partition of its placement group, after the rules of the Amazon EC2 User Guide (placement strategies; Dedicated Instances of burstable types, T3 only). Changing either changes the launch template, which rolls the nodes.",
    },
];

/// An object's schema: closed, with the properties of its table (less the
/// names of one group, for `defaults`) and its required fields.
fn object_schema(fields: &[Field], only_in_defaults: bool) -> Value {
    let properties: Map<String, Value> = fields
        .iter()
        .filter(|field| !only_in_defaults || field.in_defaults)
        .map(|field| (field.name.to_string(), field.schema()))
        .collect();
    let mut schema =
        json!({"type": "object", "additionalProperties": false, "properties": properties});
    let required: Vec<&str> = fields
        .iter()
        .filter(|field| field.need == Need::Required)
        .map(|field| field.name)
        .collect();
    if let (Value::Object(map), false) = (&mut schema, required.is_empty()) {
        map.insert("required".into(), json!(required));
    }
    schema
}

/// Every `KubeletConfiguration` field the loader takes besides the typed
/// ones, with the kubelet's own types (and their nested definitions), so
/// that editors complete them.
fn add_kubelet_fields(definitions: &mut Map<String, Value>) {
    let upstream = crate::upstream::kubelet_config::schema();
    if let Some(Value::Object(nested)) = upstream.get("definitions") {
        for (name, schema) in nested {
            definitions
                .entry(name.clone())
                .or_insert_with(|| schema.clone());
        }
    }
    let Some(Value::Object(properties)) = definitions
        .get_mut("kubelet")
        .and_then(|k| k.get_mut("properties"))
    else {
        return;
    };
    for name in crate::upstream::kubelet_config::names() {
        let generated = KUBELET_GENERATED.iter().any(|(g, _)| g == name);
        if generated || properties.contains_key(*name) {
            continue;
        }
        if let Some(field) = crate::upstream::kubelet_config::field(name) {
            properties.insert(name.to_string(), field.schema.clone());
        }
    }
}

/// The blueprint format as a JSON Schema (draft 7).
pub fn json_schema() -> Value {
    let mut definitions = Map::new();
    for object in OBJECTS.iter().filter(|o| o.name != "blueprint") {
        definitions.insert(object.name.to_string(), object_schema(object.fields, false));
    }
    add_kubelet_fields(&mut definitions);
    definitions.insert("defaults".into(), object_schema(GROUP_FIELDS, true));
    let source_fields = object_schema(SOURCE_FIELDS, false)["properties"].clone();
    definitions.insert(
        "source".into(),
        json!({"oneOf": [
            {"type": ["string", "number"]},
            {"type": "object", "additionalProperties": false, "properties": source_fields, "minProperties": 1}
        ]}),
    );
    let mut root = object_schema(TOP_FIELDS, false);
    if let Value::Object(root) = &mut root {
        let required = root.shift_remove("required");
        root.insert(
            "$schema".into(),
            json!("http://json-schema.org/draft-07/schema#"),
        );
        root.insert("title".into(), json!("eksynth blueprint"));
        if let Some(required) = required {
            root.insert("required".into(), required);
        }
        // No `cluster` is required: a base blueprint or a preset that
        // others extend may leave it to them, and an editor cannot tell a
        // base from a blueprint that is synthesized. The loader says where
        // a blueprint that is synthesized lacks it.
        root.insert("definitions".into(), Value::Object(definitions));
    }
    root
}

/// The field reference in Markdown: one table per object, in the order of
/// `OBJECTS`.
pub fn reference() -> String {
    let mut out = String::from(
        "# Blueprint field reference\n\n\
         <!-- Written by `eksynth::blueprint::schema::reference` from the field tables in src/blueprint/; \
         regenerate with `INSTA_UPDATE=always cargo test --test docs`. -->\n\n\
         Every object of the blueprint format and its fields, from the declarations the loader \
         decodes with and the JSON Schema (`eksynth schema`) is written from. A field written \
         that is not listed here is an error, with the closest field suggested.\n",
    );
    for object in OBJECTS {
        out.push_str(&format!("\n## `{}`\n\n{}\n\n", object.name, object.intro));
        out.push_str(&table(object.fields));
        if object.name == "nodeGroup" {
            out.push_str(
                "\n## `defaults`\n\nThe fields of [`nodeGroup`](#nodegroup) that are not \
                 marked \"not in `defaults`\", shared by every group: scalars and lists are \
                 replaced by a group's own, maps merge key by key, sections field by field.\n",
            );
        }
    }
    out.push_str(
        "\n## `source`\n\nA value that comes from the stack rather than the blueprint: \
         `{parameter: Name}` (with an optional `default`) or `{import: ExportName}`.\n\n",
    );
    out.push_str(&table(SOURCE_FIELDS));
    out
}

/// One object's fields as a Markdown table; the `where` column only for an
/// object some of whose fields apply to one kind of group.
fn table(fields: &[Field]) -> String {
    let scoped = fields
        .iter()
        .any(|field| field.kind != Kind::Any || !field.in_defaults);
    let mut out = String::from("| field | type | required | default |");
    out.push_str(if scoped {
        " where | meaning |\n"
    } else {
        " meaning |\n"
    });
    out.push_str(if scoped {
        "| --- | --- | --- | --- | --- | --- |\n"
    } else {
        "| --- | --- | --- | --- | --- |\n"
    });
    for field in fields {
        let required = match field.need {
            Need::Optional => "",
            Need::Required => "yes",
            Need::When(when) => when,
        };
        let meaning = if field.long.is_empty() {
            field.doc
        } else {
            field.long
        };
        let mut cells = vec![
            format!("`{}`", field.name),
            field.ty.reads(),
            required.to_string(),
            field.default.to_string(),
        ];
        if scoped {
            let kind = match field.kind {
                Kind::Any => "",
                Kind::Managed => "managed",
                Kind::SelfManaged => "self-managed",
            };
            let place = match (kind, field.in_defaults) {
                (kind, true) => kind.to_string(),
                ("", false) => "not in `defaults`".to_string(),
                (kind, false) => format!("{kind}; not in `defaults`"),
            };
            cells.push(place);
        }
        cells.push(meaning.to_string());
        let cells: Vec<String> = cells.iter().map(|cell| cell.replace('|', "\\|")).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::field::Ty;

    /// Every `$ref` a field makes names an object of the format.
    #[test]
    fn every_object_a_field_names_is_defined() {
        fn names(ty: &Ty, out: &mut Vec<&'static str>) {
            match ty {
                Ty::Object(name) => out.push(name),
                Ty::List { item, .. } | Ty::OneOrMany(item) => names(item, out),
                Ty::Either(choices) => choices.iter().for_each(|choice| names(choice, out)),
                _ => {}
            }
        }
        let mut missing = Vec::new();
        for object in OBJECTS {
            for field in object.fields {
                let mut named = Vec::new();
                names(&field.ty, &mut named);
                for name in named {
                    if name != "defaults" && !OBJECTS.iter().any(|o| o.name == name) {
                        missing.push(format!("{}.{} names {name}", object.name, field.name));
                    }
                }
            }
        }
        assert!(missing.is_empty(), "objects not defined: {missing:?}");
    }
}
