//! `eksynth import eksctl`, field by field: eksctl's node group fields that
//! have a home in the blueprint are carried there, with no warning.

use eksynth::check::check_file;
use eksynth::import::eksctl::{Imported, import};
use eksynth::source::SourceFile;
use eksynth::validate::{Level, SchemaSet};

const HEADER: &str = "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\n\
    metadata: {name: c, region: us-west-2, version: \"1.33\"}\n";

/// Imports `groups` (YAML under the header) and asserts that every group is
/// carried whole and that the written blueprint validates clean.
fn import_clean(groups: &str) -> Imported {
    let file = SourceFile::new("eksctl.yaml", format!("{HEADER}{groups}"));
    let imported = import(&file, None).unwrap_or_else(|errors| panic!("{}", errors[0].render()));
    let warnings: Vec<_> = imported.warnings.iter().map(|w| w.render()).collect();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(imported.complete_groups(), imported.groups.len());
    let blueprint = SourceFile::new("imported", imported.text.clone());
    let report = check_file(&blueprint, SchemaSet::embedded());
    assert_eq!(
        report.count(Level::Error) + report.count(Level::Warning),
        0,
        "{}",
        imported.text
    );
    imported
}

#[test]
fn eksctl_volume_name_is_the_root_volume_s_device_name() {
    let imported = import_clean(
        "nodeGroups:\n- name: ng\n  instanceType: m6i.large\n  ami: ami-0123456789abcdef0\n  \
         amiFamily: AmazonLinux2023\n  volumeName: /dev/sda1\n",
    );
    assert!(
        imported.text.contains("deviceName: /dev/sda1"),
        "{}",
        imported.text
    );
}

#[test]
fn eksctl_launch_template_is_the_managed_group_s_existing_launch_template() {
    let imported = import_clean(
        "managedNodeGroups:\n- name: ng\n  instanceType: m6i.large\n  \
         launchTemplate: {id: lt-0123456789abcdef0, version: \"2\"}\n",
    );
    assert!(
        imported.text.contains("id: lt-0123456789abcdef0"),
        "{}",
        imported.text
    );
    assert!(
        imported.text.contains("version: \"2\""),
        "{}",
        imported.text
    );
}
