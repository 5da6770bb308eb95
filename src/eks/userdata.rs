//! User data: the text each node runs at boot, rendered from the handlebars
//! templates in `blueprints/userdata/`: MIME with shell (and a nodeadm
//! `NodeConfig`) for Amazon Linux, TOML settings for Bottlerocket, a
//! `<powershell>` script for Windows. [`Mode`] decides how much of the
//! bootstrap is ours: all of it for self-managed groups (which also signal
//! CloudFormation) and for managed groups on a custom AMI, only the user's
//! own parts for managed groups on an EKS AMI.
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

use super::kubelet_config;
use super::settings_toml::{flatten_settings, toml_key, toml_value};
use crate::cfn::sub::{self, is_placeholder};

/// The AMI families whose user data is rendered here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Bootstrap {
    /// Amazon Linux 2023: MIME multipart with a nodeadm `NodeConfig`.
    Al2023,
    /// Amazon Linux 2: `/etc/eks/bootstrap.sh`.
    Al2,
    /// Bottlerocket: TOML settings, not a script.
    Bottlerocket,
    /// Windows Server: a `<powershell>` script around `Start-EKSBootstrap.ps1`.
    Windows,
}

/// Who bootstraps the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Mode {
    /// A self-managed group: the full bootstrap, and the signal to CloudFormation.
    SelfManaged,
    /// A managed node group on an EKS AMI: EKS adds the bootstrap itself and merges
    /// our user data with its own, so only the user's parts are rendered; no signal.
    ManagedEksAmi,
    /// A managed node group on a custom AMI: the full bootstrap; no signal.
    ManagedCustomAmi,
}

/// Everything a node needs to join the cluster and report back.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserDataInput {
    pub bootstrap: Bootstrap,
    pub mode: Mode,
    pub cluster_name: String,
    pub api_server_endpoint: String,
    /// Base64 certificate authority data.
    pub certificate_authority: String,
    pub service_ipv4_cidr: String,
    /// The cluster DNS IP (the service CIDR's `.10` address), for AL2,
    /// Bottlerocket and Windows.
    pub dns_cluster_ip: String,
    /// Node labels. Rendered for self-managed groups only: a managed group
    /// sets them through the EKS API, on an EKS AMI or a custom one.
    pub labels: Vec<Label>,
    /// Node taints. Rendered for self-managed groups only, like the labels.
    pub taints: Vec<Taint>,
    pub max_pods: Option<u32>,
    /// Kubelet configuration fields (e.g. `imageGCHighThresholdPercent`),
    /// in the kubelet's own camelCase names, in blueprint order.
    pub kubelet_config: Vec<(String, serde_json::Value)>,
    /// AL2023: the user's `NodeConfig` `spec` fragment, merged into the
    /// generated one (the loader made sure none of it conflicts).
    pub node_config: Option<Value>,
    /// Shell commands (PowerShell on Windows) run before the node joins.
    pub pre_bootstrap_commands: Vec<String>,
    /// The user's own MIME parts (AL2023 and AL2), placed before eksynth's
    /// shell part so that they run before the node joins.
    pub user_data_parts: Vec<ExtraPart>,
    /// The user's Bottlerocket settings under `settings` (never null, and
    /// never one that eksynth writes itself: the loader checked both).
    pub bottlerocket_settings: serde_json::Map<String, Value>,
    pub efs_mounts: Vec<EfsMount>,
    /// Block pods (traffic from `eni+` interfaces) from reaching IMDS.
    pub block_pod_imds: bool,
    /// How the node reports to CloudFormation: `Some` exactly for
    /// [`Mode::SelfManaged`].
    pub signal: Option<Signal>,
    /// AL2 only: extra `bootstrap.sh` arguments, the user's own shell text,
    /// appended verbatim after eksynth's.
    pub bootstrap_arguments: Option<String>,
}

/// A MIME part of the user's, added as written.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtraPart {
    /// A MIME type such as `text/cloud-config`.
    pub content_type: String,
    pub content: String,
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
    /// CloudFormation's own timeout for the signal (the creation policy's);
    /// the node gives up earlier, at [`node_deadline_seconds`].
    pub timeout_seconds: u32,
    /// What sends the signal from an AL2023 or AL2 node.
    pub client: SignalClient,
    /// Commands (PowerShell on Windows) run once kubelet is healthy and
    /// before the signal: one that fails sends FAILURE.
    pub post_bootstrap_commands: Vec<String>,
}

/// What sends the signal from an Amazon Linux node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum SignalClient {
    /// The image's own `cfn-signal` (aws-cfn-bootstrap), which the
    /// EKS-optimized AL2023 and AL2 images carry.
    #[default]
    Image,
    /// A signaller embedded in the user data that signs `SignalResource`
    /// with `curl --aws-sigv4`: for custom images without `cfn-signal`.
    Embedded,
}

/// The most a node keeps back from CloudFormation's timeout: CloudFormation's
/// clock starts when it creates or updates the group, before the instance
/// is launched and boots, and the signal's retries take time too.
pub const SIGNAL_MARGIN_SECONDS: u32 = 300;

/// How long after its user data starts a node waits for kubelet before it
/// signals FAILURE: CloudFormation's timeout minus [`SIGNAL_MARGIN_SECONDS`],
/// or half the timeout when that is shorter, so that the FAILURE and its
/// reason reach CloudFormation while it still waits.
pub fn node_deadline_seconds(timeout_seconds: u32) -> u32 {
    timeout_seconds - SIGNAL_MARGIN_SECONDS.min(timeout_seconds / 2)
}

