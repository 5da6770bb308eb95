//! Atomic writes, sets of files written as one, the output directory, parameters files, `check` and the
//! unified diff behind it.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use eksynth::output::{
    CheckReport, OutputError, Refusal, WriteOutcome, check, parameters_file, parameters_file_name,
    prepare_out_dir, stack_file_name, stack_files, unified_diff, write_atomically, write_files,
    written_by_eksynth,
};
use proptest::prelude::*;

/// A fresh directory under the system temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let path = std::env::temp_dir().join(format!(
            "eksynth-output-{tag}-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = fs::set_permissions(&self.0, fs::Permissions::from_mode(0o755));
        }
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// The first line of every YAML template eksynth writes.
const TEMPLATE: &str = "AWSTemplateFormatVersion: \"2010-09-09\"\n";

// ---------------------------------------------------------------- writing

#[test]
fn atomic_write_creates_the_file_and_leaves_no_temporary_file() {
    let dir = TempDir::new("create");
    let outcome = write_atomically(dir.path(), "nodes.yaml", b"Resources: {}\n").unwrap();
    assert_eq!(outcome, WriteOutcome::Written);
    assert_eq!(
        fs::read(dir.path().join("nodes.yaml")).unwrap(),
        b"Resources: {}\n"
    );
    assert_eq!(listing(dir.path()), ["nodes.yaml"]);
}

#[test]
fn identical_write_is_unchanged_and_keeps_the_mtime() {
    let dir = TempDir::new("unchanged");
    let target = dir.path().join("nodes.yaml");
    write_atomically(dir.path(), "nodes.yaml", b"a: 1\n").unwrap();
    let before = fs::metadata(&target).unwrap().modified().unwrap();
    thread::sleep(Duration::from_millis(20));

    let outcome = write_atomically(dir.path(), "nodes.yaml", b"a: 1\n").unwrap();
    assert_eq!(outcome, WriteOutcome::Unchanged);
    assert_eq!(fs::metadata(&target).unwrap().modified().unwrap(), before);
    assert_eq!(listing(dir.path()), ["nodes.yaml"]);

    // Different contents replace the file.
    let outcome = write_atomically(dir.path(), "nodes.yaml", b"a: 2\n").unwrap();
    assert_eq!(outcome, WriteOutcome::Written);
    assert_eq!(fs::read(&target).unwrap(), b"a: 2\n");
    assert_eq!(listing(dir.path()), ["nodes.yaml"]);
}

#[test]
fn failed_rename_leaves_the_target_intact_and_no_temporary_file() {
    let dir = TempDir::new("rename-fails");
    // The target is a non-empty directory: the rename over it fails.
    let target = dir.path().join("nodes.yaml");
    fs::create_dir(&target).unwrap();
    fs::write(target.join("keep"), b"old bytes\n").unwrap();
    fs::write(dir.path().join("other.yaml"), b"other\n").unwrap();

    let error = write_atomically(dir.path(), "nodes.yaml", b"new bytes\n").unwrap_err();
    assert!(
        matches!(&error, OutputError::Write { path, .. } if path == &target),
        "{error:?}"
    );
    assert!(error.to_string().contains("nodes.yaml"), "{error}");
    assert!(target.is_dir());
    assert_eq!(fs::read(target.join("keep")).unwrap(), b"old bytes\n");
    assert_eq!(fs::read(dir.path().join("other.yaml")).unwrap(), b"other\n");
    assert_eq!(listing(dir.path()), ["nodes.yaml", "other.yaml"]);
}

#[test]
fn write_into_a_file_or_a_missing_directory_fails_without_writing() {
    let dir = TempDir::new("not-a-dir");
    let file = dir.path().join("out");
    fs::write(&file, b"I am a file\n").unwrap();

    let error = write_atomically(&file, "nodes.yaml", b"x\n").unwrap_err();
    assert!(
        matches!(&error, OutputError::NotADirectory { path } if path == &file),
        "{error:?}"
    );
    assert!(
        error.to_string().contains(&*file.to_string_lossy()),
        "{error}"
    );
    assert_eq!(fs::read(&file).unwrap(), b"I am a file\n");

    let missing = dir.path().join("missing");
    let error = write_atomically(&missing, "nodes.yaml", b"x\n").unwrap_err();
    assert!(
        matches!(&error, OutputError::DirMissing { path } if path == &missing),
        "{error:?}"
    );
    assert!(!missing.exists());
    assert_eq!(listing(dir.path()), ["out"]);
}

