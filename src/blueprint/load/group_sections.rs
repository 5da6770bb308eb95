//! The nested sections of a node group that describe its nodes:
//! `subnets`, `labels`, `taints`, `imds` and `efsMounts`.

use super::read::{Opt, first_column, missing, opt_bool};
use super::sources::decode_source;
use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::field::{Field, Ty, choices};
use crate::blueprint::rules;
use crate::blueprint::*;
use crate::syntax::{Node, Value};

pub(in crate::blueprint) const IMDS_FIELDS: &[Field] = &[
    Field::new("httpTokens", Ty::OneOf(|| choices(HTTP_TOKENS)), "")
        .default("`required`")
        .long("whether IMDS requires session tokens (IMDSv2)"),
    Field::new("hopLimit", Ty::integer(1, 3), "Hop limit")
        .default("1")
        .long(
            "how many network hops IMDS's token answer travels \
            (`HttpPutResponseHopLimit`). 1 reaches processes on the node and \
            pods on the host network (`hostNetwork: true`: kubelet, `aws-node`, \
            kube-proxy), not pods on the pod network: an agent in such a pod that \
            reads the node role's credentials from IMDS (the CloudWatch agent as \
            a pod, Windows pods among them) times out. Give that agent its own \
            role through EKS Pod Identity or IRSA and keep 1; 2 lets every pod on \
            the node act as the node role (`W5002`). See \
            [Instance metadata](../guide/imds.md)",
        ),
    Field::new(
        "ipv6",
        Ty::Boolean,
        "IMDS also at its IPv6 address (`HttpProtocolIpv6`), which nodes on \
        IPv6-only subnets need",
    )
    .default("false")
    .long(
        "IMDS also at its IPv6 address, `[fd00:ec2::254]` \
        (`HttpProtocolIpv6: enabled`): a node on an IPv6-only subnet reaches \
        IMDS only there. EC2 serves that address on Nitro instances only. \
        Changing it changes the launch template, which rolls the nodes",
    ),
    Field::new("blockPods", Ty::Boolean, "Drop pod traffic to IMDS"),
    Field::new(
        "instanceTags",
        Ty::Boolean,
        "Self-managed: the instance's tags in IMDS (`InstanceMetadataTags`); tag \
        keys then hold no `/`",
    ),
];
pub(in crate::blueprint) const TAINT_FIELDS: &[Field] = &[
    Field::new("key", Ty::STRING, "The taint key"),
    Field::new("value", Ty::STRING, "The taint value"),
    Field::new("effect", Ty::OneOf(|| choices(TAINT_EFFECTS)), "")
        .long("Kubernetes' spelling or the EKS API's"),
];
pub(in crate::blueprint) const EFS_FIELDS: &[Field] = &[
    Field::new("fileSystemId", Ty::pattern("^fs-[0-9a-f]+$", None), "")
        .required_when("yes")
        .long("the EFS file system's ID (`fs-…`)"),
    Field::new("mountPoint", Ty::pattern("^/", None), "")
        .required_when("yes")
        .long("where the file system is mounted on the node, an absolute path"),
];

/// Taint effects in Kubernetes' spelling and in the EKS API's.
pub(in crate::blueprint) const TAINT_EFFECTS: &[(&str, TaintEffect)] = &[
    ("NoSchedule", TaintEffect::NoSchedule),
    ("PreferNoSchedule", TaintEffect::PreferNoSchedule),
    ("NoExecute", TaintEffect::NoExecute),
    ("NO_SCHEDULE", TaintEffect::NoSchedule),
    ("PREFER_NO_SCHEDULE", TaintEffect::PreferNoSchedule),
    ("NO_EXECUTE", TaintEffect::NoExecute),
];

/// `imds.httpTokens`: whether tokens are required.
pub(in crate::blueprint) const HTTP_TOKENS: &[(&str, bool)] =
    &[("required", true), ("optional", false)];

