//! The handlebars registries: the templates and partials of
//! `blueprints/userdata/`, each parsed once and only when first rendered,
//! and the quoting helpers they use.

use std::sync::OnceLock;

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

/// One template, and the partials it uses.
struct Spec {
    name: &'static str,
    text: &'static str,
    partials: &'static [&'static str],
}

/// The partials the AL2023 and AL2 scripts share.
const SHELL_PARTIALS: &[&str] = &[
    "prelude",
    "signal_install",
    "signal_start",
    "pre_bootstrap",
    "imds_block",
    "efs_mounts",
];

const TEMPLATES: [Spec; 8] = [
    Spec {
        name: MIME_TEMPLATE,
        text: include_str!("../../../blueprints/userdata/mime.hbs"),
        partials: &[],
    },
    Spec {
        name: NODECONFIG_TEMPLATE,
        text: include_str!("../../../blueprints/userdata/nodeconfig.yaml.hbs"),
        partials: &[],
    },
    Spec {
        name: AL2023_TEMPLATE,
        text: include_str!("../../../blueprints/userdata/al2023.sh.hbs"),
        partials: SHELL_PARTIALS,
    },
    Spec {
        name: AL2_TEMPLATE,
        text: include_str!("../../../blueprints/userdata/al2.sh.hbs"),
        partials: SHELL_PARTIALS,
    },
    Spec {
        name: SIGNAL_TEMPLATE,
        text: include_str!("../../../blueprints/userdata/signal.sh.hbs"),
        partials: &["post_bootstrap"],
    },
    Spec {
        name: SIGNAL_SIGV4_TEMPLATE,
        text: include_str!("../../../blueprints/userdata/signal_sigv4.sh.hbs"),
        partials: &["post_bootstrap"],
    },
    Spec {
        name: BOTTLEROCKET_TEMPLATE,
        text: include_str!("../../../blueprints/userdata/bottlerocket.toml.hbs"),
        partials: &[],
    },
    Spec {
        name: WINDOWS_TEMPLATE,
        text: include_str!("../../../blueprints/userdata/windows.ps1.hbs"),
        partials: &[],
    },
];

/// The partials, by name.
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

/// One registry per template, built when the template is first rendered:
/// parsing a template costs more than rendering it (the parser works out
/// the line and column of every element from the start of the text), and
/// a run renders few of them. A parse error is kept rather than panicking
/// so that it surfaces as [`UserDataError::Template`] from every render.
static REGISTRIES: [OnceLock<Result<Handlebars<'static>, String>>; TEMPLATES.len()] =
    [const { OnceLock::new() }; TEMPLATES.len()];

fn build_registry(spec: &Spec) -> Result<Handlebars<'static>, String> {
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
    for name in spec.partials {
        let text = PARTIALS
            .iter()
            .find(|(partial, _)| partial == name)
            .map(|(_, text)| *text)
            .ok_or_else(|| format!("partial {name}: not found"))?;
        hb.register_partial(name, without_comments(text))
            .map_err(|e| format!("partial {name}: {e}"))?;
    }
    hb.register_template_string(spec.name, without_comments(spec.text))
        .map_err(|e| format!("template {}: {e}", spec.name))?;
    Ok(hb)
}

/// The text without its comments that stand on lines of their own
/// (`{{!--` at the start of a line, `--}}` at the end of one), which
/// handlebars drops with their lines: the parser goes through a text
/// character by character, and a third of the templates' text is such
/// comments. Any other comment is left to handlebars.
fn without_comments(text: &str) -> String {
    const OPEN: &str = "{{!--";
    const CLOSE: &str = "--}}\n";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(OPEN) {
        let at_line_start = if start == 0 {
            out.is_empty() || out.ends_with('\n')
        } else {
            rest[..start].ends_with('\n')
        };
        let end = rest[start..]
            .find(CLOSE)
            .map(|end| start + end + CLOSE.len());
        match end {
            Some(end) if at_line_start && !rest[start..end - CLOSE.len()].contains("}}") => {
                out.push_str(&rest[..start]);
                rest = &rest[end..];
            }
            _ => {
                out.push_str(&rest[..start + OPEN.len()]);
                rest = &rest[start + OPEN.len()..];
            }
        }
    }
    out.push_str(rest);
    out
}