#[test]
fn file_names_with_separators_are_rejected() {
    let dir = TempDir::new("names");
    for name in ["", ".", "..", "../escape.yaml", "a/b.yaml"] {
        let error = write_atomically(dir.path(), name, b"x\n").unwrap_err();
        assert!(
            matches!(error, OutputError::InvalidFileName { .. }),
            "{name:?}: {error:?}"
        );
    }
    assert!(listing(dir.path()).is_empty());
}

#[cfg(unix)]
#[test]
fn read_only_directory_leaves_the_old_file_intact() {
    use std::os::unix::fs::PermissionsExt;

    let dir = TempDir::new("read-only");
    let target = dir.path().join("nodes.yaml");
    fs::write(&target, b"old\n").unwrap();
    let before = fs::metadata(&target).unwrap().modified().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o555)).unwrap();

    // Root (and some containers) ignore permissions: nothing to test there.
    let probe = dir.path().join("probe");
    if fs::write(&probe, b"").is_ok() {
        let _ = fs::remove_file(&probe);
        eprintln!("permissions are not enforced; skipping");
        return;
    }

    let error = write_atomically(dir.path(), "nodes.yaml", b"new\n").unwrap_err();
    assert!(
        matches!(error, OutputError::NotWritable { .. }),
        "{error:?}"
    );
    assert!(matches!(
        prepare_out_dir(dir.path()).unwrap_err(),
        OutputError::NotWritable { .. }
    ));
    assert_eq!(fs::read(&target).unwrap(), b"old\n");
    assert_eq!(fs::metadata(&target).unwrap().modified().unwrap(), before);
    assert_eq!(listing(dir.path()), ["nodes.yaml"]);
}

#[cfg(unix)]
#[test]
fn a_replaced_file_keeps_its_permissions() {
    use std::os::unix::fs::PermissionsExt;

    let dir = TempDir::new("mode");
    let target = dir.path().join("nodes.yaml");
    fs::write(&target, b"old\n").unwrap();
    fs::set_permissions(&target, fs::Permissions::from_mode(0o640)).unwrap();
    write_atomically(dir.path(), "nodes.yaml", b"new\n").unwrap();
    assert_eq!(fs::read(&target).unwrap(), b"new\n");
    let mode = fs::metadata(&target).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
}

#[test]
fn concurrent_writers_leave_one_whole_file() {
    let dir = TempDir::new("concurrent");
    let contents: Vec<String> = (0..8)
        .map(|i| format!("writer: {i}\n").repeat(1000))
        .collect();
    thread::scope(|scope| {
        for text in &contents {
            let dir = dir.path();
            scope.spawn(move || {
                for _ in 0..20 {
                    write_atomically(dir, "nodes.yaml", text.as_bytes()).unwrap();
                }
            });
        }
    });
    let written = fs::read_to_string(dir.path().join("nodes.yaml")).unwrap();
    assert!(contents.contains(&written));
    assert_eq!(listing(dir.path()), ["nodes.yaml"]);
}

// ------------------------------------------------ writing a set of files

/// What eksynth takes for its own output: the start of each kind of file it
/// writes, and nothing else.
#[test]
fn eksynth_recognizes_the_files_it_writes_by_their_start() {
    for own in [
        "AWSTemplateFormatVersion: \"2010-09-09\"\nResources: {}\n",
        "AWSTemplateFormatVersion: \"2010-09-09\"\n<<<<<<< HEAD\n",
        "AWSTemplateFormatVersion: \"2010-09-09\"\r\nResources: {}\r\n",
        "\u{feff}AWSTemplateFormatVersion: \"2010-09-09\"\n",
        "AWSTemplateFormatVersion: \"2010-09-09\"",
        "{\n  \"AWSTemplateFormatVersion\": \"2010-09-09\",\n",
        "[]\n",
        "[\n  {\n    \"ParameterKey\": \"ClusterName\",\n",
        ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n",
    ] {
        assert!(written_by_eksynth(own.as_bytes()), "{own:?}");
    }
    for other in [
        "",
        "apiVersion: eksynth.io/v1\nkind: NodeBlueprint\n",
        "# AWSTemplateFormatVersion: \"2010-09-09\"\n",
        "Resources: {}\n",
        "AWSTemplateFormatVersion: \"2010-09-09\" # edited\n",
        "{\"apiVersion\": \"eksynth.io/v1\"}\n",
        "[1, 2]\n",
        "root:x:0:0:root:/root:/bin/bash\n",
    ] {
        assert!(!written_by_eksynth(other.as_bytes()), "{other:?}");
    }
}

