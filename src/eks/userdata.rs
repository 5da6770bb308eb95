//! User data: the text each node runs at boot, rendered from the handlebars
//! templates in `blueprints/userdata/`.
//!
//! Template values (cluster name, endpoint, stack name...) arrive here as
//! opaque placeholder strings made by `cfn::sub::SubBuilder`; the caller turns
//! the rendered text into `Fn::Sub`. Rendering never sees CloudFormation.

use std::fmt::Write as _;
use std::sync::LazyLock;

use handlebars::{
    Context, Handlebars, Helper, HelperDef, RenderContext, RenderError, RenderErrorReason,
    ScopedJson,
};
use serde::Serialize;
use serde_json::{Value, json};

/// The AMI families whose user data is rendered here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Bootstrap {
    /// Amazon Linux 2023: MIME multipart with a nodeadm `NodeConfig`.
    Al2023,
    /// Amazon Linux 2: `/etc/eks/bootstrap.sh`.
    Al2,
}

/// Everything a node needs to join the cluster and report back.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserDataInput {
    pub bootstrap: Bootstrap,
    pub cluster_name: String,
    pub api_server_endpoint: String,
    /// Base64 certificate authority data.
    pub certificate_authority: String,
    pub service_ipv4_cidr: String,
    /// The cluster DNS IP (the service CIDR's `.10` address), for AL2.
    pub dns_cluster_ip: String,
    pub labels: Vec<Label>,
    pub taints: Vec<Taint>,
    pub max_pods: Option<u32>,
    /// Kubelet configuration fields (e.g. `imageGCHighThresholdPercent`),
    /// in the kubelet's own camelCase names, in blueprint order.
    pub kubelet_config: Vec<(String, serde_json::Value)>,
    pub pre_bootstrap_commands: Vec<String>,
    pub efs_mounts: Vec<EfsMount>,
    /// Block pods (traffic from `eni+` interfaces) from reaching IMDS.
    pub block_pod_imds: bool,
    pub signal: Signal,
}

#[derive(Clone, Debug, Serialize)]
pub struct Label {
    pub key: String,
    pub value: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Taint {
    pub key: String,
    pub value: Option<String>,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EfsMount {
    pub file_system_id: String,
    pub mount_point: String,
    /// The file system's DNS name, e.g. `fs-1.efs.<region placeholder>.<url suffix placeholder>`.
    pub dns_name: String,
}

/// How the node tells CloudFormation it is healthy.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Signal {
    pub stack_name: String,
    /// The Auto Scaling group's logical ID, exactly as in the template.
    pub logical_id: String,
    pub region: String,
    pub url_suffix: String,
    /// How long to wait for kubelet to report healthy before signalling failure.
    pub timeout_seconds: u32,
}

/// Why user data could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum UserDataError {
    #[error("kubelet setting `{0}` is given more than once")]
    DuplicateKubeletSetting(String),
    #[error("kubelet setting `{key}` must be {expected}")]
    KubeletSettingType { key: String, expected: &'static str },
    #[error("{what} `{value}` contains `{separator}`, which separates entries in the kubelet flag")]
    Separator {
        what: &'static str,
        value: String,
        separator: char,
    },
    #[error(
        "taint `{key}` has effect `{effect}`; expected NoSchedule, PreferNoSchedule or NoExecute"
    )]
    TaintEffect { key: String, effect: String },
    #[error("EFS mount point `{0}` is not an absolute path")]
    MountPoint(String),
    /// A bug in the embedded templates, not in the input.
    #[error("user data template: {0}")]
    Template(String),
}

const MIME_TEMPLATE: &str = "mime";
const NODECONFIG_TEMPLATE: &str = "nodeconfig";
const AL2023_TEMPLATE: &str = "al2023";
const AL2_TEMPLATE: &str = "al2";
const SIGNAL_TEMPLATE: &str = "signal";

