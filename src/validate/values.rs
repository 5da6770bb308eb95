//! What a value can be once the stack is deployed: the strings a literal,
//! an `Fn::If`, an `Fn::Sub`, an `Fn::Join`, an `Fn::Select`, a `Ref` to a
//! parameter or an `Fn::FindInMap` can give, so that a check can ask
//! whether a value can be one it warns about, however it is computed.

use std::collections::BTreeSet;

use crate::cfn::sub::rewrite;
use crate::cfn::{Expr, Template};

/// The strings a value can be: `known`, and, when `open`, others that
/// cannot be told offline (an attribute, an import, a parameter without
/// `AllowedValues`).
#[derive(Debug, Default, PartialEq)]
pub(super) struct Possible {
    pub known: BTreeSet<String>,
    pub open: bool,
}

/// Beyond this many strings, a concatenation's values are not listed (it
/// is open): a `Fn::Sub` of several parameters multiplies their values.
const MOST: usize = 256;

impl Possible {
    fn one(text: impl Into<String>) -> Possible {
        Possible {
            known: BTreeSet::from([text.into()]),
            open: false,
        }
    }

    fn open() -> Possible {
        Possible {
            known: BTreeSet::new(),
            open: true,
        }
    }

    fn union(mut self, other: Possible) -> Possible {
        self.known.extend(other.known);
        self.open |= other.open;
        self
    }

    /// Every string of `self` followed by every string of `next`.
    fn then(self, next: &Possible) -> Possible {
        if self.known.len().saturating_mul(next.known.len()) > MOST {
            return Possible::open();
        }
        let known = self
            .known
            .iter()
            .flat_map(|first| {
                next.known
                    .iter()
                    .map(move |second| format!("{first}{second}"))
            })
            .collect();
        Possible {
            known,
            open: self.open || next.open,
        }
    }
}

/// The strings `value` can be in `template`.
pub(super) fn possible(template: &Template, value: &Expr) -> Possible {
    match value {
        Expr::String(text) => Possible::one(text.clone()),
        Expr::Int(number) => Possible::one(number.to_string()),
        Expr::Bool(flag) => Possible::one(flag.to_string()),
        Expr::If {
            then, otherwise, ..
        } => possible(template, then).union(possible(template, otherwise)),
        Expr::Ref(name) => parameter(template, name),
        Expr::Sub {
            template: text,
            variables,
        } => sub(template, text, variables),
        Expr::Join { delimiter, items } => {
            let Expr::List(items) = items.as_ref() else {
                return Possible::open();
            };
            let delimiter = Possible::one(delimiter.clone());
            items
                .iter()
                .enumerate()
                .fold(Possible::one(""), |joined, (i, item)| {
                    let joined = if i == 0 {
                        joined
                    } else {
                        joined.then(&delimiter)
                    };
                    joined.then(&possible(template, item))
                })
        }
        Expr::Select { index, list } => {
            let Expr::List(items) = list.as_ref() else {
                return Possible::open();
            };
            match super::literal_number(index).and_then(|i| usize::try_from(i).ok()) {
                Some(i) => items
                    .get(i)
                    .map_or_else(Possible::open, |item| possible(template, item)),
                None => items.iter().fold(Possible::default(), |all, item| {
                    all.union(possible(template, item))
                }),
            }
        }
        Expr::FindInMap {
            map,
            top_key,
            second_key,
        } => find_in_map(template, map, top_key, second_key),
        _ => Possible::open(),
    }
}

/// A parameter can be each of its `AllowedValues` and its `Default`, and,
/// without `AllowedValues`, anything given at deployment.
fn parameter(template: &Template, name: &str) -> Possible {
    let Some(parameter) = template.parameters.get(name) else {
        return Possible::open();
    };
    let mut values = Possible {
        known: BTreeSet::new(),
        open: parameter.allowed_values.is_empty(),
    };
    for value in parameter
        .allowed_values
        .iter()
        .chain(parameter.default.as_ref())
    {
        values = values.union(possible(template, value));
    }
    values
}

