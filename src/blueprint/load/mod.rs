//! Loading a blueprint: the syntax tree is decoded field by field, defaults
//! are merged into each node group, and every rule is checked. All errors of
//! a file are collected in one run.
//!
//! This module reads the document's top level and runs the sections, each
//! decoded in a module of its own: `cluster` (with `access` and the values
//! in `sources`), the node groups (`node_group`, their sections in
//! `group_sections`, `scaling`, `iam`, `instances`, `networking`,
//! `launch_options`, `storage`, `kubelet`, ..., the rules across sections
//! in the stages that `group_rules` runs), `stacks` and `suppressions`.
//! Sections lie below the stages that combine them, and the readers they
//! share are in `read`, so no file here imports one that imports it back.

mod access;
mod ami;
mod asg_settings;
mod cluster;
mod cluster_dns;
mod existing_launch_template;
mod families;
mod group_fields;
mod group_instances;
mod group_rules;
mod group_sections;
mod group_stages;
mod iam;
mod instances;
mod kubelet;
mod launch_options;
mod load_balancers;
mod networking;
mod node_config;
mod node_group;
mod node_repair;
mod placement;
mod raw;
mod read;
mod scaling;
mod security;
mod security_group_rules;
mod sources;
mod stacks;
mod storage;
mod suppressions;
mod warm_pool;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::blueprint::decode::{Decoder, Fields, Located};
use crate::blueprint::field::{Field, Ty};
use crate::blueprint::limits;
use crate::blueprint::*;
use crate::diagnostic::Diagnostic;
use crate::source::{SourceFile, Span};
use crate::syntax::Node;

use cluster::decode_cluster;
use group_rules::{expand_per_az, resolve_group};
use node_group::{GroupSpec, check_group_name, decode_group_spec};
use read::{first_column, missing};
use sources::check_parameters;
use stacks::{Placement, decode_main_stack, decode_placement, plan_stacks};
use suppressions::decode_suppressions;

// The field tables, for the JSON Schema and the field reference.
pub(super) use access::PROVIDER_FIELDS;
pub(super) use ami::AMI_FIELDS;
pub(super) use asg_settings::{HOOK_FIELDS, MAINTENANCE_FIELDS};
pub(super) use cluster::CLUSTER_FIELDS;
pub(super) use existing_launch_template::LAUNCH_TEMPLATE_FIELDS;
pub(super) use group_fields::{CLUSTER_AUTOSCALER_FIELDS, GROUP_FIELDS};
pub(super) use group_sections::{EFS_FIELDS, IMDS_FIELDS, TAINT_FIELDS};
pub(super) use iam::{IAM_FIELDS, STATEMENT_FIELDS, TOP_IAM_FIELDS};
pub(super) use instances::{
    CAPACITY_RESERVATION_FIELDS, EFA_FIELDS, INSTANCE_TYPE_FIELDS, RANGE_FIELDS,
    REQUIREMENTS_FIELDS,
};
pub(super) use kubelet::{GENERATED as KUBELET_GENERATED, KUBELET_FIELDS};
pub(super) use launch_options::CPU_OPTIONS_FIELDS;
pub(super) use networking::SSH_FIELDS;
pub(super) use node_repair::{NODE_REPAIR_FIELDS, REPAIR_OVERRIDE_FIELDS};
pub(super) use placement::PLACEMENT_FIELDS;
pub(super) use scaling::{
    DISTRIBUTION_FIELDS, LIFECYCLE_FIELDS, UPDATE_CONFIG_FIELDS, UPDATE_FIELDS,
};
pub(super) use security_group_rules::SECURITY_GROUP_RULE_FIELDS;
pub(super) use sources::SOURCE_FIELDS;
pub(super) use storage::{DATA_VOLUME_FIELDS, VOLUME_FIELDS};
pub(super) use suppressions::SUPPRESSION_FIELDS;
pub(super) use warm_pool::WARM_POOL_FIELDS;

/// A loaded blueprint and the warnings found on the way.
#[derive(Debug)]
pub struct Loaded {
    pub blueprint: Blueprint,
    pub warnings: Vec<Diagnostic>,
    /// Every file read, indexed by `Span::file`.
    pub files: Vec<Arc<SourceFile>>,
}

