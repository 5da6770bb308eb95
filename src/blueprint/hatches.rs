//! The escape hatches of a node group's user data: commands run once the
//! node has joined (`postBootstrapCommands`), extra MIME parts
//! (`userDataParts`) and Bottlerocket settings beyond eksynth's own
//! (`bottlerocket.settings`). Each is decoded with its spans, merged over
//! `defaults` like the other fields, and checked against what the group's
//! AMI family and kind can carry.

use serde_json::{Map, Value as Json, json};

use super::decode::{Decoder, Fields, Located};
use super::field::{Field, Ty, choices};
use super::{AmiFamily, PartType, UserDataPart};
use crate::source::SourceFile;
use crate::suggest::closest;
use crate::syntax::{Node, Value};

pub(super) const USER_DATA_PART_FIELDS: &[Field] = &[
    Field::new(
        "contentType",
        Ty::OneOf(|| choices(USER_DATA_CONTENT_TYPES)),
        "",
    )
    .long("the part's content type"),
    Field::new(
        "content",
        Ty::STRING,
        "The part's text: a script starts with `#!`, cloud-config is a YAML \
        mapping",
    ),
];
pub(super) const BOTTLEROCKET_FIELDS: &[Field] = &[Field::new(
    "settings",
    Ty::Custom {
        schema: settings_schema,
        reads: "mapping of Bottlerocket settings",
    },
    "Settings under Bottlerocket's `settings`, merged into the TOML eksynth writes; the ones eksynth writes itself are refused",
)];

/// `bottlerocket.settings` in the JSON Schema: any mapping, with an
/// example editors can offer.
fn settings_schema(doc: &str) -> Json {
    json!({
        "type": "object",
        "description": doc,
        "examples": [{"host-containers": {"admin": {"enabled": true}}}],
    })
}

/// The cloud-init content types a part may have. Shell scripts, boothooks
/// and cloud-config are what cloud-init on the AL2023 and AL2 images runs
/// the same way; include files would fetch user data from elsewhere at
/// boot, which no review of the template would see.
pub(super) const USER_DATA_CONTENT_TYPES: &[(&str, PartType)] = &[
    ("text/x-shellscript", PartType::ShellScript),
    ("text/cloud-config", PartType::CloudConfig),
    ("text/cloud-boothook", PartType::CloudBoothook),
];

/// The nodeadm content type: eksynth writes that part itself.
const NODECONFIG_CONTENT_TYPE: &str = "application/node.eks.aws";

/// The namespaces under Bottlerocket's `settings` (the settings reference
/// of the Bottlerocket documentation, bottlerocket.dev, 1.37.x). A name
/// close to one of them is taken for a misspelling; any other is accepted,
/// since newer releases add namespaces.
pub(super) const BOTTLEROCKET_NAMESPACES: &[&str] = &[
    "autoscaling",
    "aws",
    "boot",
    "bootstrap-commands",
    "bootstrap-containers",
    "cloudformation",
    "container-registry",
    "container-runtime",
    "dns",
    "ecs",
    "host-containers",
    "kernel",
    "kubelet-device-plugins",
    "kubernetes",
    "metrics",
    "motd",
    "network",
    "ntp",
    "oci-defaults",
    "oci-hooks",
    "pki",
    "updates",
];

/// The Bottlerocket settings eksynth writes from other fields, by their
/// path under `settings`, and the field each comes from. A user setting at
/// one of them (or inside one) would clash with eksynth's, or slip past the
/// checks of the field that owns it.
const RESERVED_SETTINGS: &[(&[&str], &str)] = &[
    (&["kubernetes", "cluster-name"], "`cluster.name`"),
    (&["kubernetes", "api-server"], "`cluster.endpoint`"),
    (
        &["kubernetes", "cluster-certificate"],
        "`cluster.certificateAuthority`",
    ),
    (
        &["kubernetes", "cluster-dns-ip"],
        "`clusterDNS` (or `cluster.serviceIpv4Cidr`)",
    ),
    (&["kubernetes", "max-pods"], "`maxPods`"),
    (&["kubernetes", "node-labels"], "`labels`"),
    (&["kubernetes", "node-taints"], "`taints`"),
    (
        &["kubernetes", "image-gc-high-threshold-percent"],
        "`kubelet.imageGCHighThresholdPercent`",
    ),
    (
        &["kubernetes", "image-gc-low-threshold-percent"],
        "`kubelet.imageGCLowThresholdPercent`",
    ),
    (&["kubernetes", "pod-pids-limit"], "`kubelet.podPidsLimit`"),
    (
        &["kubernetes", "container-log-max-files"],
        "`kubelet.containerLogMaxFiles`",
    ),
    (
        &["kubernetes", "container-log-max-size"],
        "`kubelet.containerLogMaxSize`",
    ),
    (
        &["kubernetes", "cpu-manager-policy"],
        "`kubelet.cpuManagerPolicy`",
    ),
    (&["kubernetes", "eviction-hard"], "`kubelet.evictionHard`"),
    (&["kubernetes", "kube-reserved"], "`kubelet.kubeReserved`"),
    (
        &["kubernetes", "system-reserved"],
        "`kubelet.systemReserved`",
    ),
    (
        &["cloudformation"],
        "the signal of a self-managed group (`signalTimeout`)",
    ),
    (
        &["bootstrap-commands", "000-eksynth-instance-store"],
        "`instanceStore`",
    ),
];

