//! The resources of two templates compared: changed values, replacements
//! (create-only properties, type, logical ID, replaced dependencies),
//! renames, indirect changes, critical losses and the rollouts that follow.

use std::collections::{BTreeMap, BTreeSet};

use super::values::{
    diff_values, referenced_names, references, rename_resource, resource_leaves, similarity,
};
use super::*;
use crate::cfn::Resource;

/// Resource types whose removal or replacement loses nodes or their access
/// to the cluster, with what is lost.
const CRITICAL: &[(&str, &str)] = &[
    (
        "AWS::AutoScaling::AutoScalingGroup",
        "the group's nodes are terminated",
    ),
    (
        "AWS::EKS::Nodegroup",
        "the node group's nodes are drained and terminated",
    ),
    (
        "AWS::IAM::Role",
        "nodes using the role lose their permissions and their access to the cluster",
    ),
    (
        "AWS::IAM::InstanceProfile",
        "instances launched with the profile lose their role credentials",
    ),
    (
        "AWS::EKS::AccessEntry",
        "nodes of the role lose their access to the cluster",
    ),
    (
        "Custom::AwsAuth",
        "the role's aws-auth mapping is removed and its nodes lose their access to the cluster",
    ),
    (
        "Custom::NodeAccessEntry",
        "the stack no longer owns the role's access entry, which goes with its last owner: then the role's nodes lose their access to the cluster",
    ),
];

const AUTO_SCALING_GROUP: &str = "AWS::AutoScaling::AutoScalingGroup";
const NODEGROUP: &str = "AWS::EKS::Nodegroup";
const LAUNCH_TEMPLATE: &str = "AWS::EC2::LaunchTemplate";

/// Auto Scaling group properties whose change starts a rolling update (or a
/// replacing update) when the group has the update policy for it.
const ASG_ROLLING_PROPERTIES: &[&str] = &[
    "LaunchTemplate",
    "LaunchConfigurationName",
    "MixedInstancesPolicy",
    "VPCZoneIdentifier",
    "PlacementGroup",
];

/// Managed node group properties whose change replaces its nodes.
const NODEGROUP_ROLLING_PROPERTIES: &[&str] = &["LaunchTemplate", "ReleaseVersion", "Version"];

/// Attributes of a launch template that change with every update of its data.
const VERSION_ATTRIBUTES: &[&str] = &["LatestVersionNumber", "DefaultVersionNumber"];

/// How alike a removed and an added resource must be (the share of their
/// values that are equal) to be taken for one renamed resource.
const RENAME_SIMILARITY: f64 = 0.8;

/// The resource comparison while it is worked out.
pub(super) struct Resources<'a> {
    old: &'a Template,
    new: &'a Template,
    /// Resources that exist under the same logical ID on both sides and
    /// differ (directly or, after `propagate`, indirectly).
    same: BTreeMap<String, ResourceDiff>,
    added: BTreeSet<String>,
    removed: BTreeSet<String>,
    /// New logical ID → old logical ID.
    renamed: BTreeMap<String, String>,
    /// Create-only paths by type, split into segments.
    create_only: BTreeMap<String, Vec<Vec<String>>>,
}

