//! The fast YAML reader (`syntax::parse_fast`) against the reference,
//! serde-saphyr (`syntax::parse_reference`): wherever the fast reader reads
//! a document, its tree (values, tags, spans) is the reference's, over every
//! YAML and JSON file of the project, cfn-lint's fixtures when they are
//! downloaded, and generated documents full of the scalars YAML resolves in
//! surprising ways.

use std::path::Path;

use eksynth::source::SourceFile;
use eksynth::syntax::{self, Node};
use proptest::prelude::*;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Whether the fast reader agrees with the reference on `text`: `Ok(true)`
/// if it read the document, `Ok(false)` if it declined it.
fn agrees(name: &str, text: &str, fast: impl Fn(&str) -> Option<Node>) -> Result<bool, String> {
    let Some(fast) = fast(text) else {
        return Ok(false);
    };
    let file = SourceFile::new(name, text.to_string());
    match syntax::parse_reference(&file) {
        Ok(reference) if reference == fast => Ok(true),
        Ok(reference) => Err(format!(
            "{name}: the trees differ at {}",
            first_difference(&reference, &fast, "")
        )),
        Err(error) => Err(format!(
            "{name}: the fast reader read what serde-saphyr rejects: {}",
            error.message
        )),
    }
}

/// The path of the first node where two trees differ, with both nodes.
fn first_difference(a: &Node, b: &Node, path: &str) -> String {
    use eksynth::syntax::Value;
    match (&a.value, &b.value) {
        (Value::Map(x), Value::Map(y))
            if x.len() == y.len() && a.span == b.span && a.tag == b.tag =>
        {
            for ((ka, va), (kb, vb)) in x.iter().zip(y) {
                if ka != kb {
                    return format!("{path}: key {ka:?} (reference) vs {kb:?} (fast)");
                }
                if va != vb {
                    return first_difference(va, vb, &format!("{path}/{}", ka.name));
                }
            }
            format!("{path}: equal children")
        }
        (Value::Seq(x), Value::Seq(y))
            if x.len() == y.len() && a.span == b.span && a.tag == b.tag =>
        {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                if va != vb {
                    return first_difference(va, vb, &format!("{path}/{i}"));
                }
            }
            format!("{path}: equal children")
        }
        _ => format!(
            "{path}: reference {:?} {:?} {:?} vs fast {:?} {:?} {:?}",
            a.span,
            a.tag,
            scalar(a),
            b.span,
            b.tag,
            scalar(b)
        ),
    }
}

fn scalar(node: &Node) -> String {
    use eksynth::syntax::Value;
    match &node.value {
        Value::Seq(items) => format!("a list of {}", items.len()),
        Value::Map(entries) => format!("a mapping of {}", entries.len()),
        other => format!("{other:?}"),
    }
}

#[test]
fn the_fast_reader_reads_every_file_of_the_project_as_serde_saphyr_does() {
    let files: Vec<_> = [
        "examples",
        "tests",
        "blueprints",
        "data",
        "schemas",
        ".github",
    ]
    .into_iter()
    .flat_map(|dir| files::templates_under(&Path::new(ROOT).join(dir)))
    .collect();
    let mut read = 0;
    let mut declined = Vec::new();
    let mut differences = Vec::new();
    let mut cut = 0;
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        let name = path
            .strip_prefix(ROOT)
            .unwrap_or(path)
            .display()
            .to_string();
        match agrees(&name, &text, syntax::parse_fast) {
            Ok(true) => read += 1,
            Ok(false) => declined.push(name.clone()),
            Err(difference) => differences.push(difference),
        }
        // Every file, however small, also cut into runs of resources.
        match agrees(&name, &text, |text| syntax::parse_fast_in_pieces(text, 3)) {
            Ok(true) => cut += 1,
            Ok(false) => {}
            Err(difference) => differences.push(format!("in pieces: {difference}")),
        }
    }
    // The templates with a block `Resources` section of three or more
    // resources: the examples' and the corpus's (76), and most of cfn-lint's
    // YAML fixtures when the peer suite has downloaded them.
    let fixtures = Path::new(ROOT).join("tests/peer/.cache").is_dir();
    let floor = if fixtures { 150 } else { 70 };
    assert!(cut >= floor, "only {cut} files were read in pieces");
    assert!(
        differences.is_empty(),
        "{} files read differently:\n{}",
        differences.len(),
        differences.join("\n")
    );
    // The fast reader must carry the load: it declines only the files that
    // use what it leaves to serde-saphyr (anchors, core tags, errors...).
    let share = read as f64 / (read + declined.len()) as f64;
    assert!(
        share >= 0.95,
        "the fast reader read only {read} of {} files; declined:\n{}",
        read + declined.len(),
        declined.join("\n")
    );
}