impl Signal {
    /// The values the templates see: the fields, and the node's deadline.
    fn data(&self) -> Value {
        let mut data = json!(self);
        data["deadlineSeconds"] = json!(node_deadline_seconds(self.timeout_seconds));
        // Numbered from 1, for the reason of a FAILURE.
        data["postBootstrap"] = self
            .post_bootstrap_commands
            .iter()
            .enumerate()
            .map(|(index, command)| json!({ "command": command, "number": index + 1 }))
            .collect();
        data
    }
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
    #[error("{what} cannot be set for {target}")]
    Unsupported { what: String, target: &'static str },
    #[error("label `{0}` is given more than once")]
    DuplicateLabel(String),
    #[error(
        "a signal must be given for a self-managed group and only for one (mode {mode:?}, signal {given})"
    )]
    SignalMode { mode: Mode, given: &'static str },
    /// A bug in the embedded templates, not in the input.
    #[error("user data template: {0}")]
    Template(String),
}

const MIME_TEMPLATE: &str = "mime";
const NODECONFIG_TEMPLATE: &str = "nodeconfig";
const AL2023_TEMPLATE: &str = "al2023";
const AL2_TEMPLATE: &str = "al2";
const SIGNAL_TEMPLATE: &str = "signal";
const SIGNAL_SIGV4_TEMPLATE: &str = "signal_sigv4";
const BOTTLEROCKET_TEMPLATE: &str = "bottlerocket";
const WINDOWS_TEMPLATE: &str = "windows";

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
    (
        SIGNAL_SIGV4_TEMPLATE,
        include_str!("../../blueprints/userdata/signal_sigv4.sh.hbs"),
    ),
    (
        BOTTLEROCKET_TEMPLATE,
        include_str!("../../blueprints/userdata/bottlerocket.toml.hbs"),
    ),
    (
        WINDOWS_TEMPLATE,
        include_str!("../../blueprints/userdata/windows.ps1.hbs"),
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
    (
        "post_bootstrap",
        include_str!("../../blueprints/userdata/post_bootstrap.sh.hbs"),
    ),
];

/// Templates are parsed once. A parse error is kept rather than panicking so
/// that it surfaces as [`UserDataError::Template`] from every render.
static REGISTRY: LazyLock<Result<Handlebars<'static>, String>> = LazyLock::new(build_registry);

