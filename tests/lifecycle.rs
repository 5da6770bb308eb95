//! A fleet's life as data: each folder of `tests/lifecycle/` holds a change
//! a platform team makes (`old.yaml`, then `new.yaml`) and, in
//! `effect.txt`, what the update must do to every node group. The test
//! synthesizes both blueprints, diffs every stack as `eksynth diff` does for
//! two blueprints (a stack only one side has is diffed against an empty
//! template: created or deleted; a node group that changes stacks is a
//! move), and holds the rendering as a golden snapshot, so
//! that what `diff` tells a reviewer is reviewed next to the effect it
//! should describe. The scenarios that moto can deploy are deployed, old
//! then new, by `tests/lifecycle/deploy.py`.

use std::path::Path;

use eksynth::cfn::Template;
use eksynth::compile::{Compiled, compile};
use eksynth::diff::stacks::{StackDiffs, diff_stacks, render_stacks_human};
use eksynth::diff::{Diff, RolloutKind, render_human};
use eksynth::source::SourceFile;
use eksynth::validate::SchemaSet;

fn compiled(path: &Path) -> Compiled {
    let text = std::fs::read_to_string(path).expect("scenario blueprint is readable");
    let file = SourceFile::new(path.file_name().unwrap().to_string_lossy(), text);
    match compile(&file) {
        Ok(compiled) if !compiled.has_errors() => compiled,
        Ok(compiled) => panic!("{} has errors: {:?}", path.display(), compiled.diagnostics),
        Err(error) => panic!("{} does not compile: {error:?}", path.display()),
    }
}

/// Every stack's diff and the moves between stacks, for the scenario in
/// `dir`.
fn stack_diffs_of(dir: &Path) -> StackDiffs {
    let templates = |compiled: Compiled| -> Vec<(String, Template)> {
        compiled
            .stacks
            .into_iter()
            .map(|s| (s.name, s.template))
            .collect()
    };
    diff_stacks(
        &templates(compiled(&dir.join("old.yaml"))),
        &templates(compiled(&dir.join("new.yaml"))),
        SchemaSet::embedded(),
    )
}

/// Each stack's diff, by stack name, for the scenario in `dir`.
fn stack_diffs(dir: &Path) -> Vec<(String, Diff)> {
    stack_diffs_of(dir)
        .stacks
        .into_iter()
        .map(|s| (s.name, s.diff))
        .collect()
}

fn scenario(name: &str) -> Vec<(String, Diff)> {
    stack_diffs(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/lifecycle")
            .join(name),
    )
}

fn one_stack(name: &str) -> Diff {
    let mut stacks = scenario(name);
    assert_eq!(stacks.len(), 1, "{name} makes one stack");
    stacks.remove(0).1
}

fn rollouts(change: &Diff) -> Vec<(&str, RolloutKind)> {
    change
        .rollouts
        .iter()
        .map(|r| (r.resource.as_str(), r.kind))
        .collect()
}

#[test]
fn every_scenario_diff_is_its_golden_rendering() {
    insta::glob!("lifecycle/*/new.yaml", |path| {
        let dir = path.parent().expect("a scenario folder");
        let effect = std::fs::read_to_string(dir.join("effect.txt"))
            .expect("every scenario says the effect it expects in effect.txt");
        let golden = format!(
            "# expected effect\n{effect}\n# eksynth diff\n{}",
            render_stacks_human(&stack_diffs_of(dir))
        );
        insta::assert_snapshot!(golden);
    });
}

#[test]
fn at_least_fifteen_scenarios_each_with_its_effect() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lifecycle");
    let scenarios: Vec<_> = std::fs::read_dir(&root)
        .expect("tests/lifecycle")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .collect();
    assert!(scenarios.len() >= 15, "{} scenarios", scenarios.len());
    for entry in scenarios {
        for file in ["old.yaml", "new.yaml", "effect.txt"] {
            assert!(
                entry.path().join(file).is_file(),
                "{:?} lacks {file}",
                entry.path()
            );
        }
    }
}

#[test]
fn a_version_bump_rolls_self_managed_and_upgrades_managed_groups() {
    let change = one_stack("version-bump");
    assert_eq!(
        rollouts(&change),
        [
            ("GeneralNodeGroup", RolloutKind::RollingUpdate),
            ("ManagedNodegroup", RolloutKind::NodeGroupUpdate)
        ]
    );
    // A new parameter, not a new default under the old name: `deploy`
    // has no previous value to keep.
    assert!(change.parameters.iter().all(|p| p.notes.is_empty()));
    assert!(change.critical().is_empty());
}