#[test]
fn write_files_writes_new_and_changed_files_and_leaves_the_others() {
    let dir = TempDir::new("write-files");
    let old = format!("{TEMPLATE}old: 1\n");
    fs::write(dir.path().join("b.yaml"), &old).unwrap();
    let files = pairs(&[
        ("a.yaml", &format!("{TEMPLATE}a: 1\n")),
        ("b.yaml", &format!("{TEMPLATE}b: 1\n")),
        ("a.parameters.json", "[]\n"),
    ]);
    let written = write_files(dir.path(), &files, &[]).unwrap();
    assert_eq!(written.outcomes, [WriteOutcome::Written; 3]);
    assert!(written.removed.is_empty());
    for (name, contents) in &files {
        assert_eq!(
            &fs::read_to_string(dir.path().join(name)).unwrap(),
            contents
        );
    }
    let again = write_files(dir.path(), &files, &[]).unwrap();
    assert_eq!(again.outcomes, [WriteOutcome::Unchanged; 3]);
    assert_eq!(
        listing(dir.path()),
        ["a.parameters.json", "a.yaml", "b.yaml"]
    );
}

#[test]
fn write_files_refuses_every_file_it_did_not_write_and_writes_nothing() {
    let dir = TempDir::new("write-files-refused");
    let d = dir.path();
    fs::write(d.join("blueprint.yaml"), format!("{TEMPLATE}x: 1\n")).unwrap();
    fs::write(d.join("notes.yaml"), b"# mine\n").unwrap();
    fs::create_dir(d.join("folder.yaml")).unwrap();
    let files = pairs(&[
        ("new.yaml", TEMPLATE),
        ("blueprint.yaml", TEMPLATE),
        ("notes.yaml", TEMPLATE),
        ("folder.yaml", TEMPLATE),
    ]);
    let error = write_files(d, &files, &[d.join("blueprint.yaml")]).unwrap_err();
    let OutputError::Refused { refused } = &error else {
        panic!("{error:?}");
    };
    let found: Vec<(usize, &Refusal)> = refused.iter().map(|r| (r.index, &r.refusal)).collect();
    assert_eq!(
        found,
        [
            (1, &Refusal::Input),
            (2, &Refusal::NotWritten),
            (3, &Refusal::NotAFile("a directory"))
        ]
    );
    assert_eq!(listing(d), ["blueprint.yaml", "folder.yaml", "notes.yaml"]);
    assert_eq!(fs::read(d.join("notes.yaml")).unwrap(), b"# mine\n");
}

/// Every temporary file is written before any is renamed: one that cannot
/// be made (its name is too long for the file system) leaves the files
/// before it as they were.
#[test]
fn write_files_renames_nothing_when_a_temporary_file_fails() {
    let dir = TempDir::new("write-files-all-or-none");
    let old = format!("{TEMPLATE}old: 1\n");
    fs::write(dir.path().join("a.yaml"), &old).unwrap();
    // 250 bytes fit a file name, not its temporary file's.
    let long = format!("{}.yaml", "x".repeat(245));
    let files = pairs(&[
        ("a.yaml", &format!("{TEMPLATE}new: 1\n")),
        (&long, TEMPLATE),
    ]);
    let error = write_files(dir.path(), &files, &[]).unwrap_err();
    assert!(
        matches!(error, OutputError::NotWritable { .. }),
        "{error:?}"
    );
    assert_eq!(fs::read_to_string(dir.path().join("a.yaml")).unwrap(), old);
    assert_eq!(listing(dir.path()), ["a.yaml"]);
}

