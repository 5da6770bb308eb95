//! Round trips of the CloudFormation emitters through the template reader:
//! arbitrary templates come back unchanged from YAML and from JSON, and the
//! exact YAML spelling of the short forms is pinned by examples.

mod common;

use std::process::Command;

use eksynth::cfn::{Expr, Output, Parameter, Pseudo, Resource, Template, json, read, yaml};
use eksynth::source::SourceFile;
use indexmap::IndexMap;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};

// ---------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------

/// Strings that YAML readers like to misread, or that need quoting, block
/// scalars or escapes.
const TRICKY: &[&str] = &[
    "yes",
    "no",
    "on",
    "off",
    "y",
    "N",
    "true",
    "False",
    "12:30",
    "1:2:3",
    "0755",
    "0x1F",
    "0o17",
    "0b101",
    "1e3",
    "1_000",
    "+1",
    "-.5",
    ".inf",
    "-.Inf",
    ".nan",
    "2024-01-01",
    "2001-12-14t21:59:43.10-05:00",
    "null",
    "Null",
    "~",
    "",
    " ",
    " leading space",
    "trailing space ",
    "a: b",
    "a:b",
    "key:",
    "#x",
    "a #b",
    "- x",
    "-",
    "?",
    "? x",
    "!Ref X",
    "&anchor",
    "*alias",
    "@at",
    "`tick",
    "%percent",
    "|",
    ">",
    "'",
    "\"",
    "'quoted'",
    "[a, b]",
    "{a: b}",
    "a, b",
    "<<",
    "=",
    "---",
    "...",
    "tab\there",
    "back\\slash",
    "ünïcödé ✓ 日本語 🦀",
    "\u{a0}nbsp",
    "zero\u{0}byte",
    "bell\u{7}",
    "del\u{7f}",
    "c1\u{85}nel",
    "line\u{2028}sep",
    "bom\u{feff}",
    "\u{fffe}",
    "cr\rlf",
    "${AWS::Region}",
    "${!Literal}",
    "echo ${HOME} $${x}",
    "Fn::Sub",
    "Ref",
    "__eksynth_long_form_0__",
    "__eksynth_long_form_0__Sub",
    "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "10.0.0.0/16",
];

fn tricky() -> impl Strategy<Value = String> {
    prop::sample::select(TRICKY).prop_map(str::to_string)
}

/// One line of text for a multi-line string.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        tricky(),
        "[ -~]{0,24}",
        "[ \t]{1,4}[a-z]{0,8}",
        Just(String::new()),
        any::<String>(),
    ]
}

/// Multi-line text such as user data, with every kind of line ending.
fn multiline() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(line(), 2..6),
        prop::sample::select(&["", "\n", "\n\n", "\n \n"][..]),
    )
        .prop_map(|(lines, end)| lines.join("\n") + end)
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => tricky(),
        2 => "[a-zA-Z0-9 _.:/-]{0,16}",
        1 => any::<String>(),
        2 => multiline(),
    ]
}

/// Logical ids: what resources, parameters and conditions are named.
fn ident() -> impl Strategy<Value = String> {
    "[A-Z][A-Za-z0-9]{0,10}"
}

/// Mapping keys of literal maps: anything except what would make a
/// single-key map read back as an intrinsic function.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![ident(), text()].prop_filter("not an intrinsic function key", |k| {
        k != "Ref" && k != "Condition" && !k.starts_with("Fn::")
    })
}

/// Floats that print and parse back exactly.
fn float() -> impl Strategy<Value = f64> {
    (-4000i32..4000).prop_map(|n| f64::from(n) / 8.0)
}

fn literal() -> impl Strategy<Value = Expr> {
    prop_oneof![
        any::<bool>().prop_map(Expr::Bool),
        any::<i64>().prop_map(Expr::Int),
        (-100i64..100).prop_map(Expr::Int),
        float().prop_map(Expr::Float),
        text().prop_map(Expr::String),
    ]
}

fn pseudo() -> impl Strategy<Value = Expr> {
    prop::sample::select(&Pseudo::ALL[..]).prop_map(Expr::pseudo)
}

