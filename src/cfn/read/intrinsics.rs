//! Values: literals, and the intrinsic functions in short (`!Sub`) or long
//! (`Fn::Sub`) form with their arguments, including those kept unchecked
//! when read leniently.

use indexmap::IndexMap;

use super::{Context, Form, Reader, UNCHECKED_NOTE, app_tag, is_long_form_key};
use crate::cfn::expr::Expr;
use crate::source::Span;
use crate::syntax::{Node, Value};

/// The intrinsic functions the model knows, by short name: `!Name` in
/// short form, `Fn::Name` in long form (`Ref` and `Condition` have no
/// `Fn::` prefix).
const INTRINSICS: &[&str] = &[
    "Ref",
    "GetAtt",
    "Sub",
    "Base64",
    "Join",
    "If",
    "Select",
    "Split",
    "GetAZs",
    "ImportValue",
    "FindInMap",
    "Cidr",
    "Equals",
    "And",
    "Or",
    "Not",
    "Condition",
];

/// Real CloudFormation functions the model cannot hold: reported as
/// unsupported rather than unknown.
const UNSUPPORTED: &[&str] = &[
    "Transform",
    "Length",
    "ToJsonString",
    "ForEach",
    "GetParam",
    "GetStackOutput",
];

impl Reader<'_> {
    /// Whether a node is an intrinsic function, short or long form.
    pub(super) fn is_intrinsic(node: &Node) -> bool {
        app_tag(node).is_some()
            || matches!(&node.value, Value::Map(entries)
                if entries.len() == 1 && is_long_form_key(&entries[0].0.name))
    }

    /// Any value: a literal or an intrinsic, short or long form.
    pub(super) fn expr(&mut self, node: &Node, context: Context) -> Option<Expr> {
        match app_tag(node) {
            Some(tag) => self.intrinsic(tag, node, Form::Short, None),
            None => self.value(node, context),
        }
    }

    /// A value without looking at its tag: the literal, or a long-form
    /// intrinsic written as a single-key mapping.
    fn value(&mut self, node: &Node, context: Context) -> Option<Expr> {
        match &node.value {
            Value::Null => {
                let diagnostic = self.error(node.span, "a value is missing here (null)");
                diagnostic.help =
                    Some("write \"\" for an empty string, or remove the key".to_string());
                None
            }
            Value::Bool(b) => Some(Expr::Bool(*b)),
            Value::Int(i) => Some(Expr::Int(*i)),
            Value::Float(f) => Some(Expr::Float(*f)),
            Value::String(s) => Some(Expr::String(s.clone())),
            Value::Seq(items) => {
                // Read every item, even after a failure, to report them all.
                let items: Vec<Option<Expr>> = items
                    .iter()
                    .map(|item| self.expr(item, Context::Value))
                    .collect();
                items
                    .into_iter()
                    .collect::<Option<Vec<_>>>()
                    .map(Expr::List)
            }
            Value::Map(entries) => {
                if let [(key, argument)] = entries.as_slice()
                    && (is_long_form_key(&key.name)
                        || (key.name == "Condition" && context == Context::Condition))
                {
                    return self.intrinsic(&key.name, argument, Form::Long, Some(key.span));
                }
                let mut complete = true;
                let mut map = IndexMap::new();
                for (key, value) in entries {
                    if is_long_form_key(&key.name) {
                        let diagnostic = self.error(
                            key.span,
                            format!("`{}` must be the only key of its mapping", key.name),
                        );
                        diagnostic.help = Some(
                            "an intrinsic function is a mapping with exactly one key".to_string(),
                        );
                        complete = false;
                        continue;
                    }
                    match self.expr(value, Context::Value) {
                        Some(value) => {
                            map.insert(key.name.clone(), value);
                        }
                        None => complete = false,
                    }
                }
                complete.then_some(Expr::Map(map))
            }
        }
    }

    /// An intrinsic function, `written` as a tag (`Sub` for `!Sub`) or a
    /// long-form key (`Fn::Sub`). `argument` is the tagged node itself in
    /// short form and the mapping's value in long form; `at` is where the
    /// name was written, or `None` for a tag, which is looked for (in the
    /// text) only when something is said about it.
    fn intrinsic(
        &mut self,
        written: &str,
        argument: &Node,
        form: Form,
        at: Option<Span>,
    ) -> Option<Expr> {
        let at = |reader: &Self| at.unwrap_or_else(|| reader.tag_span(argument, written));
        let spelled = match form {
            Form::Short => format!("!{written}"),
            Form::Long => written.to_string(),
        };
        // `Ref` and `Condition` have no `Fn::` prefix; everything else does.
        let bare = match form {
            Form::Short => written,
            Form::Long => written.strip_prefix("Fn::").unwrap_or(written),
        };
        let known = INTRINSICS.contains(&bare)
            && (form == Form::Short || (bare == written) == matches!(bare, "Ref" | "Condition"));
        if !known && self.lenient && bare.starts_with("ForEach::") && !self.language_extensions {
            self.for_each_without_transform(at(self), written);
            return None;
        }
        if let Some(why) = self.left_unchecked(bare, argument, form, known) {
            return self.opaque(written, argument, form, at(self), why);
        }
        if !known {
            self.unknown_intrinsic(at(self), bare, &spelled, form);
            return None;
        }
        Args {
            reader: self,
            spelled: &spelled,
            argument,
            form,
        }
        .function(bare)
    }

    /// Why an intrinsic function is kept as written rather than read into
    /// the model, if it is: when read leniently, a function the model
    /// cannot hold or does not know, or a `FindInMap` with a default value
    /// or a computed mapping name; under a transform, a `Ref` whose name
    /// is computed.
    fn left_unchecked(
        &self,
        bare: &str,
        argument: &Node,
        form: Form,
        known: bool,
    ) -> Option<&'static str> {
        if !known && self.lenient && (form == Form::Long || UNSUPPORTED.contains(&bare)) {
            return Some(if UNSUPPORTED.contains(&bare) {
                "is beyond eksynth's model"
            } else {
                "is not known to eksynth"
            });
        }
        if self.transformed && bare == "Ref" && !matches!(argument.value, Value::String(_)) {
            return Some("of a computed name is left to the transform");
        }
        if self.lenient
            && bare == "FindInMap"
            && let Value::Seq(items) = &argument.value
            && (items.len() == 4 || items.first().is_some_and(Self::is_intrinsic))
        {
            return Some(
                "with a default value or a computed mapping name is beyond eksynth's model",
            );
        }
        None
    }

    /// Reports a function the model does not hold: a real one it does not
    /// support, or a name that is no function at all.
    fn unknown_intrinsic(&mut self, at: Span, bare: &str, spelled: &str, form: Form) {
        let diagnostic = if UNSUPPORTED.contains(&bare) {
            self.error(
                at,
                format!("the intrinsic function `{spelled}` is not supported"),
            )
        } else if form == Form::Short {
            self.error(at, format!("unknown tag `{spelled}`"))
        } else {
            self.error(at, format!("unknown intrinsic function `{spelled}`"))
        };
        diagnostic.label = Some("not a known intrinsic function".to_string());
    }
}

