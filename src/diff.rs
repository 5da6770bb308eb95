//! What changes between two templates, and which changes replace resources.
//!
//! [`diff`] compares an old and a new [`Template`] the way a reviewer reads
//! a change set before deploying it:
//!
//! - resources added, removed and modified, each changed value with its
//!   path below `Properties` (or below the resource attribute it belongs
//!   to), old and new;
//! - **replacements**: a changed `createOnlyProperties` path of the type's
//!   provider schema, a changed `Type`, a changed logical ID (a removed and
//!   an added resource of one type with near-identical properties, reported
//!   as one renamed resource), or a create-only property that refers to a
//!   resource that is itself replaced;
//! - values that change at deploy time although their text does not
//!   ("indirect" changes): a `Ref` or `Fn::GetAtt` of a replaced resource,
//!   `Fn::GetAtt` of a modified launch template's version, a `Ref` of a
//!   parameter whose default or type changed;
//! - **critical** changes: an Auto Scaling group, EKS node group, IAM role,
//!   instance profile, EKS access entry or `Custom::AwsAuth` mapping that is
//!   removed or replaced, so that nodes or their cluster access are lost;
//! - the **rollouts** that follow: rolling (or replacing) updates of Auto
//!   Scaling groups and updates of managed node groups whose launch
//!   template, subnets or release change;
//! - parameters, outputs, conditions, mappings, the description and the
//!   template metadata that changed.
//!
//! Only the templates are compared: values given to parameters at deploy
//! time, SSM parameters resolved at deploy time, and the conditional
//! replacements that schemas do not list are not known here.
//!
//! The result is deterministic: resources and named entries are sorted by
//! name, changes follow the template's order.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use indexmap::IndexMap;
use serde_json::{Value, json};

use crate::cfn::json::expr as expr_json;
use crate::cfn::{Expr, Output, Parameter, Resource, Template, sub};
use crate::validate::SchemaSet;

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

/// Lists longer than this (product of both lengths) are compared item by
/// item at the same index instead of aligned.
const ALIGN_LIMIT: usize = 250_000;

/// Everything that differs between two templates.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Diff {
    /// Resources added, removed, modified or renamed, sorted by logical ID
    /// (the new one for a renamed resource).
    pub resources: Vec<ResourceDiff>,
    /// Instance rollouts that the update starts, sorted by resource.
    pub rollouts: Vec<Rollout>,
    pub parameters: Vec<EntryDiff>,
    pub outputs: Vec<EntryDiff>,
    pub conditions: Vec<EntryDiff>,
    pub mappings: Vec<EntryDiff>,
    /// `Description` and the template's `Metadata` (paths start with the
    /// section name).
    pub template: Vec<Change>,
}

impl Diff {
    /// Whether the templates differ at all (formatting aside).
    pub fn has_changes(&self) -> bool {
        !(self.resources.is_empty()
            && self.parameters.is_empty()
            && self.outputs.is_empty()
            && self.conditions.is_empty()
            && self.mappings.is_empty()
            && self.template.is_empty())
    }

    /// The resources that are replaced (renamed ones included), in order.
    pub fn replacements(&self) -> Vec<&ResourceDiff> {
        self.resources.iter().filter(|r| r.is_replaced()).collect()
    }

    /// The resources whose removal or replacement loses nodes or cluster
    /// access, in order.
    pub fn critical(&self) -> Vec<&ResourceDiff> {
        self.resources.iter().filter(|r| r.critical).collect()
    }

    /// Counts of what changed.
    pub fn summary(&self) -> Summary {
        let count =
            |f: &dyn Fn(&ResourceDiff) -> bool| self.resources.iter().filter(|r| f(r)).count();
        Summary {
            added: count(&|r| r.kind == ChangeKind::Added),
            removed: count(&|r| r.kind == ChangeKind::Removed),
            modified: count(&|r| r.kind == ChangeKind::Modified),
            renamed: count(&|r| matches!(r.kind, ChangeKind::Renamed { .. })),
            replaced: count(&|r| r.is_replaced()),
            critical: count(&|r| r.critical),
            rollouts: self.rollouts.len(),
        }
    }
}

/// Counts of changed resources and rollouts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub added: usize,
    pub removed: usize,
    pub modified: usize,
    pub renamed: usize,
    pub replaced: usize,
    pub critical: usize,
    pub rollouts: usize,
}

/// How a resource changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Removed,
    Modified,
    /// A removed and an added resource of the same type with near-identical
    /// values: most likely the same resource under a new logical ID. It is
    /// replaced all the same.
    Renamed {
        from: String,
    },
}

impl ChangeKind {
    pub fn name(&self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
            ChangeKind::Modified => "modified",
            ChangeKind::Renamed { .. } => "renamed",
        }
    }
}

/// One resource that changes.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceDiff {
    /// The new logical ID; the old one for a removed resource.
    pub logical_id: String,
    /// The new type; the old one for a removed resource.
    pub resource_type: String,
    pub kind: ChangeKind,
    /// Values whose text changed, in template order (`Type` and the
    /// attributes in their conventional places around `Properties`).
    /// Empty for added and removed resources.
    pub changes: Vec<PropertyChange>,
    /// Property values that change at deploy time although their text does
    /// not.
    pub indirect: Vec<Indirect>,
    /// Why the resource is replaced; empty when it is updated in place.
    pub replacement: Vec<ReplacementCause>,
    /// Removing or replacing the resource loses nodes or cluster access.
    pub critical: bool,
    /// Other facts worth a reviewer's attention (retention policies).
    pub notes: Vec<String>,
}

