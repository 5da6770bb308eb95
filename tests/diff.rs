//! `eksynth::diff`: what changes between two templates, which changes
//! replace resources, which lose nodes or cluster access, and which roll
//! instances. Fixtures live in `tests/diff/`; most cases mutate the text of
//! `examples/quickstart/quickstart.yaml` or `tests/diff/managed.yaml`.

use std::path::{Path, PathBuf};

use eksynth::cfn::{Expr, Template};
use eksynth::diff::{
    Because, ChangeKind, Diff, EntryDiff, EntryKind, ReplacementCause, ResourceDiff, Rollout,
    RolloutKind, Section, diff, render_human, render_json, render_markdown,
};
use eksynth::source::SourceFile;
use eksynth::validate::SchemaSet;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn text(path: impl AsRef<Path>) -> String {
    let path: PathBuf = root().join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn quickstart() -> String {
    text("examples/quickstart/quickstart.yaml")
}

fn managed() -> String {
    text("tests/diff/managed.yaml")
}

fn read(name: &str, text: &str) -> Template {
    match eksynth::cfn::read::read(&SourceFile::new(name, text)) {
        Ok(template) => template,
        Err(diagnostics) => panic!("{name} does not read: {diagnostics:?}"),
    }
}

/// `text` with `from` replaced by `to`, which must occur exactly once.
fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "{from:?} must occur once");
    text.replacen(from, to, 1)
}

/// `text` without the lines from the one equal to `from` up to (not
/// including) the one equal to `until`.
fn cut(text: &str, from: &str, until: &str) -> String {
    let start = text.find(from).unwrap_or_else(|| panic!("no {from:?}"));
    let end = start
        + text[start..]
            .find(until)
            .unwrap_or_else(|| panic!("no {until:?}"));
    format!("{}{}", &text[..start], &text[end..])
}

fn diff_texts(old: &str, new: &str) -> Diff {
    diff(
        &read("old.yaml", old),
        &read("new.yaml", new),
        SchemaSet::embedded(),
    )
}

fn resource<'d>(diff: &'d Diff, id: &str) -> &'d ResourceDiff {
    diff.resources
        .iter()
        .find(|r| r.logical_id == id)
        .unwrap_or_else(|| panic!("{id} is not in the diff:\n{}", render_human(diff)))
}

/// Each entry's name and how it changes.
fn entry_kinds(entries: &[EntryDiff]) -> Vec<(&str, EntryKind)> {
    entries.iter().map(|e| (e.name.as_str(), e.kind)).collect()
}

fn ids(resources: &[&ResourceDiff]) -> Vec<String> {
    resources.iter().map(|r| r.logical_id.clone()).collect()
}

#[test]
fn identical_templates_have_no_changes() {
    // Every committed example template: the files beside the blueprints
    // that are templates.
    let mut examples: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .flat_map(|entry| std::fs::read_dir(entry.unwrap().path()).unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            std::fs::read_to_string(path)
                .is_ok_and(|text| text.starts_with("AWSTemplateFormatVersion"))
        })
        .collect();
    examples.sort();
    assert!(!examples.is_empty());
    for path in examples {
        let text = text(&path);
        let change = diff_texts(&text, &text);
        assert!(!change.has_changes(), "{}", path.display());
        assert_eq!(change, Diff::default(), "{}", path.display());
        assert_eq!(render_human(&change), "No changes.\n");
        let json: serde_json::Value = serde_json::from_str(&render_json(&change)).unwrap();
        assert_eq!(json["has_changes"], false);
        assert_eq!(json["resources"], serde_json::json!([]));
    }
}

#[test]
fn formatting_and_dependency_order_are_not_changes() {
    let old = managed();
    // The same template, re-emitted as JSON with long-form intrinsics.
    let json = eksynth::cfn::json::emit(&read("managed.yaml", &old));
    assert!(!diff_texts(&old, &json).has_changes());

    let quickstart = quickstart();
    let two = replace_once(
        &quickstart,
        "    DependsOn: GeneralAccessEntry\n",
        "    DependsOn: [GeneralAccessEntry, NodeSecurityGroup]\n",
    );
    let swapped = replace_once(
        &quickstart,
        "    DependsOn: GeneralAccessEntry\n",
        "    DependsOn: [NodeSecurityGroup, GeneralAccessEntry]\n",
    );
    assert!(!diff_texts(&two, &swapped).has_changes());
    let change = diff_texts(&quickstart, &two);
    let group = resource(&change, "GeneralNodeGroup");
    assert_eq!(group.changes.len(), 1);
    assert_eq!(group.changes[0].section, Section::DependsOn);
    assert!(change.rollouts.is_empty(), "DependsOn rolls nothing");
}

#[test]
fn hop_limit_change_modifies_the_launch_template_and_rolls_its_group() {
    let old = quickstart();
    let new = replace_once(
        &old,
        "HttpPutResponseHopLimit: 1",
        "HttpPutResponseHopLimit: 2",
    );
    let change = diff_texts(&old, &new);
    assert!(change.has_changes());
    assert!(change.replacements().is_empty());
    assert!(change.critical().is_empty());

    let template = resource(&change, "GeneralLaunchTemplate");
    assert_eq!(template.kind, ChangeKind::Modified);
    assert!(!template.is_replaced());
    assert_eq!(template.changes.len(), 1);
    let hop = &template.changes[0];
    assert_eq!(hop.section, Section::Properties);
    assert_eq!(
        hop.path,
        "LaunchTemplateData/MetadataOptions/HttpPutResponseHopLimit"
    );
    assert_eq!(hop.old, Some(Expr::Int(1)));
    assert_eq!(hop.new, Some(Expr::Int(2)));
    assert!(!hop.replaces);

    // The group's text is unchanged, but its launch template version is not.
    let group = resource(&change, "GeneralNodeGroup");
    assert_eq!(group.kind, ChangeKind::Modified);
    assert!(group.changes.is_empty());
    assert!(!group.is_replaced());
    assert_eq!(group.indirect.len(), 1);
    assert_eq!(group.indirect[0].path, "LaunchTemplate/Version");
    assert_eq!(group.indirect[0].because, Because::Modified);

    assert_eq!(
        change.rollouts,
        vec![Rollout {
            resource: "GeneralNodeGroup".into(),
            resource_type: "AWS::AutoScaling::AutoScalingGroup".into(),
            kind: RolloutKind::RollingUpdate,
            reasons: vec!["launch template GeneralLaunchTemplate changed".into()],
        }]
    );
    let human = render_human(&change);
    assert!(
        human.contains("    LaunchTemplateData/MetadataOptions/HttpPutResponseHopLimit: 1 → 2\n")
    );
    assert!(human.contains(
        "  rolling update of GeneralNodeGroup (launch template GeneralLaunchTemplate changed)\n"
    ));
    assert!(!human.contains("!!"), "{human}");
    assert_eq!(
        ids(&change.resources.iter().collect::<Vec<_>>()),
        ["GeneralLaunchTemplate", "GeneralNodeGroup"]
    );
}

