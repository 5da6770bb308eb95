//! What an EC2 instance type's name says about it: processor architecture
//! and accelerator. Graviton families carry a `g` among their attribute
//! letters (`m7g`, `c6gn`, `r8gd`); `p` and `g` families carry NVIDIA GPUs
//! (`g5g` is both); `inf` and `trn` families carry AWS Neuron accelerators.

use super::{Accelerator, Arch};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstanceInfo {
    pub arch: Arch,
    pub accelerator: Accelerator,
}

/// `None` when the name is not shaped like an instance type.
pub fn instance_info(instance_type: &str) -> Option<InstanceInfo> {
    let (family, size) = instance_type.split_once('.')?;
    if size.is_empty()
        || !size
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return None;
    }
    let family = family.split('-').next()?;
    let letters: String = family
        .chars()
        .take_while(|c| c.is_ascii_lowercase())
        .collect();
    let rest = &family[letters.len()..];
    let generation: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let attributes = &rest[generation.len()..];
    if letters.is_empty()
        || generation.is_empty()
        || !attributes.chars().all(|c| c.is_ascii_lowercase())
    {
        return None;
    }
    let arm = family == "a1" || attributes.contains('g');
    let accelerator = match letters.as_str() {
        "p" | "g" => Accelerator::Nvidia,
        "inf" | "trn" => Accelerator::Neuron,
        _ => Accelerator::None,
    };
    Some(InstanceInfo {
        arch: if arm { Arch::Arm64 } else { Arch::X86_64 },
        accelerator,
    })
}

/// EC2 Auto Scaling's own default on-demand allocation strategy: the order
/// of the instance types, or the price when the types are chosen by
/// attributes, which give no order (`prioritized` is refused then).
pub fn default_on_demand_strategy(by_attributes: bool) -> &'static str {
    if by_attributes {
        "lowest-price"
    } else {
        "prioritized"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_types_reveal_architecture_and_accelerators() {
        let info = |t: &str| instance_info(t).map(|i| (i.arch, i.accelerator));
        assert_eq!(info("m5.large"), Some((Arch::X86_64, Accelerator::None)));
        assert_eq!(info("m6g.2xlarge"), Some((Arch::Arm64, Accelerator::None)));
        assert_eq!(info("c6gn.xlarge"), Some((Arch::Arm64, Accelerator::None)));
        assert_eq!(info("r8gd.metal"), Some((Arch::Arm64, Accelerator::None)));
        assert_eq!(info("a1.large"), Some((Arch::Arm64, Accelerator::None)));
        assert_eq!(
            info("g4dn.xlarge"),
            Some((Arch::X86_64, Accelerator::Nvidia))
        );
        assert_eq!(
            info("p4d.24xlarge"),
            Some((Arch::X86_64, Accelerator::Nvidia))
        );
        assert_eq!(info("g5g.xlarge"), Some((Arch::Arm64, Accelerator::Nvidia)));
        assert_eq!(
            info("inf2.xlarge"),
            Some((Arch::X86_64, Accelerator::Neuron))
        );
        assert_eq!(
            info("trn1.32xlarge"),
            Some((Arch::X86_64, Accelerator::Neuron))
        );
        assert_eq!(
            info("m7i-flex.large"),
            Some((Arch::X86_64, Accelerator::None))
        );
        assert_eq!(info("m5"), None);
        assert_eq!(info("large"), None);
    }
}