impl ResourceDiff {
    pub fn is_replaced(&self) -> bool {
        !self.replacement.is_empty()
    }

    /// What is lost when the resource is removed or replaced, for critical
    /// resources.
    pub fn impact(&self) -> Option<&'static str> {
        if !self.critical {
            return None;
        }
        critical_impact(&self.resource_type).or_else(|| {
            // A type change from a critical type.
            self.changes
                .iter()
                .find(|c| c.section == Section::Type)
                .and_then(|c| c.old.as_ref()?.as_str())
                .and_then(critical_impact)
        })
    }
}

/// Where a changed value lives in a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Section {
    Type,
    Condition,
    DependsOn,
    Metadata,
    Properties,
    CreationPolicy,
    UpdatePolicy,
    DeletionPolicy,
    UpdateReplacePolicy,
}

impl Section {
    pub fn name(self) -> &'static str {
        match self {
            Section::Type => "Type",
            Section::Condition => "Condition",
            Section::DependsOn => "DependsOn",
            Section::Metadata => "Metadata",
            Section::Properties => "Properties",
            Section::CreationPolicy => "CreationPolicy",
            Section::UpdatePolicy => "UpdatePolicy",
            Section::DeletionPolicy => "DeletionPolicy",
            Section::UpdateReplacePolicy => "UpdateReplacePolicy",
        }
    }
}

/// One changed value of a resource.
#[derive(Clone, Debug, PartialEq)]
pub struct PropertyChange {
    pub section: Section,
    /// The path below the section, segments joined with `/`, list items by
    /// index (`LaunchTemplateData/MetadataOptions/HttpPutResponseHopLimit`,
    /// `Tags/2/Value`); empty for the section's whole value.
    pub path: String,
    /// `None` when the value is absent on that side.
    pub old: Option<Expr>,
    pub new: Option<Expr>,
    /// The change touches a create-only property whose value differs, so it
    /// replaces the resource.
    pub replaces: bool,
}

impl PropertyChange {
    /// The path as written in reports: the property path, or the attribute
    /// name followed by the path inside it.
    pub fn display_path(&self) -> String {
        match (self.section, self.path.is_empty()) {
            (Section::Properties, _) => self.path.clone(),
            (section, true) => section.name().to_string(),
            (section, false) => format!("{}/{}", section.name(), self.path),
        }
    }
}

/// A property whose text is unchanged but whose value changes at deploy
/// time, because it refers to something that changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Indirect {
    /// The property path (below `Properties`) of the value that refers.
    pub path: String,
    /// The resource or parameter referred to.
    pub target: String,
    /// The `Fn::GetAtt` attribute, when it is one.
    pub attribute: Option<String>,
    pub because: Because,
    /// The path is (or is below) a create-only property: the resource is
    /// replaced.
    pub replaces: bool,
}

/// Why a referenced value changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Because {
    /// The resource referred to is replaced: its physical ID and attributes
    /// change.
    Replaced,
    /// The launch template referred to is modified: its version changes.
    Modified,
    /// The parameter's default or type changed.
    ParameterChanged,
}

impl Because {
    pub fn name(self) -> &'static str {
        match self {
            Because::Replaced => "replaced",
            Because::Modified => "modified",
            Because::ParameterChanged => "parameter-changed",
        }
    }
}

/// Why a resource is replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplacementCause {
    /// Its `Type` changed.
    TypeChanged { old: String, new: String },
    /// A create-only property changed: the schema's path, `*` for list items.
    CreateOnly { property: String },
    /// Its logical ID changed (a likely rename).
    LogicalIdChanged { from: String, to: String },
    /// A create-only property refers to a resource that is replaced.
    Dependency { path: String, target: String },
}

impl ReplacementCause {
    fn describe(&self) -> String {
        match self {
            ReplacementCause::TypeChanged { old, new } => {
                format!("type changed from {old} to {new}")
            }
            ReplacementCause::CreateOnly { property } => {
                format!("{property} is create-only, and it changed")
            }
            ReplacementCause::LogicalIdChanged { from, to } => format!(
                "logical ID changed from {from} to {to} (a likely rename: same type, near-identical values)"
            ),
            ReplacementCause::Dependency { path, target } => {
                format!("create-only {path} refers to {target}, which is replaced")
            }
        }
    }
}

/// An instance rollout that the update starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rollout {
    pub resource: String,
    pub resource_type: String,
    pub kind: RolloutKind,
    /// What triggers it (`launch template GeneralLaunchTemplate changed`).
    pub reasons: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RolloutKind {
    /// `AutoScalingRollingUpdate`: instances are replaced in batches.
    RollingUpdate,
    /// `AutoScalingReplacingUpdate` with `WillReplace`: a new group is
    /// created and the old one deleted once the new one is healthy.
    ReplacingUpdate,
    /// A managed node group replaces its nodes.
    NodeGroupUpdate,
    /// The group has no update policy for it: running instances keep the
    /// old configuration, only new ones get the new one.
    NoInstanceRefresh,
}