#[test]
fn a_group_without_a_rolling_update_policy_keeps_its_instances() {
    let old = cut(
        &quickstart(),
        "    UpdatePolicy:\n",
        "  GeneralAccessEntry:\n",
    );
    let new = replace_once(&old, "InstanceType: m6i.large", "InstanceType: m7i.large");
    let change = diff_texts(&old, &new);
    assert_eq!(change.rollouts.len(), 1);
    assert_eq!(change.rollouts[0].kind, RolloutKind::NoInstanceRefresh);
    assert!(render_human(&change).contains("no rolling update of GeneralNodeGroup"));

    // A version that does not follow the template's changes rolls nothing.
    let latest = replace_once(
        &old,
        "Version: !GetAtt GeneralLaunchTemplate.LatestVersionNumber",
        "Version: $Latest",
    );
    let change = diff_texts(
        &latest,
        &replace_once(
            &latest,
            "InstanceType: m6i.large",
            "InstanceType: m7i.large",
        ),
    );
    assert!(change.rollouts.is_empty());
    assert_eq!(
        ids(&change.resources.iter().collect::<Vec<_>>()),
        ["GeneralLaunchTemplate"]
    );
}

#[test]
fn create_only_launch_template_property_replaces_it() {
    let schemas = SchemaSet::embedded();
    let create_only = schemas
        .create_only_properties("AWS::EC2::LaunchTemplate")
        .unwrap();
    assert!(create_only.contains(&"LaunchTemplateName".to_string()));

    let old = quickstart();
    let new = replace_once(
        &old,
        "  GeneralLaunchTemplate:\n    Type: AWS::EC2::LaunchTemplate\n    Properties:\n",
        "  GeneralLaunchTemplate:\n    Type: AWS::EC2::LaunchTemplate\n    Properties:\n      LaunchTemplateName: demo-general\n",
    );
    let change = diff_texts(&old, &new);
    let template = resource(&change, "GeneralLaunchTemplate");
    assert_eq!(
        template.replacement,
        vec![ReplacementCause::CreateOnly {
            property: "LaunchTemplateName".into()
        }]
    );
    assert!(template.changes[0].replaces);
    assert!(!template.critical, "a launch template is not critical");
    assert_eq!(ids(&change.replacements()), ["GeneralLaunchTemplate"]);
    assert!(change.critical().is_empty());

    // The group now points at a new launch template: its ID and version.
    let group = resource(&change, "GeneralNodeGroup");
    assert!(!group.is_replaced());
    assert!(
        group
            .indirect
            .iter()
            .all(|i| i.because == Because::Replaced && !i.replaces)
    );
    assert_eq!(change.rollouts.len(), 1);
    assert_eq!(
        change.rollouts[0].reasons,
        ["launch template GeneralLaunchTemplate replaced"]
    );
    let human = render_human(&change);
    assert!(
        human.contains("    !! REPLACEMENT: LaunchTemplateName is create-only, and it changed\n"),
        "{human}"
    );
    assert!(
        human.contains(
            "    LaunchTemplateName: (absent) → \"demo-general\"  (requires replacement)\n"
        )
    );
}

