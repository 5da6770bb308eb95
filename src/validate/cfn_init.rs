//! A resource's `Metadata/AWS::CloudFormation::Init`, what `cfn-init`
//! reads on the instance, against cfn-lint's schema of it
//! (`schemas/other/cfn_init.json`, cfn-lint's rule E3009) and the keys
//! cfn-init documents: the package managers (`yum`, `apt`, `rpm`...) and
//! service managers (`systemd`, `sysvinit`, `windows`) it has, what a file,
//! command, user, group or service entry takes, a file's `mode` of six
//! digits. (The schema leaves a config's own keys open.) CloudFormation
//! deploys such a stack, and cfn-init then does not do what was meant,
//! which is why it is worth an error here.
//!
//! The schema is compiled like an extension schema (`schema::Fragment`:
//! intrinsics pass wherever a value goes), once, on first use. Each value
//! that breaks it is a finding of its own (`E9012`).

use std::sync::LazyLock;

use serde_json::Value;

use super::Finding;
use super::schema::{Fragment, first_at_each_value};
use crate::cfn::Template;

/// The key under `Metadata` that `cfn-init` reads.
const INIT: &str = "AWS::CloudFormation::Init";

static SCHEMA: LazyLock<Fragment> = LazyLock::new(|| {
    let text = include_str!("../../schemas/other/cfn_init.json");
    Fragment::new(serde_json::from_str(text).unwrap_or(Value::Bool(true)))
});

pub(super) fn check(template: &Template, findings: &mut Vec<Finding>) {
    for (id, resource) in &template.resources {
        let Some(crate::cfn::Expr::Map(metadata)) = &resource.metadata else {
            continue;
        };
        let Some(init) = metadata.get(INIT) else {
            continue;
        };
        let init = crate::cfn::json::expr(init);
        for error in first_at_each_value(SCHEMA.validate(&init)) {
            findings.push(
                Finding::new(
                    "E9012",
                    format!("Resources/{id}/Metadata/{INIT}{}", error.pointer),
                    format!("`cfn-init` configuration: {}", error.message),
                )
                .help("a config holds `packages`, `groups`, `users`, `sources`, `files`, `commands` and `services`, each as cfn-init documents them"),
            );
        }
    }
}