#[test]
fn write_files_removes_stale_temporary_files_only() {
    let dir = TempDir::new("write-files-stale");
    let d = dir.path();
    for stale in [
        ".a.yaml.tmp-123-0",
        ".a.parameters.json.tmp-123-1",
        ".eksynth.1.tmp-9-9",
        ".eksynth-probe-123-2",
    ] {
        fs::write(d.join(stale), b"partial").unwrap();
    }
    for kept in [
        ".a.txt.tmp-1-2",
        ".a.yaml.tmp-1",
        ".a.yaml.tmp-x-2",
        "a.yaml.tmp-1-2",
        ".yaml.tmp-1-2",
    ] {
        fs::write(d.join(kept), b"not eksynth's").unwrap();
    }
    // Held by a writer still running.
    let busy = fs::File::create(d.join(".b.yaml.tmp-1-2")).unwrap();
    busy.lock().unwrap();
    let written = write_files(d, &pairs(&[("a.yaml", TEMPLATE)]), &[]).unwrap();
    assert_eq!(
        written.removed,
        [
            ".a.parameters.json.tmp-123-1",
            ".a.yaml.tmp-123-0",
            ".eksynth-probe-123-2",
            ".eksynth.1.tmp-9-9",
        ]
    );
    assert_eq!(
        listing(d),
        [
            ".a.txt.tmp-1-2",
            ".a.yaml.tmp-1",
            ".a.yaml.tmp-x-2",
            ".b.yaml.tmp-1-2",
            ".yaml.tmp-1-2",
            "a.yaml",
            "a.yaml.tmp-1-2",
        ]
    );
    drop(busy);
}

// ---------------------------------------------------- the output directory

#[test]
fn prepare_creates_a_missing_directory_and_leaves_no_probe() {
    let dir = TempDir::new("prepare");
    let out = dir.path().join("a").join("b");
    prepare_out_dir(&out).unwrap();
    assert!(out.is_dir());
    assert!(listing(&out).is_empty());

    // An existing directory is fine, and its files are left alone.
    fs::write(out.join("nodes.yaml"), b"x\n").unwrap();
    prepare_out_dir(&out).unwrap();
    assert_eq!(listing(&out), ["nodes.yaml"]);
}

#[test]
fn prepare_rejects_a_file() {
    let dir = TempDir::new("prepare-file");
    let file = dir.path().join("out");
    fs::write(&file, b"not a directory\n").unwrap();

    let error = prepare_out_dir(&file).unwrap_err();
    assert!(
        matches!(&error, OutputError::NotADirectory { path } if path == &file),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!("output directory `{}` is not a directory", file.display())
    );
    assert_eq!(fs::read(&file).unwrap(), b"not a directory\n");

    // Below a file, the directory cannot be created.
    let error = prepare_out_dir(&file.join("sub")).unwrap_err();
    assert!(matches!(error, OutputError::CreateDir { .. }), "{error:?}");
    assert_eq!(listing(dir.path()), ["out"]);
}

// ------------------------------------------------------------ stack files

#[test]
fn file_names() {
    assert_eq!(stack_file_name("prod-nodes", "yaml"), "prod-nodes.yaml");
    assert_eq!(stack_file_name("prod-nodes", "json"), "prod-nodes.json");
    assert_eq!(
        parameters_file_name("prod-nodes"),
        "prod-nodes.parameters.json"
    );
}

#[test]
fn parameters_file_has_the_cloudformation_shape() {
    let text = parameters_file(&pairs(&[
        ("ClusterName", "prod"),
        ("Subnets", "subnet-1,subnet-2"),
        ("Quote", "say \"hi\"\n"),
    ]));
    assert!(text.ends_with("}\n]\n"), "{text}");
    assert_eq!(
        text,
        r#"[
  {
    "ParameterKey": "ClusterName",
    "ParameterValue": "prod"
  },
  {
    "ParameterKey": "Subnets",
    "ParameterValue": "subnet-1,subnet-2"
  },
  {
    "ParameterKey": "Quote",
    "ParameterValue": "say \"hi\"\n"
  }
]
"#
    );
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let entries = value.as_array().unwrap();
    assert_eq!(entries.len(), 3);
    for entry in entries {
        let entry = entry.as_object().unwrap();
        let keys: Vec<&str> = entry.keys().map(String::as_str).collect();
        assert_eq!(keys, ["ParameterKey", "ParameterValue"]);
        assert!(entry.values().all(serde_json::Value::is_string));
    }
    assert_eq!(entries[2]["ParameterValue"], "say \"hi\"\n");

    assert_eq!(parameters_file(&[]), "[]\n");
}

