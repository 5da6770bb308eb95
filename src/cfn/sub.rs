//! Building `Fn::Sub` from text that embeds template values.
//!
//! Text such as user data is rendered first with placeholders standing in
//! for template values (a parameter, an import, the stack name). `finish`
//! then escapes every literal `${` so that CloudFormation leaves shell
//! variables alone, and turns each placeholder into `${Name}`, adding a
//! variable to the `Fn::Sub` map only where the value is not a plain `Ref` or
//! `GetAtt`.

use indexmap::IndexMap;

use super::expr::Expr;

/// Marks a placeholder in rendered text. Blueprint text cannot contain it:
/// the loader refuses control characters in strings.
pub const MARK: char = '\u{1}';

/// Whether `text` is exactly one placeholder (a mark, digits, a mark), which
/// `Fn::Sub` replaces with the value's own text.
pub fn is_placeholder(text: &str) -> bool {
    text.len() > 2
        && text.starts_with(MARK)
        && text.ends_with(MARK)
        && text[1..text.len() - 1].chars().all(|c| c.is_ascii_digit())
}

#[derive(Debug, Default)]
pub struct SubBuilder {
    /// What each placeholder becomes inside `${...}`, by placeholder index.
    names: Vec<String>,
    variables: IndexMap<String, Expr>,
}

impl SubBuilder {
    pub fn new() -> SubBuilder {
        SubBuilder::default()
    }

    /// Returns the placeholder to write into the text for `value`. A `Ref`
    /// or `GetAtt` is written as itself; anything else becomes a variable
    /// named after `hint`. Literal strings are returned as they are.
    pub fn placeholder(&mut self, hint: &str, value: &Expr) -> String {
        let name = match value {
            Expr::String(s) => return s.clone(),
            Expr::Int(i) => return i.to_string(),
            Expr::Ref(name) => name.clone(),
            Expr::GetAtt {
                resource,
                attribute,
            } => format!("{resource}.{attribute}"),
            other => {
                let existing = self
                    .variables
                    .iter()
                    .find(|(_, v)| *v == other)
                    .map(|(k, _)| k.clone());
                match existing {
                    Some(name) => name,
                    None => {
                        let mut name = hint.to_string();
                        let mut n = 2;
                        while self.variables.contains_key(&name) {
                            name = format!("{hint}{n}");
                            n += 1;
                        }
                        self.variables.insert(name.clone(), other.clone());
                        name
                    }
                }
            }
        };
        let index = match self.names.iter().position(|n| *n == name) {
            Some(index) => index,
            None => {
                self.names.push(name);
                self.names.len() - 1
            }
        };
        format!("{MARK}{index}{MARK}")
    }

    /// Turns rendered text into `Fn::Sub`, or into a plain string when it
    /// refers to no template value. Several pieces of one text may each be
    /// finished: each `Fn::Sub` holds the variables it uses.
    pub fn finish(&self, text: &str) -> Expr {
        let mut out = String::with_capacity(text.len() + 64);
        let mut used: Vec<&str> = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find(MARK) {
            out.push_str(&escape(&rest[..start]));
            let after = &rest[start + MARK.len_utf8()..];
            let Some(end) = after.find(MARK) else {
                out.push_str(&escape(&rest[start..]));
                rest = "";
                break;
            };
            match after[..end]
                .parse::<usize>()
                .ok()
                .and_then(|i| self.names.get(i))
            {
                Some(name) => {
                    out.push_str("${");
                    out.push_str(name);
                    out.push('}');
                    used.push(name);
                }
                None => out.push_str(&escape(&after[..end])),
            }
            rest = &after[end + MARK.len_utf8()..];
        }
        out.push_str(&escape(rest));
        if used.is_empty() {
            return Expr::String(text.to_string());
        }
        // A value may have been given a placeholder that the text did not
        // end up using; CloudFormation rejects unused variables.
        let mut variables = self.variables.clone();
        variables.retain(|name, _| used.contains(&name.as_str()));
        Expr::Sub {
            template: out,
            variables,
        }
    }
}

/// The `${...}` references of a `Fn::Sub` template, as written (`Name` or
/// `Resource.Attribute`), without the `${!Literal}` escapes.
pub fn references(template: &str) -> Vec<&str> {
    let mut out = Vec::new();
    rewrite(template, |name| {
        out.push(name);
        None
    });
    out
}