impl RolloutKind {
    pub fn name(self) -> &'static str {
        match self {
            RolloutKind::RollingUpdate => "rolling-update",
            RolloutKind::ReplacingUpdate => "replacing-update",
            RolloutKind::NodeGroupUpdate => "node-group-update",
            RolloutKind::NoInstanceRefresh => "no-instance-refresh",
        }
    }
}

/// A parameter, output, condition or mapping that changes.
#[derive(Clone, Debug, PartialEq)]
pub struct EntryDiff {
    pub name: String,
    pub kind: EntryKind,
    /// The changed fields of a modified entry (`Default`, `Export/Name`).
    pub changes: Vec<Change>,
    /// A parameter's type, or an output's export name (as JSON), on the
    /// side that has the entry; for the one-line summary.
    pub detail: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    Added,
    Removed,
    Modified,
}

impl EntryKind {
    pub fn name(self) -> &'static str {
        match self {
            EntryKind::Added => "added",
            EntryKind::Removed => "removed",
            EntryKind::Modified => "modified",
        }
    }
}

/// One changed value outside resources.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// Segments joined with `/`; empty for the whole value.
    pub path: String,
    pub old: Option<Expr>,
    pub new: Option<Expr>,
}

/// Compares two templates. Create-only properties come from `schemas`; a
/// type without a schema is only replaced when its type or logical ID
/// changes.
pub fn diff(old: &Template, new: &Template, schemas: &SchemaSet) -> Diff {
    let parameters = diff_entries(&old.parameters, &new.parameters, Parameter::layout, |p| {
        Some(p.kind.clone())
    });
    let changed_parameters: BTreeSet<&str> = parameters
        .iter()
        .filter(|p| {
            p.kind == EntryKind::Modified
                && p.changes
                    .iter()
                    .any(|c| c.path == "Default" || c.path == "Type")
        })
        .map(|p| p.name.as_str())
        .collect();

    let mut resources = Resources::new(old, new, schemas);
    resources.propagate(&changed_parameters);
    let rollouts = resources.rollouts();
    let resources = resources.finish();

    let outputs = diff_entries(&old.outputs, &new.outputs, Output::layout, |o| {
        o.export.as_ref().map(compact)
    });
    let conditions = diff_entries(&old.conditions, &new.conditions, Expr::clone, |_| None);
    let mappings = diff_entries(&old.mappings, &new.mappings, Expr::clone, |_| None);

    let mut template = Vec::new();
    let description = |t: &Template| t.description.clone().map(Expr::String);
    push_changes(
        &mut template,
        "Description",
        description(old).as_ref(),
        description(new).as_ref(),
    );
    let metadata = |t: &Template| (!t.metadata.is_empty()).then(|| Expr::Map(t.metadata.clone()));
    push_changes(
        &mut template,
        "Metadata",
        metadata(old).as_ref(),
        metadata(new).as_ref(),
    );

    Diff {
        resources,
        rollouts,
        parameters,
        outputs,
        conditions,
        mappings,
        template,
    }
}

fn push_changes(out: &mut Vec<Change>, root: &str, old: Option<&Expr>, new: Option<&Expr>) {
    let mut leaves = Vec::new();
    diff_values(old, new, &mut vec![root.to_string()], &mut leaves);
    out.extend(leaves.into_iter().map(|leaf| Change {
        path: leaf.path.join("/"),
        old: leaf.old.cloned(),
        new: leaf.new.cloned(),
    }));
}

// ---------------------------------------------------------------------------
// Resources

