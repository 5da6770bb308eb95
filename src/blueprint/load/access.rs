//! How nodes are authorized in the cluster: `authenticationMode`,
//! `nodeAccess` (access entries or aws-auth) and `awsAuthProvider`.

use super::read::{opt_ec2_ids, opt_u32};
use super::sources::decode_source;
use crate::blueprint::decode::{Decoder, Fields};
use crate::blueprint::field::{Field, Ty};
use crate::blueprint::*;

pub(in crate::blueprint) const PROVIDER_FIELDS: &[Field] = &[
    Field::new(
        "serviceToken",
        Ty::Source,
        "An existing provider's service token",
    ),
    Field::new(
        "subnets",
        Ty::STRINGS,
        "Subnets for a provider that reaches a private endpoint",
    ),
    Field::new(
        "securityGroups",
        Ty::STRINGS,
        "Security groups for the provider in the VPC",
    ),
    Field::new(
        "reservedConcurrency",
        Ty::integer(1, 1000),
        "Reserved concurrency",
    ),
    Field::new(
        "logRetentionDays",
        Ty::integer(1, 3653),
        "Log retention in days",
    )
    .default("30"),
];

/// `nodeAccess`: how node roles get into the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::blueprint) enum AccessKind {
    AccessEntries,
    AwsAuth,
    SharedAccessEntries,
    None,
}

pub(in crate::blueprint) const NODE_ACCESS: &[(&str, AccessKind)] = &[
    ("accessEntries", AccessKind::AccessEntries),
    ("awsAuth", AccessKind::AwsAuth),
    ("sharedAccessEntries", AccessKind::SharedAccessEntries),
    ("none", AccessKind::None),
];

/// Access entries in the API modes, aws-auth in `CONFIG_MAP` mode or when
/// asked for; the provider is inline unless a service token is given.
pub(super) fn decode_node_access(
    d: &mut Decoder,
    fields: &mut Fields<'_>,
    mode: Option<AuthenticationMode>,
) -> Option<NodeAccess> {
    let asked = fields
        .get("nodeAccess")
        .and_then(|n| d.choice("cluster.nodeAccess", n, NODE_ACCESS));
    let provider_node = fields.get("awsAuthProvider");
    let mode = mode?;
    let kind = match (&asked, mode) {
        (Some(choice), _) if choice.value == AccessKind::None => {
            // Nothing is made, so nothing is served: a provider set up here
            // would say that eksynth grants access after all.
            if provider_node.is_some()
                && let Some(at) = fields.key_span("awsAuthProvider")
            {
                d.error(
                    at,
                    "`awsAuthProvider` is set but `nodeAccess: none` makes no aws-auth mapping or access entry",
                )
                .help = Some(
                    "remove `awsAuthProvider`, or let eksynth grant access with `nodeAccess: awsAuth` or `sharedAccessEntries`"
                        .into(),
                );
            }
            return Some(NodeAccess::None);
        }
        (Some(choice), AuthenticationMode::ConfigMap) if choice.value != AccessKind::AwsAuth => {
            d.error(
                choice.span,
                "access entries need the `API` or `API_AND_CONFIG_MAP` authentication mode",
            )
            .help = Some("use `nodeAccess: awsAuth` for a `CONFIG_MAP` cluster".into());
            return None;
        }
        (Some(choice), AuthenticationMode::Api) if choice.value == AccessKind::AwsAuth => {
            d.error(
                choice.span,
                "a cluster in `API` mode does not read the aws-auth ConfigMap",
            )
            .help = Some(
                "use `nodeAccess: accessEntries`, or switch the cluster to `API_AND_CONFIG_MAP`"
                    .into(),
            );
            return None;
        }
        (Some(choice), _) => choice.value,
        (None, AuthenticationMode::ConfigMap) => AccessKind::AwsAuth,
        (None, _) => AccessKind::AccessEntries,
    };
    if kind == AccessKind::AccessEntries {
        if let Some(node) = provider_node {
            d.error(
                node.span,
                "`awsAuthProvider` is set but nodes are authorized with access entries",
            )
            .help = Some(
                "remove it, or set `nodeAccess: awsAuth` or `nodeAccess: sharedAccessEntries`"
                    .into(),
            );
        }
        return Some(NodeAccess::AccessEntries);
    }
    let served = |provider| match kind {
        AccessKind::SharedAccessEntries => NodeAccess::SharedAccessEntries(provider),
        _ => NodeAccess::AwsAuth(provider),
    };
    let Some(node) = provider_node else {
        return Some(served(AwsAuthProvider::Inline {
            subnets: Vec::new(),
            security_groups: Vec::new(),
            reserved_concurrency: None,
            log_retention_days: 30,
        }));
    };
    let mut f = d.fields("cluster.awsAuthProvider", node, PROVIDER_FIELDS)?;
    let token = f
        .get("serviceToken")
        .and_then(|n| decode_source(d, "cluster.awsAuthProvider.serviceToken", n));
    let p = "cluster.awsAuthProvider.";
    let subnets = opt_ec2_ids(d, &mut f, p, "subnets", "subnet");
    let security_groups = opt_ec2_ids(d, &mut f, p, "securityGroups", "sg");
    let reserved = opt_u32(d, &mut f, p, "reservedConcurrency");
    let (min, max) = f.range("logRetentionDays");
    let retention = f.get("logRetentionDays").and_then(|n| {
        let days = d.integer("cluster.awsAuthProvider.logRetentionDays", n, min, max)?;
        const ALLOWED: &[i64] = &[1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653];
        if !ALLOWED.contains(&days.value) {
            d.error(days.span, format!("CloudWatch Logs cannot keep logs for {} days", days.value)).help =
                Some("use 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288 or 3653".into());
            return None;
        }
        Some(days.value as u32)
    });
    f.finish(d, "`cluster.awsAuthProvider`");
    if let Some(token) = token {
        for (field, set) in [
            ("subnets", subnets.is_some()),
            ("securityGroups", security_groups.is_some()),
            ("reservedConcurrency", reserved.is_some()),
        ] {
            if set {
                d.error(token.span, format!("`serviceToken` names an existing provider; `{field}` configures one made here")).help =
                    Some("keep one of them".into());
            }
        }
        return Some(served(AwsAuthProvider::Existing(token.value)));
    }
    let subnets = subnets.map(|s| s.value).unwrap_or_default();
    let security_groups = security_groups.map(|s| s.value).unwrap_or_default();
    if subnets.is_empty() != security_groups.is_empty() {
        d.error(
            node.span,
            "the provider's VPC settings need both `subnets` and `securityGroups`",
        );
    }
    Some(served(AwsAuthProvider::Inline {
        subnets,
        security_groups,
        reserved_concurrency: reserved.map(|r| r.value),
        log_retention_days: retention.unwrap_or(30),
    }))
}