/// `template` with each reference `${name}` that `replace` returns text for
/// replaced by that text; escapes and other text stay as they are. The one
/// scanner of `${...}`: [`references`] and [`rename`] are built on it.
pub fn rewrite<'t>(
    template: &'t str,
    mut replace: impl FnMut(&'t str) -> Option<String>,
) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        let name = after[..end].trim();
        let replaced = (!name.starts_with('!') && !name.is_empty())
            .then(|| replace(name))
            .flatten();
        match replaced {
            Some(new) => {
                out.push_str(&rest[..start]);
                out.push_str(&new);
            }
            None => out.push_str(&rest[..start + 2 + end + 1]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// `template` with each reference that `rename` returns a new name for
/// written `${new}` instead.
pub fn rename<'t>(template: &'t str, mut rename: impl FnMut(&'t str) -> Option<String>) -> String {
    rewrite(template, |name| {
        rename(name).map(|new| format!("${{{new}}}"))
    })
}

/// Escapes literal text for `Fn::Sub`: `${` becomes `${!`.
pub fn escape(text: &str) -> String {
    text.replace("${", "${!")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_skip_escapes_and_keep_attributes() {
        assert_eq!(
            references("a ${X} ${!Y} ${R.Arn} ${ Z } ${} ${open"),
            ["X", "R.Arn", "Z"]
        );
    }

    #[test]
    fn rewrite_replaces_whole_references_and_keeps_everything_else() {
        let replaced = rewrite("a ${X} ${!X} ${ X }b ${Y} ${open", |name| {
            (name == "X").then(|| "x".to_string())
        });
        assert_eq!(replaced, "a x ${!X} xb ${Y} ${open");
    }

    #[test]
    fn rename_renames_references_and_keeps_everything_else() {
        let renamed = rename("a ${X} ${!X} ${R.Arn} ${ X } ${} ${open", |name| match name
            .split_once('.')
        {
            Some(("R", attribute)) => Some(format!("S.{attribute}")),
            _ => (name == "X").then(|| "Y".to_string()),
        });
        assert_eq!(renamed, "a ${Y} ${!X} ${S.Arn} ${Y} ${} ${open");
        assert_eq!(rename("no ${A} change", |_| None), "no ${A} change");
    }

    #[test]
    fn text_without_placeholders_stays_a_plain_string() {
        let builder = SubBuilder::new();
        assert_eq!(
            builder.finish("echo ${HOME}\n"),
            Expr::String("echo ${HOME}\n".into())
        );
    }

    #[test]
    fn shell_variables_are_escaped_and_refs_are_substituted() {
        let mut builder = SubBuilder::new();
        let stack = builder.placeholder("StackName", &Expr::reference("AWS::StackName"));
        let text = format!("echo ${{HOME}} {stack}\n");
        assert_eq!(
            builder.finish(&text),
            Expr::sub("echo ${!HOME} ${AWS::StackName}\n")
        );
    }

    #[test]
    fn complex_values_become_named_variables_once() {
        let mut builder = SubBuilder::new();
        let import = Expr::import_value(Expr::str("net-VpcId"));
        let a = builder.placeholder("Vpc", &import);
        let b = builder.placeholder("Vpc", &import);
        assert_eq!(a, b);
        let other = builder.placeholder("Vpc", &Expr::import_value(Expr::str("other")));
        let expr = builder.finish(&format!("{a} {b} {other}"));
        let Expr::Sub {
            template,
            variables,
        } = expr
        else {
            panic!("expected Fn::Sub, got {expr:?}");
        };
        assert_eq!(template, "${Vpc} ${Vpc} ${Vpc2}");
        assert_eq!(variables.keys().collect::<Vec<_>>(), ["Vpc", "Vpc2"]);
    }

    #[test]
    fn variables_the_text_does_not_use_are_dropped() {
        let mut builder = SubBuilder::new();
        let _unused = builder.placeholder("Dns", &Expr::import_value(Expr::str("x")));
        let stack = builder.placeholder("S", &Expr::reference("AWS::StackName"));
        assert_eq!(builder.finish(&stack), Expr::sub("${AWS::StackName}"));
    }

    #[test]
    fn literal_values_are_inlined_and_escaped() {
        let mut builder = SubBuilder::new();
        let literal = builder.placeholder("Name", &Expr::str("a${b}"));
        let stack = builder.placeholder("S", &Expr::reference("AWS::StackName"));
        assert_eq!(
            builder.finish(&format!("{literal} {stack}")),
            Expr::sub("a${!b} ${AWS::StackName}")
        );
    }
}