/// Loads and checks a blueprint. On failure, every diagnostic found is
/// returned (errors and warnings).
pub fn load(file: &Arc<SourceFile>) -> Result<Loaded, Vec<Diagnostic>> {
    load_with(file, &[])
}

/// Loads a blueprint with its bases (`extends`) and `--set` overrides.
pub fn load_with(
    file: &Arc<SourceFile>,
    overrides: &[(String, String)],
) -> Result<Loaded, Vec<Diagnostic>> {
    let composed = crate::blueprint::compose::compose(file, overrides)?;
    let mut decoder = Decoder::new(composed.files);
    let blueprint = decode_blueprint(&mut decoder, &composed.root);
    if blueprint.is_some() {
        security::check(&mut decoder, &composed.root);
    }
    let mut diagnostics = decoder.diagnostics;
    // Every group is checked with `defaults` merged in, so a mistake in
    // `defaults` is found once per group; it is one mistake, reported once.
    let mut seen = HashSet::new();
    diagnostics.retain(|d| seen.insert((d.span, d.message.clone())));
    diagnostics.sort_by_key(|d| d.span.map(|s| (s.file, s.line, s.column)));
    match blueprint {
        Some(blueprint) if !diagnostics.iter().any(Diagnostic::is_error) => Ok(Loaded {
            blueprint,
            warnings: diagnostics,
            files: decoder.files,
        }),
        _ => Err(diagnostics),
    }
}

pub(super) const TOP_FIELDS: &[Field] = &[
    Field::new(
        "extends",
        Ty::STRING,
        "A preset name, or a base blueprint's path relative to this one",
    ),
    Field::new("apiVersion", Ty::Const("eksynth.io/v1"), "")
        .long("the version of the format")
        .required(),
    Field::new("kind", Ty::Const("NodeBlueprint"), "")
        .long("the kind of document")
        .required(),
    Field::new("description", Ty::STRING, "The template's description"),
    Field::new(
        "cluster",
        Ty::Object("cluster"),
        "The cluster the nodes join",
    )
    .required_when("unless the blueprint `extends` a base that has it"),
    Field::new(
        "defaults",
        Ty::Object("defaults"),
        "Node group fields shared by every group",
    ),
    Field::new(
        "nodeGroups",
        Ty::list(&Ty::Object("nodeGroup")),
        "Self-managed node groups",
    ),
    Field::new(
        "managedNodeGroups",
        Ty::list(&Ty::Object("nodeGroup")),
        "Managed node groups",
    )
    .long(
        "Managed node groups (`AWS::EKS::Nodegroup`); a blueprint has at least \
        one group, in either list",
    ),
    Field::new(
        "suppressions",
        Ty::list(&Ty::Object("suppression")),
        "Validation findings accepted, with a reason",
    ),
    Field::new(
        "overrides",
        Ty::list(&Ty::Object("override")),
        "Changes to generated resources, applied last: each sets a `value` at a \
        `path` of a resource, or deletes it",
    ),
    Field::new(
        "rules",
        Ty::STRINGS,
        "CloudFormation Guard rule files, or directories of them, that every \
        template must pass; paths relative to this blueprint's folder",
    )
    .long(
        "CloudFormation Guard rule files (`.guard`), or directories whose `.guard` \
        files (subdirectories' included) are read, that every template of the \
        blueprint must pass, besides those of `--rules`. Each path is taken from \
        the folder of the blueprint that writes it; a base's rules (`extends`) \
        are kept and this blueprint's added after them. A rule that fails is a \
        finding `G:` and the rule's name",
    ),
    Field::new(
        "stack",
        Ty::pattern("^[A-Za-z][-A-Za-z0-9]*$", Some(128)),
        "The main stack's name, which names its template file (default: the \
        blueprint file's name); not inherited from a base",
    ),
    Field::new(
        "stacks",
        Ty::Custom {
            schema: stacks::stacks_schema,
            reads: "`perGroup`, or a mapping of stack names to lists of node group names",
        },
        "Node groups in stacks of their own: `perGroup`, or stack names mapped to \
        the node groups each holds",
    ),
    Field::new(
        "iam",
        Ty::Object("blueprintIam"),
        "The permissions boundary and path of every role the stack creates, the \
        aws-auth provider's included",
    ),
    Field::new(
        "tags",
        Ty::StringMap,
        "Tags of every resource the stacks create that takes tags",
    )
    .long(
        "tags of every resource the stacks create that takes tags, the ones the \
        groups share included (the node security group, the aws-auth provider's \
        role, function and log group and its access entry); each group takes them \
        as if written in `defaults.tags`, which, and a group's own `tags`, win per \
        key. Keys and values as a group's `tags`, and with the aws-auth provider, \
        in IAM's characters; `kubernetes.io/cluster/<cluster>` is refused. See \
        [Tags](../guide/tags.md)",
    ),
];

