//! `eksynth explain`: where in the blueprint each emitted resource comes
//! from.

use crate::source::Span;

use super::Compiled;

/// For each emitted resource, its type and the blueprint line that
/// produced it, and the line of each override that changed it: `eksynth
/// explain`.
///
/// A blueprint with several stacks lists each under a `stack NAME:` line.
/// Names and lines from the input are shown by the terminal rule of
/// [`crate::escape`].
pub fn explain(compiled: &Compiled) -> String {
    use crate::escape::terminal;
    let several = compiled.stacks.len() > 1;
    let mut out = String::new();
    for stack in &compiled.stacks {
        if several {
            out.push_str(&format!("stack {}:\n", terminal(&stack.name)));
        }
        let indent = if several { "  " } else { "" };
        for (id, resource) in &stack.template.resources {
            out.push_str(&format!(
                "{indent}{} ({})\n",
                terminal(id),
                terminal(&resource.kind)
            ));
            let line = |span: &Span| {
                compiled.files.get(span.file as usize).map(|file| {
                    format!(
                        "{}:{}: {}",
                        terminal(&file.name),
                        span.line,
                        terminal(file.line_text(span.line).trim())
                    )
                })
            };
            if let Some(origin) = stack.origins.get(id).and_then(line) {
                out.push_str(&format!("{indent}    {origin}\n"));
            }
            for applied in stack.overrides.iter().filter(|o| o.resource == *id) {
                if let Some(at) = line(&applied.span) {
                    out.push_str(&format!("{indent}    overridden at {at}\n"));
                }
            }
        }
    }
    out
}
