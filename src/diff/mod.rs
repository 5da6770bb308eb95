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
//!
//! The resources are compared in `resources`, values and what they refer
//! to in `values`; `render` prints a diff for people or as JSON, `markdown`
//! for a pull request.

mod markdown;
mod render;
mod resources;
pub mod stacks;
mod values;

use std::collections::BTreeSet;

use indexmap::IndexMap;

use crate::cfn::{Expr, Output, Parameter, Template};
use crate::validate::SchemaSet;

pub use markdown::render_markdown;
use render::compact;
pub use render::{render_human, render_json};
use resources::{Resources, critical_impact};
use values::diff_values;

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
    /// What a reviewer must know about deploying the change (a parameter
    /// whose default changed under the same name).
    pub notes: Vec<String>,
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
    let mut parameters = diff_entries(&old.parameters, &new.parameters, Parameter::layout, |p| {
        Some(p.kind.clone())
    });
    for parameter in &mut parameters {
        note_previous_value(parameter);
    }
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
    let mut resources = resources.finish();
    note_in_place_updates(&mut resources, &rollouts);
    note_combined_version_updates(&mut resources);
    note_fixed_name_replacements(&mut resources, old, new);
    note_access_entry_collisions(&mut resources, old, new);

    let outputs = diff_entries(&old.outputs, &new.outputs, Output::layout, |o| {
        o.export.as_ref().map(compact)
    });
    let conditions = diff_entries(&old.conditions, &new.conditions, Expr::clone, |_| None);
    let mappings = diff_entries(&old.mappings, &new.mappings, Expr::clone, |_| None);

    let description = |t: &Template| t.description.clone().map(Expr::String);
    let mut template = value_changes(
        description(old).as_ref(),
        description(new).as_ref(),
        "Description",
    );
    let metadata = |t: &Template| (!t.metadata.is_empty()).then(|| Expr::Map(t.metadata.clone()));
    template.extend(value_changes(
        metadata(old).as_ref(),
        metadata(new).as_ref(),
        "Metadata",
    ));

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

/// A node group changed without a rollout or a replacement is updated in
/// place: EKS applies a managed group's scaling, labels, taints and update
/// settings to the running nodes, and an Auto Scaling group's sizes and
/// tags change no running instance. Said so, so that a reviewer need not
/// infer it from the absence of a rollout.
fn note_in_place_updates(resources: &mut [ResourceDiff], rollouts: &[Rollout]) {
    for resource in resources {
        let group = matches!(
            resource.resource_type.as_str(),
            "AWS::EKS::Nodegroup" | "AWS::AutoScaling::AutoScalingGroup"
        );
        let rolls = rollouts.iter().any(|r| r.resource == resource.logical_id);
        if group
            && resource.kind == ChangeKind::Modified
            && !resource.is_replaced()
            && !rolls
            && !resource.changes.is_empty()
        {
            resource
                .notes
                .push("updated in place: no node is replaced".to_string());
        }
    }
}

/// EKS refuses an update of a managed node group that changes `Version` or
/// `ReleaseVersion` together with anything else of the group ("Version and
/// ReleaseVersion updates cannot be combined with other updates": the
/// `AWS::EKS::Nodegroup` reference, awsdocs/aws-cloudformation-user-guide
/// #1181, and aws/containers-roadmap #1258), its launch template's version
/// included: the stack update fails and rolls back. Said before the deploy.
fn note_combined_version_updates(resources: &mut [ResourceDiff]) {
    const VERSIONS: &[&str] = &["Version", "ReleaseVersion"];
    for resource in resources {
        if resource.resource_type != "AWS::EKS::Nodegroup" || resource.kind != ChangeKind::Modified
        {
            continue;
        }
        let tops: BTreeSet<&str> = resource
            .changes
            .iter()
            .filter(|c| c.section == Section::Properties)
            .map(|c| c.path.split('/').next().unwrap_or(&c.path))
            .chain(
                resource
                    .indirect
                    .iter()
                    .map(|i| i.path.split('/').next().unwrap_or(&i.path)),
            )
            .collect();
        let versions = tops.iter().any(|top| VERSIONS.contains(top));
        let others: Vec<&str> = tops
            .into_iter()
            .filter(|top| !VERSIONS.contains(top))
            .collect();
        if versions && !others.is_empty() {
            resource.notes.push(format!(
                "EKS refuses a Version or ReleaseVersion update combined with other changes of the node group ({}): the update fails and rolls back; deploy the version change and the rest as two updates",
                others.join(", ")
            ));
        }
    }
}