#[test]
fn renamed_auto_scaling_group_is_a_critical_replacement() {
    let old = quickstart();
    // The group's logical ID, its signal and its output follow the rename.
    let new = old.replace("GeneralNodeGroup", "GeneralWorkersNodeGroup");
    assert_eq!(old.matches("GeneralNodeGroup").count(), 3);
    let change = diff_texts(&old, &new);

    let group = resource(&change, "GeneralWorkersNodeGroup");
    assert_eq!(
        group.kind,
        ChangeKind::Renamed {
            from: "GeneralNodeGroup".into()
        }
    );
    assert_eq!(
        group.replacement,
        vec![ReplacementCause::LogicalIdChanged {
            from: "GeneralNodeGroup".into(),
            to: "GeneralWorkersNodeGroup".into(),
        }]
    );
    assert!(group.critical);
    assert!(group.changes.is_empty(), "same properties");
    assert!(
        change
            .resources
            .iter()
            .all(|r| !matches!(r.kind, ChangeKind::Added | ChangeKind::Removed)),
        "a rename, not an addition and a removal"
    );
    assert_eq!(ids(&change.replacements()), ["GeneralWorkersNodeGroup"]);
    assert_eq!(ids(&change.critical()), ["GeneralWorkersNodeGroup"]);
    // The launch template's user data signals the new ID; the group is new
    // anyway, so nothing rolls.
    assert_eq!(
        resource(&change, "GeneralLaunchTemplate").kind,
        ChangeKind::Modified
    );
    assert!(change.rollouts.is_empty());

    let human = render_human(&change);
    assert!(human.starts_with(
        "!! CRITICAL: GeneralWorkersNodeGroup (AWS::AutoScaling::AutoScalingGroup) replaces GeneralNodeGroup (logical ID changed): the group's nodes are terminated\n"
    ), "{human}");
    assert!(human.contains(
        "    !! REPLACEMENT: logical ID changed from GeneralNodeGroup to GeneralWorkersNodeGroup"
    ));
    // The signal's logical ID in the user data, as changed lines.
    assert!(
        human.contains("      -    if cfn-signal --stack '${AWS::StackName}' --resource 'GeneralNodeGroup' \\\n"),
        "{human}"
    );
    assert!(human.contains("      +    if cfn-signal --stack '${AWS::StackName}' --resource 'GeneralWorkersNodeGroup' \\\n"));

    let json: serde_json::Value = serde_json::from_str(&render_json(&change)).unwrap();
    let renamed = json["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["logical_id"] == "GeneralWorkersNodeGroup")
        .unwrap();
    assert_eq!(renamed["change"], "renamed");
    assert_eq!(renamed["renamed_from"], "GeneralNodeGroup");
    assert_eq!(renamed["critical"], true);
    assert_eq!(renamed["replacement"][0]["cause"], "logical-id-changed");
}

#[test]
fn renaming_a_whole_group_pairs_every_resource() {
    let old = quickstart();
    let new = old.replace("General", "Workers");
    let change = diff_texts(&old, &new);
    let mut renamed: Vec<(String, String)> = change
        .resources
        .iter()
        .filter_map(|r| match &r.kind {
            ChangeKind::Renamed { from } => Some((from.clone(), r.logical_id.clone())),
            _ => None,
        })
        .collect();
    renamed.sort();
    let expected: Vec<(String, String)> = [
        "AccessEntry",
        "InstanceProfile",
        "LaunchTemplate",
        "NodeGroup",
        "NodeRole",
    ]
    .iter()
    .map(|suffix| (format!("General{suffix}"), format!("Workers{suffix}")))
    .collect();
    assert_eq!(renamed, expected, "{}", render_human(&change));
    assert!(
        change
            .resources
            .iter()
            .all(|r| matches!(r.kind, ChangeKind::Renamed { .. }))
    );
    assert_eq!(
        ids(&change.critical()),
        [
            "WorkersAccessEntry",
            "WorkersInstanceProfile",
            "WorkersNodeGroup",
            "WorkersNodeRole"
        ]
    );
    // Outputs are named after the group too.
    assert!(
        change
            .outputs
            .iter()
            .any(|o| o.name == "GeneralNodeRoleArn" && o.kind == EntryKind::Removed)
    );
    assert!(
        change
            .outputs
            .iter()
            .any(|o| o.name == "WorkersNodeRoleArn" && o.kind == EntryKind::Added)
    );
}

#[test]
fn different_resources_of_one_type_are_not_a_rename() {
    let old = managed();
    let new = replace_once(
        &old,
        "  SystemLaunchTemplate:\n    Type: AWS::EC2::LaunchTemplate\n    Properties:\n      LaunchTemplateData:\n        BlockDeviceMappings:\n        - DeviceName: /dev/xvda\n          Ebs:\n            DeleteOnTermination: true\n            Encrypted: true\n            VolumeSize: 50\n            VolumeType: gp3\n",
        "  OtherLaunchTemplate:\n    Type: AWS::EC2::LaunchTemplate\n    Properties:\n      LaunchTemplateData:\n        BlockDeviceMappings:\n        - DeviceName: /dev/sda1\n          Ebs:\n            DeleteOnTermination: false\n            Encrypted: false\n            VolumeSize: 500\n            VolumeType: io2\n",
    );
    let change = diff_texts(&old, &new);
    assert_eq!(
        resource(&change, "OtherLaunchTemplate").kind,
        ChangeKind::Added
    );
    assert_eq!(
        resource(&change, "SystemLaunchTemplate").kind,
        ChangeKind::Removed
    );
}

#[test]
fn a_changed_or_added_nodegroup_name_is_a_critical_replacement() {
    let old = managed();
    let renamed = replace_once(
        &old,
        "      NodegroupName: system\n",
        "      NodegroupName: demo-ng\n",
    );
    // A template from before node groups were named gets a name added.
    let unnamed = replace_once(&old, "      NodegroupName: system\n", "");
    for (before, after) in [(&old, &renamed), (&unnamed, &old)] {
        let change = diff_texts(before, after);
        let group = resource(&change, "SystemNodegroup");
        assert_eq!(
            group.replacement,
            vec![ReplacementCause::CreateOnly {
                property: "NodegroupName".into()
            }]
        );
        assert!(group.critical);
        assert_eq!(ids(&change.critical()), ["SystemNodegroup"]);
        assert!(
            render_human(&change)
                .contains("    !! REPLACEMENT: NodegroupName is create-only, and it changed\n")
        );
    }
}

#[test]
fn nodegroup_instance_types_and_subnets_are_critical_replacements() {
    let old = managed();
    for (from, to, property) in [
        (
            "      - m6i.large\n",
            "      - m7i.large\n",
            "InstanceTypes",
        ),
        (
            "      - subnet-0123456789abcdef1\n",
            "      - subnet-0123456789abcdef1\n      - subnet-0123456789abcdef2\n",
            "Subnets",
        ),
    ] {
        let change = diff_texts(&old, &replace_once(&old, from, to));
        let group = resource(&change, "SystemNodegroup");
        assert_eq!(
            group.replacement,
            vec![ReplacementCause::CreateOnly {
                property: property.into()
            }]
        );
        assert!(group.critical, "{property}");
        assert_eq!(group.changes.len(), 1);
        assert_eq!(group.changes[0].path, property);
        assert!(group.changes[0].replaces);
        assert_eq!(ids(&change.critical()), ["SystemNodegroup"]);
        assert!(change.rollouts.is_empty(), "a replaced group does not roll");
        let human = render_human(&change);
        assert!(human.starts_with(
            "!! CRITICAL: SystemNodegroup (AWS::EKS::Nodegroup) is replaced: the node group's nodes are drained and terminated\n"
        ), "{human}");
        assert!(human.contains(&format!(
            "    !! REPLACEMENT: {property} is create-only, and it changed\n"
        )));
    }
}

#[test]
fn nodegroup_launch_template_change_updates_the_node_group() {
    let old = managed();
    let new = replace_once(&old, "VolumeSize: 50", "VolumeSize: 100");
    let change = diff_texts(&old, &new);
    assert!(change.replacements().is_empty());
    assert_eq!(
        change.rollouts,
        vec![Rollout {
            resource: "SystemNodegroup".into(),
            resource_type: "AWS::EKS::Nodegroup".into(),
            kind: RolloutKind::NodeGroupUpdate,
            reasons: vec!["launch template SystemLaunchTemplate changed".into()],
        }]
    );
    assert!(render_human(&change).contains(
        "  node group update of SystemNodegroup (launch template SystemLaunchTemplate changed)\n"
    ));

    // Scaling changes roll nothing.
    let scaled = diff_texts(&old, &replace_once(&old, "MaxSize: 4", "MaxSize: 8"));
    assert!(scaled.rollouts.is_empty());
    assert!(scaled.replacements().is_empty());
    // A release version rolls the nodes.
    let released = diff_texts(
        &old,
        &replace_once(
            &old,
            "      UpdateConfig:\n",
            "      ReleaseVersion: 1.33.0-20250101\n      UpdateConfig:\n",
        ),
    );
    assert_eq!(released.rollouts[0].reasons, ["ReleaseVersion changed"]);
}

#[test]
fn replacing_a_role_replaces_the_node_group_that_uses_it() {
    let old = managed();
    let new = replace_once(&old, "      Path: /\n", "      Path: /nodes/\n");
    let change = diff_texts(&old, &new);
    let role = resource(&change, "SystemNodeRole");
    assert_eq!(
        role.replacement,
        vec![ReplacementCause::CreateOnly {
            property: "Path".into()
        }]
    );
    let group = resource(&change, "SystemNodegroup");
    assert!(group.changes.is_empty());
    assert_eq!(
        group.replacement,
        vec![ReplacementCause::Dependency {
            path: "NodeRole".into(),
            target: "SystemNodeRole".into()
        }]
    );
    assert!(group.indirect[0].replaces);
    assert_eq!(
        ids(&change.critical()),
        ["SystemNodeRole", "SystemNodegroup"]
    );
    assert!(render_human(&change).contains(
        "    NodeRole: changes with SystemNodeRole.Arn (SystemNodeRole is replaced)  (requires replacement)\n"
    ));
}

#[test]
fn removed_role_is_critical() {
    let old = quickstart();
    let new = cut(&old, "  GeneralNodeRole:\n", "  GeneralInstanceProfile:\n");
    let change = diff_texts(&old, &new);
    let role = resource(&change, "GeneralNodeRole");
    assert_eq!(role.kind, ChangeKind::Removed);
    assert!(role.critical);
    assert!(!role.is_replaced());
    assert_eq!(ids(&change.critical()), ["GeneralNodeRole"]);
    assert!(change.replacements().is_empty());
    let human = render_human(&change);
    assert!(human.starts_with(
        "!! CRITICAL: GeneralNodeRole (AWS::IAM::Role) is removed: nodes using the role lose their permissions and their access to the cluster\n"
    ), "{human}");
    assert!(human.contains("- GeneralNodeRole (AWS::IAM::Role)\n    !! CRITICAL: "));

    // A retained role outlives the stack.
    let retained = replace_once(
        &old,
        "  GeneralNodeRole:\n    Type: AWS::IAM::Role\n",
        "  GeneralNodeRole:\n    Type: AWS::IAM::Role\n    DeletionPolicy: Retain\n",
    );
    let change = diff_texts(&retained, &new);
    assert!(!resource(&change, "GeneralNodeRole").critical);
    assert!(change.critical().is_empty());

    // Removing anything else is not critical.
    let change = diff_texts(
        &old,
        &cut(
            &old,
            "  NodeSecurityGroupIngress:\n",
            "  NodeSecurityGroupFromControlPlaneIngress:\n",
        ),
    );
    assert_eq!(
        resource(&change, "NodeSecurityGroupIngress").kind,
        ChangeKind::Removed
    );
    assert!(change.critical().is_empty());
}

#[test]
fn removed_aws_auth_mapping_is_critical() {
    let old = text("examples/aws-auth-config-map/aws-auth-config-map.yaml");
    let new = cut(&old, "  LinuxAwsAuth:\n", "  WindowsNodeRole:\n");
    let change = diff_texts(&old, &new);
    let mapping = resource(&change, "LinuxAwsAuth");
    assert_eq!(mapping.kind, ChangeKind::Removed);
    assert!(mapping.critical);
    assert!(mapping.impact().unwrap().contains("aws-auth mapping"));

    // `RetainExceptOnCreate` keeps it as well as `Retain` does.
    let retained = replace_once(
        &old,
        "  LinuxAwsAuth:\n    Type: Custom::AwsAuth\n",
        "  LinuxAwsAuth:\n    Type: Custom::AwsAuth\n    DeletionPolicy: RetainExceptOnCreate\n",
    );
    let change = diff_texts(&retained, &new);
    let mapping = resource(&change, "LinuxAwsAuth");
    assert!(!mapping.critical);
    assert_eq!(mapping.notes.len(), 1);
}

#[test]
fn access_entry_type_change_is_critical() {
    let old = quickstart();
    let new = replace_once(&old, "Type: EC2_LINUX", "Type: STANDARD");
    let change = diff_texts(&old, &new);
    let entry = resource(&change, "GeneralAccessEntry");
    assert!(entry.critical);
    assert_eq!(
        entry.replacement,
        vec![ReplacementCause::CreateOnly {
            property: "Type".into()
        }]
    );
}

#[test]
fn type_change_replaces() {
    let old = quickstart();
    let new = replace_once(
        &old,
        "  GeneralInstanceProfile:\n    Type: AWS::IAM::InstanceProfile\n",
        "  GeneralInstanceProfile:\n    Type: AWS::IAM::ManagedPolicy\n",
    );
    let change = diff_texts(&old, &new);
    let profile = resource(&change, "GeneralInstanceProfile");
    assert_eq!(
        profile.replacement,
        vec![ReplacementCause::TypeChanged {
            old: "AWS::IAM::InstanceProfile".into(),
            new: "AWS::IAM::ManagedPolicy".into(),
        }]
    );
    assert!(profile.critical, "an instance profile is gone");
    assert_eq!(profile.changes[0].section, Section::Type);
    assert!(
        render_human(&change)
            .contains("    Type: \"AWS::IAM::InstanceProfile\" → \"AWS::IAM::ManagedPolicy\"\n")
    );
    // The launch template's profile ARN changes with it, and the group rolls.
    assert_eq!(
        resource(&change, "GeneralLaunchTemplate").indirect[0].path,
        "LaunchTemplateData/IamInstanceProfile/Arn"
    );
    assert_eq!(change.rollouts[0].resource, "GeneralNodeGroup");
}

#[test]
fn parameters_and_outputs_changes_are_listed() {
    let old = quickstart();
    let new = replace_once(&old, "/1.33/amazon-linux-2023", "/1.34/amazon-linux-2023");
    let new = replace_once(
        &new,
        "Resources:\n",
        "  Environment:\n    Type: String\n    Default: production\nResources:\n",
    );
    let new = cut(
        &new,
        "  GeneralInstanceProfileArn:\n",
        "  GeneralAutoScalingGroupName:\n",
    );
    let new = replace_once(
        &new,
        "    Description: The Auto Scaling group name\n",
        "    Description: The name of the Auto Scaling group\n",
    );
    let change = diff_texts(&old, &new);

    assert_eq!(
        entry_kinds(&change.parameters),
        [
            ("Environment", EntryKind::Added),
            ("ImageIdAl2023X86K8s133", EntryKind::Modified)
        ]
    );
    assert_eq!(change.parameters[0].detail.as_deref(), Some("String"));
    assert_eq!(change.parameters[1].changes.len(), 1);
    assert_eq!(change.parameters[1].changes[0].path, "Default");
    // A default changed under the same name: `aws cloudformation deploy`
    // keeps the stack's previous value, and the diff says how to apply it.
    assert_eq!(
        change.parameters[1].notes,
        [
            "`aws cloudformation deploy` keeps the previous value of ImageIdAl2023X86K8s133 on an existing stack; \
          the new default applies only with `--parameter-overrides \
          ImageIdAl2023X86K8s133=/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/x86_64/standard/recommended/image_id`"
        ]
    );
    assert!(change.parameters[0].notes.is_empty());

    assert_eq!(
        entry_kinds(&change.outputs),
        [
            ("GeneralAutoScalingGroupName", EntryKind::Modified),
            ("GeneralInstanceProfileArn", EntryKind::Removed)
        ]
    );

    // A new AMI: the launch template's image changes with its parameter's
    // default, and the group rolls.
    let template = resource(&change, "GeneralLaunchTemplate");
    assert!(template.changes.is_empty());
    assert_eq!(template.indirect[0].path, "LaunchTemplateData/ImageId");
    assert_eq!(template.indirect[0].because, Because::ParameterChanged);
    assert_eq!(change.rollouts.len(), 1);

    let human = render_human(&change);
    assert!(
        human.contains(
            "\nParameters:\n+ Environment (String)\n~ ImageIdAl2023X86K8s133\n    Default: "
        ),
        "{human}"
    );
    assert!(human.contains(
        "\nOutputs:\n~ GeneralAutoScalingGroupName\n    Description: \"The Auto Scaling group name\" → \"The name of the Auto Scaling group\"\n- GeneralInstanceProfileArn ("
    ), "{human}");
}

#[test]
fn list_items_are_aligned_not_shifted() {
    let old = quickstart();
    let new = replace_once(
        &old,
        "      Tags:\n      - Key: Name\n        PropagateAtLaunch: true\n",
        "      Tags:\n      - Key: team\n        PropagateAtLaunch: true\n        Value: platform\n      - Key: Name\n        PropagateAtLaunch: true\n",
    );
    let change = diff_texts(&old, &new);
    let group = resource(&change, "GeneralNodeGroup");
    assert_eq!(group.changes.len(), 1, "{}", render_human(&change));
    assert_eq!(group.changes[0].path, "Tags/0");
    assert_eq!(group.changes[0].old, None);
    assert!(change.rollouts.is_empty(), "tags roll nothing");
}

#[test]
fn diffs_are_deterministic_and_mirror_each_other() {
    let names = [
        "quickstart",
        "spot-graviton-managed",
        "bottlerocket",
        "windows-and-linux",
    ];
    for a in names {
        for b in names {
            let old = text(format!("examples/{a}/{a}.yaml"));
            let new = text(format!("examples/{b}/{b}.yaml"));
            let forward = diff_texts(&old, &new);
            assert_eq!(forward.has_changes(), a != b);
            assert_eq!(
                render_human(&forward),
                render_human(&diff_texts(&old, &new))
            );
            assert_eq!(render_json(&forward), render_json(&diff_texts(&old, &new)));
            let backward = diff_texts(&new, &old);
            let (f, b) = (forward.summary(), backward.summary());
            assert_eq!(
                (f.added, f.removed, f.renamed),
                (b.removed, b.added, b.renamed)
            );
            serde_json::from_str::<serde_json::Value>(&render_json(&forward)).unwrap();
        }
    }
}

fn mixed() -> Diff {
    diff_texts(
        &text("tests/diff/mixed-old.yaml"),
        &text("tests/diff/mixed-new.yaml"),
    )
}

#[test]
fn mixed_change_facts() {
    let change = mixed();
    let kinds: Vec<(&str, &ChangeKind)> = change
        .resources
        .iter()
        .map(|r| (r.logical_id.as_str(), &r.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("BatchNodeRole", &ChangeKind::Removed),
            ("GeneralAccessEntry", &ChangeKind::Modified),
            ("GeneralLaunchTemplate", &ChangeKind::Modified),
            ("GeneralNodeGroup", &ChangeKind::Modified),
            (
                "JobQueue",
                &ChangeKind::Renamed {
                    from: "OldQueue".into()
                }
            ),
            ("NodeLogGroup", &ChangeKind::Added),
        ]
    );
    assert_eq!(
        ids(&change.critical()),
        ["BatchNodeRole", "GeneralAccessEntry"]
    );
    assert_eq!(
        ids(&change.replacements()),
        ["GeneralAccessEntry", "JobQueue"]
    );
    assert_eq!(change.rollouts.len(), 1);
    assert_eq!(change.rollouts[0].kind, RolloutKind::RollingUpdate);
}

#[test]
fn mixed_change_human() {
    insta::assert_snapshot!(render_human(&mixed()));
}

#[test]
fn mixed_change_json() {
    insta::assert_snapshot!(render_json(&mixed()));
}

#[test]
fn mixed_change_markdown() {
    insta::assert_snapshot!(render_markdown(&mixed(), "old.yaml", "new.yaml"));
}

/// The line numbers of the lines of `text` that start with `prefix`.
fn lines_starting(text: &str, prefix: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| line.starts_with(prefix))
        .map(|(n, _)| n)
        .collect()
}