impl<'a> Resources<'a> {
    pub(super) fn new(
        old: &'a Template,
        new: &'a Template,
        schemas: &'a SchemaSet,
    ) -> Resources<'a> {
        let mut create_only = BTreeMap::new();
        for resource in old.resources.values().chain(new.resources.values()) {
            create_only.entry(resource.kind.clone()).or_insert_with(|| {
                schemas
                    .create_only_properties(&resource.kind)
                    .unwrap_or_default()
                    .iter()
                    .map(|path| path.split('/').map(str::to_string).collect())
                    .collect()
            });
        }
        let mut this = Resources {
            old,
            new,
            same: BTreeMap::new(),
            added: new
                .resources
                .keys()
                .filter(|id| !old.resources.contains_key(*id))
                .cloned()
                .collect(),
            removed: old
                .resources
                .keys()
                .filter(|id| !new.resources.contains_key(*id))
                .cloned()
                .collect(),
            renamed: BTreeMap::new(),
            create_only,
        };
        this.detect_renames();
        for (id, new_resource) in &new.resources {
            let Some(old_resource) = old.resources.get(id) else {
                continue;
            };
            let changes = resource_changes(old_resource, new_resource, this.patterns(new_resource));
            if changes.is_empty() {
                continue;
            }
            let mut replacement = Vec::new();
            if old_resource.kind != new_resource.kind {
                replacement.push(ReplacementCause::TypeChanged {
                    old: old_resource.kind.clone(),
                    new: new_resource.kind.clone(),
                });
            } else {
                for pattern in this.patterns(new_resource) {
                    if create_only_differs(old_resource, new_resource, pattern) {
                        replacement.push(ReplacementCause::CreateOnly {
                            property: pattern.join("/"),
                        });
                    }
                }
            }
            this.same.insert(
                id.clone(),
                ResourceDiff {
                    logical_id: id.clone(),
                    resource_type: new_resource.kind.clone(),
                    kind: ChangeKind::Modified,
                    changes,
                    indirect: Vec::new(),
                    replacement,
                    critical: false,
                    notes: Vec::new(),
                },
            );
        }
        this
    }

    /// The create-only paths of a resource's type (none when its type has
    /// no schema).
    fn patterns(&self, resource: &Resource) -> &[Vec<String>] {
        self.create_only
            .get(&resource.kind)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// Pairs removed and added resources of one type whose values are
    /// near-identical, once references to resources already paired are
    /// read under their new names. Each round pairs every exact match, or
    /// else the single most similar pair, so that a renamed node group's
    /// role is paired first, then its instance profile, then its launch
    /// template...
    fn detect_renames(&mut self) {
        let (old, new) = (self.old, self.new);
        let new_leaves: BTreeMap<String, BTreeMap<String, String>> = self
            .added
            .iter()
            .map(|id| (id.clone(), resource_leaves(&new.resources[id])))
            .collect();
        // What each removed resource refers to: its score only changes when
        // one of those is paired.
        let referenced: BTreeMap<String, BTreeSet<String>> = self
            .removed
            .iter()
            .map(|id| (id.clone(), referenced_names(&old.resources[id])))
            .collect();
        let mut map: BTreeMap<String, String> = BTreeMap::new();
        let mut scores: BTreeMap<(String, String), f64> = BTreeMap::new();
        let mut dirty: Vec<String> = self.removed.iter().cloned().collect();
        loop {
            for old_id in &dirty {
                let resource = &old.resources[old_id];
                let old_leaves = resource_leaves(&rename_resource(resource, &map));
                for new_id in &self.added {
                    if new.resources[new_id].kind == resource.kind {
                        let score = similarity(&old_leaves, &new_leaves[new_id]);
                        scores.insert((old_id.clone(), new_id.clone()), score);
                    }
                }
            }
            let mut candidates: Vec<(f64, &String, &String)> = scores
                .iter()
                .filter(|(_, score)| **score >= RENAME_SIMILARITY)
                .map(|((old_id, new_id), score)| (*score, old_id, new_id))
                .collect();
            // Best first; ties by name, so the pairing is deterministic.
            candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)).then(a.2.cmp(b.2)));
            let exact = candidates.iter().take_while(|c| c.0 >= 1.0).count();
            let take = if exact > 0 { exact } else { 1 };
            let mut picked: Vec<(String, String)> = Vec::new();
            for (_, old_id, new_id) in candidates.into_iter().take(take) {
                if picked.iter().any(|(o, n)| o == old_id || n == new_id) {
                    continue;
                }
                picked.push((old_id.clone(), new_id.clone()));
            }
            if picked.is_empty() {
                break;
            }
            for (old_id, new_id) in &picked {
                self.removed.remove(old_id);
                self.added.remove(new_id);
                map.insert(old_id.clone(), new_id.clone());
                self.renamed.insert(new_id.clone(), old_id.clone());
            }
            scores.retain(|(old_id, new_id), _| {
                self.removed.contains(old_id) && self.added.contains(new_id)
            });
            dirty = self
                .removed
                .iter()
                .filter(|id| picked.iter().any(|(o, _)| referenced[*id].contains(o)))
                .cloned()
                .collect();
        }
    }

    /// Finds the values that change at deploy time because what they refer
    /// to changes, and the replacements that follow, until nothing more
    /// changes.
    pub(super) fn propagate(&mut self, changed_parameters: &BTreeSet<&str>) {
        let (old, new) = (self.old, self.new);
        loop {
            let mut progress = false;
            for (id, resource) in &new.resources {
                if !old.resources.contains_key(id) {
                    continue;
                }
                let mut found = Vec::new();
                for (path, target, attribute) in references(&resource.properties) {
                    let because =
                        if self
                            .same
                            .get(&target)
                            .is_some_and(ResourceDiff::is_replaced)
                        {
                            Because::Replaced
                        } else if self.same.get(&target).is_some_and(|t| {
                            t.resource_type == LAUNCH_TEMPLATE && properties_change(t)
                        }) && attribute
                            .as_deref()
                            .is_some_and(|a| VERSION_ATTRIBUTES.contains(&a))
                        {
                            Because::Modified
                        } else if attribute.is_none()
                            && changed_parameters.contains(target.as_str())
                            && !new.resources.contains_key(&target)
                        {
                            Because::ParameterChanged
                        } else {
                            continue;
                        };
                    let replaces = self
                        .patterns(resource)
                        .iter()
                        .any(|pattern| overlaps(&path, pattern));
                    found.push(Indirect {
                        path: path.join("/"),
                        target,
                        attribute,
                        because,
                        replaces,
                    });
                }
                if found.is_empty() {
                    continue;
                }
                let entry = self.same.entry(id.clone()).or_insert_with(|| ResourceDiff {
                    logical_id: id.clone(),
                    resource_type: resource.kind.clone(),
                    kind: ChangeKind::Modified,
                    changes: Vec::new(),
                    indirect: Vec::new(),
                    replacement: Vec::new(),
                    critical: false,
                    notes: Vec::new(),
                });
                for indirect in found {
                    if entry.indirect.contains(&indirect) {
                        continue;
                    }
                    if indirect.replaces {
                        let cause = ReplacementCause::Dependency {
                            path: indirect.path.clone(),
                            target: indirect.target.clone(),
                        };
                        if !entry.replacement.contains(&cause) {
                            entry.replacement.push(cause);
                        }
                    }
                    entry.indirect.push(indirect);
                    progress = true;
                }
            }
            if !progress {
                break;
            }
        }
    }

    /// The rollouts of Auto Scaling groups and managed node groups that are
    /// updated in place.
    pub(super) fn rollouts(&self) -> Vec<Rollout> {
        let mut rollouts = Vec::new();
        for (id, change) in &self.same {
            if change.is_replaced() {
                continue;
            }
            let resource = &self.new.resources[id];
            let triggers = match resource.kind.as_str() {
                AUTO_SCALING_GROUP => ASG_ROLLING_PROPERTIES,
                NODEGROUP => NODEGROUP_ROLLING_PROPERTIES,
                _ => continue,
            };
            let triggered = |path: &str| triggers.contains(&path.split('/').next().unwrap_or(path));
            let mut reasons: Vec<String> = Vec::new();
            let mut add = |reason: String| {
                if !reasons.contains(&reason) {
                    reasons.push(reason);
                }
            };
            for indirect in &change.indirect {
                if !triggered(&indirect.path) {
                    continue;
                }
                let is_launch_template = self
                    .new
                    .resources
                    .get(&indirect.target)
                    .is_some_and(|t| t.kind == LAUNCH_TEMPLATE);
                add(match (is_launch_template, indirect.because) {
                    (true, Because::Replaced) => {
                        format!("launch template {} replaced", indirect.target)
                    }
                    (true, _) => format!("launch template {} changed", indirect.target),
                    (false, because) => format!(
                        "{} refers to {}, which is {}",
                        top(&indirect.path),
                        indirect.target,
                        match because {
                            Because::Replaced => "replaced",
                            Because::Modified => "modified",
                            Because::ParameterChanged => {
                                "a changed parameter (a new default applies under \
                                 `aws cloudformation deploy` only with `--parameter-overrides`)"
                            }
                        }
                    ),
                });
            }
            for property in &change.changes {
                if property.section == Section::Properties && triggered(&property.path) {
                    add(format!("{} changed", top(&property.path)));
                }
            }
            if reasons.is_empty() {
                continue;
            }
            let kind = if resource.kind == NODEGROUP {
                RolloutKind::NodeGroupUpdate
            } else {
                asg_update_kind(resource)
            };
            rollouts.push(Rollout {
                resource: id.clone(),
                resource_type: resource.kind.clone(),
                kind,
                reasons,
            });
        }
        rollouts
    }

    /// Every changed resource, sorted by logical ID, with critical flags and
    /// notes.
    pub(super) fn finish(self) -> Vec<ResourceDiff> {
        let mut all: Vec<ResourceDiff> = self.same.into_values().collect();
        for id in &self.added {
            all.push(bare(id, &self.new.resources[id], ChangeKind::Added));
        }
        for id in &self.removed {
            let resource = &self.old.resources[id];
            let mut change = bare(id, resource, ChangeKind::Removed);
            let retained = retains(&resource.deletion_policy);
            if retained {
                change.notes.push(
                    "DeletionPolicy Retain: the resource is kept, outside the stack".to_string(),
                );
            }
            change.critical = critical_impact(&resource.kind).is_some()
                && !retained
                && serves_nodes(id, resource, self.old);
            if change.critical
                && let Some(entry) = access_kept(resource, self.new)
            {
                change.critical = false;
                change.notes.push(format!(
                    "the role keeps its cluster access through {entry}, which the update creates before this is deleted"
                ));
            }
            all.push(change);
        }
        for (new_id, old_id) in &self.renamed {
            let old = &self.old.resources[old_id];
            let new = &self.new.resources[new_id];
            let changes = resource_changes(old, new, &[]);
            let mut change = bare(
                new_id,
                new,
                ChangeKind::Renamed {
                    from: old_id.clone(),
                },
            );
            change.changes = changes;
            change.replacement.push(ReplacementCause::LogicalIdChanged {
                from: old_id.clone(),
                to: new_id.clone(),
            });
            all.push(change);
        }
        for change in &mut all {
            if change.kind == ChangeKind::Removed || !change.is_replaced() {
                continue;
            }
            let old_id = match &change.kind {
                ChangeKind::Renamed { from } => from,
                _ => &change.logical_id,
            };
            let Some(old) = self.old.resources.get(old_id) else {
                continue;
            };
            change.critical = critical_impact(&change.resource_type).is_some()
                || critical_impact(&old.kind).is_some();
            // A renamed resource's old self is deleted; one replaced in place
            // is replaced.
            let note = if matches!(change.kind, ChangeKind::Renamed { .. }) {
                retains(&old.deletion_policy).then_some(
                    "DeletionPolicy Retain: the resource under the old logical ID is kept, outside the stack",
                )
            } else {
                retains(&old.update_replace_policy).then_some(
                    "UpdateReplacePolicy Retain: the old resource is kept, outside the stack",
                )
            };
            change.notes.extend(note.map(str::to_string));
        }
        all.sort_by(|a, b| a.logical_id.cmp(&b.logical_id));
        all
    }
}

