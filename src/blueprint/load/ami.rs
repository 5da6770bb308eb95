//! Where a group's image comes from (`ami`: the EKS-optimized image, a
//! pinned ID, an SSM parameter path or a template parameter), the family an
//! SSM path names, and Bottlerocket's FIPS variant (`fips`).

use super::read::Opt;
use super::sources;
use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::field::{Field, Ty};
use crate::blueprint::*;
use crate::source::Span;
use crate::syntax::{Node, Value};
use crate::upstream::ami_catalogue::public_image_family;

pub(in crate::blueprint) const AMI_FIELDS: &[Field] = &[
    Field::new(
        "ssmParameter",
        Ty::pattern("^(/[A-Za-z0-9._-]+)+$|^[A-Za-z0-9._-]+$", Some(1011)),
        "An SSM parameter holding the AMI ID",
    ),
    Field::new(
        "parameter",
        Ty::pattern("^[A-Za-z0-9]+$", Some(255)),
        "A template parameter of type AWS::EC2::Image::Id",
    ),
    Field::new(
        "default",
        Ty::pattern("^ami-[0-9a-f]{8}([0-9a-f]{9})?$", None),
        "The template parameter's default AMI ID",
    ),
];

/// The first Kubernetes versions with a Bottlerocket FIPS variant, plain
/// (`aws-k8s-1.28-fips`) and NVIDIA (`aws-k8s-1.29-nvidia-fips`), from
/// Bottlerocket's list of FIPS variants.
const FIPS_SINCE: KubernetesVersion = KubernetesVersion {
    major: 1,
    minor: 28,
};
const NVIDIA_FIPS_SINCE: KubernetesVersion = KubernetesVersion {
    major: 1,
    minor: 29,
};

/// `ami`: `recommended`, `ami-…`, `{ssmParameter: /path}` or
/// `{parameter: Name, default: ami-…}`.
pub(super) fn decode_ami(d: &mut Decoder, node: &Node) -> Opt<Ami> {
    if let Value::Map(_) = node.value {
        let mut fields = d.fields("ami", node, AMI_FIELDS)?;
        let ssm = fields
            .get("ssmParameter")
            .and_then(|n| d.string("ami.ssmParameter", n));
        let parameter = fields
            .get("parameter")
            .and_then(|n| d.string("ami.parameter", n));
        let default = fields
            .get("default")
            .and_then(|n| d.string("ami.default", n));
        fields.finish(d, "`ami`");
        return match (ssm, parameter) {
            (Some(path), None) => {
                if let Some(default) = &default {
                    d.error(default.span, "`ami.default` is for `ami.parameter`")
                        .help =
                        Some("the SSM parameter holds the image ID; remove `default`".into());
                }
                check_ssm_path(d, &path).then(|| Located::new(Ami::Ssm(path.value), path.span))
            }
            (None, Some(name)) => {
                let name_ok = sources::check_parameter_name(d, &name);
                let default_ok = default.as_ref().is_none_or(|id| check_image_id(d, id));
                (name_ok && default_ok).then(|| {
                    Located::new(
                        Ami::Parameter {
                            name: name.value,
                            default: default.map(|v| v.value),
                        },
                        name.span,
                    )
                })
            }
            (Some(path), Some(_)) => {
                d.error(path.span, "`ami` has both `ssmParameter` and `parameter`")
                    .help = Some(
                    "an image comes from either an SSM parameter or a template parameter".into(),
                );
                None
            }
            (None, None) if fields.given("ssmParameter") || fields.given("parameter") => None,
            (None, None) => {
                d.error(
                    node.span,
                    "`ami` needs `ssmParameter: /path` or `parameter: Name`",
                )
                .help = Some("or write `recommended` or a pinned `ami-…` ID".into());
                None
            }
        };
    }
    let text = d.string("ami", node)?;
    if text.value == "recommended" {
        return Some(Located::new(Ami::Recommended, text.span));
    }
    if !rules::is_ec2_id("ami", &text.value) {
        let message = format!(
            "`ami` `{}` is neither `recommended` nor an AMI ID",
            text.value
        );
        d.error(text.span, message).help = Some(
            "write `recommended`, a pinned ID like `ami-0123456789abcdef0`, `{ssmParameter: /path}` or `{parameter: Name}`"
                .into(),
        );
        return None;
    }
    Some(Located::new(Ami::Pinned(text.value), text.span))
}

fn check_image_id(d: &mut Decoder, id: &Located<String>) -> bool {
    let ok = rules::is_ec2_id("ami", &id.value);
    if !ok {
        d.error(
            id.span,
            format!("`ami.default` `{}` is not an AMI ID", id.value),
        )
        .help = Some("AMI IDs look like `ami-0123456789abcdef0`".into());
    }
    ok
}