fn build_registry() -> Result<Handlebars<'static>, String> {
    let mut hb = Handlebars::new();
    // The output is shell, PowerShell, YAML, TOML and MIME, never HTML: each
    // value is quoted by the helper that fits where it lands instead.
    hb.register_escape_fn(handlebars::no_escape);
    // A misspelt field must fail rendering, not quietly render as nothing.
    hb.set_strict_mode(true);
    let helpers: [(&str, &'static str, TextFn); 5] = [
        ("sq", "quote", |v| Ok(shell_quote(&scalar_text(v)?))),
        ("dq", "quote", |v| Ok(double_quote(&scalar_text(v)?))),
        ("psq", "quote", |v| Ok(powershell_quote(&scalar_text(v)?))),
        ("tq", "quote", |v| Ok(toml_quote(&scalar_text(v)?))),
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
/// same way. The placeholder mark ([`sub::MARK`]) is left raw on purpose: it is
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
            sub::MARK => out.push(c),
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

/// Quotes `text` as one single-quoted PowerShell string, in which nothing
/// is special but the quote. PowerShell takes the typographic single quotes
/// (U+2018 to U+201B) for quotes too, so each of them is doubled like the
/// ASCII one; a doubled quote stands for its second character, so the text
/// reads back exactly. Placeholder marks pass through untouched.
pub fn powershell_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for c in text.chars() {
        if matches!(c, '\'' | '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}') {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// Quotes `text` as a TOML basic string: TOML's escapes are those of a JSON
/// string, so this is [`double_quote`] (placeholder marks stay raw there
/// too, and are replaced before anything parses the text).
pub fn toml_quote(text: &str) -> String {
    double_quote(text)
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

/// The input checked and reduced to what every family needs.
struct Prepared<'a> {
    max_pods: Option<u64>,
    /// Kubelet settings other than `maxPods`, in blueprint order.
    kubelet: Vec<(&'a str, &'a Value)>,
    labels_flag: Option<String>,
    taints_flag: Option<String>,
}

impl Prepared<'_> {
    /// The kubelet flags every bootstrap that takes flags gets: labels,
    /// taints and the pod limit.
    fn kubelet_flags(&self) -> Vec<String> {
        let mut flags: Vec<String> = [&self.labels_flag, &self.taints_flag]
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        flags.extend(self.max_pods.map(|n| format!("--max-pods={n}")));
        flags
    }
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

fn unsupported(what: impl Into<String>, target: &'static str) -> UserDataError {
    UserDataError::Unsupported {
        what: what.into(),
        target,
    }
}

/// Whether labels and taints are rendered: a managed group sets them
/// through the EKS API instead (the one place that decides it).
fn renders_labels(input: &UserDataInput) -> bool {
    input.mode == Mode::SelfManaged
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

    let mut labels = Vec::new();
    let mut taints = Vec::new();
    if renders_labels(input) {
        for label in &input.labels {
            refuse("label key", &label.key, &[',', '='])?;
            refuse("label value", &label.value, &[','])?;
            labels.push(format!("{}={}", label.key, label.value));
        }
        for taint in &input.taints {
            refuse("taint key", &taint.key, &[',', '=', ':'])?;
            if !TAINT_EFFECTS.contains(&taint.effect.as_str()) {
                return Err(UserDataError::TaintEffect {
                    key: taint.key.clone(),
                    effect: taint.effect.clone(),
                });
            }
            if let Some(value) = &taint.value {
                refuse("taint value", value, &[',', ':'])?;
            }
            taints.push(format!("{}{}", taint.key, taint_text(taint, "=")));
        }
    }

    Ok(Prepared {
        max_pods,
        kubelet,
        labels_flag: (!labels.is_empty()).then(|| format!("--node-labels={}", labels.join(","))),
        taints_flag: (!taints.is_empty())
            .then(|| format!("--register-with-taints={}", taints.join(","))),
    })
}

/// A taint without its key: `<prefix>value:Effect`, or `:Effect` when it
/// has no value.
fn taint_text(taint: &Taint, prefix: &str) -> String {
    match &taint.value {
        Some(value) => format!("{prefix}{value}:{}", taint.effect),
        None => format!(":{}", taint.effect),
    }
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
    let template = match signal.client {
        SignalClient::Image => SIGNAL_TEMPLATE,
        SignalClient::Embedded => SIGNAL_SIGV4_TEMPLATE,
    };
    let mut script = render_template(template, &signal.data())?;
    // The install step writes it with a heredoc, whose end marker must
    // follow a newline.
    if !script.ends_with('\n') {
        script.push('\n');
    }
    Ok(script)
}

/// Whether the input has anything for the shell part besides the bootstrap
/// and the signal.
fn has_shell_steps(input: &UserDataInput) -> bool {
    !input.pre_bootstrap_commands.is_empty() || input.block_pod_imds || !input.efs_mounts.is_empty()
}

/// The values shared by the AL2023 and AL2 shell templates.
fn shell_data(input: &UserDataInput) -> Result<serde_json::Map<String, Value>, UserDataError> {
    let signal = match &input.signal {
        Some(signal) => {
            let script = render_signaller(signal)?;
            // A value with a line equal to the heredoc marker would end the
            // heredoc early; pick a marker no line of the script uses.
            let eof = unique_marker("EKSYNTH_SIGNAL_EOF", |m| script.lines().any(|l| l == m));
            // Past CloudFormation's own timeout a signal changes nothing.
            let hard_limit = signal.timeout_seconds;
            json!({ "script": script, "eof": eof, "hardLimitSeconds": hard_limit })
        }
        None => Value::Null,
    };

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
    data.insert("signal".into(), signal);
    data.insert(
        "preBootstrapCommands".into(),
        json!(input.pre_bootstrap_commands),
    );
    data.insert("blockPodImds".into(), json!(input.block_pod_imds));
    data.insert("efsMounts".into(), Value::Array(mounts));
    Ok(data)
}

/// The NodeConfig's values; `None` when it would say nothing (only possible
/// without the cluster section, for a managed group on an EKS AMI). The
/// user's `nodeConfig` joins the generated values: its `kubelet.config`
/// fields and `kubelet.flags` after eksynth's, its other sections as given.
fn nodeconfig_data(input: &UserDataInput, prepared: &Prepared) -> Option<Value> {
    let mut config = Vec::new();
    if let Some(max_pods) = prepared.max_pods {
        config.push(json!({ "key": "maxPods", "value": max_pods }));
    }
    for (key, value) in &prepared.kubelet {
        config.push(json!({ "key": key, "value": value }));
    }
    let mut flags: Vec<Value> = [&prepared.labels_flag, &prepared.taints_flag]
        .into_iter()
        .flatten()
        .map(|f| json!(f))
        .collect();
    let empty = serde_json::Map::new();
    let user = input
        .node_config
        .as_ref()
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let entries = |map: Option<&Value>, skip: &[&str]| -> Vec<Value> {
        map.and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(k, _)| !skip.contains(&k.as_str()))
            .map(|(k, v)| json!({ "key": k, "value": v }))
            .collect()
    };
    let user_kubelet = user.get("kubelet");
    for entry in entries(user_kubelet.and_then(|k| k.get("config")), &[]) {
        if !config.iter().any(|c| c["key"] == entry["key"]) {
            config.push(entry);
        }
    }
    if let Some(Value::Array(more)) = user_kubelet.and_then(|k| k.get("flags")) {
        for flag in more {
            if !flags.contains(flag) {
                flags.push(flag.clone());
            }
        }
    }
    let kubelet_extra = entries(user_kubelet, &["config", "flags"]);
    let cluster_extra = entries(user.get("cluster"), &[]);
    let extra = entries(input.node_config.as_ref(), &["cluster", "kubelet"]);
    let kubelet_present = !config.is_empty() || !flags.is_empty() || !kubelet_extra.is_empty();
    let generated = input.mode != Mode::ManagedEksAmi;
    if !generated && !kubelet_present && cluster_extra.is_empty() && extra.is_empty() {
        return None;
    }
    // On an EKS AMI in a managed group EKS adds the cluster section in a
    // NodeConfig of its own.
    let cluster = if generated || !cluster_extra.is_empty() {
        json!({
            "generated": generated,
            "name": input.cluster_name,
            "apiServerEndpoint": input.api_server_endpoint,
            "certificateAuthority": input.certificate_authority,
            "cidr": input.service_ipv4_cidr,
            "extra": cluster_extra,
        })
    } else {
        Value::Null
    };
    Some(json!({
        "cluster": cluster,
        "kubelet": {
            "present": kubelet_present,
            "config": config,
            "flags": flags,
            "extra": kubelet_extra,
        },
        "extra": extra,
    }))
}

/// The user's extra `bootstrap.sh` arguments, if any.
fn bootstrap_arguments(input: &UserDataInput) -> Option<&str> {
    input
        .bootstrap_arguments
        .as_deref()
        .filter(|a| !a.trim().is_empty())
}

/// Refuses what `target` cannot carry.
fn refuse_fields(
    input: &UserDataInput,
    target: &'static str,
    fields: &[Field],
) -> Result<(), UserDataError> {
    for field in fields {
        let set = match field {
            Field::PreBootstrapCommands => !input.pre_bootstrap_commands.is_empty(),
            Field::EfsMounts => !input.efs_mounts.is_empty(),
            Field::BlockPodImds => input.block_pod_imds,
            Field::BootstrapArguments => bootstrap_arguments(input).is_some(),
            Field::PostBootstrapCommands => input
                .signal
                .as_ref()
                .is_some_and(|s| !s.post_bootstrap_commands.is_empty()),
            Field::UserDataParts => !input.user_data_parts.is_empty(),
            Field::BottlerocketSettings => !input.bottlerocket_settings.is_empty(),
        };
        if set {
            return Err(unsupported(field.name(), target));
        }
    }
    Ok(())
}

/// Input fields that not every family can carry.
#[derive(Clone, Copy)]
enum Field {
    PreBootstrapCommands,
    EfsMounts,
    BlockPodImds,
    BootstrapArguments,
    PostBootstrapCommands,
    UserDataParts,
    BottlerocketSettings,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::PreBootstrapCommands => "pre-bootstrap commands",
            Field::EfsMounts => "EFS mounts",
            Field::BlockPodImds => "the pod IMDS block",
            Field::BootstrapArguments => "bootstrap.sh arguments",
            Field::PostBootstrapCommands => "post-bootstrap commands",
            Field::UserDataParts => "MIME user-data parts",
            Field::BottlerocketSettings => "Bottlerocket settings",
        }
    }
}

fn al2_bootstrap_data(input: &UserDataInput, prepared: &Prepared) -> Result<Value, UserDataError> {
    // On an EKS AMI in a managed group EKS writes the bootstrap.sh call, so
    // every kubelet setting goes through kubelet-config.json.
    let run = input.mode != Mode::ManagedEksAmi;
    let mut args = prepared.kubelet_flags();
    let mut config = serde_json::Map::new();
    for (key, value) in &prepared.kubelet {
        match AL2_FLAG_SETTINGS.iter().find(|(k, _)| k == key) {
            Some((_, flag)) if run => {
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
            _ => {
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
        "run": run,
        "clusterName": input.cluster_name,
        "certificateAuthority": input.certificate_authority,
        "apiServerEndpoint": input.api_server_endpoint,
        "dnsClusterIp": input.dns_cluster_ip,
        "maxPodsFlag": prepared.max_pods.is_some(),
        "kubeletExtraArgs": args.join(" "),
        "kubeletConfigJson": config_json,
        "extraArguments": bootstrap_arguments(input),
    }))
}

/// A MIME part: its content type and body.
struct Part {
    content_type: String,
    body: String,
}

impl Part {
    fn new(content_type: &str, body: String) -> Part {
        Part {
            content_type: content_type.to_string(),
            body,
        }
    }
}

/// The user's parts, each declared UTF-8 like eksynth's own.
fn extra_parts(input: &UserDataInput) -> impl Iterator<Item = Part> + '_ {
    input.user_data_parts.iter().map(|part| Part {
        content_type: format!("{}; charset=\"utf-8\"", part.content_type),
        body: part.content.clone(),
    })
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
const NODECONFIG_CONTENT_TYPE: &str = "application/node.eks.aws";

/// The most user data EC2 accepts, in bytes once decoded.
pub const MAX_USER_DATA_BYTES: usize = 16_384;

/// The size of rendered user data once CloudFormation has filled it in,
/// template values counted as nothing (as validation counts them).
pub fn measured_len(text: &str) -> usize {
    text.split(sub::MARK)
        .enumerate()
        .map(|(i, piece)| match i % 2 {
            // A placeholder's index, and its two marks.
            1 if piece.chars().all(|c| c.is_ascii_digit()) => 0,
            1 => piece.len() + 2 * sub::MARK.len_utf8(),
            _ => piece.len(),
        })
        .sum()
}

/// Who takes the bytes of a group's user data: eksynth's own parts (the
/// bootstrap, the signal, the pod IMDS block), and the group's fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Share {
    pub total: usize,
    /// The user data with none of the group's fields set.
    pub own: usize,
    /// What each field set adds, by its blueprint name, largest first.
    pub fields: Vec<(&'static str, usize)>,
}

/// Measures who takes the bytes of `input`'s user data.
pub fn share(input: &UserDataInput) -> Result<Share, UserDataError> {
    let size = |input: &UserDataInput| render(input).map(|text| measured_len(&text));
    let total = size(input)?;
    let mut own = input.clone();
    let mut fields = Vec::new();
    for field in USER_FIELDS {
        let mut without = input.clone();
        if !clear(&mut without, field) {
            continue;
        }
        clear(&mut own, field);
        fields.push((field, total.saturating_sub(size(&without)?)));
    }
    fields.sort_by_key(|&(_, bytes)| std::cmp::Reverse(bytes));
    Ok(Share {
        total,
        own: size(&own)?,
        fields,
    })
}

/// The blueprint fields that put the group's own text into its user data.
const USER_FIELDS: [&str; 11] = [
    "preBootstrapCommands",
    "postBootstrapCommands",
    "userDataParts",
    "bottlerocket",
    "efsMounts",
    "labels",
    "taints",
    "kubelet",
    "nodeConfig",
    "maxPods",
    "bootstrapArguments",
];

/// Clears `field` in `input`; false when it was not set.
fn clear(input: &mut UserDataInput, field: &str) -> bool {
    fn take<T>(v: &mut Vec<T>) -> bool {
        !std::mem::take(v).is_empty()
    }
    match field {
        "preBootstrapCommands" => take(&mut input.pre_bootstrap_commands),
        "postBootstrapCommands" => input
            .signal
            .as_mut()
            .is_some_and(|s| take(&mut s.post_bootstrap_commands)),
        "userDataParts" => take(&mut input.user_data_parts),
        "bottlerocket" => !std::mem::take(&mut input.bottlerocket_settings).is_empty(),
        "efsMounts" => take(&mut input.efs_mounts),
        "labels" => take(&mut input.labels),
        "taints" => take(&mut input.taints),
        "kubelet" => take(&mut input.kubelet_config),
        "maxPods" => input.max_pods.take().is_some(),
        "nodeConfig" => input.node_config.take().is_some(),
        "bootstrapArguments" => input.bootstrap_arguments.take().is_some(),
        _ => false,
    }
}

/// Renders the user data for one node group.
///
/// - AL2023 and AL2 get a MIME `multipart/mixed` document. AL2023 needs it
///   for the nodeadm `NodeConfig` part; AL2 has a single shell part, because
///   cloud-init runs either form the same way, and one envelope keeps a
///   single shape to check. EKS accepts only MIME user data in the launch
///   template of a managed group, and merges it with its own.
/// - Bottlerocket gets TOML settings.
/// - Windows gets a `<powershell>` script.
///
/// For [`Mode::ManagedEksAmi`] only the user's own parts are rendered (EKS
/// adds the bootstrap); when there are none the result is an empty string,
/// and the caller leaves `UserData` out.
pub fn render(input: &UserDataInput) -> Result<String, UserDataError> {
    match (input.mode, &input.signal) {
        (Mode::SelfManaged, Some(_)) | (Mode::ManagedEksAmi | Mode::ManagedCustomAmi, None) => {}
        (mode, signal) => {
            return Err(UserDataError::SignalMode {
                mode,
                given: if signal.is_some() { "given" } else { "missing" },
            });
        }
    }
    let prepared = prepare(input)?;
    match input.bootstrap {
        Bootstrap::Al2023 => render_al2023(input, &prepared),
        Bootstrap::Al2 => render_al2(input, &prepared),
        Bootstrap::Bottlerocket => render_bottlerocket(input, &prepared),
        Bootstrap::Windows => render_windows(input, &prepared),
    }
}

fn render_al2023(input: &UserDataInput, prepared: &Prepared) -> Result<String, UserDataError> {
    refuse_fields(
        input,
        "AL2023 (nodeadm)",
        &[Field::BootstrapArguments, Field::BottlerocketSettings],
    )?;
    let mut parts = Vec::new();
    if let Some(data) = nodeconfig_data(input, prepared) {
        parts.push(Part::new(
            NODECONFIG_CONTENT_TYPE,
            render_template(NODECONFIG_TEMPLATE, &data)?,
        ));
    }
    parts.extend(extra_parts(input));
    // Without a signal there is no need for a script that does nothing.
    if input.signal.is_some() || has_shell_steps(input) {
        let data = shell_data(input)?;
        parts.push(Part::new(
            SHELL_CONTENT_TYPE,
            render_template(AL2023_TEMPLATE, &Value::Object(data))?,
        ));
    }
    if parts.is_empty() {
        return Ok(String::new());
    }
    mime(parts)
}

fn render_al2(input: &UserDataInput, prepared: &Prepared) -> Result<String, UserDataError> {
    refuse_fields(input, "AL2", &[Field::BottlerocketSettings])?;
    let mut parts: Vec<Part> = extra_parts(input).collect();
    if input.mode == Mode::ManagedEksAmi {
        const TARGET: &str =
            "a managed node group on the EKS AL2 AMI (EKS writes the bootstrap.sh call)";
        refuse_fields(input, TARGET, &[Field::BootstrapArguments])?;
        if prepared.max_pods.is_some() {
            // bootstrap.sh would overwrite it with EKS's own value.
            return Err(unsupported("maxPods", TARGET));
        }
        if !has_shell_steps(input) && prepared.kubelet.is_empty() {
            if parts.is_empty() {
                return Ok(String::new());
            }
            return mime(parts);
        }
    }
    if bootstrap_arguments(input).is_some_and(|a| a.contains(['\n', '\r'])) {
        return Err(unsupported(
            "bootstrap.sh arguments with a line break",
            "AL2 (they continue the bootstrap.sh command line)",
        ));
    }
    let mut data = shell_data(input)?;
    data.insert("bootstrap".into(), al2_bootstrap_data(input, prepared)?);
    let script = render_template(AL2_TEMPLATE, &Value::Object(data))?;
    parts.push(Part::new(SHELL_CONTENT_TYPE, script));
    mime(parts)
}

// ------------------------------------------------------------ Bottlerocket

/// What a Bottlerocket kubelet setting holds.
#[derive(Clone, Copy)]
enum TomlKind {
    Integer,
    String,
    /// A table of quantity strings.
    Table,
}

/// Kubelet settings and the `settings.kubernetes` names Bottlerocket gives
/// them. Bottlerocket has no `serializeImagePulls` (only
/// `max-parallel-image-pulls`), so that one is refused.
const BOTTLEROCKET_SETTINGS: &[(&str, &str, TomlKind)] = &[
    (
        "imageGCHighThresholdPercent",
        "image-gc-high-threshold-percent",
        TomlKind::Integer,
    ),
    (
        "imageGCLowThresholdPercent",
        "image-gc-low-threshold-percent",
        TomlKind::Integer,
    ),
    ("podPidsLimit", "pod-pids-limit", TomlKind::Integer),
    (
        "containerLogMaxFiles",
        "container-log-max-files",
        TomlKind::Integer,
    ),
    (
        "containerLogMaxSize",
        "container-log-max-size",
        TomlKind::String,
    ),
    ("cpuManagerPolicy", "cpu-manager-policy", TomlKind::String),
    ("evictionHard", "eviction-hard", TomlKind::Table),
    ("kubeReserved", "kube-reserved", TomlKind::Table),
    ("systemReserved", "system-reserved", TomlKind::Table),
];

fn toml_scalar(key: &str, value: &Value, kind: TomlKind) -> Result<String, UserDataError> {
    let mismatch = |expected| UserDataError::KubeletSettingType {
        key: key.to_string(),
        expected,
    };
    match (kind, value) {
        (TomlKind::Integer, Value::Number(n)) if n.is_i64() || n.is_u64() => Ok(n.to_string()),
        (TomlKind::Integer, Value::String(s)) if is_placeholder(s) => Ok(s.clone()),
        (TomlKind::Integer, _) => Err(mismatch("an integer")),
        (TomlKind::String, Value::String(s)) => Ok(toml_quote(s)),
        (TomlKind::String, _) => Err(mismatch("a string")),
        (TomlKind::Table, _) => Err(mismatch("a map")),
    }
}

fn render_bottlerocket(
    input: &UserDataInput,
    prepared: &Prepared,
) -> Result<String, UserDataError> {
    refuse_fields(
        input,
        "Bottlerocket (its user data is settings, not a script)",
        &[
            Field::PreBootstrapCommands,
            Field::PostBootstrapCommands,
            Field::UserDataParts,
            Field::EfsMounts,
            Field::BlockPodImds,
            Field::BootstrapArguments,
        ],
    )?;
    let full = input.mode != Mode::ManagedEksAmi;
    let mut kubernetes: Vec<(String, String)> = Vec::new();
    if full {
        kubernetes.push(("cluster-name".into(), toml_quote(&input.cluster_name)));
        kubernetes.push(("api-server".into(), toml_quote(&input.api_server_endpoint)));
        kubernetes.push((
            "cluster-certificate".into(),
            toml_quote(&input.certificate_authority),
        ));
        kubernetes.push(("cluster-dns-ip".into(), toml_quote(&input.dns_cluster_ip)));
    }
    if let Some(max_pods) = prepared.max_pods {
        kubernetes.push(("max-pods".into(), max_pods.to_string()));
    }

    // Each table: its name under settings.kubernetes and (key, TOML value).
    let mut tables: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for (key, value) in &prepared.kubelet {
        let Some((_, name, kind)) = BOTTLEROCKET_SETTINGS.iter().find(|(k, _, _)| k == key) else {
            let settings = kubelet_config::bottlerocket_settings(key, value).map_err(|_| {
                unsupported(
                    format!("kubelet setting `{key}`"),
                    "Bottlerocket (it has no such setting)",
                )
            })?;
            for (setting, value) in settings {
                match value {
                    Value::Object(map) => {
                        let entries = map
                            .iter()
                            .map(|(k, v)| Ok((k.clone(), toml_value(v)?)))
                            .collect::<Result<Vec<_>, UserDataError>>()?;
                        if !entries.is_empty() {
                            tables.push((setting.key().to_string(), entries));
                        }
                    }
                    _ => kubernetes.push((setting.key().to_string(), toml_value(value)?)),
                }
            }
            continue;
        };
        if let TomlKind::Table = kind {
            let Value::Object(map) = value else {
                return Err(UserDataError::KubeletSettingType {
                    key: (*key).to_string(),
                    expected: "a map",
                });
            };
            let mut entries = Vec::with_capacity(map.len());
            for (k, v) in map {
                let text = match v {
                    Value::String(s) => toml_quote(s),
                    // Bottlerocket reads quantities as strings.
                    Value::Number(n) => toml_quote(&n.to_string()),
                    _ => {
                        return Err(UserDataError::KubeletSettingType {
                            key: format!("{key}.{k}"),
                            expected: "a string",
                        });
                    }
                };
                entries.push((k.clone(), text));
            }
            if !entries.is_empty() {
                tables.push(((*name).to_string(), entries));
            }
        } else {
            kubernetes.push(((*name).to_string(), toml_scalar(key, value, *kind)?));
        }
    }

    if renders_labels(input) {
        let mut labels: Vec<(String, String)> = Vec::new();
        for label in &input.labels {
            if labels.iter().any(|(k, _)| *k == label.key) {
                return Err(UserDataError::DuplicateLabel(label.key.clone()));
            }
            labels.push((label.key.clone(), toml_quote(&label.value)));
        }
        if !labels.is_empty() {
            tables.push(("node-labels".into(), labels));
        }
        // One key may carry several taints (one per effect): Bottlerocket
        // takes a list of `value:Effect` strings for it then, and a single
        // string otherwise.
        let mut taints: Vec<(&str, Vec<String>)> = Vec::new();
        for taint in &input.taints {
            let text = taint_text(taint, "");
            match taints.iter_mut().find(|(k, _)| *k == taint.key) {
                Some((_, values)) => values.push(text),
                None => taints.push((&taint.key, vec![text])),
            }
        }
        if !taints.is_empty() {
            let entries = taints
                .into_iter()
                .map(|(key, values)| {
                    let value = match values.as_slice() {
                        [one] => toml_quote(one),
                        many => {
                            let items: Vec<String> = many.iter().map(|v| toml_quote(v)).collect();
                            format!("[{}]", items.join(", "))
                        }
                    };
                    (key.to_string(), value)
                })
                .collect();
            tables.push(("node-taints".into(), entries));
        }
    }

    // The user's settings: leaves of `kubernetes` join eksynth's table
    // (TOML defines a table once), every other table gets its own header.
    let mut settings: Vec<(String, Vec<(String, String)>)> = Vec::new();
    let mut others: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for (key, value) in &input.bottlerocket_settings {
        match (key.as_str(), value) {
            ("kubernetes", Value::Object(table)) => {
                for (key, value) in table {
                    match value {
                        Value::Object(inner) => flatten_settings(
                            format!("kubernetes.{}", toml_key(key)),
                            inner,
                            &mut settings,
                        )?,
                        value => kubernetes.push((toml_key(key), toml_value(value)?)),
                    }
                }
            }
            (_, Value::Object(table)) => flatten_settings(toml_key(key), table, &mut others)?,
            (_, value) => {
                let leaf = (toml_key(key), toml_value(value)?);
                match others.iter_mut().find(|(path, _)| path.is_empty()) {
                    Some((_, entries)) => entries.push(leaf),
                    None => others.insert(0, (String::new(), vec![leaf])),
                }
            }
        }
    }
    // The user's tables inside `kubernetes` first, beside eksynth's.
    settings.append(&mut others);

    if kubernetes.is_empty() && tables.is_empty() && settings.is_empty() {
        return Ok(String::new());
    }
    let pairs = |entries: Vec<(String, String)>| -> Vec<Value> {
        entries
            .into_iter()
            .map(|(key, value)| json!({ "key": key, "value": value }))
            .collect()
    };
    let tables: Vec<Value> = tables
        .into_iter()
        .map(|(name, entries)| json!({ "name": name, "entries": pairs(entries) }))
        .collect();
    let settings: Vec<Value> = settings
        .into_iter()
        .map(|(path, entries)| json!({ "path": path, "entries": pairs(entries) }))
        .collect();
    // `null` when the group does not signal.
    let signal = input.signal.as_ref().map_or(Value::Null, Signal::data);
    render_template(
        BOTTLEROCKET_TEMPLATE,
        &json!({
            "managedEksAmi": !full,
            "kubernetes": pairs(kubernetes),
            "tables": tables,
            "settings": settings,
            "signal": signal,
        }),
    )
}

// ----------------------------------------------------------------- Windows

/// How a kubelet setting becomes a flag for `-KubeletExtraArgs`.
#[derive(Clone, Copy)]
enum FlagKind {
    Scalar,
    /// A map, as `key<separator>value` pairs joined by commas.
    Map(char),
}

/// Kubelet settings as flags: `Start-EKSBootstrap.ps1` writes the kubelet
/// configuration file itself, so flags are the only way in.
const WINDOWS_FLAGS: &[(&str, &str, FlagKind)] = &[
    (
        "imageGCHighThresholdPercent",
        "--image-gc-high-threshold",
        FlagKind::Scalar,
    ),
    (
        "imageGCLowThresholdPercent",
        "--image-gc-low-threshold",
        FlagKind::Scalar,
    ),
    ("podPidsLimit", "--pod-max-pids", FlagKind::Scalar),
    (
        "containerLogMaxFiles",
        "--container-log-max-files",
        FlagKind::Scalar,
    ),
    (
        "containerLogMaxSize",
        "--container-log-max-size",
        FlagKind::Scalar,
    ),
    ("cpuManagerPolicy", "--cpu-manager-policy", FlagKind::Scalar),
    (
        "serializeImagePulls",
        "--serialize-image-pulls",
        FlagKind::Scalar,
    ),
    ("evictionHard", "--eviction-hard", FlagKind::Map('<')),
    ("kubeReserved", "--kube-reserved", FlagKind::Map('=')),
    ("systemReserved", "--system-reserved", FlagKind::Map('=')),
];

fn flag_scalar(key: &str, value: &Value) -> Result<String, UserDataError> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        _ => Err(UserDataError::KubeletSettingType {
            key: key.to_string(),
            expected: "a string, number or boolean",
        }),
    }
}