/// The field a Bottlerocket setting that eksynth writes comes from, by its
/// path under `settings`; `None` for a setting that is the user's.
pub fn reserved_bottlerocket_setting(path: &[&str]) -> Option<&'static str> {
    RESERVED_SETTINGS
        .iter()
        .find(|(reserved, _)| *reserved == path)
        .map(|(_, owner)| *owner)
}

/// A Bottlerocket settings table as written, with the span of every key.
type Table = Vec<(Located<String>, Setting)>;

#[derive(Clone)]
enum Setting {
    Table(Table),
    Leaf(Json),
}

/// The hatches of one group (or of `defaults`) as written.
#[derive(Clone, Default)]
pub(super) struct HatchSpec {
    post_bootstrap_commands: Option<Located<Vec<String>>>,
    user_data_parts: Option<Located<Vec<UserDataPart>>>,
    /// `settings` under `bottlerocket`, and where `bottlerocket` is written.
    bottlerocket: Option<Located<Table>>,
    /// The group takes `bottlerocket` from `defaults` only: then it applies
    /// to Bottlerocket groups and is no mistake on the others.
    bottlerocket_inherited: bool,
}

/// The hatches once checked, as the node group holds them.
pub(super) struct Hatches {
    pub post_bootstrap_commands: Vec<String>,
    pub user_data_parts: Vec<UserDataPart>,
    pub bottlerocket_settings: Map<String, Json>,
}

impl HatchSpec {
    /// Reads the hatch fields of one group's (or the defaults') mapping.
    /// Each keeps the span of its key, where a refusal points.
    pub fn decode(d: &mut Decoder, f: &mut Fields<'_>) -> HatchSpec {
        let at = |f: &Fields<'_>, name: &str, node: &Node| f.key_span(name).unwrap_or(node.span);
        let post_bootstrap_commands = f.get("postBootstrapCommands").and_then(|n| {
            let items = d.string_list("postBootstrapCommands", n)?;
            Some(Located::new(
                items.into_iter().map(|s| s.value).collect(),
                at(f, "postBootstrapCommands", n),
            ))
        });
        let user_data_parts = f.get("userDataParts").map(|n| {
            let parts = d
                .list("userDataParts", n)
                .iter()
                .filter_map(|part| decode_part(d, part))
                .collect();
            Located::new(parts, at(f, "userDataParts", n))
        });
        let bottlerocket = f.get("bottlerocket").and_then(|n| {
            let table = decode_bottlerocket(d, n)?;
            Some(Located::new(table, at(f, "bottlerocket", n)))
        });
        HatchSpec {
            post_bootstrap_commands,
            user_data_parts,
            bottlerocket,
            bottlerocket_inherited: false,
        }
    }

    /// The group's hatches over the defaults': lists are replaced,
    /// Bottlerocket settings merge table by table, the group winning.
    pub fn over(self, defaults: &HatchSpec) -> HatchSpec {
        let d = defaults.clone();
        let bottlerocket_inherited = self.bottlerocket.is_none() && d.bottlerocket.is_some();
        let bottlerocket = match (self.bottlerocket, d.bottlerocket) {
            (Some(over), Some(base)) => Some(Located::new(
                merge_tables(base.value, over.value),
                over.span,
            )),
            (over, base) => over.or(base),
        };
        HatchSpec {
            post_bootstrap_commands: self.post_bootstrap_commands.or(d.post_bootstrap_commands),
            user_data_parts: self.user_data_parts.or(d.user_data_parts),
            bottlerocket,
            bottlerocket_inherited,
        }
    }

