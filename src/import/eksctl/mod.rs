//! `eksynth import eksctl`: an eksctl `ClusterConfig` (`eksctl.io/v1alpha5`)
//! as a blueprint. Every `nodeGroups[]` and `managedNodeGroups[]` entry
//! becomes a group with each field that has an eksynth equivalent; every
//! other key is a warning at that key, never dropped silently.

mod addon_policies;
pub(crate) mod cluster;
mod group_fields;
mod node_group;
pub(crate) mod values;

use std::sync::Arc;

use crate::compile::{CompileError, compile};
use crate::diagnostic::{Diagnostic, Severity};
use crate::import::out::Out;
use crate::source::{SourceFile, Span};
use crate::suggest::closest;
use crate::syntax::{self, Key, Node};

/// The top-level keys of eksctl's `ClusterConfig`.
const TOP_LEVEL: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "upgradePolicy",
    "kubernetesNetworkConfig",
    "autoModeConfig",
    "remoteNetworkConfig",
    "iam",
    "iamIdentityMappings",
    "identityProviders",
    "accessConfig",
    "vpc",
    "addons",
    "addonsConfig",
    "privateCluster",
    "nodeGroups",
    "managedNodeGroups",
    "fargateProfiles",
    "availabilityZones",
    "localZones",
    "cloudWatch",
    "secretsEncryption",
    "gitops",
    "karpenter",
    "outpost",
    "controlPlaneScalingConfig",
    "zonalShiftConfig",
    "kubeAPIServerConfig",
    "kubeSchedulerConfig",
    "kubeControllerManagerConfig",
    "capabilities",
];

/// What an import made: the blueprint's text, the warnings about what it
/// could not carry, and for each node group whether it came over whole.
pub struct Imported {
    pub text: String,
    pub warnings: Vec<Diagnostic>,
    pub groups: Vec<GroupOutcome>,
}

/// One eksctl node group definition and the number of its fields that the
/// blueprint does not carry.
pub struct GroupOutcome {
    pub name: String,
    pub managed: bool,
    pub unmapped: usize,
}

impl Imported {
    /// How many node group definitions came over with no unmapped field.
    pub fn complete_groups(&self) -> usize {
        self.groups.iter().filter(|g| g.unmapped == 0).count()
    }
}

/// A warning, and the node group it is about (by index), if any.
struct Warning {
    diagnostic: Diagnostic,
    group: Option<usize>,
}

/// The state of one import: the eksctl file, the input keys the blueprint's
/// entries come from, and the warnings so far.
pub(super) struct Ctx {
    file: Arc<SourceFile>,
    /// Each origin: the key's span, its path in the eksctl file, and its group.
    origins: Vec<(Span, String, Option<usize>)>,
    warnings: Vec<Warning>,
    errors: Vec<Diagnostic>,
    /// `overrides:` entries for what only an override can carry.
    overrides: Vec<Out>,
    /// The actions ending in `*` that eksctl grants and the blueprint
    /// carries, with their eksctl key: eksynth warns about them (`W5007`),
    /// and the blueprint accepts them with a suppression that names them.
    wildcards: Vec<String>,
}

impl Ctx {
    /// Records `key` (at `path`) as the origin of blueprint entries.
    fn origin(&mut self, key: &Key, path: &str, group: Option<usize>) -> usize {
        self.origin_at(key.span, path, group)
    }

    /// Records the input at `span` (a list item, which has no key).
    fn origin_at(&mut self, span: Span, path: &str, group: Option<usize>) -> usize {
        self.origins.push((span, path.to_string(), group));
        self.origins.len() - 1
    }

    /// A key that has no eksynth equivalent.
    fn unmapped(&mut self, group: Option<usize>, key: &Key, path: &str, help: &str) {
        let diagnostic = Diagnostic::warning(
            &self.file,
            Some(key.span),
            format!("`{path}` is not imported: eksynth has no equivalent"),
        )
        .with_label("not carried into the blueprint")
        .with_help(help);
        self.warnings.push(Warning { diagnostic, group });
    }

