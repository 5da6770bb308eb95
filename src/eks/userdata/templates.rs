//! The handlebars registry: the templates and partials of
//! `blueprints/userdata/`, parsed once, and the quoting helpers they use.

use std::sync::LazyLock;

use handlebars::{
    Context, Handlebars, Helper, HelperDef, RenderContext, RenderError, RenderErrorReason,
    ScopedJson,
};
use serde_json::Value;

use super::UserDataError;
use super::quote::{double_quote, powershell_quote, shell_quote, to_json, toml_quote};

pub(super) const MIME_TEMPLATE: &str = "mime";
pub(super) const NODECONFIG_TEMPLATE: &str = "nodeconfig";
pub(super) const AL2023_TEMPLATE: &str = "al2023";
pub(super) const AL2_TEMPLATE: &str = "al2";
pub(super) const SIGNAL_TEMPLATE: &str = "signal";
pub(super) const SIGNAL_SIGV4_TEMPLATE: &str = "signal_sigv4";
pub(super) const BOTTLEROCKET_TEMPLATE: &str = "bottlerocket";
pub(super) const WINDOWS_TEMPLATE: &str = "windows";

const TEMPLATES: &[(&str, &str)] = &[
    (
        MIME_TEMPLATE,
        include_str!("../../../blueprints/userdata/mime.hbs"),
    ),
    (
        NODECONFIG_TEMPLATE,
        include_str!("../../../blueprints/userdata/nodeconfig.yaml.hbs"),
    ),
    (
        AL2023_TEMPLATE,
        include_str!("../../../blueprints/userdata/al2023.sh.hbs"),
    ),
    (
        AL2_TEMPLATE,
        include_str!("../../../blueprints/userdata/al2.sh.hbs"),
    ),
    (
        SIGNAL_TEMPLATE,
        include_str!("../../../blueprints/userdata/signal.sh.hbs"),
    ),
    (
        SIGNAL_SIGV4_TEMPLATE,
        include_str!("../../../blueprints/userdata/signal_sigv4.sh.hbs"),
    ),
    (
        BOTTLEROCKET_TEMPLATE,
        include_str!("../../../blueprints/userdata/bottlerocket.toml.hbs"),
    ),
    (
        WINDOWS_TEMPLATE,
        include_str!("../../../blueprints/userdata/windows.ps1.hbs"),
    ),
];

/// Shell pieces shared by the AL2023 and AL2 scripts.
const PARTIALS: &[(&str, &str)] = &[
    (
        "prelude",
        include_str!("../../../blueprints/userdata/prelude.sh.hbs"),
    ),
    (
        "signal_install",
        include_str!("../../../blueprints/userdata/signal_install.sh.hbs"),
    ),
    (
        "signal_start",
        include_str!("../../../blueprints/userdata/signal_start.sh.hbs"),
    ),
    (
        "pre_bootstrap",
        include_str!("../../../blueprints/userdata/pre_bootstrap.sh.hbs"),
    ),
    (
        "imds_block",
        include_str!("../../../blueprints/userdata/imds_block.sh.hbs"),
    ),
    (
        "efs_mounts",
        include_str!("../../../blueprints/userdata/efs_mounts.sh.hbs"),
    ),
    (
        "post_bootstrap",
        include_str!("../../../blueprints/userdata/post_bootstrap.sh.hbs"),
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

pub(super) fn render_template(name: &str, data: &Value) -> Result<String, UserDataError> {
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