/// Scalars as written: the spellings YAML resolves to null, booleans,
/// numbers of every radix and form, dates, and strings that look like them,
/// plain, quoted, tagged and anchored.
const SCALARS: &[&str] = &[
    "",
    "~",
    "null",
    "Null",
    "NULL",
    "nULL",
    "true",
    "True",
    "TRUE",
    "tRUE",
    "false",
    "False",
    "FALSE",
    "yes",
    "No",
    "on",
    "OFF",
    "y",
    "n",
    "0",
    "-0",
    "+0",
    "7",
    "-7",
    "+7",
    "010",
    "-010",
    "0x1F",
    "0X1f",
    "0o17",
    "0b101",
    "1_000",
    "1e3",
    "1E-3",
    "-1.5e+3",
    "1.5",
    "-0.25",
    "0.0",
    "00.5",
    ".5",
    "5.",
    "1.0000000000000001",
    "123456789012345678",
    "1234567890123456789",
    "12345678901234567890",
    "-9223372036854775808",
    "9223372036854775807",
    ".inf",
    "-.Inf",
    "+.INF",
    ".nan",
    ".NaN",
    "inf",
    "nan",
    "Infinity",
    "2012-10-17",
    "2001-12-14t21:59:43.10-05:00",
    "1:20",
    "190:20:30",
    "10.0.0.0/16",
    "1.2.3",
    "-",
    "-a",
    "+a",
    ".a",
    "a",
    "Ref",
    "a b",
    "'quoted'",
    "'0x1F'",
    "\"true\"",
    "\"a\\tb\"",
    "!Ref a",
    "!Ref 7",
    "!Ref",
    "!Ref ''",
    "!Sub '${A}'",
    "!!str 7",
    "!!int 7",
    "!binary aGk=",
    "! 7",
    "!GetAtt a.b",
    "&x 7",
    "*x",
    "|\n  block\n",
    ">\n  folded\n",
    "[1, a, {b: c}]",
    "{a: 1, b: [x, y]}",
    "[]",
    "{}",
    "!If [a, b, c]",
    "!Join ['', [a, 1]]",
];

const KEYS: &[&str] = &[
    "a", "b", "Type", "Ref", "'q'", "\"d\"", "1", "0x1", "true", "null", "~", "<<", "a b", "1.5",
    "-a", "!Tag k", "&k a", "? x",
];

#[derive(Clone, Debug)]
enum Doc {
    Scalar(&'static str),
    Map(Vec<(&'static str, Doc)>),
    Seq(Vec<Doc>),
}

fn doc() -> impl Strategy<Value = Doc> {
    let leaf = proptest::sample::select(SCALARS).prop_map(Doc::Scalar);
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec((proptest::sample::select(KEYS), inner.clone()), 0..4)
                .prop_map(Doc::Map),
            proptest::collection::vec(inner, 0..4).prop_map(Doc::Seq),
        ]
    })
}