/// The property that names a resource of each type the templates make, when
/// the template gives one.
const NAME_PROPERTIES: &[(&str, &str)] = &[
    ("AWS::AutoScaling::AutoScalingGroup", "AutoScalingGroupName"),
    ("AWS::EC2::LaunchTemplate", "LaunchTemplateName"),
    ("AWS::EC2::SecurityGroup", "GroupName"),
    ("AWS::EKS::Nodegroup", "NodegroupName"),
    ("AWS::IAM::InstanceProfile", "InstanceProfileName"),
    ("AWS::IAM::Role", "RoleName"),
    ("AWS::Lambda::Function", "FunctionName"),
];

/// The property that names a resource of `kind`, if eksynth writes one.
fn name_property(kind: &str) -> Option<&'static str> {
    NAME_PROPERTIES
        .iter()
        .find(|(named, _)| *named == kind)
        .map(|(_, property)| *property)
}

/// CloudFormation replaces no resource whose name the template fixes ("You
/// can't perform an update that causes a custom-named resource to be
/// replaced. If you must replace the resource, specify a new name": the
/// CloudFormation User Guide, "Name type"); the update fails and rolls
/// back. eksynth names every managed node group (`nodegroupName`, by
/// default the group's name), so any create-only change of one (subnets,
/// capacity type, instance types, AMI type) meets this. Said before the
/// deploy, with the way through: a new name in the same change.
fn note_fixed_name_replacements(resources: &mut [ResourceDiff], old: &Template, new: &Template) {
    for resource in resources {
        if resource.kind != ChangeKind::Modified || !resource.is_replaced() {
            continue;
        }
        let Some(property) = name_property(&resource.resource_type) else {
            continue;
        };
        let name = |template: &Template| {
            template
                .resources
                .get(&resource.logical_id)
                .and_then(|r| r.properties.get(property))
                .cloned()
        };
        let (Some(before), Some(after)) = (name(old), name(new)) else {
            continue;
        };
        if before != after {
            continue;
        }
        let how = if resource.resource_type == "AWS::EKS::Nodegroup" {
            " (the group's `nodegroupName`)"
        } else {
            ""
        };
        resource.notes.push(format!(
            "the update fails and rolls back: CloudFormation replaces no resource whose name the template fixes, and {property} stays {}; give it a new name{how} in the same change, and the new one is created before the old one is deleted",
            compact(&after)
        ));
    }
}