#[test]
fn markdown_puts_replacements_first_critical_ones_leading_then_rollouts_then_the_rest() {
    let markdown = render_markdown(&mixed(), "old.yaml", "new.yaml");
    let heading = |title: &str| {
        let found = lines_starting(&markdown, &format!("#### {title}"));
        assert_eq!(found.len(), 1, "one {title} heading in\n{markdown}");
        found[0]
    };
    let (replacements, rollouts, others) = (
        heading("Replacements"),
        heading("Rolling updates"),
        heading("Other changes"),
    );
    assert!(replacements < rollouts && rollouts < others, "{markdown}");
    let caution = lines_starting(&markdown, "> [!CAUTION]");
    assert!(
        caution.len() == 1 && caution[0] < replacements,
        "{markdown}"
    );

    // Top-level items of the replacements: the critical ones lead.
    let items: Vec<&str> = markdown
        .lines()
        .skip(replacements)
        .take(rollouts - replacements)
        .filter(|line| line.starts_with("- "))
        .collect();
    assert_eq!(items.len(), 3, "{markdown}");
    assert!(items[0].starts_with("- **CRITICAL** `BatchNodeRole`"));
    assert!(items[1].starts_with("- **CRITICAL** `GeneralAccessEntry`"));
    assert!(items[2].starts_with("- `JobQueue`"));

    // Every changed resource is named once as an item.
    for resource in &mixed().resources {
        let named = markdown
            .lines()
            .filter(|line| {
                line.starts_with("- ") && line.contains(&format!("`{}`", resource.logical_id))
            })
            .count();
        assert_eq!(named, 1, "{} in\n{markdown}", resource.logical_id);
    }
    assert!(markdown.ends_with("`\n") && !markdown.ends_with("\n\n"));
}