#[test]
fn a_stack_writes_its_template_and_its_parameters_only_when_asked() {
    let parameters = pairs(&[("ClusterName", "prod")]);
    let files = stack_files("nodes", "yaml", "Resources: {}\n", Some(&parameters));
    assert_eq!(files.len(), 2);
    assert_eq!(files[0], pairs(&[("nodes.yaml", "Resources: {}\n")])[0]);
    assert_eq!(files[1].0, "nodes.parameters.json");
    assert_eq!(files[1].1, parameters_file(&parameters));

    assert_eq!(
        stack_files("nodes", "json", "{}\n", None),
        pairs(&[("nodes.json", "{}\n")])
    );
    // Asked for, a template without parameters still gets its (empty) file.
    assert_eq!(
        stack_files("nodes", "yaml", "x\n", Some(&[])),
        pairs(&[("nodes.yaml", "x\n"), ("nodes.parameters.json", "[]\n")])
    );
}

// ------------------------------------------------------------------ check

#[test]
fn check_clean() {
    let dir = TempDir::new("check-clean");
    let template = format!("{TEMPLATE}Resources: {{}}\n");
    let expected = pairs(&[("a.yaml", &template), ("a.parameters.json", "[]\n")]);
    for (name, contents) in &expected {
        write_atomically(dir.path(), name, contents.as_bytes()).unwrap();
    }
    fs::write(dir.path().join("README.md"), b"# templates\n").unwrap();
    let report = check(dir.path(), &expected, &[]);
    assert_eq!(report, CheckReport::default());
    assert!(report.is_clean());
}

#[test]
fn check_stale_with_diff() {
    let dir = TempDir::new("check-stale");
    let old: String = std::iter::once(TEMPLATE.to_string())
        .chain((1..=10).map(|i| format!("line{i}\n")))
        .collect();
    let new = old.replace("line6\n", "line six\n");
    fs::write(dir.path().join("nodes.yaml"), &old).unwrap();

    let report = check(dir.path(), &pairs(&[("nodes.yaml", &new)]), &[]);
    assert!(!report.is_clean());
    assert!(report.missing.is_empty() && report.extra.is_empty());
    assert_eq!(report.stale.len(), 1);
    assert_eq!(report.stale[0].0, "nodes.yaml");
    assert_eq!(
        report.stale[0].1,
        "\
--- a/nodes.yaml
+++ b/nodes.yaml
@@ -4,7 +4,7 @@
 line3
 line4
 line5
-line6
+line six
 line7
 line8
 line9
"
    );
}

#[test]
fn check_missing_and_extra() {
    let dir = TempDir::new("check-extra");
    let d = dir.path();
    let kept = format!("{TEMPLATE}Resources: {{}}\n");
    fs::write(d.join("kept.yaml"), &kept).unwrap();
    for extra in ["old.yaml", "z.json", "notes.yml", "UPPER.YAML"] {
        fs::write(d.join(extra), b"x\n").unwrap();
    }
    // Not templates, hidden, or not files: never extra.
    for ignored in [
        "README.md",
        "stray.txt",
        ".hidden.yaml",
        ".nodes.yaml.tmp-1-2",
    ] {
        fs::write(d.join(ignored), b"x\n").unwrap();
    }
    fs::create_dir(d.join("folder.yaml")).unwrap();

    let report = check(d, &pairs(&[("kept.yaml", &kept), ("new.yaml", "n\n")]), &[]);
    assert!(report.stale.is_empty() && report.refused.is_empty());
    assert_eq!(report.missing, ["new.yaml"]);
    assert_eq!(
        report.extra,
        ["UPPER.YAML", "notes.yml", "old.yaml", "z.json"]
    );
    assert!(report.unreadable.is_empty());
    assert!(!report.is_clean());

    // A blueprint beside its templates is an input, not an extra template.
    let inputs = [d.join("old.yaml"), d.join("notes.yml")];
    let report = check(d, &pairs(&[("kept.yaml", &kept)]), &inputs);
    assert_eq!(report.extra, ["UPPER.YAML", "z.json"]);
}

#[test]
fn check_refused_and_missing_directory() {
    let dir = TempDir::new("check-refused");
    fs::create_dir(dir.path().join("nodes.yaml")).unwrap();
    let expected = pairs(&[("nodes.yaml", "n\n")]);
    let report = check(dir.path(), &expected, &[]);
    assert_eq!(
        report.refused,
        [("nodes.yaml".to_string(), Refusal::NotAFile("a directory"))]
    );
    assert!(report.missing.is_empty() && report.extra.is_empty() && report.stale.is_empty());
    assert!(!report.is_clean());

    let report = check(&dir.path().join("missing"), &expected, &[]);
    assert_eq!(report.missing, ["nodes.yaml"]);
    assert!(report.extra.is_empty() && report.stale.is_empty());
}