/// EKS keeps one access entry per principal, and CloudFormation creates a
/// resource the update adds before it deletes one the update removes. So
/// when the access of an existing role (a principal no resource of the
/// stack makes) moves to a new logical ID within the stack:
///
/// - a new `AWS::EKS::AccessEntry` cannot be created while the old entry
///   stands: the update fails and rolls back, access untouched;
/// - a new `Custom::NodeAccessEntry` (shared access entries) takes the
///   entry that stands, and the old resource's deletion then decides: an
///   old `Custom::NodeAccessEntry` only gives up its ownership, an old
///   `AWS::EKS::AccessEntry` deletes the entry (the role's nodes lose
///   access) unless its `DeletionPolicy` is `Retain`.
///
/// Said before the deploy, with the way through.
fn note_access_entry_collisions(resources: &mut [ResourceDiff], old: &Template, new: &Template) {
    const KINDS: [&str; 2] = ["AWS::EKS::AccessEntry", "Custom::NodeAccessEntry"];
    let mut notes: Vec<(String, bool, String)> = Vec::new();
    for resource in resources.iter() {
        if !matches!(
            resource.kind,
            ChangeKind::Added | ChangeKind::Renamed { .. }
        ) {
            continue;
        }
        let Some(added) = new
            .resources
            .get(&resource.logical_id)
            .filter(|r| KINDS.contains(&r.kind.as_str()))
        else {
            continue;
        };
        let Some(principal) = added.properties.get("PrincipalArn") else {
            continue;
        };
        let made_here = principal
            .references()
            .iter()
            .any(|(target, _)| new.resources.contains_key(*target));
        let same = |other: &crate::cfn::Resource| {
            ["PrincipalArn", "ClusterName"]
                .iter()
                .all(|key| other.properties.get(*key) == added.properties.get(*key))
        };
        let gone = old.resources.iter().find(|(id, other)| {
            *id != &resource.logical_id
                && KINDS.contains(&other.kind.as_str())
                && !new.resources.contains_key(*id)
                && same(other)
        });
        let (Some((gone, before)), false) = (gone, made_here) else {
            continue;
        };
        let id = &resource.logical_id;
        let role = plain(principal);
        let cluster = added
            .properties
            .get("ClusterName")
            .map(plain)
            .unwrap_or_default();
        if added.kind == KINDS[0] {
            let note = format!(
                "the update fails and rolls back: EKS keeps one access entry per principal, and CloudFormation creates {id} before it deletes {gone}, whose entry for {role} still stands; delete that entry by hand just before the deploy (`aws eks delete-access-entry --cluster-name {cluster} --principal-arn ARN`): the role's nodes cannot authenticate until the deploy creates it again"
            );
            notes.push((id.clone(), false, note));
            notes.push((gone.clone(), false, String::new()));
        } else if before.kind == KINDS[1] {
            let note = format!("the role's entry stays: {id} owns it from this update on");
            notes.push((gone.clone(), false, note));
        } else if before.deletion_policy.as_deref() == Some("Retain") {
            let note = format!(
                "the role's entry stays (DeletionPolicy Retain), and {id} shares it from this update on"
            );
            notes.push((gone.clone(), false, note));
        } else {
            let note = format!(
                "{id} takes the role's entry, then CloudFormation deletes {gone} and the entry with it: the role's nodes lose their access; first deploy the old blueprint with an override that sets `DeletionPolicy` of {gone} to `Retain`, then this change"
            );
            notes.push((gone.clone(), true, note));
        }
    }
    for (id, critical, note) in notes {
        for resource in resources.iter_mut() {
            let removed_or_added = matches!(
                resource.kind,
                ChangeKind::Added | ChangeKind::Removed | ChangeKind::Renamed { .. }
            );
            if resource.logical_id != id || !removed_or_added {
                continue;
            }
            resource.critical = critical;
            if !note.is_empty() {
                resource.notes.push(note.clone());
            }
        }
    }
}

/// A value as a person would type it: a string, or a `Fn::Sub` pattern, as
/// is; anything else as compact JSON.
fn plain(value: &Expr) -> String {
    match value {
        Expr::String(text) => text.clone(),
        Expr::Sub {
            template,
            variables,
        } if variables.is_empty() => template.clone(),
        _ => compact(value),
    }
}

/// A parameter that keeps its name but changes its default: on an existing
/// stack, `aws cloudformation deploy` sends `UsePreviousValue` for every
/// parameter the stack already has and the command line does not override
/// (aws-cli `awscli/customizations/cloudformation/deploy.py`,
/// `merge_parameters`), so the new default is not used unless it is given.
fn note_previous_value(parameter: &mut EntryDiff) {
    let Some(default) = parameter
        .changes
        .iter()
        .find(|c| c.path == "Default")
        .and_then(|c| c.new.as_ref())
    else {
        return;
    };
    let value = match default {
        Expr::String(text) => text.clone(),
        other => compact(other),
    };
    parameter.notes.push(format!(
        "`aws cloudformation deploy` keeps the previous value of {name} on an existing stack; \
         the new default applies only with `--parameter-overrides {name}={value}`",
        name = parameter.name
    ));
}

/// The changed values between two values, with paths below `root` (empty
/// for none).
fn value_changes(old: Option<&Expr>, new: Option<&Expr>, root: &str) -> Vec<Change> {
    let mut path = Vec::new();
    if !root.is_empty() {
        path.push(root.to_string());
    }
    let mut leaves = Vec::new();
    diff_values(old, new, &mut path, &mut leaves);
    leaves
        .into_iter()
        .map(|leaf| Change {
            path: leaf.path.join("/"),
            old: leaf.old.cloned(),
            new: leaf.new.cloned(),
        })
        .collect()
}

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
            (Some(o), Some(n)) => (
                EntryKind::Modified,
                value_changes(Some(&layout(o)), Some(&layout(n)), ""),
                detail(n),
            ),
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
            notes: Vec::new(),
        });
    }
    entries
}