/// Whether a deletion or replace policy keeps the resource.
fn retains(policy: &Option<String>) -> bool {
    matches!(policy.as_deref(), Some("Retain" | "RetainExceptOnCreate"))
}

fn bare(id: &str, resource: &Resource, kind: ChangeKind) -> ResourceDiff {
    ResourceDiff {
        logical_id: id.to_string(),
        resource_type: resource.kind.clone(),
        kind,
        changes: Vec::new(),
        indirect: Vec::new(),
        replacement: Vec::new(),
        critical: false,
        notes: Vec::new(),
    }
}

/// Whether a resource of a critical type may serve nodes. An access entry
/// of type `STANDARD` is for people and programs (the aws-auth provider's),
/// not nodes; a role is taken to serve nodes unless everything in the
/// template that names it is something else (a Lambda function, a
/// `STANDARD` access entry): an instance profile, a node group, a node
/// access entry or aws-auth mapping, or nothing at all (the role may be
/// used from outside the stack) keeps it critical.
fn serves_nodes(id: &str, resource: &Resource, template: &Template) -> bool {
    match resource.kind.as_str() {
        "AWS::EKS::AccessEntry" => !matches!(
            resource.properties.get("Type"),
            Some(Expr::String(kind)) if kind == "STANDARD"
        ),
        "AWS::IAM::Role" => {
            let users: Vec<(&String, &Resource)> = template
                .resources
                .iter()
                .filter(|(_, other)| other.properties.values().any(|value| refers_to(value, id)))
                .collect();
            users.is_empty()
                || users
                    .iter()
                    .any(|(other_id, other)| match other.kind.as_str() {
                        "AWS::Lambda::Function" | "AWS::IAM::Policy" | "AWS::IAM::RolePolicy" => {
                            false
                        }
                        _ => serves_nodes(other_id, other, template),
                    })
        }
        _ => true,
    }
}