    /// Refuses what the group's family and kind cannot carry, at the field
    /// that asks for it.
    pub fn check(&self, d: &mut Decoder, family: AmiFamily, is_managed: bool) {
        let name = family.name();
        if let Some(commands) = self
            .post_bootstrap_commands
            .as_ref()
            .filter(|c| !c.value.is_empty())
        {
            let refused = if is_managed {
                Some((
                    "`postBootstrapCommands` cannot be used in a managed node group".to_string(),
                    "they run once the node has joined and before its CloudFormation signal, and a managed group sends none: EKS watches its nodes itself, and on the EKS AMI its own bootstrap runs after every part of the user data; use `preBootstrapCommands`",
                ))
            } else if family == AmiFamily::Bottlerocket {
                Some((
                    format!("`postBootstrapCommands` is not supported on `{name}`"),
                    "Bottlerocket has no shell user data; use `bottlerocket.settings` (bootstrap or host containers)",
                ))
            } else {
                None
            };
            if let Some((message, help)) = refused {
                d.error(commands.span, message).help = Some(help.to_string());
            } else if family.is_windows() {
                refuse_non_ascii_windows_commands(d, "postBootstrapCommands", commands);
                if commands
                    .value
                    .iter()
                    .any(|c| c.to_ascii_lowercase().contains("</powershell"))
                {
                    d.error(
                        commands.span,
                        "a post-bootstrap command contains `</powershell`, which ends Windows user data early",
                    );
                }
            }
        }
        if let Some(parts) = self
            .user_data_parts
            .as_ref()
            .filter(|p| !p.value.is_empty())
        {
            let help = match family {
                AmiFamily::Bottlerocket => Some(
                    "Bottlerocket's user data is TOML settings, not MIME; use `bottlerocket.settings`",
                ),
                AmiFamily::Windows(_) => Some(
                    "Windows user data is one PowerShell script, not MIME; use `preBootstrapCommands` or `postBootstrapCommands`",
                ),
                AmiFamily::AmazonLinux2023 | AmiFamily::AmazonLinux2 | AmiFamily::Ubuntu(_) => None,
            };
            if let Some(help) = help {
                d.error(
                    parts.span,
                    format!("`userDataParts` is not supported on `{name}`"),
                )
                .help = Some(help.to_string());
            }
        }
        if let Some(settings) = &self.bottlerocket
            && family != AmiFamily::Bottlerocket
            && !self.bottlerocket_inherited
        {
            d.error(
                settings.span,
                "`bottlerocket` applies only to `amiFamily: Bottlerocket` nodes",
            )
            .help = Some(
                "it holds Bottlerocket settings: leave it out of groups of other families".into(),
            );
        }
    }

    /// Reports a user setting under `kubernetes` that one of the group's
    /// `kubelet` fields also writes (`keys` pairs the setting's key with
    /// that field), at the user's key: the TOML would name it twice.
    pub fn check_kubelet_settings(&self, d: &mut Decoder, keys: &[(String, String)]) {
        let Some(table) = &self.bottlerocket else {
            return;
        };
        let kubernetes = table
            .value
            .iter()
            .find(|(key, _)| key.value == "kubernetes");
        let Some((_, Setting::Table(kubernetes))) = kubernetes else {
            return;
        };
        for (key, _) in kubernetes {
            if let Some((_, field)) = keys.iter().find(|(setting, _)| *setting == key.value) {
                let message = format!(
                    "`bottlerocket.settings.kubernetes.{}` is written by eksynth, from `kubelet.{field}`",
                    key.value
                );
                d.error(key.span, message).help = Some(format!(
                    "set it in one place: `kubelet.{field}` or this setting"
                ));
            }
        }
    }

    pub fn resolve(self, family: AmiFamily) -> Hatches {
        Hatches {
            post_bootstrap_commands: self
                .post_bootstrap_commands
                .map(|c| c.value)
                .unwrap_or_default(),
            user_data_parts: self.user_data_parts.map(|p| p.value).unwrap_or_default(),
            bottlerocket_settings: self
                .bottlerocket
                .filter(|_| family == AmiFamily::Bottlerocket)
                .map(|b| to_json(b.value))
                .unwrap_or_default(),
        }
    }
}