#[derive(Clone, Default)]
pub(super) struct ImdsSpec {
    pub(super) tokens_required: Opt<bool>,
    pub(super) hop_limit: Opt<u32>,
    pub(super) ipv6: Opt<bool>,
    pub(super) block_pods: Opt<bool>,
    pub(super) instance_tags: Opt<bool>,
}

pub(super) fn decode_subnets(d: &mut Decoder, node: &Node) -> Opt<Subnets> {
    match &node.value {
        Value::Seq(_) => {
            let items = d.string_list("subnets", node)?;
            if items.is_empty() {
                d.error(node.span, "`subnets` is empty").help =
                    Some("list at least one subnet ID".into());
                return None;
            }
            for item in &items {
                if !crate::blueprint::rules::is_ec2_id("subnet", &item.value) {
                    d.error(item.span, format!("`{}` is not a subnet ID", item.value))
                        .help = Some("subnet IDs look like `subnet-0123456789abcdef0`".into());
                }
            }
            Some(Located::new(
                Subnets::List(items.into_iter().map(|s| s.value).collect()),
                node.span,
            ))
        }
        Value::Map(_) => {
            let source = decode_source(d, "subnets", node)?;
            match source.value {
                Source::Parameter { name, default } => Some(Located::new(
                    Subnets::Parameter { name, default },
                    source.span,
                )),
                Source::Import(name) => Some(Located::new(Subnets::Import(name), source.span)),
                Source::Literal(_) => None,
            }
        }
        _ => {
            d.wrong_type(
                "subnets",
                node,
                "a list of subnet IDs, `{parameter: Name}` or `{import: ExportName}`",
            );
            None
        }
    }
}

pub(super) fn check_label(d: &mut Decoder, key: &Located<String>, value: &Located<String>) {
    if let Some(problem) = rules::label_key_problem(&key.value) {
        let message = format!(
            "label key `{}` is not a valid Kubernetes label key: {problem}",
            key.value
        );
        d.error(key.span, message).help =
            Some("a label key is an optional DNS prefix and a name of up to 63 letters, digits, `-`, `_` or `.`".into());
    } else if let Some(problem) = rules::kubelet_refuses_label(&key.value) {
        let message = format!("label `{}` cannot be set by kubelet", key.value);
        d.error(key.span, message).help = Some(format!(
            "{problem}; use another prefix such as `node.kubernetes.io/` or your own domain"
        ));
    }
    if let Some(problem) = rules::label_value_problem(&value.value) {
        let message = format!(
            "label value `{}` for `{}` is not valid: it {problem}",
            value.value, key.value
        );
        d.error(value.span, message).help =
            Some("a label value has up to 63 letters, digits, `-`, `_` or `.`".into());
    }
}

pub(super) fn decode_taint(d: &mut Decoder, node: &Node) -> Option<Located<Taint>> {
    if let Value::String(text) = &node.value {
        let message = format!("taint `{text}` must be a mapping with `key`, `value` and `effect`");
        d.error(node.span, message).help =
            Some("write `- {key: dedicated, value: gpu, effect: NoSchedule}`".into());
        return None;
    }
    let mut f = d.fields("taints[]", node, TAINT_FIELDS)?;
    let key = match f.get("key") {
        Some(n) => d.string("taints[].key", n),
        None => {
            missing(
                d,
                first_column(node.span),
                "key",
                "taint",
                "the taint's `key`",
            );
            None
        }
    };
    let value = f
        .get("value")
        .and_then(|n| d.string_or_number("taints[].value", n));
    let effect = match f.get("effect") {
        Some(n) => d.choice("taints[].effect", n, TAINT_EFFECTS),
        None => {
            missing(
                d,
                first_column(node.span),
                "effect",
                "taint",
                "`effect: NoSchedule`, `PreferNoSchedule` or `NoExecute`",
            );
            None
        }
    };
    f.finish(d, "a taint");
    let key = key?;
    if let Some(problem) = rules::label_key_problem(&key.value) {
        d.error(
            key.span,
            format!("taint key `{}` is not valid: {problem}", key.value),
        );
        return None;
    }
    if let Some(value) = &value
        && let Some(problem) = rules::label_value_problem(&value.value)
    {
        d.error(
            value.span,
            format!("taint value `{}` is not valid: it {problem}", value.value),
        );
        return None;
    }
    Some(Located::new(
        Taint {
            key: key.value,
            value: value.map(|v| v.value),
            effect: effect?.value,
        },
        node.span,
    ))
}

