//! CloudFormation values: literals and the intrinsic functions, as a typed
//! tree. Nothing here is spliced into strings; the emitters decide how each
//! intrinsic is spelled.

use indexmap::IndexMap;

/// One step from a value to a value directly inside it, as written in a
/// template path: a mapping key (`Key`), a list index (`0`), an argument of
/// an intrinsic function (`Fn::Base64`, `Fn::If/1`), or a variable of
/// `Fn::Sub` (`Fn::Sub/Var`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    Key(&'a str),
    Index(usize),
    Argument(&'static str, Option<usize>),
    SubVariable(&'a str),
}

impl std::fmt::Display for Step<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Key(key) => f.write_str(key),
            Step::Index(index) => write!(f, "{index}"),
            Step::Argument(function, None) => f.write_str(function),
            Step::Argument(function, Some(index)) => write!(f, "{function}/{index}"),
            Step::SubVariable(name) => write!(f, "Fn::Sub/{name}"),
        }
    }
}

/// A value anywhere in a template: a literal or an intrinsic function.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
    List(Vec<Expr>),
    Map(IndexMap<String, Expr>),
    /// `Ref`: a parameter, a resource or a pseudo parameter.
    Ref(String),
    /// `Fn::GetAtt` of a resource's attribute (`Outputs.X` style names included).
    GetAtt {
        resource: String,
        attribute: String,
    },
    /// `Fn::Sub` with its optional variable map.
    Sub {
        template: String,
        variables: IndexMap<String, Expr>,
    },
    Base64(Box<Expr>),
    Join {
        delimiter: String,
        items: Box<Expr>,
    },
    If {
        condition: String,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    Select {
        index: Box<Expr>,
        list: Box<Expr>,
    },
    Split {
        delimiter: String,
        source: Box<Expr>,
    },
    GetAZs(Box<Expr>),
    ImportValue(Box<Expr>),
    FindInMap {
        map: String,
        top_key: Box<Expr>,
        second_key: Box<Expr>,
    },
    Cidr {
        block: Box<Expr>,
        count: Box<Expr>,
        bits: Box<Expr>,
    },
    Equals(Box<Expr>, Box<Expr>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
    /// `{"Condition": name}`: a reference to a named condition inside
    /// `Fn::And`, `Fn::Or` and `Fn::Not`.
    Condition(String),
}

/// The pseudo parameters CloudFormation defines in every stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pseudo {
    AccountId,
    NotificationArns,
    NoValue,
    Partition,
    Region,
    StackId,
    StackName,
    UrlSuffix,
}