#[test]
fn label_and_taint_changes_roll_self_managed_nodes_but_not_managed_ones() {
    let self_managed = one_stack("labels-and-taints-self-managed");
    assert_eq!(
        rollouts(&self_managed),
        [("GeneralNodeGroup", RolloutKind::RollingUpdate)]
    );
    let managed = one_stack("labels-and-taints-managed");
    assert!(managed.rollouts.is_empty());
    assert!(managed.replacements().is_empty());
    assert_eq!(managed.resources.len(), 1);
}

#[test]
fn scaling_changes_roll_nothing() {
    let change = one_stack("scaling-changed");
    assert!(change.rollouts.is_empty());
    assert!(change.replacements().is_empty());
}

#[test]
fn a_changed_default_under_the_same_name_says_deploy_keeps_the_previous_value() {
    let change = one_stack("parameter-default-changed");
    let parameter = &change.parameters[0];
    assert_eq!(parameter.name, "ImageIdCustomGeneral");
    assert!(
        parameter.notes[0].contains(
            "--parameter-overrides ImageIdCustomGeneral=/platform/eks/al2023-v2/image_id"
        )
    );
}

#[test]
fn create_only_changes_of_managed_groups_are_critical_replacements() {
    for name in ["subnets-changed", "spot-to-on-demand"] {
        let change = one_stack(name);
        let critical: Vec<&str> = change
            .critical()
            .iter()
            .map(|r| r.logical_id.as_str())
            .collect();
        assert_eq!(critical, ["ManagedNodegroup"], "{name}");
    }
}

#[test]
fn replacing_a_named_managed_group_fails_unless_it_is_renamed() {
    let fails = |name: &str| {
        let change = one_stack(name);
        let group = change
            .resources
            .iter()
            .find(|r| r.logical_id == "ManagedNodegroup")
            .expect("the managed group changes");
        group.notes.iter().any(|n| {
            n.starts_with("the update fails and rolls back")
                && n.contains("NodegroupName stays \"managed\"")
        })
    };
    assert!(fails("spot-to-on-demand"));
    // The same kind of change, with a new `nodegroupName`.
    assert!(!fails("subnets-changed"));
}

#[test]
fn a_group_moved_to_its_own_stack_is_deleted_in_one_and_created_in_the_other() {
    let stacks = scenario("group-moved-to-own-stack");
    let names: Vec<&str> = stacks.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["fleet", "fleet-managed"]);
    let removed = &stacks[0].1;
    assert!(
        removed
            .critical()
            .iter()
            .any(|r| r.logical_id == "ManagedNodegroup")
    );
    let created = &stacks[1].1;
    assert!(
        created
            .resources
            .iter()
            .any(|r| r.logical_id == "ManagedNodegroup"
                && r.kind == eksynth::diff::ChangeKind::Added)
    );
}

#[test]
fn moving_from_aws_auth_to_access_entries_keeps_node_access() {
    let change = one_stack("aws-auth-to-access-entries");
    // The provider's role and its STANDARD access entry are not the nodes';
    // the nodes' mapping is replaced by an access entry created first.
    assert!(change.critical().is_empty(), "{}", render_human(&change));
    let mapping = change
        .resources
        .iter()
        .find(|r| r.logical_id == "GeneralAwsAuth")
        .expect("the mapping is removed");
    assert_eq!(
        mapping.notes,
        [
            "the role keeps its cluster access through GeneralAccessEntry, which the update creates before this is deleted"
        ]
    );
}

#[test]
fn removing_a_group_is_critical_for_its_nodes_role_and_access() {
    let change = one_stack("removed-group");
    let critical: Vec<&str> = change
        .critical()
        .iter()
        .map(|r| r.logical_id.as_str())
        .collect();
    assert_eq!(
        critical,
        [
            "GeneralAccessEntry",
            "GeneralInstanceProfile",
            "GeneralNodeGroup",
            "GeneralNodeRole"
        ]
    );
}

#[test]
fn deleting_one_stack_of_a_shared_role_leaves_the_others_their_access() {
    let stacks = scenario("shared-role-stack-deleted");
    for (name, change) in &stacks {
        match name.as_str() {
            // The role's access entry lives here, and stays.
            "fleet" | "fleet-web" => {
                assert!(!change.has_changes(), "{name}: {}", render_human(change))
            }
            "fleet-batch" => {
                let critical: Vec<&str> = change
                    .critical()
                    .iter()
                    .map(|r| r.logical_id.as_str())
                    .collect();
                assert_eq!(critical, ["BatchInstanceProfile", "BatchNodeGroup"]);
            }
            other => panic!("unexpected stack {other}"),
        }
    }
}