fn windows_kubelet_args(prepared: &Prepared) -> Result<String, UserDataError> {
    let mut args = prepared.kubelet_flags();
    for (key, value) in &prepared.kubelet {
        let Some((_, flag, kind)) = WINDOWS_FLAGS.iter().find(|(k, _, _)| k == key) else {
            let none = || {
                unsupported(
                    format!("kubelet setting `{key}`"),
                    "Windows (no kubelet flag is known for it)",
                )
            };
            for (flag, value) in kubelet_config::windows_flags(key, value).map_err(|_| none())? {
                args.extend(flag.args(value).ok_or_else(none)?);
            }
            continue;
        };
        let text = match kind {
            FlagKind::Scalar => flag_scalar(key, value)?,
            FlagKind::Map(separator) => {
                let Value::Object(map) = value else {
                    return Err(UserDataError::KubeletSettingType {
                        key: (*key).to_string(),
                        expected: "a map",
                    });
                };
                let mut pairs = Vec::with_capacity(map.len());
                for (k, v) in map {
                    let v = flag_scalar(&format!("{key}.{k}"), v)?;
                    refuse("kubelet map key", k, &[',', '=', *separator])?;
                    refuse("kubelet map value", &v, &[',', '=', *separator])?;
                    pairs.push(format!("{k}{separator}{v}"));
                }
                if pairs.is_empty() {
                    continue;
                }
                pairs.join(",")
            }
        };
        args.push(format!("{flag}={text}"));
    }
    // The EKS script splits its -KubeletExtraArgs at spaces.
    for arg in &args {
        if let Some(separator) = arg.chars().find(|c| c.is_whitespace()) {
            return Err(UserDataError::Separator {
                what: "kubelet argument",
                value: arg.clone(),
                separator,
            });
        }
    }
    Ok(args.join(" "))
}