/// The resource comparison while it is worked out.
struct Resources<'a> {
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
    fn new(old: &'a Template, new: &'a Template, schemas: &'a SchemaSet) -> Resources<'a> {
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
    fn propagate(&mut self, changed_parameters: &BTreeSet<&str>) {
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
    fn rollouts(&self) -> Vec<Rollout> {
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
                            Because::ParameterChanged => "a changed parameter",
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
    fn finish(self) -> Vec<ResourceDiff> {
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
            change.critical = critical_impact(&resource.kind).is_some() && !retained;
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

fn critical_impact(kind: &str) -> Option<&'static str> {
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
fn sections(resource: &Resource) -> Vec<(Section, Option<Expr>)> {
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

// ---------------------------------------------------------------------------
// Values

/// One changed value: its path and both sides.
struct Leaf<'e> {
    path: Vec<String>,
    old: Option<&'e Expr>,
    new: Option<&'e Expr>,
}

/// The changed values between two values, in the new value's order (keys
/// only in the old value after). Maps are compared key by key; lists of
/// maps or lists item by item, aligned on equal items; anything else
/// (scalars, lists of scalars, intrinsics) as one value.
fn diff_values<'e>(
    old: Option<&'e Expr>,
    new: Option<&'e Expr>,
    path: &mut Vec<String>,
    out: &mut Vec<Leaf<'e>>,
) {
    match (old, new) {
        (None, None) => {}
        (Some(o), Some(n)) if o == n => {}
        (Some(Expr::Map(o)), Some(Expr::Map(n))) => {
            for (key, value) in n {
                path.push(key.clone());
                diff_values(o.get(key), Some(value), path, out);
                path.pop();
            }
            for (key, value) in o {
                if !n.contains_key(key) {
                    path.push(key.clone());
                    diff_values(Some(value), None, path, out);
                    path.pop();
                }
            }
        }
        (Some(Expr::List(o)), Some(Expr::List(n))) if structured(o) || structured(n) => {
            diff_lists(o, n, path, out);
        }
        _ => out.push(Leaf {
            path: path.clone(),
            old,
            new,
        }),
    }
}

/// A list of maps or lists, compared item by item.
fn structured(items: &[Expr]) -> bool {
    items
        .iter()
        .any(|item| matches!(item, Expr::Map(_) | Expr::List(_)))
}

/// Two lists aligned on their equal items; the items between two aligned
/// ones are paired by position. Paths use the new index, or the old one
/// for an item only the old list has.
fn diff_lists<'e>(
    old: &'e [Expr],
    new: &'e [Expr],
    path: &mut Vec<String>,
    out: &mut Vec<Leaf<'e>>,
) {
    let anchors = align(old, new, ALIGN_LIMIT);
    let (mut i, mut j) = (0, 0);
    for (ai, aj) in anchors.into_iter().chain([(old.len(), new.len())]) {
        let gap = (ai - i).max(aj - j);
        for k in 0..gap {
            let (o, n) = (old[i..ai].get(k), new[j..aj].get(k));
            let index = if n.is_some() { j + k } else { i + k };
            path.push(index.to_string());
            diff_values(o, n, path, out);
            path.pop();
        }
        (i, j) = (ai + 1, aj + 1);
    }
}

/// The index pairs of a longest common subsequence of two sequences
/// (common prefix and suffix first, then dynamic programming on the rest
/// when it is at most `limit` cells).
fn align<T: PartialEq>(a: &[T], b: &[T], limit: usize) -> Vec<(usize, usize)> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut pairs: Vec<(usize, usize)> = (0..prefix).map(|k| (k, k)).collect();
    if !ma.is_empty() && !mb.is_empty() && ma.len() * mb.len() <= limit {
        // lengths[x][y]: LCS length of ma[x..] and mb[y..].
        let width = mb.len() + 1;
        let mut lengths = vec![0u32; (ma.len() + 1) * width];
        for x in (0..ma.len()).rev() {
            for y in (0..mb.len()).rev() {
                lengths[x * width + y] = if ma[x] == mb[y] {
                    lengths[(x + 1) * width + y + 1] + 1
                } else {
                    lengths[(x + 1) * width + y].max(lengths[x * width + y + 1])
                };
            }
        }
        let (mut x, mut y) = (0, 0);
        while x < ma.len() && y < mb.len() {
            if ma[x] == mb[y] {
                pairs.push((prefix + x, prefix + y));
                x += 1;
                y += 1;
            } else if lengths[(x + 1) * width + y] >= lengths[x * width + y + 1] {
                x += 1;
            } else {
                y += 1;
            }
        }
    }
    pairs.extend((0..suffix).map(|k| (a.len() - suffix + k, b.len() - suffix + k)));
    pairs
}

/// Every resource or parameter a resource's properties refer to, with the
/// path of the value that refers: `Ref`, `Fn::GetAtt` and `Fn::Sub`
/// variables (`${Name}`, `${Name.Attribute}`) not bound by the `Fn::Sub`'s
/// own map. Pseudo parameters are left out.
fn references(properties: &IndexMap<String, Expr>) -> Vec<(Vec<String>, String, Option<String>)> {
    fn walk(
        value: &Expr,
        path: &mut Vec<String>,
        out: &mut Vec<(Vec<String>, String, Option<String>)>,
    ) {
        match value {
            Expr::Map(entries) => {
                for (key, item) in entries {
                    path.push(key.clone());
                    walk(item, path, out);
                    path.pop();
                }
            }
            Expr::List(items) => {
                for (index, item) in items.iter().enumerate() {
                    path.push(index.to_string());
                    walk(item, path, out);
                    path.pop();
                }
            }
            _ => {
                let mut found = Vec::new();
                intrinsic_references(value, &mut found);
                for (target, attribute) in found {
                    if target.starts_with("AWS::") {
                        continue;
                    }
                    let entry = (path.clone(), target, attribute);
                    if !out.contains(&entry) {
                        out.push(entry);
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut path = Vec::new();
    for (key, value) in properties {
        path.push(key.clone());
        walk(value, &mut path, &mut out);
        path.pop();
    }
    out
}

/// The (target, attribute) pairs an intrinsic refers to, anywhere inside it.
fn intrinsic_references(value: &Expr, out: &mut Vec<(String, Option<String>)>) {
    out.extend(
        value
            .references()
            .into_iter()
            .map(|(name, attribute)| (name.to_string(), attribute.map(str::to_string))),
    );
}

/// Every name a resource refers to, in any section, `DependsOn` included.
fn referenced_names(resource: &Resource) -> BTreeSet<String> {
    let mut found = Vec::new();
    for (_, value) in sections(resource) {
        if let Some(value) = value {
            intrinsic_references(&value, &mut found);
        }
    }
    let mut names: BTreeSet<String> = found.into_iter().map(|(name, _)| name).collect();
    names.extend(resource.depends_on.iter().cloned());
    names
}

/// A value with its references to renamed resources renamed.
fn rename_expr(value: &Expr, map: &BTreeMap<String, String>) -> Expr {
    let mut value = value.clone();
    rename_in_place(&mut value, map);
    value
}

fn rename_in_place(value: &mut Expr, map: &BTreeMap<String, String>) {
    match value {
        Expr::Ref(target)
        | Expr::GetAtt {
            resource: target, ..
        } => {
            if let Some(renamed) = map.get(target.as_str()) {
                target.clone_from(renamed);
            }
        }
        Expr::Sub {
            template,
            variables,
        } => {
            *template = sub::rename(template, |name| {
                // A variable of the map is not a resource.
                if variables.contains_key(name) {
                    return None;
                }
                let (resource, attribute) = match name.split_once('.') {
                    Some((resource, attribute)) => (resource, Some(attribute)),
                    None => (name, None),
                };
                let renamed = map.get(resource)?;
                Some(match attribute {
                    Some(attribute) => format!("{renamed}.{attribute}"),
                    None => renamed.clone(),
                })
            });
        }
        _ => {}
    }
    for child in value.children_mut() {
        rename_in_place(child, map);
    }
}

/// A resource with its references to renamed resources renamed.
fn rename_resource(resource: &Resource, map: &BTreeMap<String, String>) -> Resource {
    if map.is_empty() {
        return resource.clone();
    }
    let rename = |v: &Option<Expr>| v.as_ref().map(|v| rename_expr(v, map));
    Resource {
        kind: resource.kind.clone(),
        condition: resource.condition.clone(),
        depends_on: resource
            .depends_on
            .iter()
            .map(|d| map.get(d).unwrap_or(d).clone())
            .collect(),
        metadata: rename(&resource.metadata),
        properties: resource
            .properties
            .iter()
            .map(|(k, v)| (k.clone(), rename_expr(v, map)))
            .collect(),
        creation_policy: rename(&resource.creation_policy),
        update_policy: rename(&resource.update_policy),
        deletion_policy: resource.deletion_policy.clone(),
        update_replace_policy: resource.update_replace_policy.clone(),
    }
}

/// Every scalar (or intrinsic) of a resource by path, rendered, for
/// similarity.
fn resource_leaves(resource: &Resource) -> BTreeMap<String, String> {
    fn walk(value: &Expr, path: &mut String, out: &mut BTreeMap<String, String>) {
        match value {
            Expr::Map(entries) if !entries.is_empty() => {
                for (key, item) in entries {
                    let length = path.len();
                    path.push('\u{0}');
                    path.push_str(key);
                    walk(item, path, out);
                    path.truncate(length);
                }
            }
            Expr::List(items) if !items.is_empty() => {
                for (index, item) in items.iter().enumerate() {
                    let length = path.len();
                    let _ = write!(path, "\u{0}{index}");
                    walk(item, path, out);
                    path.truncate(length);
                }
            }
            _ => {
                out.insert(path.clone(), compact(value));
            }
        }
    }
    let mut out = BTreeMap::new();
    for (section, value) in sections(resource) {
        if let Some(value) = value {
            walk(&value, &mut section.name().to_string(), &mut out);
        }
    }
    out
}

/// The share of paths whose values are equal, out of all paths of either.
fn similarity(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> f64 {
    let equal = a
        .iter()
        .filter(|(path, value)| b.get(*path) == Some(*value))
        .count();
    let union = a.len() + b.keys().filter(|path| !a.contains_key(*path)).count();
    if union == 0 {
        1.0
    } else {
        equal as f64 / union as f64
    }
}

// ---------------------------------------------------------------------------
// Parameters, outputs, conditions, mappings

fn diff_entries<T: PartialEq>(
    old: &IndexMap<String, T>,
    new: &IndexMap<String, T>,
    layout: impl Fn(&T) -> Expr,
    detail: impl Fn(&T) -> Option<String>,
) -> Vec<EntryDiff> {
    let names: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    let mut entries = Vec::new();
    for name in names {
        let entry = match (old.get(name), new.get(name)) {
            (Some(o), Some(n)) if o == n => continue,
            (Some(o), Some(n)) => {
                let (o, n) = (layout(o), layout(n));
                let mut leaves = Vec::new();
                diff_values(Some(&o), Some(&n), &mut Vec::new(), &mut leaves);
                let changes = leaves
                    .into_iter()
                    .map(|leaf| Change {
                        path: leaf.path.join("/"),
                        old: leaf.old.cloned(),
                        new: leaf.new.cloned(),
                    })
                    .collect();
                (
                    EntryKind::Modified,
                    changes,
                    new.get(name).and_then(&detail),
                )
            }
            (Some(o), None) => (EntryKind::Removed, Vec::new(), detail(o)),
            (None, Some(n)) => (EntryKind::Added, Vec::new(), detail(n)),
            (None, None) => continue,
        };
        // Equal-looking entries (a float NaN) have no changed path: skip.
        if entry.0 == EntryKind::Modified && entry.1.is_empty() {
            continue;
        }
        entries.push(EntryDiff {
            name: name.clone(),
            kind: entry.0,
            changes: entry.1,
            detail: entry.2,
        });
    }
    entries
}

// ---------------------------------------------------------------------------
// Rendering

/// A value as compact JSON with long-form intrinsics.
fn compact(value: &Expr) -> String {
    serde_json::to_string(&expr_json(value)).unwrap_or_default()
}

/// Values longer than this (in characters) are shortened in human output.
const HUMAN_VALUE_LIMIT: usize = 100;

/// Changed text lines shown per value in human output.
const HUMAN_TEXT_LINES: usize = 24;

/// A value for human eyes: compact JSON, shortened when long.
fn human_value(value: Option<&Expr>) -> String {
    let Some(value) = value else {
        return "(absent)".to_string();
    };
    let text = compact(value);
    let count = text.chars().count();
    if count <= HUMAN_VALUE_LIMIT {
        return text;
    }
    let head: String = text.chars().take(HUMAN_VALUE_LIMIT - 20).collect();
    format!("{head}… ({count} characters)")
}

/// The text inside a string, `Fn::Sub` or `Fn::Base64` of either.
fn text_of(value: &Expr) -> Option<&str> {
    match value {
        Expr::String(s) => Some(s),
        Expr::Sub { template, .. } => Some(template),
        Expr::Base64(inner) => text_of(inner),
        _ => None,
    }
}

/// One changed value: `path: old → new`, or for multi-line text (user
/// data), the changed lines.
fn human_change(
    out: &mut String,
    path: &str,
    old: Option<&Expr>,
    new: Option<&Expr>,
    suffix: &str,
) {
    let texts = old.and_then(text_of).zip(new.and_then(text_of));
    if let Some((a, b)) = texts.filter(|(a, b)| a != b && (a.contains('\n') || b.contains('\n'))) {
        let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
        let _ = writeln!(
            out,
            "    {path}: text changed ({} → {} lines){suffix}",
            a.len(),
            b.len()
        );
        text_hunks(out, &a, &b);
        return;
    }
    let _ = writeln!(
        out,
        "    {path}: {} → {}{suffix}",
        human_value(old),
        human_value(new)
    );
}

/// The changed lines of two texts as `@@ -old +new @@` hunks without
/// context, at most `HUMAN_TEXT_LINES` lines.
fn text_hunks(out: &mut String, a: &[&str], b: &[&str]) {
    let anchors = align(a, b, 4_000_000);
    let mut shown = 0;
    let mut hidden = 0;
    let (mut i, mut j) = (0, 0);
    for (ai, aj) in anchors.into_iter().chain([(a.len(), b.len())]) {
        if ai > i || aj > j {
            let lines: Vec<String> = a[i..ai]
                .iter()
                .map(|line| format!("-{line}"))
                .chain(b[j..aj].iter().map(|line| format!("+{line}")))
                .collect();
            if shown + lines.len() <= HUMAN_TEXT_LINES {
                let _ = writeln!(out, "      @@ -{} +{} @@", i + 1, j + 1);
                for line in &lines {
                    let _ = writeln!(out, "      {line}");
                }
                shown += lines.len();
            } else {
                hidden += lines.len();
            }
        }
        (i, j) = (ai + 1, aj + 1);
    }
    if hidden > 0 {
        let _ = writeln!(out, "      … {hidden} more changed lines");
    }
}

fn kind_mark(kind: &ChangeKind) -> char {
    match kind {
        ChangeKind::Added => '+',
        ChangeKind::Removed => '-',
        ChangeKind::Modified | ChangeKind::Renamed { .. } => '~',
    }
}

fn entry_mark(kind: EntryKind) -> char {
    match kind {
        EntryKind::Added => '+',
        EntryKind::Removed => '-',
        EntryKind::Modified => '~',
    }
}

/// The critical line of a resource, for the banner and its own block.
fn critical_line(resource: &ResourceDiff) -> Option<String> {
    let impact = resource.impact()?;
    let what = match &resource.kind {
        ChangeKind::Removed => "is removed".to_string(),
        ChangeKind::Renamed { from } => format!("replaces {from} (logical ID changed)"),
        _ => "is replaced".to_string(),
    };
    Some(format!(
        "{} ({}) {what}: {impact}",
        resource.logical_id, resource.resource_type
    ))
}

fn rollout_line(rollout: &Rollout) -> String {
    let reasons = rollout.reasons.join("; ");
    match rollout.kind {
        RolloutKind::RollingUpdate => format!("rolling update of {} ({reasons})", rollout.resource),
        RolloutKind::ReplacingUpdate => format!(
            "replacing update of {} ({reasons}): a new Auto Scaling group replaces it",
            rollout.resource
        ),
        RolloutKind::NodeGroupUpdate => {
            format!("node group update of {} ({reasons})", rollout.resource)
        }
        RolloutKind::NoInstanceRefresh => format!(
            "no rolling update of {} ({reasons}): it has no AutoScalingRollingUpdate policy, so running instances keep the old configuration",
            rollout.resource
        ),
    }
}

fn indirect_line(indirect: &Indirect) -> String {
    let target = match &indirect.attribute {
        Some(attribute) => format!("{}.{attribute}", indirect.target),
        None => indirect.target.clone(),
    };
    let why = match indirect.because {
        Because::Replaced => format!("{} is replaced", indirect.target),
        Because::Modified => format!("{} is modified", indirect.target),
        Because::ParameterChanged => format!("parameter {} changed", indirect.target),
    };
    let suffix = if indirect.replaces {
        "  (requires replacement)"
    } else {
        ""
    };
    format!(
        "    {}: changes with {target} ({why}){suffix}",
        indirect.path
    )
}

/// The diff for people: critical changes first, then resources (`+` added,
/// `-` removed, `~` modified or renamed, with `path: old → new` lines and
/// `!! REPLACEMENT` / `!! CRITICAL` lines), rollouts, parameters, outputs,
/// conditions, mappings, template sections, and a summary line. Values are
/// compact JSON with long-form intrinsics, shortened when long; multi-line
/// text shows its changed lines.
pub fn render_human(diff: &Diff) -> String {
    let mut out = String::new();
    if !diff.has_changes() {
        out.push_str("No changes.\n");
        return out;
    }
    let critical: Vec<String> = diff.resources.iter().filter_map(critical_line).collect();
    for line in &critical {
        let _ = writeln!(out, "!! CRITICAL: {line}");
    }
    if !critical.is_empty() {
        out.push('\n');
    }

    if !diff.resources.is_empty() {
        out.push_str("Resources:\n");
        for resource in &diff.resources {
            let _ = writeln!(
                out,
                "{} {} ({})",
                kind_mark(&resource.kind),
                resource.logical_id,
                resource.resource_type
            );
            for cause in &resource.replacement {
                let _ = writeln!(out, "    !! REPLACEMENT: {}", cause.describe());
            }
            if let Some(impact) = resource.impact() {
                let _ = writeln!(out, "    !! CRITICAL: {impact}");
            }
            for change in &resource.changes {
                let suffix = if change.replaces {
                    "  (requires replacement)"
                } else {
                    ""
                };
                human_change(
                    &mut out,
                    &change.display_path(),
                    change.old.as_ref(),
                    change.new.as_ref(),
                    suffix,
                );
            }
            for indirect in &resource.indirect {
                let _ = writeln!(out, "{}", indirect_line(indirect));
            }
            for note in &resource.notes {
                let _ = writeln!(out, "    note: {note}");
            }
        }
    }

    if !diff.rollouts.is_empty() {
        out.push_str("\nRollouts:\n");
        for rollout in &diff.rollouts {
            let _ = writeln!(out, "  {}", rollout_line(rollout));
        }
    }

    for (title, entries) in [
        ("Parameters", &diff.parameters),
        ("Outputs", &diff.outputs),
        ("Conditions", &diff.conditions),
        ("Mappings", &diff.mappings),
    ] {
        if entries.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{title}:");
        for entry in entries {
            let detail = match (&entry.detail, entry.kind) {
                (Some(detail), EntryKind::Added | EntryKind::Removed) => format!(" ({detail})"),
                _ => String::new(),
            };
            let _ = writeln!(out, "{} {}{detail}", entry_mark(entry.kind), entry.name);
            for change in &entry.changes {
                let path = if change.path.is_empty() {
                    "(value)"
                } else {
                    &change.path
                };
                human_change(&mut out, path, change.old.as_ref(), change.new.as_ref(), "");
            }
        }
    }

    if !diff.template.is_empty() {
        out.push_str("\nTemplate:\n");
        for change in &diff.template {
            human_change(
                &mut out,
                &change.path,
                change.old.as_ref(),
                change.new.as_ref(),
                "",
            );
        }
    }

    let summary = diff.summary();
    let _ = writeln!(
        out,
        "\n{} changed: {} added, {} removed, {} modified, {} renamed; {} replaced, {} critical; {}; {}, {} changed",
        counted(diff.resources.len(), "resource"),
        summary.added,
        summary.removed,
        summary.modified,
        summary.renamed,
        summary.replaced,
        summary.critical,
        counted(summary.rollouts, "rollout"),
        counted(diff.parameters.len(), "parameter"),
        counted(diff.outputs.len(), "output"),
    );
    out
}

/// `1 rollout`, `2 rollouts`.
fn counted(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("{count} {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

fn json_value(value: Option<&Expr>) -> Value {
    value.map_or(Value::Null, expr_json)
}

fn json_cause(cause: &ReplacementCause) -> Value {
    match cause {
        ReplacementCause::TypeChanged { old, new } => {
            json!({ "cause": "type-changed", "old": old, "new": new })
        }
        ReplacementCause::CreateOnly { property } => {
            json!({ "cause": "create-only", "property": property })
        }
        ReplacementCause::LogicalIdChanged { from, to } => {
            json!({ "cause": "logical-id-changed", "from": from, "to": to })
        }
        ReplacementCause::Dependency { path, target } => {
            json!({ "cause": "dependency", "path": path, "refers_to": target })
        }
    }
}

fn json_entries(entries: &[EntryDiff]) -> Value {
    Value::Array(
        entries
            .iter()
            .map(|entry| {
                json!({
                    "name": entry.name,
                    "change": entry.kind.name(),
                    "detail": entry.detail,
                    "changes": entry.changes.iter().map(json_change).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

fn json_change(change: &Change) -> Value {
    json!({
        "path": change.path,
        "old": json_value(change.old.as_ref()),
        "new": json_value(change.new.as_ref()),
    })
}

/// The diff as one JSON document (pretty-printed, keys in this order,
/// arrays in the order of [`Diff`]). Schema, version 1:
///
/// ```text
/// {
///   "version": 1,
///   "has_changes": bool,
///   "summary": { "added", "removed", "modified", "renamed", "replaced",
///                "critical", "rollouts": number },
///   "resources": [{
///     "logical_id": string,            // the new one; the old one if removed
///     "type": string,
///     "change": "added" | "removed" | "modified" | "renamed",
///     "renamed_from": string | null,   // the old logical ID of a renamed resource
///     "replaced": bool,
///     "critical": bool,                // nodes or cluster access are lost
///     "impact": string | null,         // what is lost, when critical
///     "replacement": [                 // why it is replaced; [] when not
///       { "cause": "type-changed", "old": string, "new": string } |
///       { "cause": "create-only", "property": string } |   // schema path, `*` for items
///       { "cause": "logical-id-changed", "from": string, "to": string } |
///       { "cause": "dependency", "path": string, "refers_to": string }
///     ],
///     "changes": [{
///       "section": "Type" | "Condition" | "DependsOn" | "Metadata" | "Properties" |
///                  "CreationPolicy" | "UpdatePolicy" | "DeletionPolicy" |
///                  "UpdateReplacePolicy",
///       "path": string,                // below the section, `/`-joined, "" for all of it
///       "old": value | null,           // long-form JSON; null when absent
///       "new": value | null,
///       "replaces": bool               // touches a changed create-only property
///     }],
///     "indirect": [{                   // unchanged text whose value changes on deploy
///       "path": string, "refers_to": string, "attribute": string | null,
///       "because": "replaced" | "modified" | "parameter-changed",
///       "replaces": bool
///     }],
///     "notes": [string]
///   }],
///   "rollouts": [{
///     "resource": string, "type": string,
///     "kind": "rolling-update" | "replacing-update" | "node-group-update" |
///             "no-instance-refresh",
///     "reasons": [string]
///   }],
///   "parameters" | "outputs" | "conditions" | "mappings": [{
///     "name": string,
///     "change": "added" | "removed" | "modified",
///     "detail": string | null,         // parameter type; output export name (JSON)
///     "changes": [{ "path": string, "old": value | null, "new": value | null }]
///   }],
///   "template": [{ "path": string, "old": value | null, "new": value | null }]
/// }
/// ```
pub fn render_json(diff: &Diff) -> String {
    let summary = diff.summary();
    let resources: Vec<Value> = diff
        .resources
        .iter()
        .map(|resource| {
            json!({
                "logical_id": resource.logical_id,
                "type": resource.resource_type,
                "change": resource.kind.name(),
                "renamed_from": match &resource.kind {
                    ChangeKind::Renamed { from } => Value::String(from.clone()),
                    _ => Value::Null,
                },
                "replaced": resource.is_replaced(),
                "critical": resource.critical,
                "impact": resource.impact(),
                "replacement": resource.replacement.iter().map(json_cause).collect::<Vec<_>>(),
                "changes": resource.changes.iter().map(|change| json!({
                    "section": change.section.name(),
                    "path": change.path,
                    "old": json_value(change.old.as_ref()),
                    "new": json_value(change.new.as_ref()),
                    "replaces": change.replaces,
                })).collect::<Vec<_>>(),
                "indirect": resource.indirect.iter().map(|indirect| json!({
                    "path": indirect.path,
                    "refers_to": indirect.target,
                    "attribute": indirect.attribute,
                    "because": indirect.because.name(),
                    "replaces": indirect.replaces,
                })).collect::<Vec<_>>(),
                "notes": resource.notes,
            })
        })
        .collect();
    let rollouts: Vec<Value> = diff
        .rollouts
        .iter()
        .map(|rollout| {
            json!({
                "resource": rollout.resource,
                "type": rollout.resource_type,
                "kind": rollout.kind.name(),
                "reasons": rollout.reasons,
            })
        })
        .collect();
    let document = json!({
        "version": 1,
        "has_changes": diff.has_changes(),
        "summary": {
            "added": summary.added,
            "removed": summary.removed,
            "modified": summary.modified,
            "renamed": summary.renamed,
            "replaced": summary.replaced,
            "critical": summary.critical,
            "rollouts": summary.rollouts,
        },
        "resources": resources,
        "rollouts": rollouts,
        "parameters": json_entries(&diff.parameters),
        "outputs": json_entries(&diff.outputs),
        "conditions": json_entries(&diff.conditions),
        "mappings": json_entries(&diff.mappings),
        "template": diff.template.iter().map(json_change).collect::<Vec<_>>(),
    });
    let mut text = serde_json::to_string_pretty(&document).unwrap_or_default();
    text.push('\n');
    text
}