/// The blueprint's top level: its header, then each section in the order
/// their findings are reported, then the node groups made whole and the
/// checks across all of them.
fn decode_blueprint(d: &mut Decoder, root: &Node) -> Option<Blueprint> {
    let mut top = d.fields("blueprint", root, TOP_FIELDS)?;
    if !check_header(d, root, &mut top) {
        // Not a blueprint of this version: its other fields mean nothing here.
        return None;
    }
    let misspelt = top.finish(d, "the blueprint");
    let description = top
        .get("description")
        .and_then(|n| d.string("description", n))
        .map(|description| {
            limits::check_description(d, &description);
            description.value
        });
    let cluster = decode_cluster_section(d, root, &mut top, &misspelt);
    let top_iam = top
        .get("iam")
        .map(|node| iam::decode_top_iam(d, node))
        .unwrap_or_default();
    let mut defaults = top
        .get("defaults")
        .map(|node| decode_group_spec(d, node, "defaults"))
        .unwrap_or_default();
    let tags = decode_top_tags(d, &mut top, cluster.as_ref());
    // Every group takes the blueprint's tags under those of `defaults`.
    defaults.tags = node_group::merge_pairs(&tags, &defaults.tags);
    let self_managed = top.get("nodeGroups").map(|node| (node, false));
    let managed = top.get("managedNodeGroups").map(|node| (node, true));
    if self_managed.is_none() && managed.is_none() && !misspelt.contains(&"nodeGroups") {
        missing(
            d,
            first_column(root.span),
            "nodeGroups",
            "the blueprint",
            "a list of node groups (`nodeGroups` for self-managed, `managedNodeGroups` for managed ones)",
        );
    }
    let suppressions = top
        .get("suppressions")
        .map(|node| decode_suppressions(d, node))
        .unwrap_or_default();
    let overrides = top
        .get("overrides")
        .map(|node| super::overrides::decode(d, node))
        .unwrap_or_default();
    let rules = top
        .get("rules")
        .and_then(|node| d.string_list("rules", node))
        .map(unique_rules)
        .unwrap_or_default();
    let groups_at = top
        .key_span("nodeGroups")
        .or_else(|| top.key_span("managedNodeGroups"))
        .unwrap_or_else(|| first_column(root.span));
    let main = decode_main_stack(d, top.get("stack"), groups_at);
    let placement = top
        .get("stacks")
        .map(|node| decode_placement(d, node))
        .unwrap_or(Placement::Single);
    let specs = decode_group_lists(d, self_managed, managed);
    check_cluster_values(d, &mut top, &specs, &defaults);
    let cluster = cluster?;
    let entries: Vec<Located<String>> = specs
        .iter()
        .filter_map(|(_, spec, _)| spec.name.clone())
        .collect();
    let mut stacks = plan_stacks(d, main, &placement, &entries);
    let groups = resolve_groups(d, &cluster, specs, &defaults, &top_iam, &stacks);
    check_windows_only(d, &groups);
    check_shared_node_names(d, &groups);
    let iam = RoleDefaults {
        permissions_boundary: top_iam.permissions_boundary,
        role_path: top_iam.role_path.map(|p| p.value),
    };
    check_parameters(d, &cluster, &iam, &groups);
    if let Some(AwsAuthProvider::Inline { .. }) = cluster.node_access.needed_provider(&groups) {
        tags::check_iam_text(
            d,
            &tags,
            "the aws-auth provider's role, function and log group",
        );
    }
    Some(Blueprint {
        description,
        cluster,
        node_groups: groups,
        suppressions,
        iam,
        overrides,
        rules,
        stacks: std::mem::take(&mut stacks.specs),
        tags: tags
            .into_iter()
            .map(|(key, value)| (key.value, value.value))
            .collect(),
    })
}