/// SSM parameter names: letters, digits and `.-_`, in a hierarchy under a
/// leading `/` or as one plain name, at most 1011 characters (SSM's
/// `PutParameter` rules).
fn check_ssm_path(d: &mut Decoder, path: &Located<String>) -> bool {
    let text = &path.value;
    let problem = if text.is_empty() {
        Some("is empty")
    } else if text.len() > 1011 {
        Some("is longer than SSM's 1011 characters")
    } else if text.contains('/') && !text.starts_with('/') {
        Some("is a path but does not start with `/`")
    } else if text.ends_with('/') || text.contains("//") {
        Some("has an empty path segment")
    } else if !text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '-' | '_'))
    {
        Some("may hold only letters, digits, `/`, `.`, `-` and `_`")
    } else {
        None
    };
    if let Some(problem) = problem {
        d.error(
            path.span,
            format!("`ami.ssmParameter` `{text}` {problem}"),
        )
        .help = Some(
            "name an SSM parameter holding an AMI ID, e.g. `/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id`"
                .into(),
        );
    }
    problem.is_none()
}

/// The group's AMI family: `amiFamily`, else the family the public SSM path
/// of `ami.ssmParameter` names, else AL2023. A path of another family than
/// the one written is an error at the path.
pub(super) fn resolve_family(
    d: &mut Decoder,
    ami_family: &Opt<AmiFamily>,
    ami: &Opt<Ami>,
) -> AmiFamily {
    let written = ami_family.as_ref();
    let inferred = ami.as_ref().and_then(|ami| match &ami.value {
        Ami::Ssm(path) => public_image_family(path).map(|family| (family, ami.span)),
        _ => None,
    });
    match (written, inferred) {
        (Some(family), Some((from_path, at))) if family.value != from_path => {
            d.error(
                at,
                format!(
                    "`ami.ssmParameter` names a `{}` image but `amiFamily` is `{}`",
                    from_path.name(),
                    family.value.name()
                ),
            )
            .help = Some(format!(
                "remove `amiFamily` (line {}), which follows from the path, or name an image of its family",
                family.span.line
            ));
            family.value
        }
        (Some(family), _) => family.value,
        (None, Some((from_path, _))) => from_path,
        (None, None) => AmiFamily::AmazonLinux2023,
    }
}

/// `fips: true` picks Bottlerocket's FIPS image: only for Bottlerocket on
/// the EKS-optimized image, from the Kubernetes version its FIPS variant
/// exists for.
pub(super) fn check_fips(
    d: &mut Decoder,
    fips: &Opt<bool>,
    ami: &Opt<Ami>,
    family: AmiFamily,
    accelerator: Accelerator,
    version: KubernetesVersion,
) -> bool {
    let Some(fips) = fips.as_ref().filter(|f| f.value) else {
        return false;
    };
    let refuse = |d: &mut Decoder, at: Span, message: String, help: &str| {
        d.error(at, message).help = Some(help.to_string());
    };
    if family != AmiFamily::Bottlerocket {
        refuse(
            d,
            fips.span,
            format!("`fips` is not supported on `{}`", family.name()),
            "EKS publishes FIPS images for Bottlerocket only; use `amiFamily: Bottlerocket` or a custom `ami`",
        );
    } else if let Some(ami) = ami.as_ref().filter(|a| a.value.is_custom()) {
        refuse(
            d,
            fips.span,
            "`fips` chooses the EKS-optimized FIPS image, but `ami` names a custom one".into(),
            &format!(
                "remove `fips`, or `ami` (line {}) to use Bottlerocket's FIPS variant",
                ami.span.line
            ),
        );
    } else {
        let since = if accelerator == Accelerator::Nvidia {
            NVIDIA_FIPS_SINCE
        } else {
            FIPS_SINCE
        };
        if version < since {
            let what = if accelerator == Accelerator::Nvidia {
                "NVIDIA FIPS"
            } else {
                "FIPS"
            };
            refuse(
                d,
                fips.span,
                format!("Bottlerocket has no {what} variant for Kubernetes {version}"),
                &format!("its {what} variants start with Kubernetes {since}"),
            );
        }
    }
    true
}

/// `ami.default` and `amiType` on a group's image: `amiType` names an EKS
/// image and so cannot go with a custom one.
pub(super) fn check_ami_type(
    d: &mut Decoder,
    ami_type: &Opt<String>,
    ami: &Opt<Ami>,
    fips: &Opt<bool>,
) {
    if let (Some(ami_type), Some(ami)) = (ami_type, ami)
        && ami.value.is_custom()
    {
        d.error(
            ami_type.span,
            "`amiType` is set for a group with a custom AMI",
        )
        .help = Some("EKS takes the AMI from the launch template then; remove `amiType`".into());
    }
    if let (Some(ami_type), Some(fips)) = (ami_type, fips)
        && fips.value
        && !ami_type.value.ends_with("_FIPS")
    {
        d.error(
            ami_type.span,
            format!(
                "`amiType` `{}` is not a FIPS image but `fips` is true",
                ami_type.value
            ),
        )
        .help = Some(
            "remove `amiType`: it follows from the family, `fips` and the instance types".into(),
        );
    }
}