fn sub(
    template: &Template,
    text: &str,
    variables: &indexmap::IndexMap<String, crate::cfn::Expr>,
) -> Possible {
    // The text cut at each reference; a text with the cut mark itself is
    // not judged.
    const CUT: char = '\u{0}';
    if text.contains(CUT) {
        return Possible::open();
    }
    let mut names = Vec::new();
    let marked = rewrite(text, |name| {
        names.push(name);
        Some(CUT.to_string())
    });
    let mut pieces = marked.split(CUT);
    // `${!Literal}` is written as `${Literal}`.
    let literal = |piece: &str| Possible::one(piece.replace("${!", "${"));
    let mut result = literal(pieces.next().unwrap_or_default());
    for (name, piece) in names.into_iter().zip(pieces) {
        let value = match variables.get(name) {
            Some(value) => possible(template, value),
            None if name.contains('.') => Possible::open(),
            None => parameter(template, name),
        };
        result = result.then(&value).then(&literal(piece));
    }
    result
}

/// Every value the keys can select: a key written out selects its entry,
/// one computed may select any.
fn find_in_map(template: &Template, map: &str, top_key: &Expr, second_key: &Expr) -> Possible {
    let Some(Expr::Map(mapping)) = template.mappings.get(map) else {
        return Possible::open();
    };
    let mut values = Possible::default();
    for (top, entries) in mapping {
        if super::literal(top_key).is_some_and(|key| key != *top) {
            continue;
        }
        let Expr::Map(entries) = entries else {
            continue;
        };
        for (second, value) in entries {
            if super::literal(second_key).is_some_and(|key| key != *second) {
                continue;
            }
            values = values.union(possible(template, value));
        }
    }
    if values.known.is_empty() {
        values.open = true;
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfn::read::read;
    use crate::source::SourceFile;

    fn values_of(text: &str) -> Possible {
        let file = SourceFile::new("t.yaml", text.to_string());
        let template = read(&file).expect("a template");
        let value = &template.resources["R"].properties["V"];
        possible(&template, value)
    }

    fn known(values: &[&str]) -> BTreeSet<String> {
        values.iter().map(|v| v.to_string()).collect()
    }

    #[test]
    fn computed_strings_are_followed_through_their_functions() {
        let template = "Parameters:
  Mode: {Type: String, AllowedValues: [required, optional], Default: required}
  Free: {Type: String, Default: required}
  Half: {Type: String, AllowedValues: [ional, uired]}
Conditions:
  C: !Equals [a, b]
Mappings:
  M: {prod: {tokens: required}, dev: {tokens: optional}}
Resources:
  R:
    Type: X::Y::Z
    Properties:
      V: VALUE
";
        let cases: &[(&str, &[&str], bool)] = &[
            (
                "!If [C, required, optional]",
                &["optional", "required"],
                false,
            ),
            ("!Ref Mode", &["optional", "required"], false),
            ("!Ref Free", &["required"], true),
            ("!Sub 'opt${Half}'", &["optional", "optuired"], false),
            (
                "!Sub ['${A}', {A: !Ref Mode}]",
                &["optional", "required"],
                false,
            ),
            ("!Join ['', [opt, ional]]", &["optional"], false),
            (
                "!Join ['', [!If [C, opt, req], ional]]",
                &["optional", "reqional"],
                false,
            ),
            (
                "!FindInMap [M, !Ref AWS::Region, tokens]",
                &["optional", "required"],
                false,
            ),
            ("!FindInMap [M, prod, tokens]", &["required"], false),
            ("!Select [1, [required, optional]]", &["optional"], false),
            ("!GetAtt X.Y", &[], true),
            ("!Sub '${AWS::Region}'", &[], true),
        ];
        for (value, expected, open) in cases {
            let values = values_of(&template.replace("VALUE", value));
            assert_eq!(values.known, known(expected), "{value}");
            assert_eq!(values.open, *open, "{value}");
        }
    }
}