/// Whether a value names the resource `id` (`Ref`, `Fn::GetAtt` or a
/// `Fn::Sub` variable).
fn refers_to(value: &Expr, id: &str) -> bool {
    value.references().iter().any(|(target, _)| *target == id)
}

/// For a removed aws-auth mapping: the access entry of the new template
/// that grants the same role, by which its nodes keep their access.
fn access_kept(resource: &Resource, new: &Template) -> Option<String> {
    if resource.kind != "Custom::AwsAuth" {
        return None;
    }
    let role = resource.properties.get("RoleArn")?;
    // The role resources the mapping names; a pseudo parameter in an ARN
    // (`${AWS::Partition}`) names no role.
    let roles: Vec<&str> = role
        .references()
        .into_iter()
        .map(|(target, _)| target)
        .filter(|target| !target.starts_with("AWS::"))
        .collect();
    new.resources.iter().find_map(|(id, entry)| {
        let principal = entry.properties.get("PrincipalArn")?;
        let same = principal == role || roles.iter().any(|r| refers_to(principal, r));
        (entry.kind == "AWS::EKS::AccessEntry" && same).then(|| id.clone())
    })
}

pub(super) fn critical_impact(kind: &str) -> Option<&'static str> {
    CRITICAL
        .iter()
        .find(|(critical, _)| *critical == kind)
        .map(|(_, impact)| *impact)
}