fn sub_template() -> impl Strategy<Value = String> {
    prop_oneof![
        ident().prop_map(|name| format!("${{{name}}}")),
        (text(), ident(), text()).prop_map(|(a, name, b)| format!("{a}${{{name}}}{b}")),
        multiline().prop_map(|text| format!("#!/bin/bash\n{text}echo ${{AWS::StackName}}\n")),
        text(),
    ]
}

/// Intrinsics without sub-expressions.
fn intrinsic_leaf() -> impl Strategy<Value = Expr> {
    prop_oneof![
        ident().prop_map(Expr::Ref),
        pseudo(),
        (ident(), ident()).prop_map(|(r, a)| Expr::get_att(r, a)),
        (ident(), ident()).prop_map(|(r, a)| Expr::get_att(r, format!("Outputs.{a}"))),
        (ident(), ident()).prop_map(|(r, a)| Expr::get_att(format!("Nested.{r}"), a)),
        sub_template().prop_map(Expr::sub),
    ]
}

fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![3 => literal(), 2 => intrinsic_leaf()];
    leaf.prop_recursive(4, 40, 4, |inner| {
        let boxed = inner.clone().prop_map(Box::new);
        let condition = prop_oneof![
            ident().prop_map(Expr::Condition),
            (inner.clone(), inner.clone())
                .prop_map(|(a, b)| Expr::Equals(Box::new(a), Box::new(b))),
        ];
        let conditions = prop::collection::vec(condition.clone(), 1..4);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Expr::List),
            prop::collection::vec((key(), inner.clone()), 0..4)
                .prop_map(|entries| Expr::Map(entries.into_iter().collect())),
            (
                sub_template(),
                prop::collection::vec((ident(), inner.clone()), 1..3)
            )
                .prop_map(|(template, variables)| Expr::Sub {
                    template,
                    variables: variables.into_iter().collect(),
                }),
            boxed.clone().prop_map(Expr::Base64),
            (text(), boxed.clone()).prop_map(|(delimiter, items)| Expr::Join { delimiter, items }),
            (ident(), boxed.clone(), boxed.clone()).prop_map(|(condition, then, otherwise)| {
                Expr::If {
                    condition,
                    then,
                    otherwise,
                }
            }),
            (boxed.clone(), boxed.clone()).prop_map(|(index, list)| Expr::Select { index, list }),
            (text(), boxed.clone())
                .prop_map(|(delimiter, source)| Expr::Split { delimiter, source }),
            boxed.clone().prop_map(Expr::GetAZs),
            boxed.clone().prop_map(Expr::ImportValue),
            (ident(), boxed.clone(), boxed.clone()).prop_map(|(map, top_key, second_key)| {
                Expr::FindInMap {
                    map,
                    top_key,
                    second_key,
                }
            }),
            (boxed.clone(), boxed.clone(), boxed.clone())
                .prop_map(|(block, count, bits)| Expr::Cidr { block, count, bits }),
            (boxed.clone(), boxed).prop_map(|(a, b)| Expr::Equals(a, b)),
            conditions.clone().prop_map(Expr::And),
            conditions.prop_map(Expr::Or),
            condition.prop_map(|c| Expr::Not(Box::new(c))),
        ]
    })
}

fn expr_map() -> impl Strategy<Value = IndexMap<String, Expr>> {
    prop::collection::vec((key(), expr()), 0..4).prop_map(|entries| entries.into_iter().collect())
}

fn parameter() -> impl Strategy<Value = Parameter> {
    (
        (
            prop_oneof![
                Just("String".to_string()),
                Just("Number".to_string()),
                text()
            ],
            prop::option::of(text()),
            prop::option::of(literal()),
            prop::collection::vec(literal(), 0..3),
            prop::option::of(text()),
            prop::option::of(text()),
        ),
        (
            prop::option::of(any::<i64>()),
            prop::option::of(0i64..100),
            prop::option::of(any::<i64>()),
            prop::option::of(any::<i64>()),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (kind, description, default, allowed_values, allowed_pattern, constraint),
                (min_length, max_length, min_value, max_value, no_echo),
            )| Parameter {
                kind,
                description,
                default,
                allowed_values,
                allowed_pattern,
                constraint_description: constraint,
                min_length,
                max_length,
                min_value,
                max_value,
                no_echo,
            },
        )
}

