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
pub(super) const AL2_JOIN_TEMPLATE: &str = "al2_join_script";
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
        AL2_JOIN_TEMPLATE,
        include_str!("../../../blueprints/userdata/al2_join_script.sh.hbs"),
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

/// The partials the templates use (`{{> name}}`), by name.
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
        "signal_registered",
        include_str!("../../../blueprints/userdata/signal_registered.sh.hbs"),
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
    (
        "al2_join",
        include_str!("../../../blueprints/userdata/al2_join.sh.hbs"),
    ),
    (
        "warm_pool_gate",
        include_str!("../../../blueprints/userdata/warm_pool_gate.sh.hbs"),
    ),
    (
        "warm_pool_al2023",
        include_str!("../../../blueprints/userdata/warm_pool_al2023.sh.hbs"),
    ),
    (
        "warm_pool_al2",
        include_str!("../../../blueprints/userdata/warm_pool_al2.sh.hbs"),
    ),
];

/// One registry per template, holding the partials it includes, built when
/// the template is first rendered: parsing a template costs more than
/// rendering it (the parser works out the line and column of every element
/// from the start of the text), and a run renders few of them. A parse error is kept rather than panicking
/// so that it surfaces as [`UserDataError::Template`] from every render.
static REGISTRIES: [OnceLock<Result<Handlebars<'static>, String>>; TEMPLATES.len()] =
    [const { OnceLock::new() }; TEMPLATES.len()];

fn build_registry(name: &str, text: &str) -> Result<Handlebars<'static>, String> {
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
    // The partials the template includes, and those they include in turn.
    let mut used: Vec<&str> = partials_used(text).collect();
    let mut next = 0;
    while let Some(partial) = used.get(next).copied() {
        next += 1;
        let source = PARTIALS.iter().find(|(p, _)| *p == partial);
        for inner in source.into_iter().flat_map(|(_, s)| partials_used(s)) {
            if !used.contains(&inner) {
                used.push(inner);
            }
        }
    }
    for (partial, source) in PARTIALS.iter().filter(|(p, _)| used.contains(p)) {
        hb.register_partial(partial, without_comments(source))
            .map_err(|e| format!("partial {partial}: {e}"))?;
    }
    hb.register_template_string(name, without_comments(text))
        .map_err(|e| format!("template {name}: {e}"))?;
    Ok(hb)
}

/// The names of the partials `text` includes (`{{> name}}`), in order.
fn partials_used(text: &str) -> impl Iterator<Item = &str> {
    text.split("{{>")
        .skip(1)
        .filter_map(|rest| rest.split_whitespace().next())
        .map(|name| name.trim_end_matches("}}"))
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
        .position(|(template, _)| *template == name)
        .ok_or_else(|| UserDataError::Template(format!("{name}: no such template")))?;
    let hb = REGISTRIES[index]
        .get_or_init(|| build_registry(name, TEMPLATES[index].1))
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

    use super::{PARTIALS, TEMPLATES, partials_used, without_comments};

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
        let texts = TEMPLATES.iter().chain(PARTIALS).map(|(_, text)| *text);
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

    /// Each template's registry holds the partials its text includes, and
    /// those they include: each is one of the partials, and each partial is
    /// included somewhere.
    #[test]
    fn every_partial_included_is_known_and_every_partial_is_included() {
        let used: Vec<&str> = TEMPLATES
            .iter()
            .chain(PARTIALS)
            .flat_map(|(_, text)| partials_used(text))
            .collect();
        assert!(used.contains(&"prelude") && used.contains(&"post_bootstrap"));
        for name in &used {
            assert!(
                PARTIALS.iter().any(|(partial, _)| partial == name),
                "unknown partial {name}"
            );
        }
        for (name, _) in PARTIALS {
            assert!(used.contains(name), "partial {name} is included nowhere");
        }
    }
}