    /// A key eksctl does not know either.
    fn unknown(&mut self, group: Option<usize>, key: &Key, path: &str, known: &[&str]) {
        let help = match closest(&key.name, known) {
            Some(best) => format!("did you mean `{best}`?"),
            None => "eksctl's `ClusterConfig` (eksctl.io/v1alpha5) has no such field".into(),
        };
        let diagnostic = Diagnostic::warning(
            &self.file,
            Some(key.span),
            format!("unknown eksctl field `{path}`: not imported"),
        )
        .with_label("unknown field")
        .with_help(help);
        self.warnings.push(Warning { diagnostic, group });
    }

    /// A warning at `span` that is no unmapped field (a value chosen for
    /// the blueprint, for instance).
    pub(super) fn note(&mut self, span: Span, message: String, help: &str) {
        let diagnostic = Diagnostic::warning(&self.file, Some(span), message).with_help(help);
        self.warnings.push(Warning {
            diagnostic,
            group: None,
        });
    }

    fn error(&mut self, span: Option<Span>, message: impl Into<String>, help: &str) {
        self.errors
            .push(Diagnostic::error(&self.file, span, message).with_help(help));
    }
}

/// Imports the eksctl file `file`, with the cluster's values from
/// `cluster` (the output of `aws eks describe-cluster --output json`) when
/// given. Errors are the input's: a file that is no `ClusterConfig`, a
/// describe-cluster output without a cluster, no node group at all.
/// A blueprint message about an imported value, with the value as the
/// eksctl file writes it: the import writes ARNs with `${AWS::Partition}`,
/// which the user never wrote (`arn:aws:iam::...` on `line`).
fn as_written(line: &str, message: &str) -> String {
    let Some((_, value)) = line.split_once(':') else {
        return message.to_string();
    };
    let written = value.trim().trim_matches(|c| c == '"' || c == '\'');
    let rewritten = values::partition_free(written);
    if rewritten == written {
        return message.to_string();
    }
    message.replace(&rewritten, written)
}

pub fn import(
    file: &Arc<SourceFile>,
    cluster: Option<&Arc<SourceFile>>,
) -> Result<Imported, Vec<Diagnostic>> {
    if file.text.trim().is_empty() {
        return Err(vec![
            Diagnostic::error(file, Some(Span::new(1, 1, 0)), "the file is empty").with_help(
                "an eksctl config starts with `apiVersion: eksctl.io/v1alpha5` and `kind: ClusterConfig`",
            ),
        ]);
    }
    let root = syntax::parse(file).map_err(|d| vec![*d])?;
    let described = match cluster {
        Some(json) => Some(cluster::described(json)?),
        None => None,
    };
    let mut ctx = Ctx {
        file: Arc::clone(file),
        origins: Vec::new(),
        warnings: Vec::new(),
        errors: Vec::new(),
        overrides: Vec::new(),
        wildcards: Vec::new(),
    };
    let Some(entries) = root.as_map() else {
        ctx.error(
            Some(root.span),
            format!("expected an eksctl `ClusterConfig` mapping, found {}", root.kind()),
            "an eksctl config starts with `apiVersion: eksctl.io/v1alpha5` and `kind: ClusterConfig`",
        );
        return Err(ctx.errors);
    };
    if !check_kind(&mut ctx, &root, entries) {
        return Err(ctx.errors);
    }

    let mut groups = Vec::new();
    let mut blueprint_groups: [Vec<Out>; 2] = [Vec::new(), Vec::new()];
    let cluster_in = cluster::Input::new(&root, described.as_ref());
    for (managed, section) in [(false, "nodeGroups"), (true, "managedNodeGroups")] {
        let Some((_, node)) = entries.iter().find(|(k, _)| k.name == section) else {
            continue;
        };
        let Some(items) = node.as_seq() else {
            ctx.error(
                Some(node.span),
                format!("`{section}` is {}, not a list of node groups", node.kind()),
                "write each node group as a list item, `- name: ng-1`",
            );
            continue;
        };
        for (index, item) in items.iter().enumerate() {
            let group = groups.len();
            let path = format!("{section}[{index}]");
            match node_group::import(&mut ctx, &cluster_in, item, &path, group, managed) {
                Some((name, out)) => {
                    groups.push(GroupOutcome {
                        name,
                        managed,
                        unmapped: 0,
                    });
                    blueprint_groups[usize::from(managed)].push(out);
                }
                None => {
                    ctx.error(
                        Some(item.span),
                        format!("`{path}` has no `name`"),
                        "every eksctl node group has a `name`",
                    );
                }
            }
        }
    }
    if groups.is_empty() && ctx.errors.is_empty() {
        ctx.error(
            Some(root.span),
            "the eksctl config defines no node group",
            "a blueprint needs at least one entry of `nodeGroups` or `managedNodeGroups`",
        );
    }
    for (key, _) in entries {
        if !TOP_LEVEL.contains(&key.name.as_str()) {
            ctx.unknown(None, key, &key.name, TOP_LEVEL);
        }
    }
    let cluster_out = cluster::import(&mut ctx, &cluster_in, entries, &blueprint_groups);
    if !ctx.errors.is_empty() {
        return Err(ctx.errors);
    }

    let mut blueprint = Out::map();
    blueprint.set("apiVersion", Out::str("eksynth.io/v1"));
    blueprint.set("kind", Out::str("NodeBlueprint"));
    blueprint.set("description", Out::str(&cluster_in.description()));
    blueprint.set("cluster", cluster_out);
    let [self_managed, managed] = blueprint_groups;
    if !self_managed.is_empty() {
        blueprint.set("nodeGroups", Out::seq(self_managed));
    }
    if !managed.is_empty() {
        blueprint.set("managedNodeGroups", Out::seq(managed));
    }
    if !ctx.overrides.is_empty() {
        blueprint.set("overrides", Out::seq(std::mem::take(&mut ctx.overrides)));
    }
    let header = vec![
        format!("Imported from {} by `eksynth import eksctl`.", file.name),
        "IMDS: eksynth's launch templates allow one hop (eksctl's allow two): pods that".into(),
        "use the node role's credentials need `imds: {hopLimit: 2}`.".into(),
    ];
    let text = settle(&mut ctx, &mut blueprint, &header)?;

    let mut outcomes = groups;
    let mut warnings = Vec::new();
    let mut sorted = ctx.warnings;
    sorted.sort_by_key(|w| w.diagnostic.span.map(|s| (s.line, s.column)));
    for warning in sorted {
        if let Some(group) = warning.group
            && let Some(outcome) = outcomes.get_mut(group)
        {
            outcome.unmapped += 1;
        }
        warnings.push(warning.diagnostic);
    }
    Ok(Imported {
        text,
        warnings,
        groups: outcomes,
    })
}

