//! What each AMI family supports: architectures, accelerators, bootstrap
//! features and the signal client, by family and kind of group.

use super::kubelet::KUBELET_FIELDS;
use super::node_group::GroupSpec;
use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::field::declares;
use crate::blueprint::hatches::refuse_non_ascii_windows_commands;
use crate::blueprint::*;
use crate::source::Span;
use crate::upstream::kubelet_config;

/// What each AMI family supports: architectures, accelerators and
/// bootstrap features.
pub(super) fn check_family(
    d: &mut Decoder,
    spec: &GroupSpec,
    family: AmiFamily,
    at: Span,
    arch: Arch,
    accelerator: Accelerator,
    instance_types: &[Located<String>],
) {
    let first_type = instance_types.first().map_or(at, |t| t.span);
    let name = family.name();
    let unsupported = |d: &mut Decoder, what: &str| {
        let message = format!("`{name}` nodes cannot use {what}");
        d.error(first_type, message).help =
            Some("choose another instance type or AMI family".into());
    };
    match (family, arch, accelerator) {
        (AmiFamily::Windows(_), Arch::Arm64, _) => unsupported(d, "arm64 instance types"),
        (AmiFamily::Windows(_), _, Accelerator::Nvidia | Accelerator::Neuron) => {
            unsupported(d, "GPU or Neuron instance types")
        }
        (AmiFamily::AmazonLinux2, Arch::Arm64, Accelerator::Nvidia) => {
            unsupported(d, "arm64 GPU instance types")
        }
        (AmiFamily::AmazonLinux2023, Arch::Arm64, Accelerator::Neuron) => {
            unsupported(d, "arm64 Neuron instance types")
        }
        (AmiFamily::Bottlerocket, _, Accelerator::Neuron) => {
            unsupported(d, "Neuron instance types")
        }
        // The one image per architecture that Canonical's SSM path names
        // is the one eksynth bootstraps; a GPU node needs its drivers and
        // container runtime set up beyond that.
        (AmiFamily::Ubuntu(_), _, Accelerator::Nvidia | Accelerator::Neuron) => {
            unsupported(d, "GPU or Neuron instance types")
        }
        _ => {}
    }
    let shell_features: [(&str, bool); 4] = [
        (
            "preBootstrapCommands",
            spec.pre_bootstrap_commands
                .as_ref()
                .is_some_and(|c| !c.value.is_empty()),
        ),
        (
            "efsMounts",
            spec.efs_mounts
                .as_ref()
                .is_some_and(|m| !m.value.is_empty()),
        ),
        (
            "imds.blockPods",
            spec.imds.block_pods.as_ref().is_some_and(|b| b.value),
        ),
        ("bootstrapArguments", spec.bootstrap_arguments.is_some()),
    ];
    for (field, set) in shell_features {
        if !set {
            continue;
        }
        let refused = match family {
            AmiFamily::Bottlerocket => Some(
                "Bottlerocket has no shell user data; use its TOML settings or a bootstrap container",
            ),
            AmiFamily::Windows(_) if field != "preBootstrapCommands" => {
                Some("Windows nodes bootstrap with Start-EKSBootstrap.ps1")
            }
            AmiFamily::AmazonLinux2023 if field == "bootstrapArguments" => Some(
                "AL2023 has no bootstrap.sh; nodeadm reads `kubelet` settings and labels instead",
            ),
            AmiFamily::Ubuntu(_) if field == "efsMounts" => Some(
                "the EFS mount step installs its NFS client with dnf or yum; mount on Ubuntu in `preBootstrapCommands`",
            ),
            _ => None,
        };
        if let Some(help) = refused {
            let field_at = spec
                .written
                .iter()
                .find(|(f, _)| field.starts_with(f))
                .map_or(at, |(_, s)| *s);
            d.error(field_at, format!("`{field}` is not supported on `{name}`"))
                .help = Some(help.to_string());
        }
    }
}

/// `signalClient: embedded` is for Amazon Linux on a custom image: the
/// EKS-optimized images carry `cfn-signal`, and Bottlerocket and Windows
/// signal with their own tools. Canonical's Ubuntu images carry no
/// `cfn-signal`, so Ubuntu nodes always signal with the embedded client.
pub(super) fn check_signal_client(d: &mut Decoder, spec: &GroupSpec, family: AmiFamily) {
    let Some(client) = &spec.signal_client else {
        return;
    };
    if family.is_ubuntu() {
        if client.value == SignalClient::Image {
            d.error(
                client.span,
                format!("`signalClient: image` is not supported on `{}`", family.name()),
            )
            .help = Some(
                "Canonical's Ubuntu images carry no cfn-signal; leave `signalClient` unset (Ubuntu nodes sign the signal themselves)".into(),
            );
        }
        return;
    }
    if client.value != SignalClient::Embedded {
        return;
    }
    if !matches!(family, AmiFamily::AmazonLinux2023 | AmiFamily::AmazonLinux2) {
        d.error(
            client.span,
            format!(
                "`signalClient: embedded` is not supported on `{}`",
                family.name()
            ),
        )
        .help = Some("Bottlerocket and Windows nodes signal with their own tools".into());
    } else if !spec.ami.as_ref().is_some_and(|a| a.value.is_custom()) {
        d.error(
            client.span,
            "`signalClient: embedded` needs a custom image (`ami: ami-...`)",
        )
        .help =
            Some("the EKS-optimized images carry cfn-signal; leave `signalClient` unset".into());
    }
}