pub(super) fn render_template(name: &str, data: &Value) -> Result<String, UserDataError> {
    let index = TEMPLATES
        .iter()
        .position(|spec| spec.name == name)
        .ok_or_else(|| UserDataError::Template(format!("{name}: no such template")))?;
    let hb = REGISTRIES[index]
        .get_or_init(|| build_registry(&TEMPLATES[index]))
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

#[cfg(test)]
mod tests {
    use handlebars::template::{Template, TemplateElement};

    use super::{PARTIALS, TEMPLATES, without_comments};

    /// Comments on lines of their own go with their lines; the rest stays.
    #[test]
    fn only_comments_on_lines_of_their_own_are_left_out() {
        let text = "{{!-- head --}}\n{{!-- next --}}\na\n{{!--\n  two\n  lines\n--}}\nb {{!-- inline --}}\n  {{!-- indented --}}\nc\n{{!-- last --}}";
        assert_eq!(
            without_comments(text),
            "a\nb {{!-- inline --}}\n  {{!-- indented --}}\nc\n{{!-- last --}}"
        );
    }

    /// A parsed template without what leaving the comments out may change
    /// and rendering does not see: the comments themselves, where the text
    /// is cut, and the line and column of each element.
    fn rendered_parts(template: &mut Template) {
        use handlebars::template::TemplateElement::{Comment, HelperBlock, RawString};
        template.mapping.clear();
        let mut elements: Vec<TemplateElement> = Vec::new();
        for mut element in std::mem::take(&mut template.elements) {
            match (&mut element, elements.last_mut()) {
                (Comment(_), _) => continue,
                (RawString(text), Some(RawString(last))) => {
                    last.push_str(text);
                    continue;
                }
                (HelperBlock(helper), _) => {
                    helper.template.as_mut().map(rendered_parts);
                    helper.inverse.as_mut().map(rendered_parts);
                }
                _ => {}
            }
            elements.push(element);
        }
        elements.retain(|element| !matches!(element, RawString(text) if text.is_empty()));
        template.elements = elements;
    }

    /// Leaving the comments out changes nothing that handlebars renders,
    /// and leaves out some in every file that has any.
    #[test]
    fn templates_parse_the_same_without_their_comments() {
        let texts = TEMPLATES
            .iter()
            .map(|spec| spec.text)
            .chain(PARTIALS.iter().map(|(_, text)| *text));
        for text in texts {
            let stripped = without_comments(text);
            if text.contains("{{!--\n") {
                assert!(stripped.len() < text.len(), "{text}");
            }
            let mut original = Template::compile(text).unwrap();
            let mut without = Template::compile(&stripped).unwrap();
            rendered_parts(&mut original);
            rendered_parts(&mut without);
            assert_eq!(without, original, "{text}");
        }
    }

    /// Each template's registry holds only the partials it declares, so a
    /// partial a template uses but does not declare would fail rendering.
    #[test]
    fn every_template_declares_the_partials_it_uses() {
        for spec in &TEMPLATES {
            let used: Vec<&str> = spec
                .text
                .split("{{>")
                .skip(1)
                .filter_map(|rest| rest.split_whitespace().next())
                .map(|name| name.trim_end_matches("}}"))
                .collect();
            for name in &used {
                assert!(
                    spec.partials.contains(name),
                    "{} uses partial {name} without declaring it",
                    spec.name
                );
            }
            for name in spec.partials {
                assert!(
                    PARTIALS.iter().any(|(partial, _)| partial == name),
                    "{} declares unknown partial {name}",
                    spec.name
                );
                assert!(
                    used.contains(name),
                    "{} declares partial {name} it does not use",
                    spec.name
                );
            }
        }
    }
}