fn render_windows(input: &UserDataInput, prepared: &Prepared) -> Result<String, UserDataError> {
    refuse_fields(
        input,
        "Windows",
        &[
            Field::EfsMounts,
            Field::BlockPodImds,
            Field::BootstrapArguments,
            Field::UserDataParts,
            Field::BottlerocketSettings,
        ],
    )?;
    let post_bootstrap = input
        .signal
        .as_ref()
        .map_or(&[][..], |s| s.post_bootstrap_commands.as_slice());
    // EC2Launch runs the text up to the first closing tag.
    if let Some(command) = input
        .pre_bootstrap_commands
        .iter()
        .chain(post_bootstrap)
        .find(|c| c.to_ascii_lowercase().contains("</powershell"))
    {
        return Err(unsupported(
            format!("the command `{command}`"),
            "Windows (it contains `</powershell`, which would end the user data)",
        ));
    }
    let bootstrap = if input.mode == Mode::ManagedEksAmi {
        const TARGET: &str = "a managed node group on the EKS Windows AMI (EKS runs the bootstrap)";
        if prepared.max_pods.is_some() {
            return Err(unsupported("maxPods", TARGET));
        }
        if let Some((key, _)) = prepared.kubelet.first() {
            return Err(unsupported(format!("kubelet setting `{key}`"), TARGET));
        }
        if input.pre_bootstrap_commands.is_empty() {
            return Ok(String::new());
        }
        Value::Null
    } else {
        json!({
            "clusterName": input.cluster_name,
            "apiServerEndpoint": input.api_server_endpoint,
            "certificateAuthority": input.certificate_authority,
            "serviceCidr": input.service_ipv4_cidr,
            "dnsClusterIp": input.dns_cluster_ip,
            "kubeletExtraArgs": windows_kubelet_args(prepared)?,
        })
    };
    let signal = input.signal.as_ref().map_or(Value::Null, Signal::data);
    render_template(
        WINDOWS_TEMPLATE,
        &json!({
            "preBootstrapCommands": input.pre_bootstrap_commands,
            "commands": !input.pre_bootstrap_commands.is_empty() || !post_bootstrap.is_empty(),
            "bootstrap": bootstrap,
            "signal": signal,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loader_refuses_user_settings_at_every_kubelet_setting_eksynth_writes() {
        for (_, name, _) in BOTTLEROCKET_SETTINGS {
            assert!(
                crate::blueprint::reserved_bottlerocket_setting(&["kubernetes", name]).is_some(),
                "settings.kubernetes.{name}"
            );
        }
        for name in [
            "cluster-name",
            "api-server",
            "cluster-certificate",
            "cluster-dns-ip",
            "max-pods",
            "node-labels",
            "node-taints",
        ] {
            assert!(
                crate::blueprint::reserved_bottlerocket_setting(&["kubernetes", name]).is_some(),
                "settings.kubernetes.{name}"
            );
        }
        assert!(crate::blueprint::reserved_bottlerocket_setting(&["cloudformation"]).is_some());
    }
}