/// A file `synth` would not replace is no stale template: `check` says so
/// rather than showing a diff that running `synth` would not apply.
#[test]
fn check_reports_an_input_or_a_foreign_file_in_a_templates_place_as_refused() {
    let dir = TempDir::new("check-foreign");
    let d = dir.path();
    fs::write(d.join("nodes.yaml"), b"apiVersion: eksynth.io/v1\n").unwrap();
    fs::write(d.join("notes.yaml"), b"todo: write templates\n").unwrap();
    let expected = pairs(&[
        ("nodes.yaml", &format!("{TEMPLATE}Resources: {{}}\n")),
        ("notes.yaml", &format!("{TEMPLATE}Resources: {{}}\n")),
    ]);
    let report = check(d, &expected, &[d.join("nodes.yaml")]);
    assert_eq!(
        report.refused,
        [
            ("nodes.yaml".to_string(), Refusal::Input),
            ("notes.yaml".to_string(), Refusal::NotWritten)
        ]
    );
    assert!(report.stale.is_empty() && report.missing.is_empty());
}

// ----------------------------------------------------------- unified diff

fn diff(old: &str, new: &str) -> String {
    unified_diff(old, new, "a/f", "b/f")
}

const HEADER: &str = "--- a/f\n+++ b/f\n";

#[test]
fn diff_identical_is_empty() {
    assert_eq!(diff("", ""), "");
    assert_eq!(diff("a\nb\n", "a\nb\n"), "");
}

#[test]
fn diff_insert() {
    assert_eq!(
        diff("a\nb\nc\n", "a\nb\nX\nc\n"),
        format!("{HEADER}@@ -1,3 +1,4 @@\n a\n b\n+X\n c\n")
    );
    assert_eq!(
        diff("", "a\nb\n"),
        format!("{HEADER}@@ -0,0 +1,2 @@\n+a\n+b\n")
    );
}

#[test]
fn diff_delete() {
    assert_eq!(
        diff("a\nb\nc\n", "a\nc\n"),
        format!("{HEADER}@@ -1,3 +1,2 @@\n a\n-b\n c\n")
    );
    assert_eq!(
        diff("a\nb\n", ""),
        format!("{HEADER}@@ -1,2 +0,0 @@\n-a\n-b\n")
    );
}

#[test]
fn diff_change() {
    assert_eq!(diff("a\n", "b\n"), format!("{HEADER}@@ -1 +1 @@\n-a\n+b\n"));
    // Deletions come before insertions within a change.
    assert_eq!(
        diff("1\n2\na\nb\n3\n", "1\n2\nx\ny\n3\n"),
        format!("{HEADER}@@ -1,5 +1,5 @@\n 1\n 2\n-a\n-b\n+x\n+y\n 3\n")
    );
}

#[test]
fn diff_context_is_trimmed_to_three_lines() {
    let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
    let new = old.replace("\n10\n", "\nten\n");
    assert_eq!(
        diff(&old, &new),
        format!("{HEADER}@@ -7,7 +7,7 @@\n 7\n 8\n 9\n-10\n+ten\n 11\n 12\n 13\n")
    );
}

#[test]
fn diff_hunks_merge_when_close() {
    let old: String = (1..=20).map(|i| format!("{i}\n")).collect();

    // Six equal lines between the changes: one hunk.
    let new = old
        .replace("\n5\n", "\nfive\n")
        .replace("\n12\n", "\ntwelve\n");
    assert_eq!(
        diff(&old, &new),
        format!(
            "{HEADER}@@ -2,14 +2,14 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n 9\n 10\n 11\n-12\n+twelve\n 13\n 14\n 15\n"
        )
    );

    // Seven: two hunks.
    let new = old
        .replace("\n5\n", "\nfive\n")
        .replace("\n13\n", "\nthirteen\n");
    assert_eq!(
        diff(&old, &new),
        format!(
            "{HEADER}@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n@@ -10,7 +10,7 @@\n 10\n 11\n 12\n-13\n+thirteen\n 14\n 15\n 16\n"
        )
    );
}

