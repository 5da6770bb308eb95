//! Checks against vendored catalogs of what AWS offers (from cfn-lint's
//! data, `schemas/data/`): Lambda runtimes past their deprecation or
//! blocked by date, and EC2 instance types that do not exist.
//!
//! The runtime check compares with today's date, or with the date in the
//! `EKSYNTH_TODAY` environment variable (`YYYY-MM-DD`), so that a run can
//! be reproduced and tests do not change with the calendar.

use std::collections::BTreeMap;
use std::sync::LazyLock;
use std::time::{SystemTime, UNIX_EPOCH};

use super::Finding;
use crate::cfn::{Expr, Template};

const LIFECYCLE: &str = include_str!("../../schemas/data/lambda-runtime-lifecycle.json");
const INSTANCE_TYPES: &str = include_str!("../../schemas/data/ec2-instance-types.txt");

/// The environment variable that sets "today" for the runtime check.
pub const TODAY_VARIABLE: &str = "EKSYNTH_TODAY";

/// One runtime's dates (`YYYY-MM-DD`; none when not announced).
#[derive(serde::Deserialize)]
struct Lifecycle {
    deprecated: Option<String>,
    #[serde(rename = "create-block")]
    create_block: Option<String>,
    #[serde(rename = "update-block")]
    update_block: Option<String>,
    successor: Option<String>,
}

static RUNTIMES: LazyLock<BTreeMap<String, Lifecycle>> =
    LazyLock::new(|| serde_json::from_str(LIFECYCLE).unwrap_or_default());

/// The instance types, sorted (as the vendored file is).
static TYPES: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let mut types: Vec<&str> = INSTANCE_TYPES
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    types.sort_unstable();
    types
});

fn is_instance_type(name: &str) -> bool {
    TYPES.binary_search(&name).is_ok()
}

pub(super) fn check(template: &Template, findings: &mut Vec<Finding>) {
    let today = today();
    for (id, resource) in &template.resources {
        let at = |path: &str| format!("Resources/{id}/Properties/{path}");
        // A SAM function's `Runtime` becomes its Lambda function's.
        if matches!(
            resource.kind.as_str(),
            "AWS::Lambda::Function" | "AWS::Serverless::Function"
        ) && let Some(Expr::String(runtime)) = resource.properties.get("Runtime")
            && let Some(finding) = runtime_finding(runtime, &today, at("Runtime"))
            // A runtime the schema does not list is reported once, by it.
            && !findings
                .iter()
                .any(|known| known.id == "E1001" && known.path == finding.path)
        {
            findings.push(finding);
        }
        for (path, value) in instance_types(&resource.kind, &resource.properties) {
            if let Expr::String(name) = value
                && !is_instance_type(name)
            {
                findings.push(
                    Finding::new(
                        "E7006",
                        at(&path),
                        format!("\"{name}\" is not an EC2 instance type"),
                    )
                    .help(match crate::suggest::closest(name, &TYPES) {
                        Some(near) => format!("did you mean \"{near}\"?"),
                        None => "see `aws ec2 describe-instance-types`".to_string(),
                    }),
                );
            }
        }
    }
}

/// The finding for a runtime on `today` (`YYYY-MM-DD`), if any: an error
/// once functions with it can no longer be created or updated, a warning
/// from its deprecation until then.
pub(super) fn runtime_finding(runtime: &str, today: &str, path: String) -> Option<Finding> {
    let lifecycle = RUNTIMES.get(runtime)?;
    let reached = |date: &Option<String>| date.as_deref().is_some_and(|date| date <= today);
    let successor = match &lifecycle.successor {
        Some(successor) => format!("move to `{successor}`"),
        None => "move to a supported runtime".to_string(),
    };
    let date = |date: &Option<String>| date.clone().unwrap_or_default();
    if reached(&lifecycle.update_block) {
        return Some(
            Finding::new(
                "E7007",
                path,
                format!(
                    "the runtime \"{runtime}\" is blocked: since {} functions with it can be neither created nor updated",
                    date(&lifecycle.update_block)
                ),
            )
            .help(successor),
        );
    }
    if reached(&lifecycle.create_block) {
        return Some(
            Finding::new(
                "E7007",
                path,
                format!(
                    "the runtime \"{runtime}\" is blocked: since {} functions with it cannot be created (updates end on {})",
                    date(&lifecycle.create_block),
                    date(&lifecycle.update_block)
                ),
            )
            .help(successor),
        );
    }
    if reached(&lifecycle.deprecated) {
        return Some(
            Finding::new(
                "W7008",
                path,
                format!(
                    "the runtime \"{runtime}\" is deprecated since {}",
                    date(&lifecycle.deprecated)
                ),
            )
            .help(format!(
                "{successor}: creating functions with it is blocked from {}",
                date(&lifecycle.create_block)
            )),
        );
    }
    None
}