#[test]
fn markdown_of_no_change_says_so() {
    let same = quickstart();
    let markdown = render_markdown(&diff_texts(&same, &same), "a.yaml", "a.yaml");
    assert_eq!(
        markdown,
        "### eksynth diff: `a.yaml` → `a.yaml`\n\nNo changes.\n"
    );
}

#[test]
fn markdown_fences_hold_backticks_of_the_text() {
    let new = replace_once(
        &quickstart(),
        "            MIME-Version: 1.0\n",
        "            MIME-Version: 1.0\n            X-Note: ```\n",
    );
    let markdown = render_markdown(&diff_texts(&quickstart(), &new), "a", "b");
    assert!(markdown.contains("    ````diff\n"), "{markdown}");
    assert!(
        markdown.contains("    +X-Note: ```\n    ````\n"),
        "{markdown}"
    );
}

/// The template a blueprint's text synthesizes to.
fn synthesized(blueprint: &str) -> String {
    let file = SourceFile::new("blueprint.yaml", blueprint);
    match eksynth::compile::compile(&file) {
        Ok(compiled) => compiled.stacks[0].text.clone(),
        Err(error) => panic!("the blueprint does not compile: {error:?}"),
    }
}

#[test]
fn naming_or_renaming_an_auto_scaling_group_is_a_critical_replacement() {
    let blueprint = text("examples/quickstart/blueprint.yaml");
    let name = |asg: &str| {
        replace_once(
            &blueprint,
            "    instanceType: m6i.large\n",
            &format!("    instanceType: m6i.large\n    autoScalingGroupName: {asg}\n"),
        )
    };
    let unnamed = synthesized(&blueprint);
    let named = synthesized(&name("demo-general"));
    let renamed = synthesized(&name("demo-general-2"));
    for (before, after) in [(&unnamed, &named), (&named, &renamed), (&named, &unnamed)] {
        let change = diff_texts(before, after);
        let group = resource(&change, "GeneralNodeGroup");
        assert_eq!(
            group.replacement,
            vec![ReplacementCause::CreateOnly {
                property: "AutoScalingGroupName".into()
            }]
        );
        assert!(group.critical);
        assert!(ids(&change.critical()).contains(&"GeneralNodeGroup".to_string()));
    }
}