fn decode_part(d: &mut Decoder, node: &Node) -> Option<UserDataPart> {
    let mut f = d.fields("userDataParts[]", node, USER_DATA_PART_FIELDS)?;
    let content_type = f.get("contentType");
    let content = f.get("content");
    f.finish(d, "a user-data part");
    let mut missing = |field: &str, help: &str| {
        d.error(node.span, format!("a user-data part has no `{field}`"))
            .help = Some(help.to_string());
    };
    let (Some(type_node), Some(content_node)) = (content_type, content) else {
        if content_type.is_none() {
            missing(
                "contentType",
                "add `contentType: text/x-shellscript`, `text/cloud-config` or `text/cloud-boothook`",
            );
        }
        if content.is_none() {
            missing("content", "add the part's text as `content: |`");
        }
        return None;
    };
    let written = d.string("userDataParts[].contentType", type_node)?;
    if written.value.eq_ignore_ascii_case(NODECONFIG_CONTENT_TYPE) {
        d.error(
            written.span,
            format!("a user-data part cannot be `{NODECONFIG_CONTENT_TYPE}`"),
        )
        .help = Some(
            "eksynth writes the NodeConfig part itself; put NodeConfig settings in `nodeConfig`"
                .into(),
        );
        return None;
    }
    let content_type = d
        .choice(
            "userDataParts[].contentType",
            type_node,
            USER_DATA_CONTENT_TYPES,
        )?
        .value;
    let content = d.string("userDataParts[].content", content_node)?;
    check_content(d, content_type, &content);
    Some(UserDataPart {
        content_type,
        content: content.value,
    })
}

/// What cloud-init needs of each kind of part. A shell script and a
/// boothook are written to a file and executed, so they need a `#!` line
/// (cloud-init even takes a `text/x-shellscript` part without one for
/// another type); cloud-config that is not a YAML mapping is skipped with
/// no more than a warning in the node's log.
fn check_content(d: &mut Decoder, content_type: PartType, content: &Located<String>) {
    let mime = content_type.mime_type();
    match content_type {
        PartType::ShellScript | PartType::CloudBoothook => {
            let script = match content_type {
                // cloud-init drops a leading `#cloud-boothook` line.
                PartType::CloudBoothook => content
                    .value
                    .strip_prefix("#cloud-boothook")
                    .unwrap_or(&content.value)
                    .trim_start(),
                _ => content.value.as_str(),
            };
            if !script.starts_with("#!") {
                d.error(
                    content.span,
                    format!("a `{mime}` part must start with an interpreter line (`#!`)"),
                )
                .help = Some(
                    "cloud-init runs the part as a program: begin it with `#!/bin/bash`".into(),
                );
            }
        }
        PartType::CloudConfig => {
            let file = SourceFile::new("content", content.value.clone());
            let problem = match crate::syntax::parse(&file) {
                Ok(node) if matches!(node.value, Value::Map(_)) => None,
                Ok(node) => Some(format!("is {}, not a mapping", node.kind())),
                Err(error) => Some(match error.span {
                    Some(span) => format!(
                        "is not YAML: {} (line {} of the content)",
                        error.message, span.line
                    ),
                    None => format!("is not YAML: {}", error.message),
                }),
            };
            if let Some(problem) = problem {
                d.error(content.span, format!("the `{mime}` part {problem}"))
                    .help =
                    Some("cloud-config is a YAML mapping of modules, e.g. `runcmd: [...]`".into());
            }
        }
    }
}

fn decode_bottlerocket(d: &mut Decoder, node: &Node) -> Option<Table> {
    let mut f = d.fields("bottlerocket", node, BOTTLEROCKET_FIELDS)?;
    let settings = f.get("settings");
    f.finish(d, "`bottlerocket`");
    let table = match settings {
        Some(settings) => {
            let table = decode_table(d, "bottlerocket.settings", settings)?;
            check_namespaces(d, &table);
            check_reserved(d, &table, &mut Vec::new());
            table
        }
        None => Vec::new(),
    };
    Some(table)
}

fn decode_table(d: &mut Decoder, path: &str, node: &Node) -> Option<Table> {
    let Value::Map(entries) = &node.value else {
        d.wrong_type(path, node, "a mapping");
        return None;
    };
    let mut table = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        let path = format!("{path}.{}", key.name);
        let setting = match &value.value {
            Value::Map(_) if value.tag.is_none() => {
                decode_table(d, &path, value).map(Setting::Table)
            }
            _ => decode_leaf(d, &path, value).map(Setting::Leaf),
        };
        if let Some(setting) = setting {
            table.push((Located::new(key.name.clone(), key.span), setting));
        }
    }
    Some(table)
}