/// Whether a resource's `Properties` change (directly or through what they
/// refer to), which is what gives a launch template a new version.
fn properties_change(change: &ResourceDiff) -> bool {
    !change.indirect.is_empty()
        || change
            .changes
            .iter()
            .any(|c| c.section == Section::Properties)
}

/// The first segment of a path.
fn top(path: &str) -> &str {
    path.split('/').next().unwrap_or(path)
}

/// What an Auto Scaling group does when its instances' configuration
/// changes, by its `UpdatePolicy`.
fn asg_update_kind(resource: &Resource) -> RolloutKind {
    let Some(Expr::Map(policy)) = &resource.update_policy else {
        return RolloutKind::NoInstanceRefresh;
    };
    let will_replace = matches!(
        policy.get("AutoScalingReplacingUpdate"),
        Some(Expr::Map(replacing)) if matches!(
            replacing.get("WillReplace"),
            Some(Expr::Bool(true))
        ) || matches!(replacing.get("WillReplace"), Some(Expr::String(s)) if s == "true")
    );
    if will_replace {
        RolloutKind::ReplacingUpdate
    } else if policy.contains_key("AutoScalingRollingUpdate") {
        RolloutKind::RollingUpdate
    } else {
        RolloutKind::NoInstanceRefresh
    }
}