/// The blueprint's text with its cluster on Kubernetes `version`.
fn on_version(blueprint: &str, version: &str) -> String {
    replace_once(
        blueprint,
        "  kubernetesVersion: \"1.33\"\n",
        &format!("  kubernetesVersion: \"{version}\"\n"),
    )
}

#[test]
fn a_version_bump_renames_the_image_parameter_so_deploy_takes_the_new_image() {
    // `aws cloudformation deploy` keeps an existing parameter's previous
    // value: the new version's image must be a parameter the stack does not
    // have yet, which then takes its default.
    let blueprint = text("examples/quickstart/blueprint.yaml");
    let old = synthesized(&blueprint);
    let new = synthesized(&on_version(&blueprint, "1.34"));
    let change = diff_texts(&old, &new);
    assert_eq!(
        entry_kinds(&change.parameters),
        [
            ("ImageIdAl2023X86K8s133", EntryKind::Removed),
            ("ImageIdAl2023X86K8s134", EntryKind::Added)
        ]
    );
    let new_template = read("new.yaml", &new);
    assert_eq!(
        new_template.parameters["ImageIdAl2023X86K8s134"].default,
        Some(Expr::str(
            "/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/x86_64/standard/recommended/image_id"
        ))
    );
    assert!(change.parameters.iter().all(|p| p.notes.is_empty()));
    let template = resource(&change, "GeneralLaunchTemplate");
    assert_eq!(template.changes[0].path, "LaunchTemplateData/ImageId");
    assert_eq!(
        change.rollouts,
        [Rollout {
            resource: "GeneralNodeGroup".into(),
            resource_type: "AWS::AutoScaling::AutoScalingGroup".into(),
            kind: RolloutKind::RollingUpdate,
            reasons: vec!["launch template GeneralLaunchTemplate changed".into()],
        }]
    );
}