const TEMPLATES: &[(&str, &str)] = &[
    (
        MIME_TEMPLATE,
        include_str!("../../blueprints/userdata/mime.hbs"),
    ),
    (
        NODECONFIG_TEMPLATE,
        include_str!("../../blueprints/userdata/nodeconfig.yaml.hbs"),
    ),
    (
        AL2023_TEMPLATE,
        include_str!("../../blueprints/userdata/al2023.sh.hbs"),
    ),
    (
        AL2_TEMPLATE,
        include_str!("../../blueprints/userdata/al2.sh.hbs"),
    ),
    (
        SIGNAL_TEMPLATE,
        include_str!("../../blueprints/userdata/signal.sh.hbs"),
    ),
];

/// Shell pieces shared by the AL2023 and AL2 scripts.
const PARTIALS: &[(&str, &str)] = &[
    (
        "prelude",
        include_str!("../../blueprints/userdata/prelude.sh.hbs"),
    ),
    (
        "signal_install",
        include_str!("../../blueprints/userdata/signal_install.sh.hbs"),
    ),
    (
        "signal_start",
        include_str!("../../blueprints/userdata/signal_start.sh.hbs"),
    ),
    (
        "pre_bootstrap",
        include_str!("../../blueprints/userdata/pre_bootstrap.sh.hbs"),
    ),
    (
        "imds_block",
        include_str!("../../blueprints/userdata/imds_block.sh.hbs"),
    ),
    (
        "efs_mounts",
        include_str!("../../blueprints/userdata/efs_mounts.sh.hbs"),
    ),
];

/// Templates are parsed once. A parse error is kept rather than panicking so
/// that it surfaces as [`UserDataError::Template`] from every render.
static REGISTRY: LazyLock<Result<Handlebars<'static>, String>> = LazyLock::new(build_registry);

fn build_registry() -> Result<Handlebars<'static>, String> {
    let mut hb = Handlebars::new();
    // The output is shell, YAML and MIME, never HTML: each value is quoted
    // by the helper that fits where it lands instead.
    hb.register_escape_fn(handlebars::no_escape);
    // A misspelt field must fail rendering, not quietly render as nothing.
    hb.set_strict_mode(true);
    let helpers: [(&str, &'static str, TextFn); 3] = [
        ("sq", "quote", |v| Ok(shell_quote(&scalar_text(v)?))),
        ("dq", "quote", |v| Ok(double_quote(&scalar_text(v)?))),
        // Any value as JSON, which is also valid YAML flow syntax.
        ("json", "json", |v| Ok(to_json(v))),
    ];
    for (key, name, text) in helpers {
        hb.register_helper(key, Box::new(TextHelper { name, text }));
    }
    for (name, text) in PARTIALS {
        hb.register_partial(name, *text)
            .map_err(|e| format!("partial {name}: {e}"))?;
    }
    for (name, text) in TEMPLATES {
        hb.register_template_string(name, *text)
            .map_err(|e| format!("template {name}: {e}"))?;
    }
    Ok(hb)
}

fn render_template(name: &str, data: &Value) -> Result<String, UserDataError> {
    let hb = REGISTRY
        .as_ref()
        .map_err(|e| UserDataError::Template(e.clone()))?;
    hb.render(name, data)
        .map_err(|e| UserDataError::Template(format!("{name}: {e}")))
}

/// A helper of one parameter that writes it as text (`{{sq x}}`,
/// `{{dq x}}`, `{{json x}}`). A missing parameter, or one that names an
/// undefined variable, fails rendering.
struct TextHelper {
    /// The helper's name in errors about its parameter.
    name: &'static str,
    text: TextFn,
}

type TextFn = fn(&Value) -> Result<String, RenderError>;

impl HelperDef for TextHelper {
    fn call_inner<'reg: 'rc, 'rc>(
        &self,
        h: &Helper<'rc>,
        _: &'reg Handlebars<'reg>,
        _: &'rc Context,
        _: &mut RenderContext<'reg, 'rc>,
    ) -> Result<ScopedJson<'rc>, RenderError> {
        let param = h
            .param(0)
            .ok_or(RenderErrorReason::ParamNotFoundForIndex(self.name, 0))?;
        if param.is_value_missing() {
            return Err(RenderErrorReason::MissingVariable(param.relative_path().cloned()).into());
        }
        let text = (self.text)(param.value())?;
        Ok(ScopedJson::Derived(Value::String(text)))
    }
}