/// What the bootstrap of each family and kind of group can carry.
pub(super) fn check_bootstrap_limits(
    d: &mut Decoder,
    spec: &GroupSpec,
    family: AmiFamily,
    at: Span,
    is_managed: bool,
) {
    let name = family.name();
    let eks_ami = is_managed && !spec.ami.as_ref().is_some_and(|a| a.value.is_custom());
    let field_at = |field: &str| {
        spec.written
            .iter()
            .find(|(f, _)| *f == field)
            .map_or(at, |(_, s)| *s)
    };
    // On an EKS AMI, EKS writes the bootstrap of AL2 and Windows nodes
    // itself, with its own `--max-pods` and kubelet arguments.
    let eks_bootstrap =
        eks_ami && matches!(family, AmiFamily::AmazonLinux2 | AmiFamily::Windows(_));
    if eks_bootstrap {
        let mut refused = vec![
            ("maxPods", spec.max_pods.is_some()),
            ("bootstrapArguments", spec.bootstrap_arguments.is_some()),
        ];
        if family.is_windows() {
            refused.push(("kubelet", !spec.kubelet.is_empty()));
        }
        for (field, set) in refused {
            if set {
                d.error(
                    field_at(field),
                    format!("`{field}` cannot be set on a managed `{name}` group on the EKS AMI"),
                )
                .help = Some(
                    "EKS writes that bootstrap itself; pin a custom `ami` to control it".into(),
                );
            }
        }
    }
    if family == AmiFamily::Bottlerocket
        && let Some((key, _)) = spec
            .kubelet
            .iter()
            .find(|(k, _)| k.value == "serializeImagePulls")
    {
        d.error(
            key.span,
            "Bottlerocket has no `serializeImagePulls` setting",
        )
        .help = Some("remove it; Bottlerocket pulls images with its own settings".into());
    }
    check_kubelet_targets(d, spec, family);
    if family.is_windows() {
        for (key, value) in &spec.kubelet {
            if value.to_string().contains(char::is_whitespace) {
                d.error(key.span, format!("`kubelet.{}` contains whitespace, which Windows kubelet arguments cannot carry", key.value));
            }
        }
        if let Some(commands) = &spec.pre_bootstrap_commands {
            refuse_non_ascii_windows_commands(d, "preBootstrapCommands", commands);
        }
        if let Some(commands) = &spec.pre_bootstrap_commands
            && commands
                .value
                .iter()
                .any(|c| c.to_ascii_lowercase().contains("</powershell"))
        {
            d.error(commands.span, "a pre-bootstrap command contains `</powershell`, which ends Windows user data early");
        }
    }
}

/// Bottlerocket and Windows take no kubelet configuration file: each
/// `kubelet` field beyond the typed ones must have a Bottlerocket setting
/// or a kubelet flag (the typed ones have theirs in the lowering).
fn check_kubelet_targets(d: &mut Decoder, spec: &GroupSpec, family: AmiFamily) {
    for (key, value) in &spec.kubelet {
        if declares(KUBELET_FIELDS, key.value.as_str()) {
            continue;
        }
        let missing = match family {
            AmiFamily::Bottlerocket => kubelet_config::bottlerocket_settings(&key.value, value)
                .err()
                .map(|paths| (paths, "Bottlerocket has no setting for")),
            AmiFamily::Windows(_) => match kubelet_config::windows_flags(&key.value, value) {
                Err(paths) => Some((paths, "the Windows kubelet takes no flag for")),
                Ok(flags) => {
                    flags
                        .iter()
                        .find(|(flag, v)| flag.args(v).is_none())
                        .map(|(flag, _)| {
                            (
                                vec![flag.field.clone()],
                                "no Windows kubelet flag can carry this value of",
                            )
                        })
                }
            },
            AmiFamily::AmazonLinux2023 | AmiFamily::AmazonLinux2 | AmiFamily::Ubuntu(_) => None,
        };
        let Some((paths, what)) = missing else {
            continue;
        };
        for path in paths {
            d.error(key.span, format!("{what} `kubelet.{path}`")).help = Some(format!(
                "`{}` nodes take no kubelet configuration file; use an Amazon Linux family for this setting",
                family.name()
            ));
        }
    }
}
