//! AWS Backup plans: a lifecycle that moves recovery points to cold
//! storage must keep them there for at least 90 days before deleting them
//! (`E7010`), which AWS Backup enforces when it creates the plan (AWS
//! Backup Developer Guide, "Lifecycle and storage tiers").

use super::{Finding, literal_number};
use crate::cfn::{Expr, Template};

const PLAN: &str = "AWS::Backup::BackupPlan";

/// The shortest stay in cold storage, in days.
const COLD_STORAGE_DAYS: i64 = 90;

pub(super) fn check(template: &Template, findings: &mut Vec<Finding>) {
    for (id, resource) in &template.resources {
        if resource.kind != PLAN {
            continue;
        }
        let Some(Expr::Map(plan)) = resource.properties.get("BackupPlan") else {
            continue;
        };
        let Some(Expr::List(rules)) = plan.get("BackupPlanRule") else {
            continue;
        };
        let base = format!("Resources/{id}/Properties/BackupPlan/BackupPlanRule");
        for (index, rule) in rules.iter().enumerate() {
            let Expr::Map(rule) = rule else {
                continue;
            };
            let path = format!("{base}/{index}");
            check_lifecycle(
                rule.get("Lifecycle"),
                &format!("{path}/Lifecycle"),
                findings,
            );
            if let Some(Expr::List(copies)) = rule.get("CopyActions") {
                for (copy, action) in copies.iter().enumerate() {
                    if let Expr::Map(action) = action {
                        check_lifecycle(
                            action.get("Lifecycle"),
                            &format!("{path}/CopyActions/{copy}/Lifecycle"),
                            findings,
                        );
                    }
                }
            }
        }
    }
}

/// Both days written out: the deletion comes at least 90 days after the
/// move to cold storage.
fn check_lifecycle(lifecycle: Option<&Expr>, path: &str, findings: &mut Vec<Finding>) {
    let Some(Expr::Map(lifecycle)) = lifecycle else {
        return;
    };
    let (Some(cold), Some(delete)) = (
        lifecycle
            .get("MoveToColdStorageAfterDays")
            .and_then(literal_number),
        lifecycle.get("DeleteAfterDays").and_then(literal_number),
    ) else {
        return;
    };
    if delete.saturating_sub(cold) < COLD_STORAGE_DAYS {
        findings.push(
            Finding::new(
                "E7010",
                format!("{path}/DeleteAfterDays"),
                format!(
                    "`DeleteAfterDays` {delete} is less than {COLD_STORAGE_DAYS} days after `MoveToColdStorageAfterDays` {cold}"
                ),
            )
            .help(format!(
                "recovery points stay in cold storage for at least {COLD_STORAGE_DAYS} days: set `DeleteAfterDays` to {} or more, or move them later",
                cold.saturating_add(COLD_STORAGE_DAYS)
            )),
        );
    }
}
