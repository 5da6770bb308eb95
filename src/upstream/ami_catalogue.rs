//! The EKS-optimized AMIs as AWS publishes them: the families, Kubernetes
//! versions, architectures and accelerators an image is built for, the
//! public SSM parameter that holds each image's ID, the family such a path
//! names, and the `AmiType` a managed node group names instead.

/// A Kubernetes minor version as EKS names its releases (`1.33`), which
/// every EKS-optimized image is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct KubernetesVersion {
    pub major: u32,
    pub minor: u32,
}

impl std::fmt::Display for KubernetesVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A family of EKS-optimized images.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AmiFamily {
    AmazonLinux2023,
    AmazonLinux2,
    Bottlerocket,
    Windows(WindowsVersion),
    /// Canonical's Ubuntu images for EKS, which Canonical publishes (not
    /// AWS): self-managed groups only, since EKS has no Ubuntu `AmiType`.
    Ubuntu(UbuntuRelease),
}

/// An Ubuntu LTS release Canonical builds EKS images of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UbuntuRelease {
    Jammy,
    Noble,
}

impl UbuntuRelease {
    /// The release's number, as Canonical's SSM paths name it.
    pub fn number(self) -> &'static str {
        match self {
            UbuntuRelease::Jammy => "22.04",
            UbuntuRelease::Noble => "24.04",
        }
    }

    /// The oldest Kubernetes version Canonical builds the release's EKS
    /// images for, as eksctl enforces it (`validateVersionForUbuntu` in
    /// eksctl's `pkg/ami/ssm_resolver.go`).
    pub fn oldest_kubernetes(self) -> KubernetesVersion {
        let minor = match self {
            UbuntuRelease::Jammy => 29,
            UbuntuRelease::Noble => 31,
        };
        KubernetesVersion { major: 1, minor }
    }

    /// The root volume type in the image's SSM path: 22.04 images are
    /// published for gp2 only, 24.04 images for gp3.
    fn volume(self) -> &'static str {
        match self {
            UbuntuRelease::Jammy => "ebs-gp2",
            UbuntuRelease::Noble => "ebs-gp3",
        }
    }
}

/// A Windows Server release and edition with an EKS-optimized AMI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowsVersion {
    pub year: u16,
    /// Server Core (true) or Full (with the desktop experience).
    pub core: bool,
}

impl AmiFamily {
    /// Every family, by the name a blueprint's `amiFamily` gives it.
    pub const ALL: [(&'static str, AmiFamily); 11] = [
        ("AmazonLinux2023", AmiFamily::AmazonLinux2023),
        ("AmazonLinux2", AmiFamily::AmazonLinux2),
        ("Bottlerocket", AmiFamily::Bottlerocket),
        (
            "WindowsServer2019Core",
            AmiFamily::Windows(WindowsVersion {
                year: 2019,
                core: true,
            }),
        ),
        (
            "WindowsServer2019Full",
            AmiFamily::Windows(WindowsVersion {
                year: 2019,
                core: false,
            }),
        ),
        (
            "WindowsServer2022Core",
            AmiFamily::Windows(WindowsVersion {
                year: 2022,
                core: true,
            }),
        ),
        (
            "WindowsServer2022Full",
            AmiFamily::Windows(WindowsVersion {
                year: 2022,
                core: false,
            }),
        ),
        (
            "WindowsServer2025Core",
            AmiFamily::Windows(WindowsVersion {
                year: 2025,
                core: true,
            }),
        ),
        (
            "WindowsServer2025Full",
            AmiFamily::Windows(WindowsVersion {
                year: 2025,
                core: false,
            }),
        ),
        ("Ubuntu2204", AmiFamily::Ubuntu(UbuntuRelease::Jammy)),
        ("Ubuntu2404", AmiFamily::Ubuntu(UbuntuRelease::Noble)),
    ];

    pub fn name(self) -> &'static str {
        AmiFamily::ALL
            .iter()
            .find(|(_, family)| *family == self)
            .map_or("AmazonLinux2023", |(name, _)| name)
    }

    pub fn is_windows(self) -> bool {
        matches!(self, AmiFamily::Windows(_))
    }

