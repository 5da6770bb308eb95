//! A managed group's `launchTemplate`: a launch template made elsewhere,
//! which the node group uses instead of one eksynth would write. The group
//! then takes only the fields EKS reads from the node group itself; every
//! field that eksynth would write into its own launch template is refused
//! at the line that sets it, and a note says which of eksynth's guarantees
//! it can no longer check.

use super::group_fields::GROUP_FIELDS;
use super::read::{Opt, first_column, missing};
use super::sources::decode_source;
use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::field::{Field, Ty};
use crate::blueprint::{Ami, ExistingLaunchTemplate, Source};
use crate::syntax::{Node, Value};

/// The note's finding ID.
pub(in crate::blueprint) const UNCHECKED: &str = "I5031";

pub(in crate::blueprint) const LAUNCH_TEMPLATE_FIELDS: &[Field] = &[
    Field::new("id", Ty::Source, "").required().long(
        "the launch template's ID (`lt-…`), `{parameter: Name}` or `{import: \
            ExportName}`",
    ),
    Field::new("version", Ty::Source, "")
        .default("the launch template's default version")
        .long(
            "the version number (`3`, or `\"3\"`), `{parameter: Name}` or `{import: \
        ExportName}`; EKS takes a number, not `$Latest` or `$Default`",
        ),
];

/// The node group fields a group with `launchTemplate` keeps: what EKS
/// reads from the node group itself (`AWS::EKS::Nodegroup`), and the
/// group's identity. Any other field would go into eksynth's own launch
/// template and is refused, so a field added later is refused until it is
/// known to live outside the launch template.
const KEPT: &[&str] = &[
    "name",
    "amiFamily",
    "ami",
    "kubernetesVersion",
    "fips",
    "instanceType",
    "instanceTypes",
    "minSize",
    "maxSize",
    "desiredCapacity",
    "subnets",
    "labels",
    "taints",
    "tags",
    "iam",
    "clusterAutoscaler",
    "perAz",
    "capacityType",
    "updateConfig",
    "forceUpdateEnabled",
    "releaseVersion",
    "amiType",
    "nodegroupName",
    "nodeRepair",
    "launchTemplate",
];

/// `launchTemplate: {id, version}`, located at its key `at`.
pub(super) fn decode_launch_template(
    d: &mut Decoder,
    node: &Node,
    at: crate::source::Span,
) -> Opt<ExistingLaunchTemplate> {
    let mut f = d.fields("launchTemplate", node, LAUNCH_TEMPLATE_FIELDS)?;
    let id = f
        .get("id")
        .and_then(|n| decode_source(d, "launchTemplate.id", n))
        .filter(|id| match &id.value {
            Source::Literal(text) if !crate::blueprint::rules::is_ec2_id("lt", text) => {
                d.error(id.span, format!("`{text}` is not a launch template ID"))
                    .help = Some("launch template IDs look like `lt-0123456789abcdef0`".into());
                false
            }
            _ => true,
        });
    let version = f.get("version").and_then(|n| decode_version(d, n));
    f.finish(d, "`launchTemplate`");
    let Some(id) = id else {
        if !f.given("id") {
            missing(
                d,
                first_column(node.span),
                "id",
                "`launchTemplate`",
                "the launch template's ID, e.g. `id: lt-0123456789abcdef0`",
            );
        }
        return None;
    };
    if f.given("version") && version.is_none() {
        return None;
    }
    Some(Located::new(ExistingLaunchTemplate { id, version }, at))
}

/// A version number, written as a number or a string of digits, or a
/// value source.
fn decode_version(d: &mut Decoder, node: &Node) -> Option<Located<Source>> {
    let field = "launchTemplate.version";
    let version = match node.value {
        Value::Int(_) => d
            .integer(field, node, 1, i64::MAX)
            .map(|v| Located::new(Source::Literal(v.value.to_string()), v.span))?,
        _ => decode_source(d, field, node)?,
    };
    if let Source::Literal(text) = &version.value
        && (text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) || text.starts_with('0'))
    {
        let message = format!("`{field}` `{text}` is not a version number");
        d.error(version.span, message).help = Some(
            "EKS takes a launch template version by its number (`3`), not `$Latest` or `$Default`; leave it out for the default version".into(),
        );
        return None;
    }
    Some(version)
}

/// A group on an existing launch template: the fields that would need
/// eksynth's own are refused, a custom image too (EKS picks the image by
/// the node group's AMI type, which a launch template's image would
/// forbid), and a note says what eksynth no longer checks.
/// `written` is every field the group takes, with where it is written.
pub(super) fn check_existing_launch_template(
    d: &mut Decoder,
    template: &Opt<ExistingLaunchTemplate>,
    written: &[(&'static str, crate::source::Span)],
    ami: &Opt<Ami>,
    is_managed: bool,
) -> Option<ExistingLaunchTemplate> {
    let template = template.as_ref()?;
    if !is_managed {
        // The kind of group is reported by its own stage.
        return None;
    }
    let needs_own = |field: &str| {
        !KEPT.contains(&field)
            && GROUP_FIELDS
                .iter()
                .any(|f| f.name == field && f.kind != crate::blueprint::field::Kind::SelfManaged)
    };
    for (field, at) in written.iter().filter(|(field, _)| needs_own(field)) {
        let message = format!(
            "`{field}` goes into eksynth's own launch template, which `launchTemplate` replaces"
        );
        d.error(*at, message).help = Some(format!(
            "set it in the existing launch template (line {}), or remove `launchTemplate` to let eksynth write one",
            template.span.line
        ));
    }
    if let Some(ami) = ami.as_ref().filter(|a| a.value != Ami::Recommended) {
        d.error(ami.span, "a custom `ami` is refused with `launchTemplate`")
            .help = Some(
            "the node group picks the EKS-optimized image by its AMI type; a custom image would be the launch template's `ImageId`, whose bootstrap eksynth would not write".into(),
        );
    }
    let note = d.note(
        template.span,
        "node group on an existing launch template: eksynth cannot check its IMDS settings (tokens required, hop limit 1) or that its volumes are encrypted",
    );
    note.code = Some(UNCHECKED);
    note.help = Some(
        "the launch template must name no image, subnet or instance profile (EKS refuses them); `eksynth validate` that template's own stack to check it".into(),
    );
    Some(template.value.clone())
}
