//! Tags: a resource's `Tags` list, and each launch template tag
//! specification, may name a key once; CloudFormation refuses the resource
//! otherwise.

use super::Finding;
use crate::cfn::{Expr, Template};

pub fn check(template: &Template, findings: &mut Vec<Finding>) {
    for (id, resource) in &template.resources {
        let base = format!("Resources/{id}/Properties");
        check_list(
            resource.properties.get("Tags"),
            &format!("{base}/Tags"),
            findings,
        );
        let mut specifications = vec![(
            resource.properties.get("TagSpecifications"),
            format!("{base}/TagSpecifications"),
        )];
        if let Some(Expr::Map(data)) = resource.properties.get("LaunchTemplateData") {
            specifications.push((
                data.get("TagSpecifications"),
                format!("{base}/LaunchTemplateData/TagSpecifications"),
            ));
        }
        for (specification, path) in specifications {
            let Some(Expr::List(specification)) = specification else {
                continue;
            };
            for (i, entry) in specification.iter().enumerate() {
                if let Expr::Map(entry) = entry {
                    check_list(entry.get("Tags"), &format!("{path}/{i}/Tags"), findings);
                }
            }
        }
    }
}

/// A `[{Key, Value}]` list: every literal key after its first occurrence is
/// a finding. Keys written with an intrinsic are not known until deploy
/// time and are not compared.
fn check_list(tags: Option<&Expr>, path: &str, findings: &mut Vec<Finding>) {
    let Some(Expr::List(tags)) = tags else {
        return;
    };
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for (i, tag) in tags.iter().enumerate() {
        let Expr::Map(tag) = tag else { continue };
        let Some(Expr::String(key)) = tag.get("Key") else {
            continue;
        };
        match seen.iter().find(|(k, _)| k == key) {
            Some((_, first)) => findings.push(
                Finding::new(
                    "E6001",
                    format!("{path}/{i}/Key"),
                    format!("tag key `{key}` appears twice (first at {path}/{first})"),
                )
                .help("keep one tag per key: CloudFormation refuses duplicate tag keys"),
            ),
            None => seen.push((key, i)),
        }
    }
}