/// The top-level `tags`: each within AWS's lengths, and none with a key
/// eksynth writes on the resources the groups share.
fn decode_top_tags(
    d: &mut Decoder,
    top: &mut Fields<'_>,
    cluster: Option<&Cluster>,
) -> Vec<(Located<String>, Located<String>)> {
    let Some(node) = top.get("tags") else {
        return Vec::new();
    };
    let tags = d.string_map("tags", node);
    for (key, value) in &tags {
        limits::check_tag(d, key, value);
    }
    if let Some(cluster) = cluster {
        tags::check_blueprint(d, &tags, &cluster.name.value);
    }
    tags
}

/// The rule paths, each once: the same path written twice, in the
/// same file, is one rule file (the policy also reads each file once,
/// however it is named).
fn unique_rules(paths: Vec<Located<String>>) -> Vec<Located<String>> {
    let mut seen = HashSet::new();
    paths
        .into_iter()
        .filter(|path| seen.insert((path.span.file, path.value.clone())))
        .collect()
}

/// The `cluster` section, which every blueprint needs (unless its key is
/// already reported as misspelt).
fn decode_cluster_section(
    d: &mut Decoder,
    root: &Node,
    top: &mut Fields<'_>,
    misspelt: &[&str],
) -> Option<Cluster> {
    match top.get("cluster") {
        Some(node) => {
            let at = top.key_span("cluster").unwrap_or(node.span);
            decode_cluster(d, node, at)
        }
        None => {
            if !misspelt.contains(&"cluster") {
                missing(
                    d,
                    first_column(root.span),
                    "cluster",
                    "the blueprint",
                    "a `cluster` section with the cluster's name, version and endpoint",
                );
            }
            None
        }
    }
}

/// Each group of `nodeGroups` and then of `managedNodeGroups` as written,
/// with whether it is managed; a written list with no group is an error.
fn decode_group_lists(
    d: &mut Decoder,
    self_managed: Option<(&Node, bool)>,
    managed: Option<(&Node, bool)>,
) -> Vec<(Span, GroupSpec, bool)> {
    let mut specs: Vec<(Span, GroupSpec, bool)> = Vec::new();
    for (node, is_managed) in self_managed.into_iter().chain(managed) {
        let field = if is_managed {
            "managedNodeGroups"
        } else {
            "nodeGroups"
        };
        let items = d.list(field, node);
        let context = if is_managed {
            "managed node group"
        } else {
            "node group"
        };
        specs.extend(
            items
                .iter()
                .map(|item| (item.span, decode_group_spec(d, item, context), is_managed)),
        );
    }
    if specs.is_empty()
        && let Some((node, _)) = self_managed.or(managed)
        && node.as_seq().is_some()
    {
        d.error(node.span, "the blueprint has no node group").help =
            Some("add at least one node group".into());
    }
    specs
}

/// The cluster values only some groups need (the bootstrap values of
/// groups that bootstrap themselves, the shared security group, SSH),
/// checked against what the groups, with their defaults, ask for.
fn check_cluster_values(
    d: &mut Decoder,
    top: &mut Fields<'_>,
    specs: &[(Span, GroupSpec, bool)],
    defaults: &GroupSpec,
) {
    if let Some(node) = top.get("cluster") {
        let (mut shared_security_group, mut ssh, mut bootstraps) = (false, false, false);
        for (_, spec, is_managed) in specs {
            let merged = spec.clone().over(defaults);
            bootstraps |=
                !is_managed || merged.ami.as_ref().is_some_and(|ami| ami.value.is_custom());
            shared_security_group |= merged
                .node_security_group
                .is_none_or(|n| n.value == NodeSecurityGroup::Shared);
            ssh |= merged.ssh.is_some() || merged.security_group_rules.is_some();
        }
        let at = top.key_span("cluster").unwrap_or(node.span);
        cluster::check_bootstrap_values(d, node, at, bootstraps);
        cluster::check_network_values(d, node, at, shared_security_group, ssh);
    }
}

