//! `lifecycle.warmPool`: its fields, and the rules a warm pool must keep
//! on each kind of group and image family.

use super::read::{Opt, opt_bool, opt_u32};
use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::field::{Field, Ty, choices};
use crate::blueprint::*;
use crate::syntax::Node;

pub(in crate::blueprint) const WARM_POOL_FIELDS: &[Field] = &[
    Field::new(
        "minSize",
        Ty::integer(0, 10_000),
        "Instances the pool keeps at least",
    )
    .default("0"),
    Field::new(
        "maxPreparedCapacity",
        Ty::integer(1, 10_000),
        "Instances in the group and the pool together, at most",
    )
    .default("the group's `maxSize`"),
    Field::new(
        "poolState",
        Ty::OneOf(|| choices(POOL_STATES)),
        "The state of the pool's instances",
    )
    .default("`Stopped`"),
    Field::new(
        "reuseOnScaleIn",
        Ty::Boolean,
        "Instances go back to the pool on scale-in instead of terminating",
    )
    .default("false"),
];

/// `warmPool.poolState`, as EC2 Auto Scaling spells it.
pub(in crate::blueprint) const POOL_STATES: &[(&str, PoolState)] = &[
    ("Stopped", PoolState::Stopped),
    ("Running", PoolState::Running),
    ("Hibernated", PoolState::Hibernated),
];

/// `lifecycle.warmPool`: the pool's sizes, state and reuse.
pub(super) fn decode_warm_pool(d: &mut Decoder, node: &Node) -> Option<WarmPool> {
    let mut f = d.fields("lifecycle.warmPool", node, WARM_POOL_FIELDS)?;
    let p = "lifecycle.warmPool.";
    let pool = WarmPool {
        min_size: opt_u32(d, &mut f, p, "minSize").map(|v| v.value),
        max_prepared_capacity: opt_u32(d, &mut f, p, "maxPreparedCapacity").map(|v| v.value),
        pool_state: f
            .get("poolState")
            .and_then(|n| d.choice("lifecycle.warmPool.poolState", n, POOL_STATES))
            .unwrap_or_else(|| Located::new(PoolState::Stopped, node.span)),
        reuse_on_scale_in: opt_bool(d, &mut f, p, "reuseOnScaleIn")
            .unwrap_or_else(|| Located::new(false, node.span)),
        span: node.span,
    };
    f.finish(d, "`lifecycle.warmPool`");
    Some(pool)
}

/// What the warm pool's rules read of the group besides the pool: each
/// check is given only these fields.
pub(super) struct Around<'a> {
    pub(super) ami_family: AmiFamily,
    pub(super) is_managed: bool,
    pub(super) ami: &'a Opt<Ami>,
    pub(super) root_encrypted: &'a Opt<bool>,
    pub(super) instance_store: &'a Opt<InstanceStore>,
}

/// The group's warm pool, if it has one, against the rules of its kind of
/// group and image family.
pub(super) fn check_warm_pool(d: &mut Decoder, pool: Option<&WarmPool>, around: &Around<'_>) {
    let Some(pool) = pool else {
        return;
    };
    check_hibernation(d, around.root_encrypted, pool);
    if around.is_managed {
        check_managed(d, around.ami, pool, around.ami_family);
    } else {
        check_self_managed(d, around.instance_store, pool, around.ami_family);
    }
}

/// A hibernated instance writes its memory to its root volume, which EC2
/// requires encrypted (EC2 User Guide, "Prerequisites for EC2 instance
/// hibernation").
fn check_hibernation(d: &mut Decoder, root_encrypted: &Opt<bool>, pool: &WarmPool) {
    let unencrypted = root_encrypted.as_ref().is_some_and(|e| !e.value);
    if pool.pool_state.value == PoolState::Hibernated && unencrypted {
        d.error(
            pool.pool_state.span,
            "a `Hibernated` warm pool needs an encrypted root volume",
        )
        .help = Some(
            "EC2 hibernates only instances whose root volume is encrypted; remove `rootVolume.encrypted: false`".into(),
        );
    }
}

