//! Node images: the public SSM parameter of the EKS-optimized AMI for a
//! family, Kubernetes version, architecture and accelerator, or a pinned
//! ID; and the `AmiType` a managed node group names instead.

use crate::blueprint::{
    Accelerator, Ami, AmiFamily, Arch, IMAGE_PARAMETER_PREFIX, KubernetesVersion, NodeGroup,
};
use crate::cfn::{Expr, Parameter, Template};

/// The image ID for a group, declaring the parameter it reads.
pub fn image_id(template: &mut Template, group: &NodeGroup, version: KubernetesVersion) -> Expr {
    match &group.ami {
        Ami::Pinned(id) => Expr::str(id),
        Ami::Recommended => {
            let (name, path) = ssm_parameter(
                group.ami_family,
                group.arch,
                group.accelerator,
                group.fips,
                version,
            );
            let fips = if group.fips { " FIPS" } else { "" };
            template.parameters.entry(name.clone()).or_insert_with(|| {
                Parameter::new(SSM_IMAGE_TYPE)
                    .described(format!(
                        "EKS-optimized {}{fips} AMI for Kubernetes {version}, resolved from its public SSM parameter",
                        group.ami_family.name()
                    ))
                    .with_default(path)
            });
            Expr::reference(name)
        }
        Ami::Ssm(path) => {
            // One parameter per group (the groups a `perAz` group becomes
            // share it); `Custom` keeps it apart from the families' names.
            let name = format!("{IMAGE_PARAMETER_PREFIX}Custom{}", group.identity);
            template.parameters.entry(name.clone()).or_insert_with(|| {
                Parameter::new(SSM_IMAGE_TYPE)
                    .described(format!(
                        "Custom AMI of node group {}, resolved from an SSM parameter",
                        group.name.value
                    ))
                    .with_default(path.as_str())
            });
            Expr::reference(name)
        }
        Ami::Parameter { name, default } => {
            template.parameters.entry(name.clone()).or_insert_with(|| {
                let parameter =
                    Parameter::new("AWS::EC2::Image::Id").described("Custom AMI of the nodes");
                match default {
                    Some(default) => parameter.with_default(default.as_str()),
                    None => parameter,
                }
            });
            Expr::reference(name)
        }
    }
}

/// The parameter type CloudFormation resolves from an SSM parameter holding
/// an AMI ID, at each create and update.
const SSM_IMAGE_TYPE: &str = "AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>";

/// The AMI family a public SSM path of an EKS-optimized image names, as
/// AWS publishes them: `/aws/service/eks/optimized-ami/<version>/` then
/// `amazon-linux-2023/…` or `amazon-linux-2[-arm64|-gpu]/…`,
/// `/aws/service/bottlerocket/aws-k8s-<version>[-variant]/…`, and
/// `/aws/service/ami-windows-latest/Windows_Server-<year>-English-<Core|Full>-EKS_Optimized-<version>/image_id`.
/// Any other path names no family.
pub fn public_image_family(path: &str) -> Option<AmiFamily> {
    if let Some(rest) = path.strip_prefix("/aws/service/eks/optimized-ami/") {
        let image = rest.split('/').nth(1)?;
        return match image {
            "amazon-linux-2023" => Some(AmiFamily::AmazonLinux2023),
            "amazon-linux-2" | "amazon-linux-2-arm64" | "amazon-linux-2-gpu" => {
                Some(AmiFamily::AmazonLinux2)
            }
            _ => None,
        };
    }
    if let Some(rest) = path.strip_prefix("/aws/service/bottlerocket/") {
        return rest
            .starts_with("aws-k8s-")
            .then_some(AmiFamily::Bottlerocket);
    }
    let image = path.strip_prefix("/aws/service/ami-windows-latest/Windows_Server-")?;
    let (year, rest) = image.split_once("-English-")?;
    let (edition, _) = rest.split_once("-EKS_Optimized-")?;
    let core = match edition {
        "Core" => true,
        "Full" => false,
        _ => return None,
    };
    let year: u16 = year.parse().ok()?;
    AmiFamily::ALL
        .iter()
        .map(|(_, family)| *family)
        .find(|family| matches!(family, AmiFamily::Windows(w) if w.year == year && w.core == core))
}