impl Reader<'_> {
    /// An intrinsic function the model cannot hold, kept as the mapping it
    /// is in long form (`{"Fn::Name": argument}`), its argument read as any
    /// value; a note says it is not checked.
    fn opaque(
        &mut self,
        written: &str,
        argument: &Node,
        form: Form,
        at: Span,
        why: &str,
    ) -> Option<Expr> {
        let long = match form {
            Form::Short if written == "Ref" || written == "Condition" => written.to_string(),
            Form::Short => format!("Fn::{written}"),
            Form::Long => written.to_string(),
        };
        let argument = match form {
            Form::Short => self.value(argument, Context::Value),
            Form::Long => self.expr(argument, Context::Value),
        }?;
        let diagnostic = self.note(
            at,
            UNCHECKED_NOTE,
            format!("`{long}` {why}: its result is not checked"),
        );
        diagnostic.label = Some("not checked".to_string());
        Some(Expr::Map(IndexMap::from([(long, argument)])))
    }
}

/// Reads the argument of one intrinsic function.
struct Args<'r, 'f, 'n> {
    reader: &'r mut Reader<'f>,
    spelled: &'r str,
    argument: &'n Node,
    form: Form,
}

impl<'n> Args<'_, '_, 'n> {
    /// The argument's own tag. In short form the node's tag is the
    /// function's, so the argument has none.
    fn own_tag(&self) -> Option<&'n str> {
        match self.form {
            Form::Short => None,
            Form::Long => app_tag(self.argument),
        }
    }

    /// The known intrinsic function `name` (one of `INTRINSICS`), read from
    /// its argument.
    fn function(&mut self, name: &str) -> Option<Expr> {
        match name {
            "Ref" => self.string().map(Expr::Ref),
            "Condition" => self.string().map(Expr::Condition),
            "GetAtt" => self.get_att(),
            "Sub" => self.sub(),
            "Base64" => self.direct().map(|inner| Expr::Base64(Box::new(inner))),
            "GetAZs" => self.direct().map(|inner| Expr::GetAZs(Box::new(inner))),
            "ImportValue" => self
                .direct()
                .map(|inner| Expr::ImportValue(Box::new(inner))),
            "Join" => self.join(),
            "Split" => self.split(),
            "If" => self.choice(),
            "Select" => self.select(),
            "FindInMap" => self.find_in_map(),
            "Cidr" => self.cidr(),
            "Equals" => self.equals(),
            "And" => self.conditions().map(Expr::And),
            "Or" => self.conditions().map(Expr::Or),
            "Not" => self.not(),
            // `INTRINSICS` names only the functions matched here.
            _ => None,
        }
    }

    fn wrong(&mut self, expected: &str) {
        let found = match self.own_tag() {
            Some(tag) => format!("`!{tag}`"),
            None => self.argument.kind().to_string(),
        };
        let message = format!("`{}` takes {expected}, found {found}", self.spelled);
        let diagnostic = self.reader.error(self.argument.span, message);
        diagnostic.label = Some(format!("expected {expected}"));
    }

    /// A plain string argument (`!Ref Name`).
    fn string(&mut self) -> Option<String> {
        match (&self.argument.value, self.own_tag()) {
            (Value::String(s), None) => Some(s.clone()),
            _ => {
                self.wrong("a name (a string)");
                None
            }
        }
    }

    /// An argument that is any value (`!Base64 value`).
    fn direct(&mut self) -> Option<Expr> {
        match self.form {
            Form::Short => self.reader.value(self.argument, Context::Value),
            Form::Long => self.reader.expr(self.argument, Context::Value),
        }
    }

    fn any_list(&mut self, expected: &str) -> Option<&'n [Node]> {
        match (&self.argument.value, self.own_tag()) {
            (Value::Seq(items), None) => Some(items),
            _ => {
                self.wrong(expected);
                None
            }
        }
    }

    /// A list of exactly `N` items.
    fn list<const N: usize>(&mut self, expected: &str) -> Option<&'n [Node; N]> {
        let items = self.any_list(&format!("a list of {expected}"))?;
        match <&[Node; N]>::try_from(items) {
            Ok(items) => Some(items),
            Err(_) => {
                let message = format!(
                    "`{}` takes a list of {N} ({expected}), found {} item{}",
                    self.spelled,
                    items.len(),
                    if items.len() == 1 { "" } else { "s" }
                );
                let diagnostic = self.reader.error(self.argument.span, message);
                diagnostic.label = Some(format!("expected {N} items"));
                None
            }
        }
    }

    fn item(&mut self, node: &Node, context: Context) -> Option<Expr> {
        self.reader.expr(node, context)
    }

    fn item_string(&mut self, node: &Node, what: &str) -> Option<String> {
        self.reader
            .string(&format!("{what} of `{}`", self.spelled), node)
    }

    /// `Res.Attr` or `[Res, Attr]`.
    fn get_att(&mut self) -> Option<Expr> {
        let expected = "`Resource.Attribute` or a list of a resource and an attribute";
        match (&self.argument.value, self.own_tag()) {
            (Value::String(s), None) => match s.split_once('.') {
                Some((resource, attribute)) => Some(Expr::get_att(resource, attribute)),
                None => {
                    self.wrong(expected);
                    None
                }
            },
            (Value::Seq(_), None) => {
                let [resource, attribute] = self.list::<2>("a resource and an attribute")?;
                let resource = self.item_string(resource, "the resource");
                let attribute = self.item_string(attribute, "the attribute");
                Some(Expr::get_att(resource?, attribute?))
            }
            _ => {
                self.wrong(expected);
                None
            }
        }
    }

    /// `template` or `[template, {variables}]`.
    fn sub(&mut self) -> Option<Expr> {
        let expected = "a string, or a list of a string and a mapping of variables";
        match (&self.argument.value, self.own_tag()) {
            (Value::String(s), None) => Some(Expr::sub(s.as_str())),
            (Value::Seq(_), None) => {
                let [template, variables] = self.list::<2>("a string and a mapping")?;
                let template = self.item_string(template, "the template");
                let variables = match (&variables.value, app_tag(variables)) {
                    (Value::Map(_), None) => {
                        let what = format!("the variables of `{}`", self.spelled);
                        // Variables are complete only when every value read.
                        let before = self.reader.diagnostics.len();
                        let map = self.reader.expr_map(&what, variables);
                        (self.reader.diagnostics.len() == before).then_some(map)
                    }
                    _ => {
                        let what = format!("the variables of `{}`", self.spelled);
                        self.reader.wrong_type(&what, variables, "a mapping");
                        None
                    }
                };
                Some(Expr::Sub {
                    template: template?,
                    variables: variables?,
                })
            }
            _ => {
                self.wrong(expected);
                None
            }
        }
    }

    /// `[delimiter, items]`.
    fn join(&mut self) -> Option<Expr> {
        let [delimiter, items] = self.list::<2>("a delimiter and a list")?;
        let delimiter = self.item_string(delimiter, "the delimiter");
        let items = self.item(items, Context::Value);
        Some(Expr::Join {
            delimiter: delimiter?,
            items: Box::new(items?),
        })
    }

    /// `[delimiter, source]`.
    fn split(&mut self) -> Option<Expr> {
        let [delimiter, source] = self.list::<2>("a delimiter and a string")?;
        let delimiter = self.item_string(delimiter, "the delimiter");
        let source = self.item(source, Context::Value);
        Some(Expr::Split {
            delimiter: delimiter?,
            source: Box::new(source?),
        })
    }

    /// `If`: `[condition, then, otherwise]`.
    fn choice(&mut self) -> Option<Expr> {
        let [condition, then, otherwise] = self.list::<3>("a condition name and two values")?;
        let condition = self.item_string(condition, "the condition name");
        let then = self.item(then, Context::Value);
        let otherwise = self.item(otherwise, Context::Value);
        Some(Expr::If {
            condition: condition?,
            then: Box::new(then?),
            otherwise: Box::new(otherwise?),
        })
    }

    /// `[index, list]`.
    fn select(&mut self) -> Option<Expr> {
        let [index, list] = self.list::<2>("an index and a list")?;
        let index = self.item(index, Context::Value);
        let list = self.item(list, Context::Value);
        Some(Expr::Select {
            index: Box::new(index?),
            list: Box::new(list?),
        })
    }

    /// `[map, top_key, second_key]`.
    fn find_in_map(&mut self) -> Option<Expr> {
        let [map, top_key, second_key] = self.list::<3>("a mapping name and two keys")?;
        let map = self.item_string(map, "the mapping name");
        let top_key = self.item(top_key, Context::Value);
        let second_key = self.item(second_key, Context::Value);
        Some(Expr::FindInMap {
            map: map?,
            top_key: Box::new(top_key?),
            second_key: Box::new(second_key?),
        })
    }

    /// `[block, count, bits]`.
    fn cidr(&mut self) -> Option<Expr> {
        let [block, count, bits] = self.list::<3>("an IP block, a count and a number of bits")?;
        let block = self.item(block, Context::Value);
        let count = self.item(count, Context::Value);
        let bits = self.item(bits, Context::Value);
        Some(Expr::Cidr {
            block: Box::new(block?),
            count: Box::new(count?),
            bits: Box::new(bits?),
        })
    }

    /// `[left, right]`.
    fn equals(&mut self) -> Option<Expr> {
        let [left, right] = self.list::<2>("two values")?;
        let left = self.item(left, Context::Value);
        let right = self.item(right, Context::Value);
        Some(Expr::Equals(Box::new(left?), Box::new(right?)))
    }

    /// The conditions of `And` or `Or`, every one read even after a
    /// failure, to report them all.
    fn conditions(&mut self) -> Option<Vec<Expr>> {
        let items = self.any_list("a list of conditions")?;
        let items: Vec<Option<Expr>> = items
            .iter()
            .map(|item| self.item(item, Context::Condition))
            .collect();
        items.into_iter().collect()
    }

    /// `[condition]`.
    fn not(&mut self) -> Option<Expr> {
        let [inner] = self.list::<1>("a list of one condition")?;
        self.item(inner, Context::Condition)
            .map(|inner| Expr::Not(Box::new(inner)))
    }
}