#[test]
fn a_moved_group_keeps_its_nodes_only_without_a_fixed_name() {
    let unnamed = stack_diffs_of(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lifecycle/self-managed-group-moved"),
    );
    assert_eq!(unnamed.moves.len(), 1);
    let moved = &unnamed.moves[0];
    assert_eq!(
        (
            moved.logical_id.as_str(),
            moved.from.as_str(),
            moved.to.as_str()
        ),
        ("GeneralNodeGroup", "fleet", "fleet-general")
    );
    assert!(moved.keeps_nodes());
    assert!(moved.advice().starts_with("deploy `fleet-general` first"));

    let named = stack_diffs_of(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lifecycle/group-moved-to-own-stack"),
    );
    assert_eq!(named.moves.len(), 1);
    assert_eq!(
        named.moves[0].fixed_name,
        Some(("NodegroupName".to_string(), "managed".to_string()))
    );
    assert!(!named.moves[0].keeps_nodes());
}

#[test]
fn changes_that_roll_nothing_say_they_are_applied_in_place() {
    for name in ["labels-and-taints-managed", "scaling-changed"] {
        let change = one_stack(name);
        for resource in &change.resources {
            assert_eq!(
                resource.notes,
                ["updated in place: no node is replaced"],
                "{name}: {}",
                resource.logical_id
            );
        }
    }
    // A group that rolls says nothing of the kind.
    let rolled = one_stack("version-bump");
    assert!(rolled.resources.iter().all(|r| r.notes.is_empty()));
}

/// A template of `resources` (YAML), read as `eksynth diff` reads one.
fn template_of(resources: &str) -> Template {
    let text = format!("AWSTemplateFormatVersion: \"2010-09-09\"\nResources:\n{resources}");
    let file = SourceFile::new("t.yaml", text);
    eksynth::cfn::read::read(&file).expect("a template")
}

#[test]
fn access_that_changes_stacks_is_a_move_no_order_makes_safely() {
    // Before an existing role's access lived in the main stack, a group
    // stack held it under the group's name: deploying the layout of today
    // over it moves the role's one access entry between stacks.
    let entry = |id: &str| {
        format!(
            "  {id}:\n    Type: AWS::EKS::AccessEntry\n    Properties:\n      ClusterName: demo\n      PrincipalArn: !Sub arn:${{AWS::Partition}}:iam::${{AWS::AccountId}}:role/platform-eks-nodes\n      Type: EC2_LINUX\n"
        )
    };
    let log = "  Logs:\n    Type: AWS::Logs::LogGroup\n";
    let old = [
        ("fleet".to_string(), template_of(log)),
        (
            "fleet-web".to_string(),
            template_of(&entry("WebAccessEntry")),
        ),
    ];
    let new = [
        (
            "fleet".to_string(),
            template_of(&format!(
                "{log}{}",
                entry("RolePlatformEksNodesAccessEntry")
            )),
        ),
        ("fleet-web".to_string(), template_of(log)),
    ];
    let change = diff_stacks(&old, &new, SchemaSet::embedded());
    assert_eq!(change.moves.len(), 1, "{}", render_stacks_human(&change));
    let moved = &change.moves[0];
    assert_eq!(
        (
            moved.logical_id.as_str(),
            moved.renamed_from.as_deref(),
            moved.from.as_str(),
            moved.to.as_str()
        ),
        (
            "RolePlatformEksNodesAccessEntry",
            Some("WebAccessEntry"),
            "fleet-web",
            "fleet"
        )
    );
    assert!(!moved.keeps_nodes());
    assert!(moved.advice().contains("cannot be in both stacks"));

    // The same role's entry staying in its stack is no move.
    let stays = diff_stacks(&old, &old, SchemaSet::embedded());
    assert!(stays.moves.is_empty());
}

#[test]
fn an_existing_roles_access_entry_that_moves_within_a_stack_is_an_update_eks_refuses() {
    let change = one_stack("existing-role-group-renamed");
    let entry = change
        .resources
        .iter()
        .find(|r| r.logical_id == "FrontendAccessEntry")
        .expect("the access entry moves");
    assert!(
        !entry.critical,
        "the role keeps its entry: the update fails"
    );
    assert!(
        entry.notes.iter().any(|n| n.starts_with(
            "the update fails and rolls back: EKS keeps one access entry per principal"
        )),
        "{:?}",
        entry.notes
    );
    // A role the stack makes is a new principal under a new name: no clash.
    let renamed = one_stack("renamed-group");
    assert!(renamed.resources.iter().all(|r| {
        r.notes
            .iter()
            .all(|n| !n.contains("one access entry per principal"))
    }));
}

#[test]
fn moving_to_shared_access_entries_keeps_access_only_when_the_old_entry_is_retained() {
    let critical = |name: &str| -> Vec<String> {
        one_stack(name)
            .critical()
            .iter()
            .map(|r| r.logical_id.clone())
            .collect()
    };
    assert_eq!(critical("access-entries-to-shared"), ["WebAccessEntry"]);
    assert!(critical("access-entries-to-shared-retained").is_empty());
}