impl Pseudo {
    pub const ALL: [Pseudo; 8] = [
        Pseudo::AccountId,
        Pseudo::NotificationArns,
        Pseudo::NoValue,
        Pseudo::Partition,
        Pseudo::Region,
        Pseudo::StackId,
        Pseudo::StackName,
        Pseudo::UrlSuffix,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Pseudo::AccountId => "AWS::AccountId",
            Pseudo::NotificationArns => "AWS::NotificationARNs",
            Pseudo::NoValue => "AWS::NoValue",
            Pseudo::Partition => "AWS::Partition",
            Pseudo::Region => "AWS::Region",
            Pseudo::StackId => "AWS::StackId",
            Pseudo::StackName => "AWS::StackName",
            Pseudo::UrlSuffix => "AWS::URLSuffix",
        }
    }

    pub fn from_name(name: &str) -> Option<Pseudo> {
        Pseudo::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl Expr {
    /// Whether this is an intrinsic function the reader keeps as written (a
    /// mapping of one `Fn::` name, such as `Fn::GetStackOutput`).
    pub fn is_opaque_intrinsic(&self) -> bool {
        matches!(self, Expr::Map(entries)
            if entries.len() == 1 && entries.keys().all(|key| key.starts_with("Fn::")))
    }

    /// The intrinsic function this value is (`Ref`, `Fn::Sub`...), or `None`
    /// for a literal.
    pub fn function_name(&self) -> Option<&'static str> {
        Some(match self {
            Expr::Bool(_)
            | Expr::Int(_)
            | Expr::Float(_)
            | Expr::String(_)
            | Expr::List(_)
            | Expr::Map(_) => return None,
            Expr::Ref(_) => "Ref",
            Expr::Condition(_) => "Condition",
            Expr::GetAtt { .. } => "Fn::GetAtt",
            Expr::Sub { .. } => "Fn::Sub",
            Expr::Base64(_) => "Fn::Base64",
            Expr::Join { .. } => "Fn::Join",
            Expr::If { .. } => "Fn::If",
            Expr::Select { .. } => "Fn::Select",
            Expr::Split { .. } => "Fn::Split",
            Expr::GetAZs(_) => "Fn::GetAZs",
            Expr::ImportValue(_) => "Fn::ImportValue",
            Expr::FindInMap { .. } => "Fn::FindInMap",
            Expr::Cidr { .. } => "Fn::Cidr",
            Expr::Equals(..) => "Fn::Equals",
            Expr::And(_) => "Fn::And",
            Expr::Or(_) => "Fn::Or",
            Expr::Not(_) => "Fn::Not",
        })
    }

    pub fn str(s: impl Into<String>) -> Expr {
        Expr::String(s.into())
    }

    pub fn reference(name: impl Into<String>) -> Expr {
        Expr::Ref(name.into())
    }

    pub fn pseudo(pseudo: Pseudo) -> Expr {
        Expr::Ref(pseudo.name().to_string())
    }

    pub fn get_att(resource: impl Into<String>, attribute: impl Into<String>) -> Expr {
        Expr::GetAtt {
            resource: resource.into(),
            attribute: attribute.into(),
        }
    }

    /// Text written by a user that may name values as `${...}` (a policy
    /// ARN with `${AWS::Partition}`, an export name): `Fn::Sub` when it
    /// does, a plain string when it does not.
    pub fn sub_or_str(text: &str) -> Expr {
        if text.contains("${") {
            Expr::sub(text)
        } else {
            Expr::str(text)
        }
    }

    /// `Fn::Sub` without a variable map.
    pub fn sub(template: impl Into<String>) -> Expr {
        Expr::Sub {
            template: template.into(),
            variables: IndexMap::new(),
        }
    }

    pub fn base64(inner: Expr) -> Expr {
        Expr::Base64(Box::new(inner))
    }

    pub fn import_value(name: Expr) -> Expr {
        Expr::ImportValue(Box::new(name))
    }

    pub fn join(delimiter: impl Into<String>, items: Vec<Expr>) -> Expr {
        Expr::Join {
            delimiter: delimiter.into(),
            items: Box::new(Expr::List(items)),
        }
    }

    pub fn select(index: i64, list: Expr) -> Expr {
        Expr::Select {
            index: Box::new(Expr::Int(index)),
            list: Box::new(list),
        }
    }

    pub fn split(delimiter: impl Into<String>, source: Expr) -> Expr {
        Expr::Split {
            delimiter: delimiter.into(),
            source: Box::new(source),
        }
    }

    pub fn list(items: impl IntoIterator<Item = Expr>) -> Expr {
        Expr::List(items.into_iter().collect())
    }

    /// A mapping from `(key, value)` pairs, in the order given.
    pub fn map<K: Into<String>>(entries: impl IntoIterator<Item = (K, Expr)>) -> Expr {
        Expr::Map(entries.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// True when the value is an intrinsic function rather than a literal.
    pub fn is_intrinsic(&self) -> bool {
        self.function_name().is_some()
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Expr::String(s) => Some(s),
            _ => None,
        }
    }

    /// The values directly inside this one, each with the path segment
    /// that leads to it (`Key`, `0`, `Fn::If/1`, `Fn::Sub/Var`), as text.
    pub fn children(&self) -> Vec<(String, &Expr)> {
        let mut children = Vec::new();
        self.for_each_child(|step, child| children.push((step.to_string(), child)));
        children
    }

    /// Calls `visit` on each value directly inside this one, in order, with
    /// the step that leads to it: the one place that knows the shape of
    /// every intrinsic, for the walkers that visit a whole value. Nothing
    /// is allocated.
    pub fn for_each_child<'a>(&'a self, mut visit: impl FnMut(Step<'a>, &'a Expr)) {
        // An intrinsic's arguments are named after it (`Fn::If/1`).
        let function = self.function_name().unwrap_or_default();
        let mut numbered = |items: &[&'a Expr]| {
            for (index, item) in items.iter().enumerate() {
                visit(Step::Argument(function, Some(index)), item);
            }
        };
        match self {
            Expr::Bool(_)
            | Expr::Int(_)
            | Expr::Float(_)
            | Expr::String(_)
            | Expr::Ref(_)
            | Expr::GetAtt { .. }
            | Expr::Condition(_) => {}
            Expr::List(items) => {
                for (index, item) in items.iter().enumerate() {
                    visit(Step::Index(index), item);
                }
            }
            Expr::And(items) | Expr::Or(items) => {
                for (index, item) in items.iter().enumerate() {
                    visit(Step::Argument(function, Some(index)), item);
                }
            }
            Expr::Map(entries) => {
                for (key, value) in entries {
                    visit(Step::Key(key), value);
                }
            }
            Expr::Sub { variables, .. } => {
                for (name, value) in variables {
                    visit(Step::SubVariable(name), value);
                }
            }
            Expr::Base64(inner)
            | Expr::GetAZs(inner)
            | Expr::ImportValue(inner)
            | Expr::Not(inner)
            | Expr::Join { items: inner, .. }
            | Expr::Split { source: inner, .. } => visit(Step::Argument(function, None), inner),
            // The argument after the condition or the map's name, counted
            // from that first argument.
            Expr::If {
                then, otherwise, ..
            } => {
                visit(Step::Argument(function, Some(1)), then);
                visit(Step::Argument(function, Some(2)), otherwise);
            }
            Expr::FindInMap {
                top_key,
                second_key,
                ..
            } => {
                visit(Step::Argument(function, Some(1)), top_key);
                visit(Step::Argument(function, Some(2)), second_key);
            }
            Expr::Select { index, list } => numbered(&[index, list]),
            Expr::Cidr { block, count, bits } => numbered(&[block, count, bits]),
            Expr::Equals(a, b) => numbered(&[a, b]),
        }
    }

    /// The names this value refers to, anywhere inside it: `Ref` targets,
    /// `Fn::GetAtt` resources with their attribute, and the `${Name}` or
    /// `${Resource.Attribute}` of a `Fn::Sub` that its own variable map does
    /// not define. Pseudo parameters (`AWS::Region`) are included.
    pub fn references(&self) -> Vec<(&str, Option<&str>)> {
        let mut found = Vec::new();
        self.collect_references(&mut found);
        found
    }

    fn collect_references<'a>(&'a self, found: &mut Vec<(&'a str, Option<&'a str>)>) {
        match self {
            Expr::Ref(name) => found.push((name, None)),
            Expr::GetAtt {
                resource,
                attribute,
            } => found.push((resource, Some(attribute))),
            Expr::Sub {
                template,
                variables,
            } => {
                for name in super::sub::references(template) {
                    if variables.contains_key(name) {
                        continue;
                    }
                    found.push(match name.split_once('.') {
                        Some((resource, attribute)) => (resource, Some(attribute)),
                        None => (name, None),
                    });
                }
            }
            _ => {}
        }
        self.for_each_child(|_, child| child.collect_references(found));
    }

    /// The values directly inside this one, mutable, in the order of
    /// [`Expr::children`], for the passes that rewrite references.
    pub fn children_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            Expr::Bool(_)
            | Expr::Int(_)
            | Expr::Float(_)
            | Expr::String(_)
            | Expr::Ref(_)
            | Expr::GetAtt { .. }
            | Expr::Condition(_) => Vec::new(),
            Expr::List(items) | Expr::And(items) | Expr::Or(items) => items.iter_mut().collect(),
            Expr::Map(entries) => entries.values_mut().collect(),
            Expr::Sub { variables, .. } => variables.values_mut().collect(),
            Expr::Base64(inner)
            | Expr::GetAZs(inner)
            | Expr::ImportValue(inner)
            | Expr::Not(inner)
            | Expr::Join { items: inner, .. }
            | Expr::Split { source: inner, .. } => vec![inner.as_mut()],
            Expr::If {
                then, otherwise, ..
            } => vec![then.as_mut(), otherwise.as_mut()],
            Expr::Select { index, list } => vec![index.as_mut(), list.as_mut()],
            Expr::FindInMap {
                top_key,
                second_key,
                ..
            } => vec![top_key.as_mut(), second_key.as_mut()],
            Expr::Cidr { block, count, bits } => {
                vec![block.as_mut(), count.as_mut(), bits.as_mut()]
            }
            Expr::Equals(a, b) => vec![a.as_mut(), b.as_mut()],
        }
    }
}