    pub fn is_ubuntu(self) -> bool {
        matches!(self, AmiFamily::Ubuntu(_))
    }

    /// The device of the family's images that `rootVolume` maps. On
    /// Bottlerocket that is the data volume: its OS volume is small and
    /// fixed, so the size the blueprint asks for goes to the data volume.
    pub fn root_device(self) -> &'static str {
        match self {
            AmiFamily::AmazonLinux2023 | AmiFamily::AmazonLinux2 => "/dev/xvda",
            AmiFamily::Bottlerocket => "/dev/xvdb",
            AmiFamily::Windows(_) | AmiFamily::Ubuntu(_) => "/dev/sda1",
        }
    }
}

/// The accelerator an instance type carries, which picks the AMI variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accelerator {
    None,
    Nvidia,
    Neuron,
}

/// The processor architecture an image is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    X86_64,
    Arm64,
}

/// The public SSM path of the EKS-optimized image for a family, Kubernetes
/// version, architecture and accelerator. A combination no image exists
/// for (`fips` is Bottlerocket's only) is for the caller to refuse; the
/// blueprint's loader does.
pub fn image_path(
    family: AmiFamily,
    arch: Arch,
    accelerator: Accelerator,
    fips: bool,
    version: KubernetesVersion,
) -> String {
    match family {
        AmiFamily::AmazonLinux2023 => {
            let variant = match accelerator {
                Accelerator::None => "standard",
                Accelerator::Nvidia => "nvidia",
                Accelerator::Neuron => "neuron",
            };
            format!(
                "/aws/service/eks/optimized-ami/{version}/amazon-linux-2023/{}/{variant}/recommended/image_id",
                arch_path(arch)
            )
        }
        AmiFamily::AmazonLinux2 => {
            // The AL2 GPU image serves both NVIDIA and Neuron instances.
            let suffix = match (arch, accelerator) {
                (Arch::Arm64, _) => "-arm64",
                (Arch::X86_64, Accelerator::None) => "",
                (Arch::X86_64, _) => "-gpu",
            };
            format!(
                "/aws/service/eks/optimized-ami/{version}/amazon-linux-2{suffix}/recommended/image_id"
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
            let fips = if fips { "-fips" } else { "" };
            format!(
                "/aws/service/bottlerocket/aws-k8s-{version}{nvidia}{fips}/{}/latest/image_id",
                arch_path(arch)
            )
        }
        AmiFamily::Windows(windows) => {
            let edition = if windows.core { "Core" } else { "Full" };
            format!(
                "/aws/service/ami-windows-latest/Windows_Server-{}-English-{edition}-EKS_Optimized-{version}/image_id",
                windows.year
            )
        }
        AmiFamily::Ubuntu(release) => {
            // Canonical names architectures as Debian does.
            let arch = match arch {
                Arch::X86_64 => "amd64",
                Arch::Arm64 => "arm64",
            };
            format!(
                "/aws/service/canonical/ubuntu/eks/{}/{version}/stable/current/{arch}/hvm/{}/ami-id",
                release.number(),
                release.volume()
            )
        }
    }
}

/// The AMI family a public SSM path of an EKS-optimized image names, as
/// AWS publishes them: `/aws/service/eks/optimized-ami/<version>/` then
/// `amazon-linux-2023/…` or `amazon-linux-2[-arm64|-gpu]/…`,
/// `/aws/service/bottlerocket/aws-k8s-<version>[-variant]/…`, and
/// `/aws/service/ami-windows-latest/Windows_Server-<year>-English-<Core|Full>-EKS_Optimized-<version>/image_id`,
/// and Canonical's `/aws/service/canonical/ubuntu/eks/<22.04|24.04>/…`.
/// Any other path names no family.
pub fn public_image_family(path: &str) -> Option<AmiFamily> {
    if let Some(rest) = path.strip_prefix("/aws/service/canonical/ubuntu/eks/") {
        let number = rest.split('/').next()?;
        return [UbuntuRelease::Jammy, UbuntuRelease::Noble]
            .into_iter()
            .find(|release| release.number() == number)
            .map(AmiFamily::Ubuntu);
    }
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

fn arch_path(arch: Arch) -> &'static str {
    match arch {
        Arch::X86_64 => "x86_64",
        Arch::Arm64 => "arm64",
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
        // The loader refuses managed Ubuntu groups on Canonical's images;
        // a custom image is `CUSTOM`, which the caller names itself.
        AmiFamily::Ubuntu(_) => "CUSTOM".to_string(),
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
        let path =
            |arch, accelerator| image_path(AmiFamily::AmazonLinux2023, arch, accelerator, false, V);
        assert_eq!(
            path(Arch::Arm64, Accelerator::None),
            "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/standard/recommended/image_id"
        );
        assert_eq!(
            path(Arch::X86_64, Accelerator::Nvidia),
            "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/nvidia/recommended/image_id"
        );
        assert_eq!(
            path(Arch::X86_64, Accelerator::Neuron),
            "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/neuron/recommended/image_id"
        );
    }

    #[test]
    fn al2_paths_use_the_legacy_suffixes() {
        let path =
            |arch, accelerator| image_path(AmiFamily::AmazonLinux2, arch, accelerator, false, V);
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
        let path = |family, arch, accelerator, fips| image_path(family, arch, accelerator, fips, V);
        assert_eq!(
            path(
                AmiFamily::Bottlerocket,
                Arch::Arm64,
                Accelerator::None,
                false
            ),
            "/aws/service/bottlerocket/aws-k8s-1.31/arm64/latest/image_id"
        );
        assert_eq!(
            path(
                AmiFamily::Bottlerocket,
                Arch::X86_64,
                Accelerator::Nvidia,
                false
            ),
            "/aws/service/bottlerocket/aws-k8s-1.31-nvidia/x86_64/latest/image_id"
        );
        assert_eq!(
            path(
                AmiFamily::Bottlerocket,
                Arch::X86_64,
                Accelerator::None,
                true
            ),
            "/aws/service/bottlerocket/aws-k8s-1.31-fips/x86_64/latest/image_id"
        );
        assert_eq!(
            path(
                AmiFamily::Bottlerocket,
                Arch::Arm64,
                Accelerator::Nvidia,
                true
            ),
            "/aws/service/bottlerocket/aws-k8s-1.31-nvidia-fips/arm64/latest/image_id"
        );
        let windows = AmiFamily::Windows(WindowsVersion {
            year: 2022,
            core: true,
        });
        assert_eq!(
            path(windows, Arch::X86_64, Accelerator::None, false),
            "/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.31/image_id"
        );
    }

    #[test]
    fn ubuntu_paths_are_canonicals() {
        let path = |release, arch| {
            image_path(
                AmiFamily::Ubuntu(release),
                arch,
                Accelerator::None,
                false,
                V,
            )
        };
        assert_eq!(
            path(UbuntuRelease::Jammy, Arch::X86_64),
            "/aws/service/canonical/ubuntu/eks/22.04/1.31/stable/current/amd64/hvm/ebs-gp2/ami-id"
        );
        assert_eq!(
            path(UbuntuRelease::Noble, Arch::Arm64),
            "/aws/service/canonical/ubuntu/eks/24.04/1.31/stable/current/arm64/hvm/ebs-gp3/ami-id"
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
    fn bottlerocket_fips_ami_types() {
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
            (
                "/aws/service/canonical/ubuntu/eks/24.04/1.33/stable/current/arm64/hvm/ebs-gp3/ami-id",
                Some(AmiFamily::Ubuntu(UbuntuRelease::Noble)),
            ),
            (
                "/aws/service/canonical/ubuntu/eks/20.04/1.28/stable/current/amd64/hvm/ebs-gp2/ami-id",
                None,
            ),
            ("/platform/eks/golden-ami", None),
            ("/aws/service/eks/optimized-ami/1.33", None),
        ] {
            assert_eq!(public_image_family(path), family, "{path}");
        }
        // Every family's own path names it back.
        for (_, family) in AmiFamily::ALL {
            let path = image_path(family, Arch::X86_64, Accelerator::None, false, V);
            assert_eq!(public_image_family(&path), Some(family), "{path}");
        }
    }
}