pub(super) fn decode_imds(d: &mut Decoder, node: &Node) -> ImdsSpec {
    let Some(mut f) = d.fields("imds", node, IMDS_FIELDS) else {
        return ImdsSpec::default();
    };
    let tokens = f
        .get("httpTokens")
        .and_then(|n| d.choice("imds.httpTokens", n, HTTP_TOKENS));
    let (min, max) = f.range("hopLimit");
    let hop_limit = f.get("hopLimit").and_then(|n| {
        let value = d.integer("imds.hopLimit", n, min, max);
        if value.is_none()
            && let Some(last) = d.diagnostics.last_mut() {
                last.help = Some("1 keeps pods away from node credentials; 2 or 3 only for agents in containers that need IMDS".into());
            }
        value.map(|v| Located::new(v.value as u32, v.span))
    });
    let spec = ImdsSpec {
        tokens_required: tokens,
        hop_limit,
        ipv6: opt_bool(d, &mut f, "imds.", "ipv6"),
        block_pods: opt_bool(d, &mut f, "imds.", "blockPods"),
        instance_tags: opt_bool(d, &mut f, "imds.", "instanceTags"),
    };
    f.finish(d, "`imds`");
    spec
}

pub(super) fn decode_efs(d: &mut Decoder, node: &Node) -> Option<EfsMount> {
    let mut f = d.fields("efsMounts[]", node, EFS_FIELDS)?;
    let id = f
        .get("fileSystemId")
        .and_then(|n| d.string("efsMounts[].fileSystemId", n));
    let mount_point = f
        .get("mountPoint")
        .and_then(|n| d.string("efsMounts[].mountPoint", n));
    f.finish(d, "an EFS mount");
    if (id.is_none() && f.given("fileSystemId")) || (mount_point.is_none() && f.given("mountPoint"))
    {
        return None;
    }
    let Some(id) = id else {
        missing(
            d,
            first_column(node.span),
            "fileSystemId",
            "EFS mount",
            "the file system ID, e.g. `fileSystemId: fs-0123456789abcdef0`",
        );
        return None;
    };
    let Some(mount_point) = mount_point else {
        missing(
            d,
            first_column(node.span),
            "mountPoint",
            "EFS mount",
            "where to mount it, e.g. `mountPoint: /mnt/efs`",
        );
        return None;
    };
    let id_ok = id
        .value
        .strip_prefix("fs-")
        .is_some_and(|hex| !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit()));
    if !id_ok {
        d.error(
            id.span,
            format!("`{}` is not an EFS file system ID", id.value),
        )
        .help = Some("EFS IDs look like `fs-0123456789abcdef0`".into());
        return None;
    }
    let absolute = mount_point.value.starts_with('/') && mount_point.value.len() > 1;
    // A field of an /etc/fstab line: whitespace would end it, and the
    // mount script quotes nothing else.
    let odd = mount_point
        .value
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.')));
    let problem = match odd {
        _ if !absolute => "must be an absolute path".to_string(),
        Some(' ') => "has a space, which would end its field of the /etc/fstab line".to_string(),
        Some(c) => format!(
            "has `{}`, which a mount point here cannot hold",
            c.escape_debug()
        ),
        None => String::new(),
    };
    if !problem.is_empty() {
        d.error(
            mount_point.span,
            format!(
                "mount point `{}` {problem}",
                mount_point.value.escape_debug()
            ),
        )
        .help = Some("use letters, digits, `/`, `-`, `_` and `.`, e.g. `/mnt/efs`".into());
        return None;
    }
    Some(EfsMount {
        file_system_id: id.value,
        mount_point: mount_point.value,
    })
}