fn resource() -> impl Strategy<Value = Resource> {
    (
        (
            prop_oneof![
                Just("AWS::EC2::LaunchTemplate".to_string()),
                Just("AWS::AutoScaling::AutoScalingGroup".to_string()),
                text(),
            ],
            prop::option::of(ident()),
            prop::collection::vec(prop_oneof![ident(), text()], 0..3),
            prop::option::of(expr()),
        ),
        (
            expr_map(),
            prop::option::of(expr()),
            prop::option::of(expr()),
            prop::option::of(prop_oneof![Just("Retain".to_string()), text()]),
            prop::option::of(text()),
        ),
    )
        .prop_map(
            |(
                (kind, condition, depends_on, metadata),
                (
                    properties,
                    creation_policy,
                    update_policy,
                    deletion_policy,
                    update_replace_policy,
                ),
            )| Resource {
                kind,
                condition,
                depends_on,
                metadata,
                properties,
                creation_policy,
                update_policy,
                deletion_policy,
                update_replace_policy,
                // Read under the SAM transform only, which these lack.
                ignore_globals: None,
            },
        )
}

fn output() -> impl Strategy<Value = Output> {
    (
        prop::option::of(text()),
        prop::option::of(ident()),
        expr(),
        prop::option::of(prop_oneof![
            text().prop_map(Expr::String),
            sub_template().prop_map(Expr::sub),
        ]),
    )
        .prop_map(|(description, condition, value, export)| Output {
            description,
            condition,
            value,
            export,
        })
}

fn named<T: std::fmt::Debug>(
    value: impl Strategy<Value = T>,
    max: usize,
) -> impl Strategy<Value = IndexMap<String, T>> {
    prop::collection::vec((ident(), value), 0..max)
        .prop_map(|entries| entries.into_iter().collect())
}

