//! EBS volumes whose size, IOPS or throughput their type does not allow
//! (`E6002`): the block device mappings of launch templates, instances and
//! launch configurations, and `AWS::EC2::Volume`, checked against the
//! limits in `crate::ebs` when every setting is a literal.

use indexmap::IndexMap;

use super::{Finding, literal, literal_number};
use crate::cfn::{Expr, Template};
use crate::ebs::{self, Setting, Volume};

pub fn check(template: &Template, findings: &mut Vec<Finding>) {
    for (id, resource) in &template.resources {
        let base = format!("Resources/{id}/Properties");
        match resource.kind.as_str() {
            "AWS::EC2::LaunchTemplate" => {
                let Some(Expr::Map(data)) = resource.properties.get("LaunchTemplateData") else {
                    continue;
                };
                let base = format!("{base}/LaunchTemplateData");
                check_mappings(data, &base, findings);
            }
            // The same block device mappings, on an instance or a launch
            // configuration.
            "AWS::EC2::Instance" | "AWS::AutoScaling::LaunchConfiguration" => {
                check_mappings(&resource.properties, &base, findings);
            }
            // A volume without a type is gp2.
            "AWS::EC2::Volume" => {
                check_volume(&resource.properties, Some("gp2"), "Size", &base, findings)
            }
            _ => {}
        }
    }
}

/// The EBS volumes of `BlockDeviceMappings` under `parent`.
fn check_mappings(parent: &IndexMap<String, Expr>, base: &str, findings: &mut Vec<Finding>) {
    let Some(Expr::List(mappings)) = parent.get("BlockDeviceMappings") else {
        return;
    };
    for (i, mapping) in mappings.iter().enumerate() {
        if let Expr::Map(mapping) = mapping
            && let Some(Expr::Map(ebs)) = mapping.get("Ebs")
        {
            // Without a type, the volume takes the image's: unknown here.
            let path = format!("{base}/BlockDeviceMappings/{i}/Ebs");
            check_volume(ebs, None, "VolumeSize", &path, findings);
        }
    }
}

fn check_volume(
    properties: &IndexMap<String, Expr>,
    default_type: Option<&str>,
    size_key: &str,
    path: &str,
    findings: &mut Vec<Finding>,
) {
    let keys = ["VolumeType", size_key, "Iops", "Throughput"];
    // A value chosen at deploy time cannot be compared with the others.
    if keys
        .iter()
        .any(|key| properties.get(*key).is_some_and(Expr::is_intrinsic))
    {
        return;
    }
    let Some(volume_type) = properties
        .get("VolumeType")
        .and_then(literal)
        .or(default_type.map(str::to_string))
    else {
        return;
    };
    let Some(limits) = ebs::limits(&volume_type) else {
        return; // the schema reports an unknown type
    };
    let number = |key: &str| {
        properties
            .get(key)
            .and_then(literal_number)
            .and_then(|n| u64::try_from(n).ok())
    };
    // IOPS or throughput on a type that takes none are left to the schema
    // and cfn-lint; they are not compared with the size here.
    let volume = Volume {
        volume_type: &volume_type,
        size: number(size_key),
        iops: number("Iops").filter(|_| limits.iops.is_some()),
        throughput: number("Throughput").filter(|_| limits.throughput.is_some()),
    };
    for (setting, problem) in ebs::problems(&volume) {
        let key = match setting {
            Setting::Size => size_key,
            Setting::Iops => "Iops",
            Setting::Throughput => "Throughput",
        };
        // A default that breaks a rule is reported where the type is.
        let at = if properties.contains_key(key) {
            key
        } else {
            "VolumeType"
        };
        findings.push(
            Finding::new("E6002", format!("{path}/{at}"), problem).help(
                "EC2 limits each volume type's size, IOPS per GiB and throughput per IOPS; see the Amazon EBS volume types documentation",
            ),
        );
    }
}
