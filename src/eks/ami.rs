//! Node images: the template parameter that resolves a group's image from
//! the public SSM parameter of its EKS-optimized AMI (named in
//! [`ami_catalogue`]), from a custom SSM parameter or as an image ID, or
//! the pinned ID itself.

use crate::blueprint::{
    Accelerator, Ami, AmiFamily, Arch, IMAGE_PARAMETER_PREFIX, KubernetesVersion, NodeGroup,
};
use crate::cfn::{Expr, Parameter, Template};
use crate::upstream::ami_catalogue;

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
            let image = match group.ami_family {
                AmiFamily::Ubuntu(release) => {
                    format!("Canonical's Ubuntu {} EKS", release.number())
                }
                family => format!("EKS-optimized {}{fips}", family.name()),
            };
            template.parameters.entry(name.clone()).or_insert_with(|| {
                Parameter::new(SSM_IMAGE_TYPE)
                    .described(format!(
                        "{image} AMI for Kubernetes {version}, resolved from its public SSM parameter"
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
    let name = family_parameter(family, arch, accelerator, fips);
    let path = ami_catalogue::image_path(family, arch, accelerator, fips, version);
    (format!("{name}K8s{}{}", version.major, version.minor), path)
}

/// The family part of an image parameter's name.
fn family_parameter(family: AmiFamily, arch: Arch, accelerator: Accelerator, fips: bool) -> String {
    let arch_id = arch_id(arch);
    let accelerator_id = match accelerator {
        Accelerator::None => "",
        Accelerator::Nvidia => "Nvidia",
        Accelerator::Neuron => "Neuron",
    };
    match family {
        AmiFamily::AmazonLinux2023 => {
            format!("{IMAGE_PARAMETER_PREFIX}Al2023{arch_id}{accelerator_id}")
        }
        AmiFamily::AmazonLinux2 => {
            // One AL2 GPU image serves both NVIDIA and Neuron instances.
            let gpu = if accelerator == Accelerator::None {
                ""
            } else {
                "Gpu"
            };
            format!("{IMAGE_PARAMETER_PREFIX}Al2{arch_id}{gpu}")
        }
        AmiFamily::Bottlerocket => {
            let fips_id = if fips { "Fips" } else { "" };
            format!("{IMAGE_PARAMETER_PREFIX}Bottlerocket{arch_id}{accelerator_id}{fips_id}")
        }
        AmiFamily::Windows(windows) => {
            let edition = if windows.core { "Core" } else { "Full" };
            format!("{IMAGE_PARAMETER_PREFIX}Windows{}{edition}", windows.year)
        }
        AmiFamily::Ubuntu(release) => {
            let number = release.number().replace('.', "");
            format!("{IMAGE_PARAMETER_PREFIX}Ubuntu{number}{arch_id}")
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
    fn image_parameters_name_family_architecture_variant_and_version() {
        let name = |family, arch, accelerator, fips| {
            let (name, path) = ssm_parameter(family, arch, accelerator, fips, V);
            assert_eq!(
                path,
                ami_catalogue::image_path(family, arch, accelerator, fips, V)
            );
            name
        };
        let windows = AmiFamily::Windows(WindowsVersion {
            year: 2022,
            core: true,
        });
        for (family, arch, accelerator, fips, expected) in [
            (
                AmiFamily::AmazonLinux2023,
                Arch::X86_64,
                Accelerator::Nvidia,
                false,
                "ImageIdAl2023X86NvidiaK8s131",
            ),
            (
                AmiFamily::AmazonLinux2023,
                Arch::Arm64,
                Accelerator::None,
                false,
                "ImageIdAl2023Arm64K8s131",
            ),
            (
                AmiFamily::AmazonLinux2,
                Arch::X86_64,
                Accelerator::Neuron,
                false,
                "ImageIdAl2X86GpuK8s131",
            ),
            (
                AmiFamily::Bottlerocket,
                Arch::X86_64,
                Accelerator::None,
                true,
                "ImageIdBottlerocketX86FipsK8s131",
            ),
            (
                AmiFamily::Bottlerocket,
                Arch::Arm64,
                Accelerator::Nvidia,
                true,
                "ImageIdBottlerocketArm64NvidiaFipsK8s131",
            ),
            (
                windows,
                Arch::X86_64,
                Accelerator::None,
                false,
                "ImageIdWindows2022CoreK8s131",
            ),
        ] {
            assert_eq!(name(family, arch, accelerator, fips), expected);
        }
    }
}
