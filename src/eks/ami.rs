//! Node images: the public SSM parameter of the EKS-optimized AMI for a
//! family, Kubernetes version, architecture and accelerator, or a pinned ID.

use crate::blueprint::{Ami, AmiFamily, Arch, KubernetesVersion, NodeGroup};
use crate::cfn::{Expr, Parameter, Template};

/// The image ID for a node group, declaring the SSM parameter it reads.
pub fn image_id(template: &mut Template, group: &NodeGroup, version: KubernetesVersion) -> Expr {
    match &group.ami {
        Ami::Pinned(id) => Expr::str(id),
        Ami::Recommended => {
            let (name, path) = ssm_parameter(group.ami_family, group.arch, group.gpu, version);
            template.parameters.entry(name.clone()).or_insert_with(|| {
                Parameter::new("AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>")
                    .described(format!(
                        "EKS-optimized {} AMI for Kubernetes {version}, resolved from its public SSM parameter",
                        group.ami_family.name()
                    ))
                    .with_default(path)
            });
            Expr::reference(name)
        }
    }
}

/// Whether a template parameter is one of the image parameters made here.
pub fn is_image_parameter(name: &str) -> bool {
    name.starts_with("ImageId")
}

/// The template parameter name and SSM path of an EKS-optimized image.
pub fn ssm_parameter(
    family: AmiFamily,
    arch: Arch,
    gpu: bool,
    version: KubernetesVersion,
) -> (String, String) {
    let arch_id = match arch {
        Arch::X86_64 => "X86",
        Arch::Arm64 => "Arm64",
    };
    match family {
        AmiFamily::AmazonLinux2023 => {
            let arch_path = match arch {
                Arch::X86_64 => "x86_64",
                Arch::Arm64 => "arm64",
            };
            let variant = if gpu { "nvidia" } else { "standard" };
            (
                format!("ImageIdAl2023{arch_id}{}", if gpu { "Nvidia" } else { "" }),
                format!(
                    "/aws/service/eks/optimized-ami/{version}/amazon-linux-2023/{arch_path}/{variant}/recommended/image_id"
                ),
            )
        }
        AmiFamily::AmazonLinux2 => {
            let suffix = match (arch, gpu) {
                (Arch::Arm64, _) => "-arm64",
                (Arch::X86_64, true) => "-gpu",
                (Arch::X86_64, false) => "",
            };
            (
                format!("ImageIdAl2{arch_id}{}", if gpu { "Gpu" } else { "" }),
                format!(
                    "/aws/service/eks/optimized-ami/{version}/amazon-linux-2{suffix}/recommended/image_id"
                ),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: KubernetesVersion = KubernetesVersion {
        major: 1,
        minor: 31,
    };

    #[test]
    fn al2023_paths_name_architecture_and_variant() {
        assert_eq!(
            ssm_parameter(AmiFamily::AmazonLinux2023, Arch::Arm64, false, V).1,
            "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/standard/recommended/image_id"
        );
        assert_eq!(
            ssm_parameter(AmiFamily::AmazonLinux2023, Arch::X86_64, true, V),
            (
                "ImageIdAl2023X86Nvidia".to_string(),
                "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/nvidia/recommended/image_id".to_string()
            )
        );
    }

    #[test]
    fn al2_paths_use_the_legacy_suffixes() {
        assert_eq!(
            ssm_parameter(AmiFamily::AmazonLinux2, Arch::X86_64, false, V).1,
            "/aws/service/eks/optimized-ami/1.31/amazon-linux-2/recommended/image_id"
        );
        assert_eq!(
            ssm_parameter(AmiFamily::AmazonLinux2, Arch::Arm64, false, V).1,
            "/aws/service/eks/optimized-ami/1.31/amazon-linux-2-arm64/recommended/image_id"
        );
        assert_eq!(
            ssm_parameter(AmiFamily::AmazonLinux2, Arch::X86_64, true, V).1,
            "/aws/service/eks/optimized-ami/1.31/amazon-linux-2-gpu/recommended/image_id"
        );
    }
}
