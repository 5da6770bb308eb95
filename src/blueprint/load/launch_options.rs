//! Launch template settings passed through to EC2 (`ebsOptimized`,
//! `cpuOptions`, `cpuCredits`, `enclave`, `autoRecovery`), and the rules
//! that tie them to
//! the group's instance types. EKS lists none of them among the launch
//! template settings a managed node group refuses ("Customize managed
//! nodes with launch templates" in the EKS User Guide), so they apply to
//! both kinds of group and every family.

use super::read::{Opt, opt_bool, opt_u32};
use crate::blueprint::decode::{Decoder, Fields, Located};
use crate::blueprint::field::{Field, Ty};
use crate::blueprint::{AutoRecovery, CpuCredits, CpuOptions, InstanceRequirements, LaunchOptions};
use crate::syntax::Node;

pub(in crate::blueprint) const CPU_OPTIONS_FIELDS: &[Field] = &[
    Field::new(
        "coreCount",
        Ty::integer(1, 448),
        "CPU cores (needs exactly one instance type)",
    ),
    Field::new(
        "threadsPerCore",
        Ty::integer(1, 2),
        "Threads per core: 1 turns simultaneous multithreading off",
    ),
    Field::new(
        "amdSevSnp",
        Ty::Boolean,
        "AMD SEV-SNP (M6a, R6a and C6a types only)",
    ),
];
pub(in crate::blueprint) const CPU_CREDITS: &[(&str, CpuCredits)] = &[
    ("standard", CpuCredits::Standard),
    ("unlimited", CpuCredits::Unlimited),
];

/// `autoRecovery`: EC2's simplified automatic recovery of an instance
/// whose host fails a system status check.
pub(in crate::blueprint) const AUTO_RECOVERY: &[(&str, AutoRecovery)] = &[
    ("default", AutoRecovery::Default),
    ("disabled", AutoRecovery::Disabled),
];

/// The launch template settings of a group as written.
#[derive(Clone, Default)]
pub(super) struct LaunchOptionsSpec {
    pub(super) ebs_optimized: Opt<bool>,
    pub(super) cpu_options: Opt<CpuOptionsSpec>,
    pub(super) cpu_credits: Opt<CpuCredits>,
    pub(super) enclave: Opt<bool>,
    pub(super) auto_recovery: Opt<AutoRecovery>,
}

impl LaunchOptionsSpec {
    /// A group's settings over those of `defaults`, each replaced whole: a
    /// core count belongs with its thread count.
    pub(super) fn over(self, d: LaunchOptionsSpec) -> LaunchOptionsSpec {
        LaunchOptionsSpec {
            ebs_optimized: self.ebs_optimized.or(d.ebs_optimized),
            cpu_options: self.cpu_options.or(d.cpu_options),
            cpu_credits: self.cpu_credits.or(d.cpu_credits),
            enclave: self.enclave.or(d.enclave),
            auto_recovery: self.auto_recovery.or(d.auto_recovery),
        }
    }
}

/// `ebsOptimized`, `cpuOptions`, `cpuCredits`, `enclave` and
/// `autoRecovery` of a group.
pub(super) fn decode_launch_options(d: &mut Decoder, f: &mut Fields<'_>) -> LaunchOptionsSpec {
    LaunchOptionsSpec {
        ebs_optimized: opt_bool(d, f, "", "ebsOptimized"),
        cpu_options: f.get("cpuOptions").and_then(|n| {
            let at = f.key_span("cpuOptions").unwrap_or(n.span);
            decode_cpu_options(d, n, at)
        }),
        cpu_credits: f
            .get("cpuCredits")
            .and_then(|n| d.choice("cpuCredits", n, CPU_CREDITS)),
        enclave: opt_bool(d, f, "", "enclave"),
        auto_recovery: f
            .get("autoRecovery")
            .and_then(|n| d.choice("autoRecovery", n, AUTO_RECOVERY)),
    }
}

/// `cpuOptions` as written.
#[derive(Clone, Default)]
pub(super) struct CpuOptionsSpec {
    pub(super) core_count: Opt<u32>,
    pub(super) threads_per_core: Opt<u32>,
    pub(super) amd_sev_snp: Opt<bool>,
}

/// `cpuOptions: {coreCount, threadsPerCore, amdSevSnp}`, located at its key.
fn decode_cpu_options(
    d: &mut Decoder,
    node: &Node,
    at: crate::source::Span,
) -> Opt<CpuOptionsSpec> {
    let mut f = d.fields("cpuOptions", node, CPU_OPTIONS_FIELDS)?;
    let spec = CpuOptionsSpec {
        // The largest EC2 instance has 448 vCPUs (224 cores of two threads).
        core_count: opt_u32(d, &mut f, "cpuOptions.", "coreCount"),
        threads_per_core: opt_u32(d, &mut f, "cpuOptions.", "threadsPerCore"),
        amd_sev_snp: opt_bool(d, &mut f, "cpuOptions.", "amdSevSnp"),
    };
    f.finish(d, "`cpuOptions`");
    if spec.core_count.is_none() && spec.threads_per_core.is_none() && spec.amd_sev_snp.is_none() {
        if CPU_OPTIONS_FIELDS.iter().any(|field| f.given(field.name)) {
            return None;
        }
        d.error(at, "`cpuOptions` sets nothing").help =
            Some("set `coreCount`, `threadsPerCore` or `amdSevSnp`, or leave it out".into());
        return None;
    }
    Some(Located::new(spec, at))
}