#[test]
fn a_version_bump_upgrades_managed_node_groups_on_eks_images() {
    let blueprint = text("examples/spot-graviton-managed/blueprint.yaml");
    let old = synthesized(&blueprint);
    let new = synthesized(&on_version(&blueprint, "1.34"));
    let change = diff_texts(&old, &new);
    assert!(!change.rollouts.is_empty());
    for rollout in &change.rollouts {
        assert_eq!(rollout.kind, RolloutKind::NodeGroupUpdate);
        assert_eq!(rollout.reasons, ["Version changed"]);
        let group = resource(&change, &rollout.resource);
        assert_eq!(group.changes[0].path, "Version");
        assert_eq!(group.changes[0].new, Some(Expr::str("1.34")));
        assert!(!group.is_replaced());
    }
}

#[test]
fn a_managed_group_on_a_custom_image_names_no_version() {
    // EKS refuses `Version` beside a launch template with its own image.
    let pinned = replace_once(
        &text("examples/spot-graviton-managed/blueprint.yaml"),
        "    capacityType: SPOT\n",
        "    capacityType: SPOT\n    ami: ami-0123456789abcdef0\n",
    );
    // A custom image bootstraps itself, with the endpoint and CA.
    let pinned = replace_once(
        &pinned,
        "  serviceIpv4Cidr:",
        "  endpoint: https://ABC.gr7.eu-west-1.eks.amazonaws.com\n  certificateAuthority: Y2VydA==\n  serviceIpv4Cidr:",
    );
    let template = read("pinned.yaml", &synthesized(&pinned));
    let groups: Vec<_> = template
        .resources
        .values()
        .filter(|r| r.kind == "AWS::EKS::Nodegroup")
        .collect();
    assert!(!groups.is_empty());
    for group in groups {
        assert!(!group.properties.contains_key("Version"));
        assert!(!group.properties.contains_key("AmiType"));
    }
}

#[test]
fn an_aws_auth_mapping_is_kept_only_by_an_access_entry_for_its_own_role() {
    // Both ARNs name `${AWS::Partition}`: that names no role, and an access
    // entry for another role keeps nothing.
    let template = |resources: &str| {
        format!("AWSTemplateFormatVersion: \"2010-09-09\"\nResources:\n{resources}")
    };
    let mapping = "  NodesAwsAuth:\n    Type: Custom::AwsAuth\n    Properties:\n      ServiceToken: arn:aws:lambda:eu-west-1:111122223333:function:aws-auth\n      ClusterName: demo\n      RoleArn: !Sub arn:${AWS::Partition}:iam::${AWS::AccountId}:role/nodes\n";
    let entry = |role: &str| {
        format!(
            "  NodesAccessEntry:\n    Type: AWS::EKS::AccessEntry\n    Properties:\n      ClusterName: demo\n      PrincipalArn: !Sub arn:${{AWS::Partition}}:iam::${{AWS::AccountId}}:role/{role}\n      Type: EC2_LINUX\n"
        )
    };
    let old = template(mapping);
    let other = diff_texts(&old, &template(&entry("batch")));
    assert_eq!(ids(&other.critical()), ["NodesAwsAuth"]);
    let same = diff_texts(&old, &template(&entry("nodes")));
    assert!(same.critical().is_empty(), "{}", render_human(&same));
}

#[test]
fn a_managed_version_bump_with_other_changes_is_said_to_fail() {
    // EKS refuses a Version update combined with other changes of the node
    // group; alone, it is a plain node group update.
    let blueprint = text("examples/spot-graviton-managed/blueprint.yaml");
    let old = synthesized(&blueprint);
    let bumped = on_version(&blueprint, "1.34");
    let relabelled = replace_once(
        &bumped,
        "      lifecycle: spot\n",
        "      lifecycle: spot-v2\n",
    );
    let combined = diff_texts(&old, &synthesized(&relabelled));
    let group = &combined.rollouts[0].resource;
    let notes = &resource(&combined, group).notes;
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with(
            "EKS refuses a Version or ReleaseVersion update combined with other changes of the node group (Labels)"
        ),
        "{}",
        notes[0]
    );
    let alone = diff_texts(&old, &synthesized(&bumped));
    assert!(alone.resources.iter().all(|r| r.notes.is_empty()));
}