/// A resource's sections in template order, as values.
pub(super) fn sections(resource: &Resource) -> Vec<(Section, Option<Expr>)> {
    let mut depends_on = resource.depends_on.clone();
    // The order of `DependsOn` means nothing.
    depends_on.sort();
    depends_on.dedup();
    let string = |s: &Option<String>| s.clone().map(Expr::String);
    vec![
        (Section::Type, Some(Expr::String(resource.kind.clone()))),
        (Section::Condition, string(&resource.condition)),
        (
            Section::DependsOn,
            (!depends_on.is_empty()).then(|| Expr::list(depends_on.into_iter().map(Expr::String))),
        ),
        (Section::Metadata, resource.metadata.clone()),
        (
            Section::Properties,
            (!resource.properties.is_empty()).then(|| Expr::Map(resource.properties.clone())),
        ),
        (Section::CreationPolicy, resource.creation_policy.clone()),
        (Section::UpdatePolicy, resource.update_policy.clone()),
        (Section::DeletionPolicy, string(&resource.deletion_policy)),
        (
            Section::UpdateReplacePolicy,
            string(&resource.update_replace_policy),
        ),
    ]
}

/// The changed values of a resource; `patterns` are its create-only paths.
fn resource_changes(
    old: &Resource,
    new: &Resource,
    patterns: &[Vec<String>],
) -> Vec<PropertyChange> {
    let same_type = old.kind == new.kind;
    let mut changes = Vec::new();
    for ((section, old_value), (_, new_value)) in sections(old).into_iter().zip(sections(new)) {
        let mut leaves = Vec::new();
        // `Properties` is an empty map when absent, so its paths start below it.
        let (old_value, new_value) = if section == Section::Properties {
            let empty = || Some(Expr::Map(IndexMap::new()));
            (old_value.or_else(empty), new_value.or_else(empty))
        } else {
            (old_value, new_value)
        };
        diff_values(
            old_value.as_ref(),
            new_value.as_ref(),
            &mut Vec::new(),
            &mut leaves,
        );
        for leaf in leaves {
            let replaces = section == Section::Properties
                && same_type
                && patterns.iter().any(|pattern| {
                    overlaps(&leaf.path, pattern) && create_only_differs(old, new, pattern)
                });
            changes.push(PropertyChange {
                section,
                path: leaf.path.join("/"),
                old: leaf.old.cloned(),
                new: leaf.new.cloned(),
                replaces,
            });
        }
    }
    changes
}

/// Whether the values a create-only path selects differ between the two
/// resources.
fn create_only_differs(old: &Resource, new: &Resource, pattern: &[String]) -> bool {
    fn select<'r>(resource: &'r Resource, pattern: &[String]) -> Vec<(Vec<String>, &'r Expr)> {
        let mut found = Vec::new();
        if let Some(first) = pattern.first()
            && let Some(value) = resource.properties.get(first)
        {
            select_path(value, &pattern[1..], &mut vec![first.clone()], &mut found);
        }
        found
    }
    select(old, pattern) != select(new, pattern)
}

/// The values at `pattern` below `value` (`*` matching every list item),
/// with their concrete paths. An intrinsic function on the way stands for
/// whatever it selects.
fn select_path<'e>(
    value: &'e Expr,
    pattern: &[String],
    path: &mut Vec<String>,
    found: &mut Vec<(Vec<String>, &'e Expr)>,
) {
    let Some((segment, rest)) = pattern.split_first() else {
        found.push((path.clone(), value));
        return;
    };
    match value {
        Expr::List(items) if segment == "*" => {
            for (index, item) in items.iter().enumerate() {
                path.push(index.to_string());
                select_path(item, rest, path, found);
                path.pop();
            }
        }
        Expr::Map(entries) if segment != "*" => {
            if let Some(item) = entries.get(segment) {
                path.push(segment.clone());
                select_path(item, rest, path, found);
                path.pop();
            }
        }
        _ if value.is_intrinsic() => found.push((path.clone(), value)),
        _ => {}
    }
}

/// Whether a concrete path and a create-only pattern overlap: one is a
/// prefix of the other, `*` matching any list index.
fn overlaps(path: &[String], pattern: &[String]) -> bool {
    path.iter().zip(pattern).all(|(segment, expected)| {
        segment == expected || (expected == "*" && segment.parse::<usize>().is_ok())
    })
}