/// A managed group's warm pool, as EKS takes it: only on an EKS AMI, and
/// on Bottlerocket neither hibernated nor reused on scale-in (EKS User
/// Guide, "Decrease latency for applications with long boot times using
/// warm pools with managed node groups", Considerations).
fn check_managed(d: &mut Decoder, ami: &Opt<Ami>, pool: &WarmPool, ami_family: AmiFamily) {
    if let Some(ami) = ami
        && !matches!(ami.value, Ami::Recommended)
    {
        d.error(
            pool.span,
            "a managed group's `lifecycle.warmPool` needs an EKS AMI",
        )
        .help = Some(
            "EKS runs warm pools only on its optimized AMIs; remove `ami` or the warm pool".into(),
        );
        return;
    }
    if ami_family != AmiFamily::Bottlerocket {
        return;
    }
    if pool.pool_state.value == PoolState::Hibernated {
        d.error(
            pool.pool_state.span,
            "a managed Bottlerocket group's warm pool cannot be `Hibernated`",
        )
        .help = Some("EKS keeps Bottlerocket warm pools `Stopped` or `Running`".into());
    }
    if pool.reuse_on_scale_in.value {
        d.error(
            pool.reuse_on_scale_in.span,
            "a managed Bottlerocket group's warm pool cannot take `reuseOnScaleIn`",
        )
        .help = Some("EKS does not return Bottlerocket nodes to the pool; remove it".into());
    }
}

/// A self-managed group's warm pool, on the families whose user data
/// eksynth can hold until the instance is in service (AL2023 and AL2:
/// ARCHITECTURE.md, "Warm pools"), with what an instance in the pool keeps.
fn check_self_managed(
    d: &mut Decoder,
    instance_store: &Opt<InstanceStore>,
    pool: &WarmPool,
    ami_family: AmiFamily,
) {
    let why = match ami_family {
        AmiFamily::AmazonLinux2023 | AmiFamily::AmazonLinux2 => None,
        AmiFamily::Bottlerocket => Some(
            "Bottlerocket starts kubelet from its settings at every boot, with no step eksynth can hold until Auto Scaling puts the instance in service",
        ),
        AmiFamily::Ubuntu(_) => Some(
            "the held join is written for Amazon Linux's kubelet service; Ubuntu's kubelet is the `kubelet-eks` snap",
        ),
        AmiFamily::Windows(_) => Some(
            "Windows user data runs the EKS bootstrap at first boot, with no step eksynth can hold until Auto Scaling puts the instance in service",
        ),
    };
    if let Some(why) = why {
        // EKS runs managed warm pools on its own AMIs only, and has none
        // for Ubuntu.
        let managed = if ami_family.is_ubuntu() {
            ""
        } else {
            ", or a managed group"
        };
        d.error(
            pool.span,
            format!(
                "a self-managed `{}` group cannot have a warm pool: a warmed instance would join the cluster",
                ami_family.name()
            ),
        )
        .help = Some(format!(
            "{why}; use `AmazonLinux2023` or `AmazonLinux2`{managed}"
        ));
        return;
    }
    if pool.pool_state.value != PoolState::Running
        && let Some(store) = instance_store
    {
        let state = if pool.pool_state.value == PoolState::Stopped {
            "Stopped"
        } else {
            "Hibernated"
        };
        d.error(
            pool.pool_state.span,
            format!("a `{state}` warm pool empties the instance store the node prepared"),
        )
        .help = Some(format!(
            "EC2 gives a stopped instance blank instance store disks, and `instanceStore` (line {}) puts kubelet and the container runtime there; use `poolState: Running` or remove `instanceStore`",
            store.span.line
        ));
    }
    if pool.pool_state.value == PoolState::Running && pool.reuse_on_scale_in.value {
        d.error(
            pool.reuse_on_scale_in.span,
            "`reuseOnScaleIn` with a `Running` warm pool keeps a scaled-in node in the cluster",
        )
        .help = Some(
            "an instance returned to a running pool keeps its kubelet running and its pods scheduled; use `poolState: Stopped` or `Hibernated`, or remove `reuseOnScaleIn`".into(),
        );
    }
}