/// Every group made whole, with its defaults, and placed in its stack;
/// `perAz` groups expanded. A group with an error, or whose names collide
/// with an earlier group's, is left out.
fn resolve_groups(
    d: &mut Decoder,
    cluster: &Cluster,
    specs: Vec<(Span, GroupSpec, bool)>,
    defaults: &GroupSpec,
    top_iam: &iam::TopIam,
    stacks: &stacks::Stacks,
) -> Vec<NodeGroup> {
    let mut groups = Vec::new();
    let mut taken = TakenNames::default();
    for (span, spec, is_managed) in specs {
        let Some(name) = spec.name.clone() else {
            if spec.reported.contains(&"name") {
                continue;
            }
            d.error(span, "node group has no `name`").help =
                Some("every node group needs a `name`, e.g. `name: general`".into());
            continue;
        };
        let stack = stacks.index_of(&name.value);
        let Some(logical_id) = check_group_name(d, &name) else {
            continue;
        };
        let Some(group) = resolve_group(
            d,
            cluster,
            span,
            spec.over(defaults),
            logical_id,
            is_managed,
            top_iam,
        ) else {
            continue;
        };
        if !taken.admit_role(d, &group) {
            continue;
        }
        for mut group in expand_per_az(d, group) {
            group.stack = stack;
            if taken.admit(d, &group) {
                groups.push(group);
            }
        }
    }
    groups
}

/// The names that must be unique across groups, each with the group that
/// took it first and where.
#[derive(Default)]
struct TakenNames {
    names: HashMap<String, Span>,
    ids: HashMap<String, (String, Span)>,
    nodegroup_names: HashMap<String, (String, Span)>,
    role_names: HashMap<String, (String, Span)>,
    asg_names: HashMap<String, (String, Span)>,
}

/// Records `group` as the taker of `key` unless an earlier group took it:
/// then that group's name and where it took it.
fn claim(
    taken: &mut HashMap<String, (String, Span)>,
    key: &str,
    group: &str,
    at: Span,
) -> Option<(String, Span)> {
    if let Some(first) = taken.get(key) {
        return Some(first.clone());
    }
    taken.insert(key.to_string(), (group.to_string(), at));
    None
}

impl TakenNames {
    /// A created IAM role's name is unique in an account; false, with an
    /// error, when an earlier group creates the same role.
    fn admit_role(&mut self, d: &mut Decoder, group: &NodeGroup) -> bool {
        let Some(named) = &group.iam.role_name else {
            return true;
        };
        let name = &named.value;
        let Some((other, first)) = claim(&mut self.role_names, name, &group.name.value, named.span)
        else {
            return true;
        };
        let message = format!(
            "node groups `{}` and `{other}` both create the IAM role `{name}`",
            group.name.value
        );
        d.error(named.span, message).help = Some(format!(
            "`{other}` is at line {}; IAM role names are unique in an account",
            first.line
        ));
        false
    }