/// The burstable families, whose instances spend CPU credits
/// (`CreditSpecification` applies to T2, T3, T3a and T4g only).
pub(super) fn burstable(instance_type: &str) -> bool {
    matches!(
        instance_type.split('.').next(),
        Some("t2" | "t3" | "t3a" | "t4g")
    )
}

/// AMD SEV-SNP runs on M6a, R6a and C6a instances only (the launch
/// template's `CpuOptions.AmdSevSnp` in the CloudFormation schema).
fn sev_snp_capable(instance_type: &str) -> bool {
    matches!(instance_type.split('.').next(), Some("m6a" | "r6a" | "c6a"))
}

/// Sizes of fewer than 4 vCPUs, which cannot hold a Nitro Enclave: the
/// enclave takes whole cores and the parent keeps at least one core (the
/// Nitro Enclaves User Guide asks for 4 vCPUs).
fn too_small_for_enclave(instance_type: &str) -> bool {
    matches!(
        instance_type.split('.').nth(1),
        Some("nano" | "micro" | "small" | "medium" | "large")
    )
}

/// Checks the passthroughs against the group's instance types (named, or
/// chosen by `instanceRequirements`).
pub(super) fn check_launch_options(
    d: &mut Decoder,
    spec: &LaunchOptionsSpec,
    instance_types: &[Located<String>],
    requirements: Option<&InstanceRequirements>,
) -> LaunchOptions {
    let ebs_optimized = spec.ebs_optimized.as_ref().map(|flag| {
        if flag.value
            && let Some(t2) = instance_types
                .iter()
                .find(|t| t.value.split('.').next() == Some("t2"))
        {
            let message = format!(
                "`ebsOptimized: true` is not available on `{}`: T2 instances are never EBS-optimized",
                t2.value
            );
            d.error(flag.span, message).help =
                Some("use a current type (EBS-optimized by default) or leave `ebsOptimized` out".into());
        }
        flag.value
    });

    let cpu = spec.cpu_options.as_ref().map(|options| {
        let o = &options.value;
        if let Some(cores) = &o.core_count
            && (requirements.is_some() || instance_types.len() != 1)
        {
            d.error(
                cores.span,
                "`cpuOptions.coreCount` needs exactly one instance type",
            )
            .help = Some(
                "each instance type has its own core counts; name one type with `instanceType`, or set only `threadsPerCore`".into(),
            );
        }
        if let Some(sev) = o.amd_sev_snp.as_ref().filter(|s| s.value) {
            if requirements.is_some() {
                d.error(
                    sev.span,
                    "`cpuOptions.amdSevSnp` needs named instance types",
                )
                .help = Some("name M6a, R6a or C6a types instead of `instanceRequirements`".into());
            } else if let Some(other) = instance_types.iter().find(|t| !sev_snp_capable(&t.value)) {
                let message = format!(
                    "AMD SEV-SNP is not available on `{}`",
                    other.value
                );
                d.error(sev.span, message).help =
                    Some("EC2 offers AMD SEV-SNP on M6a, R6a and C6a instances only".into());
            }
        }
        CpuOptions {
            core_count: o.core_count.as_ref().map(|c| c.value),
            threads_per_core: o.threads_per_core.as_ref().map(|t| t.value),
            amd_sev_snp: o.amd_sev_snp.as_ref().is_some_and(|s| s.value),
        }
    });

    let cpu_credits = spec.cpu_credits.as_ref().map(|credits| {
        if requirements.is_some() {
            d.error(
                credits.span,
                "`cpuCredits` needs named burstable instance types",
            )
            .help = Some(
                "`instanceRequirements` leaves burstable types out; name T2, T3, T3a or T4g types".into(),
            );
        } else if let Some(other) = instance_types.iter().find(|t| !burstable(&t.value)) {
            let message = format!(
                "`cpuCredits` applies to burstable instances only, and `{}` is not one",
                other.value
            );
            d.error(credits.span, message).help = Some(
                "CPU credits exist on T2, T3, T3a and T4g instances; remove `cpuCredits` or the other types".into(),
            );
        }
        credits.value
    });

    let enclave = spec
        .enclave
        .as_ref()
        .filter(|e| e.value)
        .is_some_and(|flag| {
            if let Some(requirements) = requirements {
                if requirements.vcpu.min < 4 {
                    d.error(
                        flag.span,
                        "`enclave: true` needs instances of at least 4 vCPUs",
                    )
                    .help = Some("raise `instanceRequirements.vCpuCount.min` to 4".into());
                }
            } else if let Some(other) = instance_types
                .iter()
                .find(|t| burstable(&t.value) || too_small_for_enclave(&t.value))
            {
                let why = if burstable(&other.value) {
                    "burstable (T) instances do not support Nitro Enclaves"
                } else {
                    "a Nitro Enclave needs an instance of at least 4 vCPUs"
                };
                let message = format!(
                    "`enclave: true` is not available on `{}`: {why}",
                    other.value
                );
                d.error(flag.span, message).help = Some(
                    "use `xlarge` or larger sizes of a non-burstable family (`m6i.xlarge`)".into(),
                );
            }
            true
        });

    LaunchOptions {
        ebs_optimized,
        cpu,
        cpu_credits,
        enclave,
        auto_recovery: spec.auto_recovery.as_ref().map(|a| a.value),
    }
}