/// Whether a template parameter is one of the image parameters made here.
pub fn is_image_parameter(name: &str) -> bool {
    name.starts_with(IMAGE_PARAMETER_PREFIX)
}

fn arch_id(arch: Arch) -> &'static str {
    match arch {
        Arch::X86_64 => "X86",
        Arch::Arm64 => "Arm64",
    }
}

fn arch_path(arch: Arch) -> &'static str {
    match arch {
        Arch::X86_64 => "x86_64",
        Arch::Arm64 => "arm64",
    }
}

/// The template parameter name and SSM path of an EKS-optimized image.
/// The loader has refused the combinations no image exists for (`fips` is
/// Bottlerocket's only).
///
/// The name ends with the Kubernetes version the path names
/// (`ImageIdAl2023X86K8s133`): `aws cloudformation deploy` keeps the
/// previous value of every parameter an existing stack already has, so a
/// version bump that only changed the default path would never reach the
/// nodes. A new version is a new parameter, which takes its default.
pub fn ssm_parameter(
    family: AmiFamily,
    arch: Arch,
    accelerator: Accelerator,
    fips: bool,
    version: KubernetesVersion,
) -> (String, String) {
    let (name, path) = family_parameter(family, arch, accelerator, fips, version);
    (format!("{name}K8s{}{}", version.major, version.minor), path)
}

/// The family part of an image parameter's name, and the SSM path.
fn family_parameter(
    family: AmiFamily,
    arch: Arch,
    accelerator: Accelerator,
    fips: bool,
    version: KubernetesVersion,
) -> (String, String) {
    let arch_id = arch_id(arch);
    let accelerator_id = match accelerator {
        Accelerator::None => "",
        Accelerator::Nvidia => "Nvidia",
        Accelerator::Neuron => "Neuron",
    };
    match family {
        AmiFamily::AmazonLinux2023 => {
            let variant = match accelerator {
                Accelerator::None => "standard",
                Accelerator::Nvidia => "nvidia",
                Accelerator::Neuron => "neuron",
            };
            (
                format!("{IMAGE_PARAMETER_PREFIX}Al2023{arch_id}{accelerator_id}"),
                format!(
                    "/aws/service/eks/optimized-ami/{version}/amazon-linux-2023/{}/{variant}/recommended/image_id",
                    arch_path(arch)
                ),
            )
        }
        AmiFamily::AmazonLinux2 => {
            // The AL2 GPU image serves both NVIDIA and Neuron instances.
            let suffix = match (arch, accelerator) {
                (Arch::Arm64, _) => "-arm64",
                (Arch::X86_64, Accelerator::None) => "",
                (Arch::X86_64, _) => "-gpu",
            };
            let gpu = if accelerator == Accelerator::None {
                ""
            } else {
                "Gpu"
            };
            (
                format!("{IMAGE_PARAMETER_PREFIX}Al2{arch_id}{gpu}"),
                format!(
                    "/aws/service/eks/optimized-ami/{version}/amazon-linux-2{suffix}/recommended/image_id"
                ),
            )
        }
        AmiFamily::Bottlerocket => {
            // Bottlerocket's variants: `aws-k8s-<version>`, then `-nvidia`,
            // then `-fips` (`aws-k8s-1.31-nvidia-fips`).
            let nvidia = if accelerator == Accelerator::Nvidia {
                "-nvidia"
            } else {
                ""
            };
            let (fips_path, fips_id) = if fips { ("-fips", "Fips") } else { ("", "") };
            (
                format!("{IMAGE_PARAMETER_PREFIX}Bottlerocket{arch_id}{accelerator_id}{fips_id}"),
                format!(
                    "/aws/service/bottlerocket/aws-k8s-{version}{nvidia}{fips_path}/{}/latest/image_id",
                    arch_path(arch)
                ),
            )
        }
        AmiFamily::Windows(windows) => {
            let edition = if windows.core { "Core" } else { "Full" };
            (
                format!("{IMAGE_PARAMETER_PREFIX}Windows{}{edition}", windows.year),
                format!(
                    "/aws/service/ami-windows-latest/Windows_Server-{}-English-{edition}-EKS_Optimized-{version}/image_id",
                    windows.year
                ),
            )
        }
    }
}