/// Where a resource names instance types, and the values there (paths
/// below `Properties`).
fn instance_types<'a>(
    kind: &str,
    properties: &'a indexmap::IndexMap<String, Expr>,
) -> Vec<(String, &'a Expr)> {
    let mut out = Vec::new();
    match kind {
        "AWS::EC2::Instance" | "AWS::AutoScaling::LaunchConfiguration" => {
            if let Some(value) = properties.get("InstanceType") {
                out.push(("InstanceType".to_string(), value));
            }
        }
        "AWS::EC2::LaunchTemplate" => {
            if let Some(Expr::Map(data)) = properties.get("LaunchTemplateData")
                && let Some(value) = data.get("InstanceType")
            {
                out.push(("LaunchTemplateData/InstanceType".to_string(), value));
            }
        }
        "AWS::EKS::Nodegroup" => {
            if let Some(Expr::List(items)) = properties.get("InstanceTypes") {
                for (index, value) in items.iter().enumerate() {
                    out.push((format!("InstanceTypes/{index}"), value));
                }
            }
        }
        "AWS::AutoScaling::AutoScalingGroup" => {
            let overrides = match properties.get("MixedInstancesPolicy") {
                Some(Expr::Map(policy)) => match policy.get("LaunchTemplate") {
                    Some(Expr::Map(template)) => template.get("Overrides"),
                    _ => None,
                },
                _ => None,
            };
            if let Some(Expr::List(items)) = overrides {
                for (index, item) in items.iter().enumerate() {
                    if let Expr::Map(item) = item
                        && let Some(value) = item.get("InstanceType")
                    {
                        out.push((
                            format!(
                                "MixedInstancesPolicy/LaunchTemplate/Overrides/{index}/InstanceType"
                            ),
                            value,
                        ));
                    }
                }
            }
        }
        _ => {}
    }
    out
}

/// Today as `YYYY-MM-DD`: `EKSYNTH_TODAY` when set, else the system clock
/// (UTC).
pub(super) fn today() -> String {
    if let Ok(date) = std::env::var(TODAY_VARIABLE) {
        return date;
    }
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or(0);
    civil_date(seconds / 86_400)
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`).
fn civil_date(days: u64) -> String {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_date_of_known_days() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(19_782), "2024-02-29");
        assert_eq!(civil_date(20_088), "2024-12-31");
    }

    #[test]
    fn a_runtime_is_deprecated_then_blocked_for_creation_then_for_updates() {
        // nodejs18.x: deprecated 2025-09-01, creation blocked 2027-02-01,
        // updates blocked 2027-03-03 (cfn-lint 1.58.0's table).
        let id = |today: &str| {
            runtime_finding("nodejs18.x", today, String::new()).map(|finding| finding.id)
        };
        assert_eq!(id("2025-08-31"), None);
        assert_eq!(id("2025-09-01"), Some("W7008"));
        assert_eq!(id("2027-01-31"), Some("W7008"));
        assert_eq!(id("2027-02-01"), Some("E7007"));
        assert_eq!(id("2027-03-03"), Some("E7007"));
    }

    #[test]
    fn a_runtime_without_announced_blocking_dates_stays_a_warning() {
        // dotnet9: deprecated 2026-11-10, no block dates.
        let finding = runtime_finding("dotnet9", "2999-01-01", String::new());
        assert_eq!(finding.map(|finding| finding.id), Some("W7008"));
        assert!(runtime_finding("dotnet9", "2026-11-09", String::new()).is_none());
        assert!(runtime_finding("no-such-runtime", "2999-01-01", String::new()).is_none());
    }

    #[test]
    fn the_catalog_knows_common_instance_types() {
        for name in ["m5.large", "t3.micro", "c7g.xlarge", "g5.2xlarge"] {
            assert!(is_instance_type(name), "{name}");
        }
        assert!(!is_instance_type("m5.huge"));
    }
}