/// Block YAML for a document; a scalar with a line break is indented under
/// its key or item.
fn render(doc: &Doc, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match doc {
        Doc::Scalar(text) => {
            out.push_str(&text.replace('\n', &format!("\n{pad}  ")));
            out.push('\n');
        }
        Doc::Map(entries) if entries.is_empty() => out.push_str("{}\n"),
        Doc::Seq(items) if items.is_empty() => out.push_str("[]\n"),
        Doc::Map(entries) => {
            out.push('\n');
            for (key, value) in entries {
                out.push_str(&format!("{pad}{key}: "));
                render(value, indent + 2, out);
            }
        }
        Doc::Seq(items) => {
            out.push('\n');
            for item in items {
                out.push_str(&format!("{pad}- "));
                render(item, indent + 2, out);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_fast_reader_reads_generated_documents_as_serde_saphyr_does(
        entries in proptest::collection::vec((proptest::sample::select(KEYS), doc()), 1..5),
    ) {
        let mut text = String::new();
        for (key, value) in &entries {
            text.push_str(key);
            text.push_str(": ");
            render(value, 2, &mut text);
        }
        if let Err(difference) = agrees("generated.yaml", &text, syntax::parse_fast) {
            prop_assert!(false, "{difference}\n---\n{text}");
        }
    }

    #[test]
    fn the_fast_reader_reads_every_scalar_as_serde_saphyr_does(
        scalar in proptest::sample::select(SCALARS),
        tagged in any::<bool>(),
    ) {
        let text = if tagged { format!("v: !Ref {scalar}\n") } else { format!("v: {scalar}\n") };
        if let Err(difference) = agrees("scalar.yaml", &text, syntax::parse_fast) {
            prop_assert!(false, "{difference}\n---\n{text}");
        }
    }
}

/// A key written twice is left to serde-saphyr, which rejects it, in a
/// small mapping and in a large one alike.
#[test]
fn a_repeated_key_is_left_to_serde_saphyr() {
    for size in [3, 40] {
        let mut text: String = (0..size).map(|i| format!("k{i}: {i}\n")).collect();
        assert!(syntax::parse_fast(&text).is_some(), "{size} keys");
        text.push_str("k0: again\n");
        assert!(
            syntax::parse_fast(&text).is_none(),
            "{size} keys, one twice"
        );
        let file = SourceFile::new("t.yaml", text.as_str());
        assert!(syntax::parse(&file).is_err(), "{size} keys, one twice");
    }
}

/// The generated scalars reach the fast reader's own resolution, not only
/// its refusals: most of them are read.
#[test]
fn the_fast_reader_reads_most_generated_scalars_itself() {
    let read = SCALARS
        .iter()
        .filter(|scalar| syntax::parse_fast(&format!("v: {scalar}\n")).is_some())
        .count();
    assert!(read * 4 >= SCALARS.len() * 3, "{read} of {}", SCALARS.len());
}

/// The 90-group benchmark template, the size `validate` cuts into pieces on
/// its own, read in pieces as in one.
#[test]
fn a_large_template_read_in_pieces_is_read_as_serde_saphyr_reads_it() {
    let file = SourceFile::new("large.yaml", generator::blueprint(90));
    let loaded = eksynth::blueprint::load(&file).unwrap_or_else(|_| panic!("the blueprint"));
    let lowered = eksynth::eks::lower(&loaded.blueprint).unwrap_or_else(|e| panic!("{e}"));
    let text = eksynth::cfn::yaml::emit(&lowered.template);
    assert!(text.len() > 256 * 1024, "{} bytes", text.len());
    for pieces in [2, 8, 50] {
        assert_eq!(
            agrees("large.yaml", &text, |text| syntax::parse_fast_in_pieces(
                text, pieces
            )),
            Ok(true),
            "{pieces} pieces"
        );
    }
    // And the reader `validate` uses takes it in pieces.
    let whole = syntax::parse(&SourceFile::new("large.yaml", text.clone()))
        .unwrap_or_else(|e| panic!("{}", e.message));
    assert_eq!(Some(whole), syntax::parse_fast_in_pieces(&text, 8));
}

/// Cuts that YAML would read otherwise are not made, or their pieces are
/// declined: the document is then read whole.
#[test]
fn a_template_that_cannot_be_cut_safely_is_read_whole() {
    let cases = [
        // A quoted scalar open across the cut.
        "Resources:\n  A:\n    Type: \"x\n  B: y\"\n  C:\n    Type: z\n  D:\n    Type: w\n",
        // A flow mapping open across the cut.
        "Resources:\n  A: {Type: x,\n  B: y}\n  C:\n    Type: z\n  D:\n    Type: w\n",
        // A key repeated in two runs.
        "Resources:\n  A:\n    Type: x\n  B:\n    Type: y\n  A:\n    Type: z\n",
        // An alias to an anchor in another run.
        "Resources:\n  A: &a\n    Type: x\n  B:\n    Type: y\n  C: *a\n",
        // A line indented less than the keys.
        "Resources:\n    A:\n      Type: x\n  B:\n      Type: y\n    C:\n      Type: z\n",
    ];
    for text in cases {
        // As many pieces as keys: a cut before every key.
        assert_eq!(syntax::parse_fast_in_pieces(text, 50), None, "{text}");
        for pieces in 2..4 {
            assert!(
                agrees("t.yaml", text, |text| syntax::parse_fast_in_pieces(
                    text, pieces
                ))
                .is_ok(),
                "{text}"
            );
        }
        let file = SourceFile::new("t.yaml", text.to_string());
        assert_eq!(
            syntax::parse(&file).map_err(|e| e.message),
            syntax::parse_reference(&file).map_err(|e| e.message),
            "{text}"
        );
    }
}

#[path = "../benches/common/files.rs"]
mod files;
#[path = "../benches/common/blueprint.rs"]
mod generator;