/// The text of one scalar, for `{{sq x}}` / `{{dq x}}` to quote. Anything
/// else is a template bug and fails rendering.
fn scalar_text(value: &Value) -> Result<String, RenderError> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        _ => Err(RenderErrorReason::InvalidParamType("a string, number or boolean").into()),
    }
}

/// Quotes `text` as one shell word. Inside single quotes nothing is special
/// but the quote itself, which is closed, escaped and reopened. Placeholder
/// marks pass through untouched.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Quotes `text` as a double-quoted string that JSON and YAML both read the
/// same way. The placeholder mark `\u{1}` is left raw on purpose: it is
/// replaced by a CloudFormation value before anything parses the text.
pub fn double_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{1}' => out.push(c),
            // Control characters, DEL and C1 must be escaped in YAML;
            // U+2028/2029 and the BOM trip up some JSON and YAML readers.
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}') => {
                // Writing to a String cannot fail.
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// JSON text for `value`, with strings quoted by [`double_quote`] so that
/// placeholders survive (serde_json would escape them).
fn to_json(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => double_quote(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(to_json).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", double_quote(k), to_json(v)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
    }
}

/// Escapes one `/etc/fstab` field: whitespace separates fields and the
/// backslash starts an octal escape.
fn fstab_field(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            ' ' => out.push_str("\\040"),
            '\t' => out.push_str("\\011"),
            '\n' => out.push_str("\\012"),
            '\\' => out.push_str("\\134"),
            c => out.push(c),
        }
    }
    out
}

/// NFS options recommended for EFS, plus `_netdev,nofail` for boot.
const EFS_MOUNT_OPTIONS: &str =
    "nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,_netdev,nofail";

/// Kubelet settings that AL2's bootstrap passes as flags rather than through
/// kubelet-config.json.
const AL2_FLAG_SETTINGS: &[(&str, &str)] = &[
    ("imageGCHighThresholdPercent", "--image-gc-high-threshold"),
    ("imageGCLowThresholdPercent", "--image-gc-low-threshold"),
];

const TAINT_EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];

/// The input checked and reduced to what both templates need.
struct Prepared<'a> {
    max_pods: Option<u64>,
    /// Kubelet settings other than `maxPods`, in blueprint order.
    kubelet: Vec<(&'a str, &'a Value)>,
    labels_flag: Option<String>,
    taints_flag: Option<String>,
}

fn refuse(what: &'static str, value: &str, separators: &[char]) -> Result<(), UserDataError> {
    match value.chars().find(|c| separators.contains(c)) {
        Some(separator) => Err(UserDataError::Separator {
            what,
            value: value.to_string(),
            separator,
        }),
        None => Ok(()),
    }
}

fn prepare(input: &UserDataInput) -> Result<Prepared<'_>, UserDataError> {
    let mut seen: Vec<&str> = Vec::new();
    let mut kubelet = Vec::new();
    let mut max_pods = input.max_pods.map(u64::from);
    for (key, value) in &input.kubelet_config {
        if seen.contains(&key.as_str()) {
            return Err(UserDataError::DuplicateKubeletSetting(key.clone()));
        }
        seen.push(key);
        if key == "maxPods" {
            // One place for maxPods: AL2 needs it as a flag (bootstrap.sh
            // would overwrite the config file's value), AL2023 in config.
            if input.max_pods.is_some() {
                return Err(UserDataError::DuplicateKubeletSetting(key.clone()));
            }
            let n = value
                .as_u64()
                .ok_or_else(|| UserDataError::KubeletSettingType {
                    key: key.clone(),
                    expected: "a non-negative integer",
                })?;
            max_pods = Some(n);
        } else {
            kubelet.push((key.as_str(), value));
        }
    }

    let mut labels = Vec::with_capacity(input.labels.len());
    for label in &input.labels {
        refuse("label key", &label.key, &[',', '='])?;
        refuse("label value", &label.value, &[','])?;
        labels.push(format!("{}={}", label.key, label.value));
    }
    let mut taints = Vec::with_capacity(input.taints.len());
    for taint in &input.taints {
        refuse("taint key", &taint.key, &[',', '=', ':'])?;
        if !TAINT_EFFECTS.contains(&taint.effect.as_str()) {
            return Err(UserDataError::TaintEffect {
                key: taint.key.clone(),
                effect: taint.effect.clone(),
            });
        }
        taints.push(match &taint.value {
            Some(value) => {
                refuse("taint value", value, &[',', ':'])?;
                format!("{}={}:{}", taint.key, value, taint.effect)
            }
            None => format!("{}:{}", taint.key, taint.effect),
        });
    }

    Ok(Prepared {
        max_pods,
        kubelet,
        labels_flag: (!labels.is_empty()).then(|| format!("--node-labels={}", labels.join(","))),
        taints_flag: (!taints.is_empty())
            .then(|| format!("--register-with-taints={}", taints.join(","))),
    })
}