fn template() -> impl Strategy<Value = Template> {
    (
        prop::option::of(text()),
        expr_map(),
        named(parameter(), 4),
        named(expr(), 3),
        named(
            prop_oneof![
                (expr(), expr()).prop_map(|(a, b)| Expr::Equals(Box::new(a), Box::new(b))),
                prop::collection::vec(ident().prop_map(Expr::Condition), 1..3).prop_map(Expr::Or),
            ],
            3,
        ),
        named(resource(), 4),
        named(output(), 3),
    )
        .prop_map(
            |(description, metadata, parameters, mappings, conditions, resources, outputs)| {
                Template {
                    description,
                    metadata,
                    parameters,
                    mappings,
                    conditions,
                    resources,
                    outputs,
                    // Read under the SAM transform only, which these lack.
                    globals: IndexMap::new(),
                }
            },
        )
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn read_text(name: &str, text: &str) -> Result<Template, String> {
    read::read(&SourceFile::new(name, text)).map_err(|diagnostics| {
        diagnostics
            .iter()
            .map(|d| format!("{}: {}", d.location(), d.message))
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// 128 cases keep the suite fast; `PROPTEST_CASES` asks for a longer run.
fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(128);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    /// `read(emit_yaml(t)) == t`; emitting again gives the same bytes, and
    /// the text ends in exactly one newline.
    #[test]
    fn yaml_round_trips(template in template()) {
        let text = yaml::emit(&template);
        prop_assert_eq!(&text, &yaml::emit(&template.clone()), "not deterministic");
        prop_assert!(text.ends_with('\n') && !text.ends_with("\n\n"), "{:?}", text);
        let back = read_text("template.yaml", &text);
        prop_assert_eq!(back.as_ref(), Ok(&template), "YAML:\n{}", text);
    }

    /// The same for JSON, which must also be JSON to a JSON parser.
    #[test]
    fn json_round_trips(template in template()) {
        let text = json::emit(&template);
        prop_assert_eq!(&text, &json::emit(&template.clone()), "not deterministic");
        prop_assert!(text.ends_with("}\n"), "{:?}", text);
        let parsed: Result<serde_json::Value, _> = serde_json::from_str(&text);
        prop_assert!(parsed.is_ok(), "{:?}", parsed.err());
        let back = read_text("template.json", &text);
        prop_assert_eq!(back.as_ref(), Ok(&template), "JSON:\n{}", text);
    }
}

// ---------------------------------------------------------------------------
// Exact spellings
// ---------------------------------------------------------------------------

fn node_group() -> Template {
    let mut template = Template {
        description: Some("EKS worker nodes".to_string()),
        ..Template::default()
    };
    template.parameters.insert(
        "ClusterName".to_string(),
        Parameter::new("String").described("The EKS cluster"),
    );
    template.parameters.insert(
        "Enabled".to_string(),
        Parameter {
            allowed_values: vec![Expr::str("yes"), Expr::str("no")],
            ..Parameter::new("String").with_default("yes")
        },
    );
    template.conditions.insert(
        "IsEnabled".to_string(),
        Expr::Equals(
            Box::new(Expr::reference("Enabled")),
            Box::new(Expr::str("yes")),
        ),
    );
    let user_data = Expr::base64(Expr::sub(
        "#!/bin/bash\nset -o errexit\n/etc/eks/bootstrap.sh ${ClusterName}\necho \"${!HOME}\"\n",
    ));
    template.resources.insert(
        "LaunchTemplate".to_string(),
        Resource {
            condition: Some("IsEnabled".to_string()),
            depends_on: vec!["Role".to_string()],
            ..Resource::new("AWS::EC2::LaunchTemplate")
                .prop(
                    "LaunchTemplateData",
                    Expr::map([
                        ("UserData", user_data),
                        (
                            "IamInstanceProfile",
                            Expr::map([("Arn", Expr::get_att("Profile", "Arn"))]),
                        ),
                    ]),
                )
                .prop("Schedule", Expr::list(["12:30".into(), "on".into()]))
        },
    );
    template.resources.insert(
        "Role".to_string(),
        Resource {
            deletion_policy: Some("Retain".to_string()),
            ..Resource::new("AWS::IAM::Role").prop(
                "RoleName",
                Expr::Sub {
                    template: "${AWS::StackName}-${Vpc}".to_string(),
                    variables: [(
                        "Vpc".to_string(),
                        Expr::import_value(Expr::str("network-VpcId")),
                    )]
                    .into_iter()
                    .collect(),
                },
            )
        },
    );
    template.outputs.insert(
        "RoleArn".to_string(),
        Output {
            description: Some("The node role".to_string()),
            condition: None,
            value: Expr::get_att("Role", "Arn"),
            export: Some(Expr::sub("${AWS::StackName}-RoleArn")),
        },
    );
    template
}

const NODE_GROUP_YAML: &str = r#"AWSTemplateFormatVersion: "2010-09-09"
Description: EKS worker nodes
Parameters:
  ClusterName:
    Type: String
    Description: The EKS cluster
  Enabled:
    Type: String
    Default: "yes"
    AllowedValues:
    - "yes"
    - "no"
Conditions:
  IsEnabled: !Equals
    - !Ref Enabled
    - "yes"
Resources:
  LaunchTemplate:
    Type: AWS::EC2::LaunchTemplate
    Condition: IsEnabled
    DependsOn: Role
    Properties:
      LaunchTemplateData:
        UserData: !Base64
          Fn::Sub: |
            #!/bin/bash
            set -o errexit
            /etc/eks/bootstrap.sh ${ClusterName}
            echo "${!HOME}"
        IamInstanceProfile:
          Arn: !GetAtt Profile.Arn
      Schedule:
      - "12:30"
      - "on"
  Role:
    Type: AWS::IAM::Role
    Properties:
      RoleName: !Sub
        - ${AWS::StackName}-${Vpc}
        - Vpc: !ImportValue network-VpcId
    DeletionPolicy: Retain
Outputs:
  RoleArn:
    Description: The node role
    Value: !GetAtt Role.Arn
    Export:
      Name: !Sub ${AWS::StackName}-RoleArn
"#;

#[test]
fn yaml_spelling_of_a_node_group() {
    assert_eq!(yaml::emit(&node_group()), NODE_GROUP_YAML);
}

#[test]
fn json_spelling_of_intrinsics() {
    let text = json::emit(&node_group());
    let expected_fragments = [
        "{\n  \"AWSTemplateFormatVersion\": \"2010-09-09\",\n  \"Description\": \"EKS worker nodes\",\n",
        "\"UserData\": {\n            \"Fn::Base64\": {\n              \"Fn::Sub\": \"#!/bin/bash\\nset -o errexit\\n",
        "\"Arn\": {\n              \"Fn::GetAtt\": [\n                \"Profile\",\n                \"Arn\"\n              ]\n            }",
        "\"RoleName\": {\n          \"Fn::Sub\": [\n            \"${AWS::StackName}-${Vpc}\",\n            {\n              \"Vpc\": {\n                \"Fn::ImportValue\": \"network-VpcId\"\n              }\n            }\n          ]\n        }",
        "\"Export\": {\n        \"Name\": {\n          \"Fn::Sub\": \"${AWS::StackName}-RoleArn\"\n        }\n      }",
        "\"DependsOn\": \"Role\",",
    ];
    for fragment in expected_fragments {
        assert!(text.contains(fragment), "missing {fragment:?} in\n{text}");
    }
    assert!(text.ends_with("}\n") && !text.ends_with("\n\n"));
    assert_eq!(read_text("t.json", &text), Ok(node_group()));
}

#[test]
fn yaml_1_1_lookalikes_are_quoted() {
    let mut template = Template::default();
    let values = [
        "yes",
        "on",
        "12:30",
        "0x1F",
        "2024-01-01",
        "0755",
        "1e3",
        "null",
        "~",
        "",
    ];
    template.metadata.insert(
        "Values".to_string(),
        Expr::list(values.iter().map(|v| Expr::str(*v))),
    );
    let text = yaml::emit(&template);
    for value in values {
        assert!(
            text.contains(&format!("- \"{value}\"\n")),
            "{value:?} is not double-quoted in\n{text}"
        );
    }
}

#[test]
fn short_forms_nest_with_long_form_inside_a_tag() {
    let mut template = Template::default();
    template.outputs.insert(
        "Zones".to_string(),
        Output {
            value: Expr::Select {
                index: Box::new(Expr::Int(0)),
                list: Box::new(Expr::GetAZs(Box::new(Expr::pseudo(Pseudo::Region)))),
            },
            ..Output::default()
        },
    );
    template.outputs.insert(
        "Encoded".to_string(),
        Output {
            value: Expr::base64(Expr::join(
                ",",
                vec![Expr::reference("A"), Expr::get_att("B", "Outputs.Url")],
            )),
            ..Output::default()
        },
    );
    template.outputs.insert(
        "Number".to_string(),
        Output {
            value: Expr::base64(Expr::Int(5)),
            ..Output::default()
        },
    );
    template.conditions.insert(
        "Both".to_string(),
        Expr::And(vec![
            Expr::Condition("A".to_string()),
            Expr::Not(Box::new(Expr::Condition("B".to_string()))),
        ]),
    );
    let text = yaml::emit(&template);
    let expected = r#"AWSTemplateFormatVersion: "2010-09-09"
Conditions:
  Both: !And
    - !Condition A
    - !Not
      - !Condition B
Outputs:
  Zones:
    Value: !Select
      - 0
      - !GetAZs
        Ref: AWS::Region
  Encoded:
    Value: !Base64
      Fn::Join:
      - ","
      - - !Ref A
        - !GetAtt B.Outputs.Url
  Number:
    Value:
      Fn::Base64: 5
"#;
    assert_eq!(text, expected);
    assert_eq!(read_text("t.yaml", &text), Ok(template));
}

#[test]
fn multi_line_strings_are_literal_blocks_or_escaped() {
    let cases = [
        (
            "#!/bin/bash\necho hi\n",
            "  Script: |\n    #!/bin/bash\n    echo hi\n",
        ),
        (
            "no final newline\nend",
            "  Script: |-\n    no final newline\n    end\n",
        ),
        (
            "  indented first\nline\n",
            "  Script: |2\n      indented first\n    line\n",
        ),
        (
            "two final newlines\n\n",
            "  Script: \"two final newlines\\n\\n\"\n",
        ),
        (
            "carriage\r\nreturn\n",
            "  Script: \"carriage\\r\\nreturn\\n\"\n",
        ),
    ];
    for (value, expected) in cases {
        let mut template = Template::default();
        template
            .metadata
            .insert("Script".to_string(), Expr::str(value));
        let text = yaml::emit(&template);
        assert_eq!(
            text,
            format!("AWSTemplateFormatVersion: \"2010-09-09\"\nMetadata:\n{expected}")
        );
        assert_eq!(read_text("t.yaml", &text), Ok(template));
    }
}

#[test]
fn long_form_marker_in_user_strings_does_not_leak() {
    let mut template = Template::default();
    template.outputs.insert(
        "Tricky".to_string(),
        Output {
            value: Expr::base64(Expr::sub("__eksynth_long_form_0__Sub ${X}")),
            ..Output::default()
        },
    );
    let text = yaml::emit(&template);
    assert!(
        text.contains("Fn::Sub: __eksynth_long_form_0__Sub ${X}\n"),
        "{text}"
    );
    assert_eq!(read_text("t.yaml", &text), Ok(template));
}

#[test]
fn empty_template_has_only_the_version() {
    let template = Template::default();
    assert_eq!(
        yaml::emit(&template),
        "AWSTemplateFormatVersion: \"2010-09-09\"\n"
    );
    assert_eq!(
        json::emit(&template),
        "{\n  \"AWSTemplateFormatVersion\": \"2010-09-09\"\n}\n"
    );
    assert_eq!(read_text("t.yaml", &yaml::emit(&template)), Ok(template));
}

// ---------------------------------------------------------------------------
// Reading hand-written templates
// ---------------------------------------------------------------------------

#[test]
fn reads_both_get_att_and_sub_spellings() {
    let text = r#"
Resources:
  R:
    Type: T
    Properties:
      A: !GetAtt Res.Arn
      B: !GetAtt [Res, Arn]
      C: {"Fn::GetAtt": "Res.Arn"}
      D: !Sub "x ${Y}"
      E: !Sub ["x ${Y}", {Y: !Ref Z}]
      F: !And [{Condition: C1}, !Condition C2]
      G: {Condition: NotAReference}
"#;
    let template = read_text("t.yaml", text).unwrap();
    let properties = &template.resources["R"].properties;
    for key in ["A", "B", "C"] {
        assert_eq!(properties[key], Expr::get_att("Res", "Arn"));
    }
    assert_eq!(properties["D"], Expr::sub("x ${Y}"));
    assert_eq!(
        properties["E"],
        Expr::Sub {
            template: "x ${Y}".to_string(),
            variables: [("Y".to_string(), Expr::reference("Z"))]
                .into_iter()
                .collect(),
        }
    );
    assert_eq!(
        properties["F"],
        Expr::And(vec![
            Expr::Condition("C1".to_string()),
            Expr::Condition("C2".to_string()),
        ])
    );
    assert_eq!(
        properties["G"],
        Expr::map([("Condition", Expr::str("NotAReference"))])
    );
}

#[test]
fn reports_every_problem_with_a_location() {
    let text = "\
AWSTemplateFormatVersion: \"2010-09-09\"
Transformations: x
Parameters:
  P:
    Description: no type
    Colour: red
Resources:
  A:
    Properties:
      X: !Frobnicate x
  B:
    Type: T
    Properties:
      Y: !Join [\",\"]
      Z: {\"Fn::Select\": 3}
      W: ~
      V: {\"Fn::Length\": [1]}
Outputs:
  O:
    Description: no value
";
    let errors = read::read(&SourceFile::new("bad.yaml", text)).unwrap_err();
    let lines: Vec<String> = errors
        .iter()
        .map(|d| format!("{}: {}", d.location(), d.message))
        .collect();
    let expected = [
        "bad.yaml:2:1: unknown template section `Transformations`",
        "bad.yaml:6:5: unknown key `Colour` in parameter `P`",
        "bad.yaml:4:3: parameter `P` has no `Type`",
        "bad.yaml:10:10: unknown tag `!Frobnicate`",
        "bad.yaml:8:3: resource `A` has no `Type`",
        "bad.yaml:14:16: `!Join` takes a list of 2 (a delimiter and a list), found 1 item",
        "bad.yaml:15:25: `Fn::Select` takes a list of an index and a list, found an integer",
        "bad.yaml:16:10: a value is missing here (null)",
        "bad.yaml:17:11: the intrinsic function `Fn::Length` is not supported",
        "bad.yaml:19:3: output `O` has no `Value`",
    ];
    assert_eq!(lines, expected);
}

#[test]
fn rejects_non_mapping_and_broken_input_without_panicking() {
    let inputs = [
        "- a\n- b\n",
        "just a string",
        "42",
        "Resources: [1, 2]",
        "Resources:\n  A: !Ref\n",
        "Resources:\n  A:\n    Type: !Sub [a, b, c]\n",
        "Resources:\n  A:\n    Type: T\n    Properties: {X: !GetAtt NoDot}\n",
        "Resources:\n  A:\n    Type: T\n    Properties: {X: !Sub [a, [b]]}\n",
        "Resources:\n  A:\n    Type: T\n    Properties: {X: {Ref: a, Other: b}}\n",
        "Outputs:\n  O:\n    Value: 1\n    Export: {Nom: x}\n",
        "{\"unterminated\": ",
        "a: [}",
        "",
        "\u{0}",
        "!Ref x",
        "Resources: &a\n  A: *a\n",
    ];
    for input in inputs {
        let result = read::read(&SourceFile::new("x.yaml", input));
        let errors = result.expect_err(input);
        assert!(!errors.is_empty(), "{input:?}");
        assert!(
            errors.iter().all(|d| d.span.is_some()),
            "{input:?}: {errors:?}"
        );
    }
}

proptest! {
    #![proptest_config(config())]

    /// The reader never panics, whatever it is given.
    #[test]
    fn reader_never_panics(text in prop_oneof![
        any::<String>(),
        "[ -~\n]{0,80}",
        template().prop_map(|t| {
            // Damage a valid template: cut it at some point.
            let text = yaml::emit(&t);
            let cut = text.len() * 2 / 3;
            let cut = (0..=cut).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
            text[..cut].to_string()
        }),
    ]) {
        let _ = read::read(&SourceFile::new("fuzz.yaml", text));
    }
}

// ---------------------------------------------------------------------------
// A YAML 1.1 reader agrees
// ---------------------------------------------------------------------------

/// Loads each YAML document with PyYAML's safe loader (YAML 1.1), turning
/// the short-form tags into their long form, and compares it with the JSON
/// emitted for the same template.
const PYTHON_CHECK: &str = r#"
import json, sys, yaml

def intrinsic(loader, suffix, node):
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    if suffix == "GetAtt" and isinstance(value, str):
        value = value.split(".", 1)
    if suffix in ("Ref", "Condition"):
        return {suffix: value}
    return {"Fn::" + suffix: value}

yaml.SafeLoader.add_multi_constructor("!", intrinsic)
cases = json.load(sys.stdin)
failures = 0
for i, (text, expected) in enumerate(cases):
    loaded = yaml.safe_load(text)
    if loaded != json.loads(expected):
        failures += 1
        print("case", i, "differs:\n" + text, file=sys.stderr)
sys.exit(1 if failures else 0)
"#;

#[test]
fn pyyaml_reads_what_the_json_says() {
    // .ci/run puts a python3 with PyYAML first on PATH.
    let yaml_module =
        common::run_installed(Command::new("python3").args(["-c", "import yaml"]), b"");
    match yaml_module {
        None => return,
        Some(output) if !output.status.success() => {
            common::skip_without("PyYAML (python3's yaml module)");
            return;
        }
        Some(_) => {}
    }
    let mut templates = vec![node_group()];
    let mut runner = TestRunner::deterministic();
    let strategy = template();
    for _ in 0..64 {
        let tree = strategy.new_tree(&mut runner).unwrap();
        templates.push(tree.current());
    }
    let cases: Vec<(String, String)> = templates
        .iter()
        .map(|t| (yaml::emit(t), json::emit(t)))
        .collect();
    let input = serde_json::to_string(&cases).unwrap();
    let output = common::run_installed(
        Command::new("python3").args(["-c", PYTHON_CHECK]),
        input.as_bytes(),
    )
    .expect("python3 ran before");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