    /// A group's name, logical ID, Auto Scaling group name and EKS node
    /// group name are each unique; false, with an error at the first that
    /// collides, when an earlier group took one of them.
    fn admit(&mut self, d: &mut Decoder, group: &NodeGroup) -> bool {
        let name = &group.name;
        if let Some(first) = self.names.get(&name.value) {
            let message = format!("node group `{}` is defined twice", name.value);
            let help = format!(
                "the first definition is at line {}; node group names must be unique",
                first.line
            );
            d.error(name.span, message).help = Some(help);
            return false;
        }
        self.names.insert(name.value.clone(), name.span);
        if let Some((other, first)) =
            claim(&mut self.ids, &group.logical_id, &name.value, name.span)
        {
            let message = format!(
                "node groups `{}` and `{other}` make the same logical ID `{}`",
                name.value, group.logical_id
            );
            let help = format!(
                "`{other}` is at line {}; rename one so that the names differ in more than case or dashes",
                first.line
            );
            d.error(name.span, message).help = Some(help);
            return false;
        }
        if let Some(named) = &group.auto_scaling_group_name
            && let Some((other, first)) =
                claim(&mut self.asg_names, &named.value, &name.value, named.span)
        {
            let message = format!(
                "node groups `{}` and `{other}` both name their Auto Scaling group `{}`",
                name.value, named.value
            );
            d.error(named.span, message).help = Some(format!(
                "`{other}` is at line {}; Auto Scaling group names are unique in a region",
                first.line
            ));
            return false;
        }
        if let Some(managed) = &group.managed
            && let named = &managed.nodegroup_name
            && let Some((other, first)) = claim(
                &mut self.nodegroup_names,
                &named.value,
                &name.value,
                named.span,
            )
        {
            let message = format!(
                "node groups `{}` and `{other}` are both named `{}` in EKS",
                name.value, named.value
            );
            d.error(named.span, message).help = Some(format!(
                "`{other}` is at line {}; EKS node group names are unique in a cluster",
                first.line
            ));
            return false;
        }
        true
    }
}

/// Windows nodes cannot run the cluster's own pods: a blueprint with only
/// Windows groups is warned about.
fn check_windows_only(d: &mut Decoder, groups: &[NodeGroup]) {
    if let Some(first) = groups.first()
        && groups.iter().all(|g| g.ami_family.is_windows())
    {
        d.warning(first.name.span, "the blueprint has only Windows node groups").help = Some(
            "Windows nodes cannot run CoreDNS and other kube-system pods; the cluster needs at least one Linux node group".into(),
        );
    }
}

/// Self-managed groups that share an existing role share its cluster
/// access (one access entry or aws-auth mapping per role), so they must
/// agree on how their nodes are named: by private DNS name, or by instance
/// ID (`nodeConfig.featureGates.InstanceIdNodeName`), which needs another
/// access entry type and username.
fn check_shared_node_names(d: &mut Decoder, groups: &[NodeGroup]) {
    let mut first: HashMap<&str, &NodeGroup> = HashMap::new();
    for group in groups.iter().filter(|g| g.managed.is_none()) {
        let Some(existing) = &group.iam.existing else {
            continue;
        };
        let other = *first.entry(existing.role_name.as_str()).or_insert(group);
        if other.instance_id_node_name() != group.instance_id_node_name() {
            let (gated, plain) = if group.instance_id_node_name() {
                (group, other)
            } else {
                (other, group)
            };
            d.error(
                group.name.span,
                format!(
                    "node groups `{}` and `{}` share the role `{}` but name their nodes differently",
                    gated.name.value, plain.name.value, existing.role_name
                ),
            )
            .help = Some(format!(
                "`{}` sets `nodeConfig.featureGates.InstanceIdNodeName`, whose nodes need an `EC2` access entry; one role has one access entry: give the two groups their own roles, or set the gate on both",
                gated.name.value
            ));
        }
    }
}

/// Checks `apiVersion` and `kind`; false when the file is not a blueprint
/// this version reads.
fn check_header(d: &mut Decoder, root: &Node, top: &mut Fields<'_>) -> bool {
    let mut ok = true;
    for (field, expected) in [("apiVersion", API_VERSION), ("kind", KIND)] {
        match top.get(field) {
            Some(node) => match d.string(field, node) {
                Some(value) if value.value != expected => {
                    let message = format!(
                        "`{field}` is `{}`; this version of eksynth reads `{expected}`",
                        value.value
                    );
                    d.error(value.span, message).help =
                        Some(format!("write `{field}: {expected}`"));
                    ok = false;
                }
                Some(_) => {}
                None => ok = false,
            },
            None => missing(
                d,
                first_column(root.span),
                field,
                "the blueprint",
                &format!("`{field}: {expected}` at the top"),
            ),
        }
    }
    ok
}