impl From<&str> for Expr {
    fn from(s: &str) -> Expr {
        Expr::String(s.to_string())
    }
}

impl From<String> for Expr {
    fn from(s: String) -> Expr {
        Expr::String(s)
    }
}

impl From<bool> for Expr {
    fn from(b: bool) -> Expr {
        Expr::Bool(b)
    }
}

impl From<i64> for Expr {
    fn from(i: i64) -> Expr {
        Expr::Int(i)
    }
}

impl From<u32> for Expr {
    fn from(i: u32) -> Expr {
        Expr::Int(i64::from(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One value of every variant, each with distinct children.
    fn every_variant() -> Vec<Expr> {
        let s = |t: &str| Box::new(Expr::str(t));
        vec![
            Expr::Bool(true),
            Expr::Int(1),
            Expr::Float(1.5),
            Expr::str("x"),
            Expr::list([Expr::str("a"), Expr::str("b")]),
            Expr::map([("K", Expr::str("v"))]),
            Expr::reference("R"),
            Expr::get_att("R", "Arn"),
            Expr::Sub {
                template: "${A}".into(),
                variables: IndexMap::from([("A".to_string(), Expr::str("a"))]),
            },
            Expr::Base64(s("a")),
            Expr::Join {
                delimiter: ",".into(),
                items: s("a"),
            },
            Expr::If {
                condition: "C".into(),
                then: s("a"),
                otherwise: s("b"),
            },
            Expr::Select {
                index: s("a"),
                list: s("b"),
            },
            Expr::Split {
                delimiter: ",".into(),
                source: s("a"),
            },
            Expr::GetAZs(s("a")),
            Expr::ImportValue(s("a")),
            Expr::FindInMap {
                map: "M".into(),
                top_key: s("a"),
                second_key: s("b"),
            },
            Expr::Cidr {
                block: s("a"),
                count: s("b"),
                bits: s("c"),
            },
            Expr::Equals(s("a"), s("b")),
            Expr::And(vec![Expr::str("a"), Expr::str("b")]),
            Expr::Or(vec![Expr::str("a"), Expr::str("b")]),
            Expr::Not(s("a")),
            Expr::Condition("C".into()),
        ]
    }

    #[test]
    fn references_are_found_at_any_depth_but_not_the_sub_map_own_variables() {
        let value = Expr::list([
            Expr::reference("A"),
            Expr::base64(Expr::get_att("B", "Arn")),
            Expr::Sub {
                template: "${C} ${D.Id} ${!E} ${Own} ${AWS::Region}".into(),
                variables: IndexMap::from([("Own".to_string(), Expr::reference("F"))]),
            },
        ]);
        assert_eq!(
            value.references(),
            [
                ("A", None),
                ("B", Some("Arn")),
                ("C", None),
                ("D", Some("Id")),
                ("AWS::Region", None),
                ("F", None),
            ]
        );
    }

    /// The path segment of every child, as finding paths spell them.
    #[test]
    fn each_child_is_named_as_template_paths_name_it() {
        let names: Vec<Vec<String>> = every_variant()
            .iter()
            .map(|expr| expr.children().into_iter().map(|(name, _)| name).collect())
            .collect();
        let expected: Vec<Vec<&str>> = vec![
            vec![],
            vec![],
            vec![],
            vec![],
            vec!["0", "1"],
            vec!["K"],
            vec![],
            vec![],
            vec!["Fn::Sub/A"],
            vec!["Fn::Base64"],
            vec!["Fn::Join"],
            vec!["Fn::If/1", "Fn::If/2"],
            vec!["Fn::Select/0", "Fn::Select/1"],
            vec!["Fn::Split"],
            vec!["Fn::GetAZs"],
            vec!["Fn::ImportValue"],
            vec!["Fn::FindInMap/1", "Fn::FindInMap/2"],
            vec!["Fn::Cidr/0", "Fn::Cidr/1", "Fn::Cidr/2"],
            vec!["Fn::Equals/0", "Fn::Equals/1"],
            vec!["Fn::And/0", "Fn::And/1"],
            vec!["Fn::Or/0", "Fn::Or/1"],
            vec!["Fn::Not"],
            vec![],
        ];
        assert_eq!(names, expected);
    }

    #[test]
    fn children_and_children_mut_see_the_same_values_in_the_same_order() {
        for mut expr in every_variant() {
            let shared: Vec<Expr> = expr
                .children()
                .into_iter()
                .map(|(_, e)| e.clone())
                .collect();
            let mutable: Vec<Expr> = expr.children_mut().into_iter().map(|e| e.clone()).collect();
            assert_eq!(shared, mutable, "{expr:?}");
        }
    }
}