/// The `AmiType` of a managed node group on an EKS AMI.
pub fn managed_ami_type(
    family: AmiFamily,
    arch: Arch,
    accelerator: Accelerator,
    fips: bool,
) -> String {
    let arch = match arch {
        Arch::X86_64 => "x86_64",
        Arch::Arm64 => "ARM_64",
    };
    match family {
        AmiFamily::AmazonLinux2023 => {
            let variant = match accelerator {
                Accelerator::None => "STANDARD",
                Accelerator::Nvidia => "NVIDIA",
                Accelerator::Neuron => "NEURON",
            };
            format!("AL2023_{arch}_{variant}")
        }
        AmiFamily::AmazonLinux2 => match accelerator {
            Accelerator::None => format!("AL2_{arch}"),
            _ => "AL2_x86_64_GPU".to_string(),
        },
        AmiFamily::Bottlerocket => {
            // `BOTTLEROCKET_x86_64_FIPS`, `BOTTLEROCKET_ARM_64_NVIDIA_FIPS`:
            // the `AmiType` values of the vendored `AWS::EKS::Nodegroup`.
            let nvidia = if accelerator == Accelerator::Nvidia {
                "_NVIDIA"
            } else {
                ""
            };
            let fips = if fips { "_FIPS" } else { "" };
            format!("BOTTLEROCKET_{arch}{nvidia}{fips}")
        }
        AmiFamily::Windows(windows) => {
            let edition = if windows.core { "CORE" } else { "FULL" };
            format!("WINDOWS_{edition}_{}_x86_64", windows.year)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::WindowsVersion;

    const V: KubernetesVersion = KubernetesVersion {
        major: 1,
        minor: 31,
    };

    #[test]
    fn al2023_paths_name_architecture_and_variant() {
        assert_eq!(
            ssm_parameter(
                AmiFamily::AmazonLinux2023,
                Arch::Arm64,
                Accelerator::None,
                false,
                V
            )
            .1,
            "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/standard/recommended/image_id"
        );
        assert_eq!(
            ssm_parameter(AmiFamily::AmazonLinux2023, Arch::X86_64, Accelerator::Nvidia, false, V),
            (
                "ImageIdAl2023X86NvidiaK8s131".to_string(),
                "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/nvidia/recommended/image_id".to_string()
            )
        );
        assert_eq!(
            ssm_parameter(
                AmiFamily::AmazonLinux2023,
                Arch::X86_64,
                Accelerator::Neuron,
                false,
                V
            )
            .1,
            "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/neuron/recommended/image_id"
        );
    }

    #[test]
    fn al2_paths_use_the_legacy_suffixes() {
        let path = |arch, accelerator| {
            ssm_parameter(AmiFamily::AmazonLinux2, arch, accelerator, false, V).1
        };
        assert_eq!(
            path(Arch::X86_64, Accelerator::None),
            "/aws/service/eks/optimized-ami/1.31/amazon-linux-2/recommended/image_id"
        );
        assert_eq!(
            path(Arch::Arm64, Accelerator::None),
            "/aws/service/eks/optimized-ami/1.31/amazon-linux-2-arm64/recommended/image_id"
        );
        assert_eq!(
            path(Arch::X86_64, Accelerator::Nvidia),
            "/aws/service/eks/optimized-ami/1.31/amazon-linux-2-gpu/recommended/image_id"
        );
    }

    #[test]
    fn bottlerocket_and_windows_paths() {
        assert_eq!(
            ssm_parameter(
                AmiFamily::Bottlerocket,
                Arch::Arm64,
                Accelerator::None,
                false,
                V
            )
            .1,
            "/aws/service/bottlerocket/aws-k8s-1.31/arm64/latest/image_id"
        );
        assert_eq!(
            ssm_parameter(
                AmiFamily::Bottlerocket,
                Arch::X86_64,
                Accelerator::Nvidia,
                false,
                V
            )
            .1,
            "/aws/service/bottlerocket/aws-k8s-1.31-nvidia/x86_64/latest/image_id"
        );
        let windows = AmiFamily::Windows(WindowsVersion {
            year: 2022,
            core: true,
        });
        assert_eq!(
            ssm_parameter(windows, Arch::X86_64, Accelerator::None, false, V),
            (
                "ImageIdWindows2022CoreK8s131".to_string(),
                "/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.31/image_id".to_string()
            )
        );
    }

    #[test]
    fn managed_ami_types_follow_the_eks_api_names() {
        assert_eq!(
            managed_ami_type(
                AmiFamily::AmazonLinux2023,
                Arch::Arm64,
                Accelerator::None,
                false
            ),
            "AL2023_ARM_64_STANDARD"
        );
        assert_eq!(
            managed_ami_type(
                AmiFamily::AmazonLinux2023,
                Arch::X86_64,
                Accelerator::Nvidia,
                false
            ),
            "AL2023_x86_64_NVIDIA"
        );
        assert_eq!(
            managed_ami_type(
                AmiFamily::AmazonLinux2,
                Arch::X86_64,
                Accelerator::Nvidia,
                false
            ),
            "AL2_x86_64_GPU"
        );
        assert_eq!(
            managed_ami_type(
                AmiFamily::Bottlerocket,
                Arch::Arm64,
                Accelerator::None,
                false
            ),
            "BOTTLEROCKET_ARM_64"
        );
        let windows = AmiFamily::Windows(WindowsVersion {
            year: 2022,
            core: false,
        });
        assert_eq!(
            managed_ami_type(windows, Arch::X86_64, Accelerator::None, false),
            "WINDOWS_FULL_2022_x86_64"
        );
    }

    #[test]
    fn bottlerocket_fips_images_and_ami_types() {
        assert_eq!(
            ssm_parameter(
                AmiFamily::Bottlerocket,
                Arch::X86_64,
                Accelerator::None,
                true,
                V
            ),
            (
                "ImageIdBottlerocketX86FipsK8s131".to_string(),
                "/aws/service/bottlerocket/aws-k8s-1.31-fips/x86_64/latest/image_id".to_string()
            )
        );
        assert_eq!(
            ssm_parameter(
                AmiFamily::Bottlerocket,
                Arch::Arm64,
                Accelerator::Nvidia,
                true,
                V
            )
            .1,
            "/aws/service/bottlerocket/aws-k8s-1.31-nvidia-fips/arm64/latest/image_id"
        );
        assert_eq!(
            managed_ami_type(
                AmiFamily::Bottlerocket,
                Arch::X86_64,
                Accelerator::None,
                true
            ),
            "BOTTLEROCKET_x86_64_FIPS"
        );
        assert_eq!(
            managed_ami_type(
                AmiFamily::Bottlerocket,
                Arch::Arm64,
                Accelerator::Nvidia,
                true
            ),
            "BOTTLEROCKET_ARM_64_NVIDIA_FIPS"
        );
    }

    #[test]
    fn public_paths_name_their_family() {
        let windows_2022_core = AmiFamily::Windows(WindowsVersion {
            year: 2022,
            core: true,
        });
        for (path, family) in [
            (
                "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/standard/recommended/image_id",
                Some(AmiFamily::AmazonLinux2023),
            ),
            (
                "/aws/service/eks/optimized-ami/1.32/amazon-linux-2-gpu/recommended/image_id",
                Some(AmiFamily::AmazonLinux2),
            ),
            (
                "/aws/service/eks/optimized-ami/1.32/amazon-linux-2/recommended/image_id",
                Some(AmiFamily::AmazonLinux2),
            ),
            (
                "/aws/service/bottlerocket/aws-k8s-1.33-fips/x86_64/latest/image_id",
                Some(AmiFamily::Bottlerocket),
            ),
            (
                "/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.33/image_id",
                Some(windows_2022_core),
            ),
            (
                "/aws/service/ami-windows-latest/Windows_Server-2016-English-Core-EKS_Optimized-1.33/image_id",
                None,
            ),
            (
                "/aws/service/bottlerocket/aws-ecs-2/x86_64/latest/image_id",
                None,
            ),
            ("/platform/eks/golden-ami", None),
            ("/aws/service/eks/optimized-ami/1.33", None),
        ] {
            assert_eq!(public_image_family(path), family, "{path}");
        }
        // Every family's own path names it back.
        for (_, family) in AmiFamily::ALL {
            let (_, path) = ssm_parameter(family, Arch::X86_64, Accelerator::None, false, V);
            assert_eq!(public_image_family(&path), Some(family), "{path}");
        }
    }
}