/// An eksctl config says what it is; a file that does not is one error,
/// at the first of the two keys that is wrong or missing.
fn check_kind(ctx: &mut Ctx, root: &Node, entries: &[(Key, Node)]) -> bool {
    for (field, expected) in [
        ("apiVersion", "eksctl.io/v1alpha5"),
        ("kind", "ClusterConfig"),
    ] {
        let help = format!("eksctl configs have `{field}: {expected}`");
        match entries.iter().find(|(k, _)| k.name == field) {
            Some((_, value)) if value.as_str() == Some(expected) => continue,
            Some((_, value)) => ctx.error(
                Some(value.span),
                format!("`{field}` is not `{expected}`: this is no eksctl cluster config"),
                &help,
            ),
            None => ctx.error(
                Some(Span::new(root.span.line, root.span.column, 1)),
                format!("missing `{field}`: this is no eksctl cluster config"),
                &help,
            ),
        }
        return false;
    }
    true
}

/// Judges the blueprint with eksynth's own compile until it is clean: each
/// error or warning about an entry that comes from an eksctl key removes
/// that key's entries and becomes a warning at the key. Returns the text.
fn settle(
    ctx: &mut Ctx,
    blueprint: &mut Out,
    header: &[String],
) -> Result<String, Vec<Diagnostic>> {
    let mut suppressions: Vec<(&str, String)> = Vec::new();
    let mut removed = Vec::new();
    // Each round removes at least one origin, or ends.
    for _ in 0..=ctx.origins.len() + 2 {
        let mut candidate = blueprint.clone();
        if !suppressions.is_empty() {
            let items = suppressions
                .iter()
                .map(|(id, reason)| {
                    let mut entry = Out::map();
                    entry.set("id", Out::str(id));
                    entry.set("reason", Out::str(reason));
                    entry
                })
                .collect();
            candidate.set("suppressions", Out::seq(items));
        }
        let emitted = candidate.emit(header);
        let source = SourceFile::new("imported blueprint", emitted.text.clone());
        let problems: Vec<Diagnostic> = match compile(&source) {
            Ok(compiled) => compiled
                .diagnostics
                .into_iter()
                .filter(|d| d.severity >= Severity::Warning)
                .collect(),
            Err(CompileError::Blueprint(found) | CompileError::Policy(found)) => found
                .into_iter()
                .filter(|d| d.severity >= Severity::Warning)
                .collect(),
            Err(CompileError::Internal(error)) => {
                return Err(vec![Diagnostic::error(
                    &ctx.file,
                    None,
                    format!("the imported blueprint does not compile: {error}"),
                )]);
            }
        };
        if problems.is_empty() {
            return Ok(emitted.text);
        }
        let mut progress = false;
        for problem in &problems {
            let origin = problem
                .span
                .and_then(|span| emitted.origins.get(span.line.saturating_sub(1)).copied())
                .flatten();
            // eksctl's `disableIMDSv1: false` is carried as written: the
            // blueprint allows IMDSv1 and says why its warning is accepted.
            let imdsv1 = origin.filter(|o| {
                problem.code == Some("W5001") && ctx.origins[*o].1.ends_with(".disableIMDSv1")
            });
            // So is Bottlerocket's admin container, which eksctl runs when
            // asked (`enableAdminContainer`) and for SSH (`ssh.allow`).
            let admin = origin.filter(|o| {
                let path = &ctx.origins[*o].1;
                problem.code == Some("W5025")
                    && (path.ends_with(".enableAdminContainer") || path.ends_with(".ssh.allow"))
            });
            if let Some(origin) = admin {
                if !suppressions.iter().any(|(id, _)| *id == "W5025") {
                    suppressions.push((
                        "W5025",
                        format!(
                            "imported from eksctl, whose `{}: true` runs Bottlerocket's admin container",
                            ctx.origins[origin].1
                        ),
                    ));
                    progress = true;
                }
                continue;
            }
            if let Some(origin) = imdsv1 {
                if !suppressions.iter().any(|(id, _)| *id == "W5001") {
                    suppressions.push((
                        "W5001",
                        format!(
                            "imported from eksctl, whose `{}: false` allows IMDSv1",
                            ctx.origins[origin].1
                        ),
                    ));
                    progress = true;
                }
                continue;
            }
            match origin {
                Some(origin) if !removed.contains(&origin) => {
                    removed.push(origin);
                    blueprint.remove_origin(origin);
                    let (span, path, group) = ctx.origins[origin].clone();
                    let message = as_written(ctx.file.line_text(span.line), &problem.message);
                    let diagnostic = Diagnostic::warning(
                        &ctx.file,
                        Some(span),
                        format!("`{path}` is not imported: {message}"),
                    )
                    .with_label("eksynth refuses this value")
                    .with_help(problem.help.as_deref().unwrap_or(
                        "eksynth's blueprint cannot express it as written; set the group's field by hand",
                    ));
                    ctx.warnings.push(Warning { diagnostic, group });
                    progress = true;
                }
                Some(_) => {}
                None if problem.code == Some("W0003")
                    && !suppressions.iter().any(|(id, _)| *id == "W0003") =>
                {
                    suppressions.push((
                        "W0003",
                        "cluster values imported as parameters that only self-managed groups use"
                            .into(),
                    ));
                    progress = true;
                }
                None if problem.code == Some("W5007")
                    && !ctx.wildcards.is_empty()
                    && !suppressions.iter().any(|(id, _)| *id == "W5007") =>
                {
                    suppressions.push((
                        "W5007",
                        format!(
                            "imported from eksctl, whose configuration grants {}",
                            ctx.wildcards.join(", ")
                        ),
                    ));
                    progress = true;
                }
                None => {}
            }
        }
        if !progress {
            let mut errors = vec![Diagnostic::error(
                &ctx.file,
                None,
                "the blueprint made from this file does not compile, for reasons the import cannot trace to a field",
            )];
            errors.extend(problems);
            return Err(errors);
        }
    }
    Err(vec![Diagnostic::error(
        &ctx.file,
        None,
        "the blueprint made from this file does not settle",
    )])
}