#[test]
fn diff_missing_newline_at_end() {
    assert_eq!(
        diff("a\nb", "a\nb\n"),
        format!("{HEADER}@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n")
    );
    assert_eq!(
        diff("a\n", "a\nb"),
        format!("{HEADER}@@ -1 +1,2 @@\n a\n+b\n\\ No newline at end of file\n")
    );
}

#[test]
fn diff_of_unrelated_large_files_stays_correct() {
    // Beyond the edit-distance limit the middle is replaced wholesale.
    let old: String = (0..5000).map(|i| format!("old {i}\n")).collect();
    let new: String = (0..5000).map(|i| format!("new {i}\n")).collect();
    let text = format!("same\n{old}same\n");
    let patch = diff(&text, &format!("same\n{new}same\n"));
    assert_eq!(apply(&text, &patch), format!("same\n{new}same\n"));
}

/// Applies a unified diff, checking every header count and context line.
fn apply(old: &str, patch: &str) -> String {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let mut lines = patch.split_inclusive('\n').peekable();
    if patch.is_empty() {
        return old.to_string();
    }
    assert_eq!(lines.next(), Some("--- a/f\n"));
    assert_eq!(lines.next(), Some("+++ b/f\n"));
    let mut out = String::new();
    let mut next_old = 0; // index of the next old line not yet copied
    while let Some(header) = lines.next() {
        let header = header
            .strip_prefix("@@ -")
            .and_then(|h| h.strip_suffix(" @@\n"))
            .unwrap_or_else(|| panic!("bad hunk header {header:?}"));
        let (old_range, new_range) = header.split_once(" +").unwrap();
        let range = |r: &str| -> (usize, usize) {
            match r.split_once(',') {
                Some((start, count)) => (start.parse().unwrap(), count.parse().unwrap()),
                None => (r.parse().unwrap(), 1),
            }
        };
        let (old_start, old_count) = range(old_range);
        let (_, new_count) = range(new_range);
        let first = if old_count == 0 {
            old_start
        } else {
            old_start - 1
        };
        assert!(first >= next_old, "hunks overlap or are out of order");
        out.extend(old_lines[next_old..first].iter().copied());
        next_old = first;
        let (mut seen_old, mut seen_new) = (0, 0);
        while let Some(line) = lines.next_if(|line| !line.starts_with("@@")) {
            let (mark, text) = line.split_at(1);
            let mut text = text.to_string();
            if lines
                .next_if_eq(&"\\ No newline at end of file\n")
                .is_some()
            {
                text.pop();
            }
            match mark {
                " " | "-" => {
                    assert_eq!(old_lines[next_old], text, "context or deletion mismatch");
                    next_old += 1;
                    seen_old += 1;
                    if mark == " " {
                        out.push_str(&text);
                        seen_new += 1;
                    }
                }
                "+" => {
                    out.push_str(&text);
                    seen_new += 1;
                }
                _ => panic!("bad line {line:?}"),
            }
        }
        assert_eq!((seen_old, seen_new), (old_count, new_count));
    }
    out.extend(old_lines[next_old..].iter().copied());
    out
}

/// The length of a longest common subsequence of lines.
fn lcs(a: &[&str], b: &[&str]) -> usize {
    let mut row = vec![0; b.len() + 1];
    for x in a {
        let mut diagonal = 0;
        for (j, y) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if x == y {
                diagonal + 1
            } else {
                above.max(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

fn text() -> impl Strategy<Value = String> {
    (prop::collection::vec(0..4usize, 0..30), any::<bool>()).prop_map(|(lines, newline)| {
        let mut text: String = lines
            .iter()
            .map(|&i| ["a\n", "b\n", "c\n", "d\n"][i])
            .collect();
        if !newline {
            text.pop();
        }
        text
    })
}

proptest! {
    #[test]
    fn diff_applies_and_is_minimal(old in text(), new in text()) {
        let patch = diff(&old, &new);
        prop_assert_eq!(patch.is_empty(), old == new);
        prop_assert_eq!(apply(&old, &patch), new.clone());

        let a: Vec<&str> = old.split_inclusive('\n').collect();
        let b: Vec<&str> = new.split_inclusive('\n').collect();
        let edits = patch
            .lines()
            .skip(2)
            .filter(|line| line.starts_with('-') || line.starts_with('+'))
            .count();
        prop_assert_eq!(edits, a.len() + b.len() - 2 * lcs(&a, &b));
    }
}