/// Picks `base`, or `base` with a numeric suffix, such that `clashes` is
/// false for it. The candidates are endless and the text finite, so this
/// ends.
fn unique_marker(base: &str, clashes: impl Fn(&str) -> bool) -> String {
    let mut candidate = base.to_string();
    let mut n = 2u32;
    while clashes(&candidate) {
        candidate = format!("{base}_{n}");
        n += 1;
    }
    candidate
}

/// Renders the signaller script that the user data installs as
/// `/usr/local/bin/eksynth-signal` and runs as `eksynth-signal.service`.
pub fn render_signaller(signal: &Signal) -> Result<String, UserDataError> {
    let data = json!({
        "stackName": signal.stack_name,
        "logicalId": signal.logical_id,
        "region": signal.region,
        "urlSuffix": signal.url_suffix,
        "timeoutSeconds": signal.timeout_seconds,
    });
    let mut script = render_template(SIGNAL_TEMPLATE, &data)?;
    // The install step writes it with a heredoc, whose end marker must
    // follow a newline.
    if !script.ends_with('\n') {
        script.push('\n');
    }
    Ok(script)
}

/// The values shared by the AL2023 and AL2 shell templates.
fn shell_data(input: &UserDataInput) -> Result<serde_json::Map<String, Value>, UserDataError> {
    let script = render_signaller(&input.signal)?;
    // A value with a line equal to the heredoc marker would end the heredoc
    // early; pick a marker no line of the script uses.
    let eof = unique_marker("EKSYNTH_SIGNAL_EOF", |m| script.lines().any(|l| l == m));
    // Slack for the signalling retries after the kubelet wait.
    let hard_limit = u64::from(input.signal.timeout_seconds) + 600;

    let mut mounts = Vec::with_capacity(input.efs_mounts.len());
    for mount in &input.efs_mounts {
        if !mount.mount_point.starts_with('/') {
            return Err(UserDataError::MountPoint(mount.mount_point.clone()));
        }
        let line = format!(
            "{}:/ {} nfs4 {EFS_MOUNT_OPTIONS} 0 0",
            fstab_field(&mount.dns_name),
            fstab_field(&mount.mount_point),
        );
        mounts.push(json!({ "mountPoint": mount.mount_point, "fstabLine": line }));
    }

    let mut data = serde_json::Map::new();
    data.insert(
        "signal".into(),
        json!({ "script": script, "eof": eof, "hardLimitSeconds": hard_limit }),
    );
    data.insert(
        "preBootstrapCommands".into(),
        json!(input.pre_bootstrap_commands),
    );
    data.insert("blockPodImds".into(), json!(input.block_pod_imds));
    data.insert("efsMounts".into(), Value::Array(mounts));
    Ok(data)
}

fn nodeconfig_data(input: &UserDataInput, prepared: &Prepared) -> Value {
    let mut config = Vec::new();
    if let Some(max_pods) = prepared.max_pods {
        config.push(json!({ "key": "maxPods", "value": max_pods }));
    }
    for (key, value) in &prepared.kubelet {
        config.push(json!({ "key": key, "value": value }));
    }
    let flags: Vec<&String> = [&prepared.labels_flag, &prepared.taints_flag]
        .into_iter()
        .flatten()
        .collect();
    json!({
        "cluster": {
            "name": input.cluster_name,
            "apiServerEndpoint": input.api_server_endpoint,
            "certificateAuthority": input.certificate_authority,
            "cidr": input.service_ipv4_cidr,
        },
        "kubelet": {
            "present": !config.is_empty() || !flags.is_empty(),
            "config": config,
            "flags": flags,
        },
    })
}