/// A value TOML can hold: no null, no infinite number.
fn decode_leaf(d: &mut Decoder, path: &str, node: &Node) -> Option<Json> {
    if let Some(tag) = &node.tag {
        d.error(
            node.span,
            format!("`{path}` has the YAML tag `{tag}`; Bottlerocket settings are plain values"),
        );
        return None;
    }
    match &node.value {
        Value::Null => {
            d.error(node.span, format!("`{path}` has no value")).help =
                Some("TOML has no null: give it a value, or leave the key out".into());
            None
        }
        Value::Bool(b) => Some(Json::Bool(*b)),
        Value::Int(i) => Some(Json::from(*i)),
        Value::Float(x) => match serde_json::Number::from_f64(*x) {
            Some(n) => Some(Json::Number(n)),
            None => {
                d.error(node.span, format!("`{path}` is not a finite number"));
                None
            }
        },
        Value::String(_) => d.string(path, node).map(|s| Json::String(s.value)),
        Value::Seq(items) => {
            let mut values = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                values.push(decode_leaf(d, &format!("{path}[{index}]"), item)?);
            }
            Some(Json::Array(values))
        }
        Value::Map(entries) => {
            let mut map = Map::new();
            for (key, value) in entries {
                let value = decode_leaf(d, &format!("{path}.{}", key.name), value)?;
                map.insert(key.name.clone(), value);
            }
            Some(Json::Object(map))
        }
    }
}

/// A namespace close to a known one is a misspelling of it.
fn check_namespaces(d: &mut Decoder, table: &Table) {
    for (key, _) in table {
        if BOTTLEROCKET_NAMESPACES.contains(&key.value.as_str()) {
            continue;
        }
        if let Some(best) = closest(&key.value, BOTTLEROCKET_NAMESPACES) {
            let message = format!("`{}` is not a Bottlerocket settings namespace", key.value);
            let diagnostic = d.error(key.span, message);
            diagnostic.label = Some("unknown namespace".into());
            diagnostic.help = Some(format!("did you mean `{best}`?"));
        }
    }
}

/// Reports every user setting at, inside or above a setting eksynth
/// writes, at the user's key.
fn check_reserved(d: &mut Decoder, table: &Table, path: &mut Vec<String>) {
    for (key, setting) in table {
        path.push(key.value.clone());
        let parts: Vec<&str> = path.iter().map(String::as_str).collect();
        let written = format!("bottlerocket.settings.{}", parts.join("."));
        if let Some(owner) = reserved_bottlerocket_setting(&parts) {
            let message = format!("`{written}` is written by eksynth, from {owner}");
            d.error(key.span, message).help =
                Some(format!("leave it out here; eksynth writes it from {owner}"));
        } else {
            match setting {
                Setting::Table(inner) => check_reserved(d, inner, path),
                Setting::Leaf(_) => {
                    let covers = RESERVED_SETTINGS
                        .iter()
                        .find(|(reserved, _)| reserved.starts_with(&parts));
                    if let Some((_, owner)) = covers {
                        let message = format!(
                            "`{written}` must be a mapping: eksynth writes settings inside it"
                        );
                        d.error(key.span, message).help =
                            Some(format!("eksynth writes part of it from {owner}"));
                    }
                }
            }
        }
        path.pop();
    }
}

/// Merges two settings tables key by key, `over` winning; a key keeps its
/// first-written position.
fn merge_tables(base: Table, over: Table) -> Table {
    let mut merged = base;
    for (key, setting) in over {
        match merged.iter().position(|(k, _)| k.value == key.value) {
            Some(index) => {
                let (_, old) = merged.remove(index);
                let setting = match (old, setting) {
                    (Setting::Table(old), Setting::Table(new)) => {
                        Setting::Table(merge_tables(old, new))
                    }
                    (_, new) => new,
                };
                merged.insert(index, (key, setting));
            }
            None => merged.push((key, setting)),
        }
    }
    merged
}

fn to_json(table: Table) -> Map<String, Json> {
    table
        .into_iter()
        .map(|(key, setting)| {
            let value = match setting {
                Setting::Table(inner) => Json::Object(to_json(inner)),
                Setting::Leaf(value) => value,
            };
            (key.value, value)
        })
        .collect()
}

/// Refuses non-ASCII text in the commands of a Windows group, at `field`:
/// EC2Launch hands the `<powershell>` script to Windows PowerShell, which
/// reads a script file without a byte order mark in the system's ANSI code
/// page, so UTF-8 text would not run as written; nothing on the node can be
/// checked here to say otherwise.
pub(crate) fn refuse_non_ascii_windows_commands(
    d: &mut Decoder,
    field: &str,
    commands: &Located<Vec<String>>,
) {
    let Some(c) = commands
        .value
        .iter()
        .flat_map(|c| c.chars())
        .find(|c| !c.is_ascii())
    else {
        return;
    };
    let code = u32::from(c);
    d.error(
        commands.span,
        format!("`{field}` contains `{c}` (U+{code:04X}), which Windows user data cannot carry as written"),
    )
    .help = Some(format!(
        "Windows PowerShell reads the user data script in the system's code page, not UTF-8: write the command in ASCII, with `$([char]::ConvertFromUtf32(0x{code:X}))` for `{c}`"
    ));
}
