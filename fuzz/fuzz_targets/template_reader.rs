//! Template text in, a `Template` or located diagnostics out, and never a
//! panic. When the reader accepts the input, the model must survive a round
//! trip through both emitters: `read(emit_yaml(t)) == t` and
//! `read(emit_json(t)) == t` (the architecture invariant of `src/cfn/`).
//!
//! One restriction: a template holding a NaN or infinite number is only
//! checked for not panicking. `f64::NAN != f64::NAN`, so `==` on the model
//! can never hold for it, and JSON has no spelling for either value.

#![no_main]

use eksynth::cfn::{Expr, Template, json, read, yaml};
use eksynth::source::SourceFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let template = match read::read(&SourceFile::new("fuzz.yaml", text)) {
        Ok(template) => template,
        Err(diagnostics) => {
            assert!(
                diagnostics.iter().any(|d| d.is_error()),
                "read failed without an error diagnostic: {diagnostics:?}"
            );
            for diagnostic in &diagnostics {
                assert!(!diagnostic.render().is_empty());
            }
            return;
        }
    };

    let yaml_text = yaml::emit(&template);
    let json_text = json::emit(&template);
    let from_yaml = read::read(&SourceFile::new("out.yaml", yaml_text.as_str()));
    let from_json = read::read(&SourceFile::new("out.json", json_text.as_str()));
    if has_non_finite_float(&template) {
        return;
    }
    assert!(
        matches!(&from_yaml, Ok(t) if *t == template),
        "YAML round trip changed the template\n--- read: {template:#?}\n--- emitted:\n{yaml_text}\n--- read back: {from_yaml:#?}"
    );
    assert!(
        matches!(&from_json, Ok(t) if *t == template),
        "JSON round trip changed the template\n--- read: {template:#?}\n--- emitted:\n{json_text}\n--- read back: {from_json:#?}"
    );
});

/// Whether any number in the template is NaN or infinite.
fn has_non_finite_float(template: &Template) -> bool {
    let mut exprs: Vec<&Expr> = Vec::new();
    exprs.extend(template.metadata.values());
    exprs.extend(template.mappings.values());
    exprs.extend(template.conditions.values());
    for parameter in template.parameters.values() {
        exprs.extend(&parameter.default);
        exprs.extend(&parameter.allowed_values);
    }
    for resource in template.resources.values() {
        exprs.extend(&resource.metadata);
        exprs.extend(resource.properties.values());
        exprs.extend(&resource.creation_policy);
        exprs.extend(&resource.update_policy);
    }
    for output in template.outputs.values() {
        exprs.push(&output.value);
        exprs.extend(&output.export);
    }
    exprs.into_iter().any(non_finite)
}

fn non_finite(expr: &Expr) -> bool {
    match expr {
        Expr::Float(value) => !value.is_finite(),
        Expr::Bool(_)
        | Expr::Int(_)
        | Expr::String(_)
        | Expr::Ref(_)
        | Expr::GetAtt { .. }
        | Expr::Condition(_) => false,
        Expr::List(items) | Expr::And(items) | Expr::Or(items) => items.iter().any(non_finite),
        Expr::Map(entries) => entries.values().any(non_finite),
        Expr::Sub { variables, .. } => variables.values().any(non_finite),
        Expr::Base64(inner)
        | Expr::GetAZs(inner)
        | Expr::ImportValue(inner)
        | Expr::Not(inner)
        | Expr::Join { items: inner, .. }
        | Expr::Split { source: inner, .. } => non_finite(inner),
        Expr::If {
            then, otherwise, ..
        } => non_finite(then) || non_finite(otherwise),
        Expr::Select { index, list } => non_finite(index) || non_finite(list),
        Expr::FindInMap {
            top_key,
            second_key,
            ..
        } => non_finite(top_key) || non_finite(second_key),
        Expr::Cidr { block, count, bits } => {
            non_finite(block) || non_finite(count) || non_finite(bits)
        }
        Expr::Equals(left, right) => non_finite(left) || non_finite(right),
    }
}