/// A template whose one resource carries `text` as its user data.
fn user_data_template(text: &str) -> String {
    let indented: String = text
        .lines()
        .map(|line| format!("          {line}\n"))
        .collect();
    format!(
        "Resources:\n  Nodes:\n    Type: AWS::EC2::LaunchTemplate\n    Properties:\n      LaunchTemplateData:\n        UserData: |\n{indented}"
    )
}

#[test]
fn text_hunk_headers_are_those_of_diff_u0() {
    // GNU diff, which writes unified hunks without context with -U0, is the
    // reference: the same changes must get the same `@@` lines.
    let old: Vec<String> = (1..=20).map(|n| format!("line {n}")).collect();
    let mut inserted = old.clone();
    inserted.splice(15..15, ["new a".into(), "new b".into(), "new c".into()]);
    let mut removed = old.clone();
    removed.drain(4..6);
    let mut replaced = old.clone();
    replaced[9] = "changed".into();
    let mut appended = old.clone();
    appended.push("tail".into());
    let mut prepended = old.clone();
    prepended.insert(0, "head".into());
    let dir = std::env::temp_dir().join(format!("eksynth-hunks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary folder");
    for (name, new) in [
        ("inserted", inserted),
        ("removed", removed),
        ("replaced", replaced),
        ("appended", appended),
        ("prepended", prepended),
    ] {
        let (a, b) = (old.join("\n") + "\n", new.join("\n") + "\n");
        std::fs::write(dir.join("a"), &a).expect("write a");
        std::fs::write(dir.join("b"), &b).expect("write b");
        let gnu = std::process::Command::new("diff")
            .args(["-U0", "a", "b"])
            .current_dir(&dir)
            .output()
            .expect("GNU diff runs");
        let expected: Vec<String> = String::from_utf8_lossy(&gnu.stdout)
            .lines()
            .filter(|l| l.starts_with("@@"))
            .map(str::to_string)
            .collect();
        let rendered = render_human(&diff_texts(
            &user_data_template(&a),
            &user_data_template(&b),
        ));
        let ours: Vec<String> = rendered
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("@@"))
            .map(str::to_string)
            .collect();
        assert!(!expected.is_empty(), "{name}");
        assert_eq!(ours, expected, "{name}:\n{rendered}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn markdown_lists_stay_tight_and_sections_are_headings() {
    let markdown = render_markdown(&mixed(), "old.yaml", "new.yaml");
    let lines: Vec<&str> = markdown.lines().collect();
    for (n, pair) in lines.windows(2).enumerate() {
        // A blank line followed by an indented one continues a list item
        // across it, which makes the whole list loose.
        assert!(
            !(pair[0].is_empty() && pair[1].starts_with(' ')),
            "line {}: a blank line inside a list item:\n{markdown}",
            n + 1
        );
    }
    for section in ["Resources", "Parameters", "Outputs"] {
        assert!(
            !lines.contains(&format!("{section}:").as_str()),
            "{markdown}"
        );
        assert!(
            lines.contains(&format!("##### {section}").as_str()),
            "{markdown}"
        );
    }
}

#[test]
fn the_aws_auth_provider_role_output_pointing_at_the_book_changes_no_resource() {
    // Templates of the aws-auth provider deployed before its role output
    // pointed at the book said "see the README" (the example's template
    // then was this one with that text, byte for byte); updating such a
    // stack changes that output's description and nothing else.
    let new = text("examples/aws-auth-config-map/aws-auth-config-map.yaml");
    let old = replace_once(
        &new,
        "(see eksynth's docs/src/guide/cluster-access.md)",
        "(see the README)",
    );
    let change = diff_texts(&old, &new);
    assert_eq!(
        (
            change.resources.len(),
            change.rollouts.len(),
            change.parameters.len()
        ),
        (0, 0, 0),
        "{}",
        render_human(&change)
    );
    assert_eq!(
        entry_kinds(&change.outputs),
        [("AwsAuthProviderRoleArn", EntryKind::Modified)],
        "{}",
        render_human(&change)
    );
}

#[test]
fn a_new_provider_code_updates_its_function_in_place_and_reruns_no_custom_resource() {
    // The retries of the providers' shared code changed the inline code of
    // every template that holds one. Updating a deployed stack to such a
    // template (here: the code as it was before, but for its retry count)
    // updates the function in place: the custom resources keep their
    // properties and service token, so CloudFormation calls no provider,
    // and no node rolls. The Delete of a resource made by the old code is
    // then answered by the new code.
    for (example, function) in [
        (
            "aws-auth-config-map/aws-auth-config-map.yaml",
            "AwsAuthProvider",
        ),
        ("shared-node-role/shared-node-role.yaml", "AwsAuthProvider"),
    ] {
        let new = text(Path::new("examples").join(example));
        let old = replace_once(
            &new,
            "RETRY_ATTEMPTS = 8  # standard mode makes 3;",
            "RETRY_ATTEMPTS = 1  # standard mode makes 3;",
        );
        let change = diff_texts(&old, &new);
        let changed: Vec<_> = change
            .resources
            .iter()
            .map(|r| (r.logical_id.as_str(), r.kind.clone(), r.is_replaced()))
            .collect();
        assert_eq!(
            changed,
            [(function, ChangeKind::Modified, false)],
            "{example}: {}",
            render_human(&change)
        );
        let paths: Vec<_> = resource(&change, function)
            .changes
            .iter()
            .map(|c| c.path.as_str())
            .collect();
        assert_eq!(paths, ["Code/ZipFile"], "{example}");
        assert!(resource(&change, function).indirect.is_empty(), "{example}");
        assert_eq!(
            (
                change.rollouts.len(),
                change.parameters.len(),
                change.outputs.len()
            ),
            (0, 0, 0),
            "{example}: {}",
            render_human(&change)
        );
    }
}