fn al2_bootstrap_data(input: &UserDataInput, prepared: &Prepared) -> Result<Value, UserDataError> {
    let mut args: Vec<String> = [&prepared.labels_flag, &prepared.taints_flag]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    if let Some(max_pods) = prepared.max_pods {
        args.push(format!("--max-pods={max_pods}"));
    }
    let mut config = serde_json::Map::new();
    for (key, value) in &prepared.kubelet {
        match AL2_FLAG_SETTINGS.iter().find(|(k, _)| k == key) {
            Some((_, flag)) => {
                let text = match value {
                    Value::Number(n) => n.to_string(),
                    // A placeholder for a template value.
                    Value::String(s) => s.clone(),
                    _ => {
                        return Err(UserDataError::KubeletSettingType {
                            key: (*key).to_string(),
                            expected: "a number",
                        });
                    }
                };
                args.push(format!("{flag}={text}"));
            }
            None => {
                config.insert((*key).to_string(), (*value).clone());
            }
        }
    }
    let config_json = if config.is_empty() {
        String::new()
    } else {
        to_json(&Value::Object(config))
    };
    Ok(json!({
        "clusterName": input.cluster_name,
        "certificateAuthority": input.certificate_authority,
        "apiServerEndpoint": input.api_server_endpoint,
        "dnsClusterIp": input.dns_cluster_ip,
        "maxPodsFlag": prepared.max_pods.is_some(),
        "kubeletExtraArgs": args.join(" "),
        "kubeletConfigJson": config_json,
    }))
}

/// A MIME part: its content type and body.
struct Part {
    content_type: &'static str,
    body: String,
}

/// Wraps parts in a `multipart/mixed` document whose boundary occurs in
/// none of them.
fn mime(parts: Vec<Part>) -> Result<String, UserDataError> {
    let boundary = unique_marker("==EKSYNTH_BOUNDARY==", |b| {
        parts.iter().any(|p| p.body.contains(b))
    });
    let parts: Vec<Value> = parts
        .into_iter()
        .map(|p| {
            let mut body = p.body;
            if !body.ends_with('\n') {
                body.push('\n');
            }
            json!({ "contentType": p.content_type, "body": body })
        })
        .collect();
    render_template(
        MIME_TEMPLATE,
        &json!({ "boundary": boundary, "parts": parts }),
    )
}

const SHELL_CONTENT_TYPE: &str = "text/x-shellscript; charset=\"utf-8\"";

/// Renders the user data for one node group.
///
/// Both families get a MIME `multipart/mixed` document. AL2023 needs it for
/// the nodeadm `NodeConfig` part; AL2 has a single shell part, because
/// cloud-init runs either form the same way, and one envelope keeps a single
/// shape to check and lets an EKS managed node group (which only accepts
/// MIME user data in a launch template) use the same text.
pub fn render(input: &UserDataInput) -> Result<String, UserDataError> {
    let prepared = prepare(input)?;
    let mut data = shell_data(input)?;
    let parts = match input.bootstrap {
        Bootstrap::Al2023 => {
            let nodeconfig =
                render_template(NODECONFIG_TEMPLATE, &nodeconfig_data(input, &prepared))?;
            let script = render_template(AL2023_TEMPLATE, &Value::Object(data))?;
            vec![
                Part {
                    content_type: "application/node.eks.aws",
                    body: nodeconfig,
                },
                Part {
                    content_type: SHELL_CONTENT_TYPE,
                    body: script,
                },
            ]
        }
        Bootstrap::Al2 => {
            data.insert("bootstrap".into(), al2_bootstrap_data(input, &prepared)?);
            let script = render_template(AL2_TEMPLATE, &Value::Object(data))?;
            vec![Part {
                content_type: SHELL_CONTENT_TYPE,
                body: script,
            }]
        }
    };
    mime(parts)
}
