//! The Auto Scaling group settings of a self-managed group's `lifecycle`
//! beyond its first ones: termination policies, warmup, health checks,
//! scale-in protection, the instance maintenance policy, the zone
//! distribution, deletion protection and lifecycle hooks; and the rules
//! that tie them to the group's load balancers and to CloudFormation's
//! wait for the nodes' signals.

use super::read::{Opt, missing, opt_bool, opt_string, opt_u32};
use crate::blueprint::decode::{Decoder, Fields, Located};
use crate::blueprint::field::{Field, Ty};
use crate::blueprint::rules::{iso_duration_seconds, node_deadline_seconds};
use crate::blueprint::*;
use crate::source::Span;
use crate::syntax::{Node, Value};

/// `lifecycle.terminationPolicies` by name. `OldestLaunchConfiguration`
/// is left out: eksynth's groups launch from launch templates.
pub(in crate::blueprint) const TERMINATION_POLICIES: &[&str] = &[
    "Default",
    "AllocationStrategy",
    "OldestLaunchTemplate",
    "ClosestToNextInstanceHour",
    "NewestInstance",
    "OldestInstance",
];
/// `lifecycle.healthCheckType`, as `HealthCheckType` spells its types.
pub(in crate::blueprint) const HEALTH_CHECK_TYPES: &[&str] = &["EC2", "ELB", "EBS", "VPC_LATTICE"];
/// `lifecycle.availabilityZoneDistribution`.
pub(in crate::blueprint) const ZONE_DISTRIBUTIONS: &[&str] =
    &["balanced-best-effort", "balanced-only"];
/// `lifecycle.deletionProtection`.
pub(in crate::blueprint) const DELETION_PROTECTIONS: &[&str] =
    &["none", "prevent-force-deletion", "prevent-all-deletion"];
/// A hook's `lifecycleTransition`, as Auto Scaling spells it.
pub(in crate::blueprint) const TRANSITIONS: &[&str] = &[LAUNCHING, TERMINATING];
const LAUNCHING: &str = "autoscaling:EC2_INSTANCE_LAUNCHING";
const TERMINATING: &str = "autoscaling:EC2_INSTANCE_TERMINATING";
/// A hook's `defaultResult`.
pub(in crate::blueprint) const DEFAULT_RESULTS: &[&str] = &["ABANDON", "CONTINUE"];
/// What `PutLifecycleHook` takes when `HeartbeatTimeout` is left out.
const DEFAULT_HEARTBEAT_SECONDS: u32 = 3600;
/// The fixed quota "Lifecycle hooks per Auto Scaling group"
/// (<https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-quotas.html>).
pub(in crate::blueprint) const MAX_HOOKS: u32 = 50;

pub(in crate::blueprint) const MAINTENANCE_FIELDS: &[Field] = &[
    Field::new(
        "minHealthyPercentage",
        Ty::integer(0, 100),
        "Percent of the desired capacity kept healthy and in service while \
        instances are replaced",
    )
    .required(),
    Field::new(
        "maxHealthyPercentage",
        Ty::integer(100, 200),
        "Percent of the desired capacity that may be in service or pending \
        while instances are replaced (at most 100 above the minimum)",
    )
    .required(),
];

pub(in crate::blueprint) const HOOK_FIELDS: &[Field] = &[
    Field::new(
        "name",
        Ty::pattern("^[A-Za-z0-9_/-]+$", Some(255)),
        "The hook's name, unique in the group",
    )
    .required(),
    Field::new(
        "lifecycleTransition",
        Ty::OneOf(|| TRANSITIONS.to_vec()),
        "A launch or a termination hook",
    )
    .required(),
    Field::new(
        "heartbeatTimeout",
        Ty::integer(30, 7200),
        "Seconds an instance waits for the hook's action before `defaultResult`",
    )
    .default("3600")
    .long(
        "seconds an instance waits in `Pending:Wait` or `Terminating:Wait` for \
        the hook's action (`CompleteLifecycleAction`) before `defaultResult` \
        applies. A launch hook's must end before the node's own deadline: \
        `signalTimeout`, or the shorter `updatePolicy.pauseTime`, minus 5 \
        minutes (or half of it, when shorter); 600 with the default PT15M",
    ),
    Field::new(
        "defaultResult",
        Ty::OneOf(|| DEFAULT_RESULTS.to_vec()),
        "What happens when the timeout elapses",
    )
    .default("`ABANDON`")
    .long(
        "`CONTINUE` or `ABANDON` when the timeout elapses; `ABANDON` on a launch \
        hook terminates the instance",
    ),
    Field::new(
        "notificationTargetArn",
        Ty::pattern("^arn:", Some(255)),
        "An SNS topic or SQS queue Auto Scaling notifies, with `roleArn`",
    ),
    Field::new(
        "roleArn",
        Ty::pattern("^arn:", Some(255)),
        "The role that lets Auto Scaling publish to `notificationTargetArn`",
    ),
];

/// The settings `decode_lifecycle` reads through this module, as written.
pub(super) struct Settings {
    pub(super) termination_policies: Vec<String>,
    pub(super) default_instance_warmup: Option<u32>,
    pub(super) health_check_types: Opt<Vec<&'static str>>,
    pub(super) protect_from_scale_in: Option<bool>,
    pub(super) instance_maintenance: Option<(u32, u32)>,
    pub(super) availability_zone_distribution: Option<&'static str>,
    pub(super) deletion_protection: Option<&'static str>,
    pub(super) hooks: Vec<LifecycleHook>,
}

/// Reads the settings of `lifecycle` this module declares.
pub(super) fn decode_settings(d: &mut Decoder, f: &mut Fields<'_>) -> Settings {
    let p = "lifecycle.";
    Settings {
        termination_policies: f
            .get("terminationPolicies")
            .and_then(|n| termination_policies(d, n))
            .unwrap_or_default(),
        default_instance_warmup: opt_u32(d, f, p, "defaultInstanceWarmup").map(|v| v.value),
        health_check_types: f.get("healthCheckType").and_then(|n| health_check(d, n)),
        protect_from_scale_in: opt_bool(d, f, p, "protectFromScaleIn").map(|v| v.value),
        instance_maintenance: f
            .get("instanceMaintenancePolicy")
            .and_then(|n| instance_maintenance(d, n)),
        availability_zone_distribution: f
            .get("availabilityZoneDistribution")
            .and_then(|n| {
                d.name_choice(
                    "lifecycle.availabilityZoneDistribution",
                    n,
                    ZONE_DISTRIBUTIONS,
                )
            })
            .map(|c| c.value),
        deletion_protection: f
            .get("deletionProtection")
            .and_then(|n| d.name_choice("lifecycle.deletionProtection", n, DELETION_PROTECTIONS))
            .map(|c| c.value),
        hooks: f.get("hooks").and_then(|n| hooks(d, n)).unwrap_or_default(),
    }
}

/// Termination policies: each a name Auto Scaling knows, or the ARN of a
/// Lambda function that chooses (`arn:…:lambda:…:function:…`), each once.
fn termination_policies(d: &mut Decoder, node: &Node) -> Option<Vec<String>> {
    let field = "lifecycle.terminationPolicies";
    let items = d.string_list(field, node)?;
    if items.is_empty() {
        d.error(node.span, format!("`{field}` is empty")).help =
            Some("list at least one policy, or leave the field out".into());
        return None;
    }
    let mut ok = true;
    for (index, item) in items.iter().enumerate() {
        let known = TERMINATION_POLICIES.contains(&item.value.as_str())
            || is_lambda_function_arn(&item.value);
        if !known {
            ok = false;
            d.error(item.span, format!("`{field}` cannot be `{}`", item.value))
                .help = Some(format!(
                "write one of {}, or a Lambda function's ARN (`arn:${{AWS::Partition}}:lambda:<region>:<account>:function:<name>`)",
                TERMINATION_POLICIES
                    .iter()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        } else if items[..index].iter().any(|i| i.value == item.value) {
            ok = false;
            d.error(item.span, format!("`{field}` lists `{}` twice", item.value))
                .help = Some("list each policy once".into());
        }
    }
    ok.then(|| items.into_iter().map(|i| i.value).collect())
}

/// `arn:<partition>:lambda:<region>:<account>:function:<name>[:<alias>]`,
/// the partition, region and account possibly pseudo parameters, within
/// the provider schema's 1,600 characters.
fn is_lambda_function_arn(text: &str) -> bool {
    let plain = plain_arn(text);
    let parts: Vec<&str> = plain.split(':').collect();
    text.len() <= 1600
        && !plain.contains("${")
        && (7..=8).contains(&parts.len())
        && parts[0] == "arn"
        && parts[2] == "lambda"
        && parts[5] == "function"
        && !parts[6].is_empty()
}

/// `healthCheckType`: one type or a list, each once; `EC2` is always on
/// and may be written.
fn health_check(d: &mut Decoder, node: &Node) -> Opt<Vec<&'static str>> {
    let field = "lifecycle.healthCheckType";
    let nodes: Vec<&Node> = match &node.value {
        Value::Seq(items) if items.is_empty() => {
            d.error(node.span, format!("`{field}` is empty")).help =
                Some("list at least one type, or leave the field out".into());
            return None;
        }
        Value::Seq(items) => items.iter().collect(),
        _ => vec![node],
    };
    let mut types: Vec<&'static str> = Vec::new();
    let mut ok = true;
    for item in nodes {
        match d.name_choice(field, item, HEALTH_CHECK_TYPES) {
            Some(kind) if types.contains(&kind.value) => {
                ok = false;
                d.error(kind.span, format!("`{field}` lists `{}` twice", kind.value));
            }
            Some(kind) => types.push(kind.value),
            None => ok = false,
        }
    }
    ok.then(|| Located::new(types, node.span))
}

/// `instanceMaintenancePolicy`: both percentages, at most 100 apart, as
/// `InstanceMaintenancePolicy` requires.
fn instance_maintenance(d: &mut Decoder, node: &Node) -> Option<(u32, u32)> {
    let context = "lifecycle.instanceMaintenancePolicy";
    let mut f = d.fields(context, node, MAINTENANCE_FIELDS)?;
    let p = "lifecycle.instanceMaintenancePolicy.";
    let min = opt_u32(d, &mut f, p, "minHealthyPercentage");
    let max = opt_u32(d, &mut f, p, "maxHealthyPercentage");
    let reported = f.finish(d, &format!("`{context}`"));
    for (value, name) in [
        (&min, "minHealthyPercentage"),
        (&max, "maxHealthyPercentage"),
    ] {
        if value.is_none() && !f.given(name) && !reported.contains(&name) {
            missing(
                d,
                node.span,
                name,
                &format!("`{context}`"),
                "both percentages: Auto Scaling takes neither alone",
            );
        }
    }
    let (min, max) = (min?, max?);
    if max.value - min.value > 100 {
        let message = format!(
            "`{p}maxHealthyPercentage` ({}) is more than 100 above `minHealthyPercentage` ({})",
            max.value, min.value
        );
        d.error(max.span, message).help = Some(
            "Auto Scaling allows at most 100 between them; raise the minimum or lower the maximum"
                .into(),
        );
        return None;
    }
    Some((min.value, max.value))
}

/// `hooks`: at most [`MAX_HOOKS`], each name once.
fn hooks(d: &mut Decoder, node: &Node) -> Option<Vec<LifecycleHook>> {
    let field = "lifecycle.hooks";
    let Value::Seq(items) = &node.value else {
        d.wrong_type(field, node, "a list of hooks");
        return None;
    };
    if items.is_empty() {
        d.error(node.span, format!("`{field}` is empty")).help =
            Some("list at least one hook, or leave the field out".into());
        return None;
    }
    if let Some(extra) = items.get(MAX_HOOKS as usize) {
        d.error(extra.span, format!("`{field}` lists more than {MAX_HOOKS}"))
            .help = Some(format!(
            "an Auto Scaling group takes at most {MAX_HOOKS} lifecycle hooks (a fixed quota)"
        ));
        return None;
    }
    let mut hooks: Vec<LifecycleHook> = Vec::new();
    let mut ok = true;
    for item in items {
        let Some((hook, name_span)) = hook(d, item) else {
            ok = false;
            continue;
        };
        if hooks.iter().any(|h| h.name == hook.name) {
            ok = false;
            d.error(name_span, format!("two hooks are named `{}`", hook.name))
                .help = Some("a lifecycle hook's name is unique in its group".into());
            continue;
        }
        hooks.push(hook);
    }
    ok.then_some(hooks)
}

/// One hook, and where its name is written. A notification target and
/// its role go together: Auto Scaling needs the role to publish there,
/// and the role means nothing without it.
fn hook(d: &mut Decoder, node: &Node) -> Option<(LifecycleHook, Span)> {
    let context = "a `lifecycle.hooks` item";
    let mut f = d.fields("lifecycle.hooks", node, HOOK_FIELDS)?;
    let p = "lifecycle.hooks.";
    let name = opt_string(d, &mut f, p, "name");
    let transition = f
        .get("lifecycleTransition")
        .and_then(|n| d.name_choice("lifecycle.hooks.lifecycleTransition", n, TRANSITIONS));
    let heartbeat = opt_u32(d, &mut f, p, "heartbeatTimeout");
    let default_result = f
        .get("defaultResult")
        .and_then(|n| d.name_choice("lifecycle.hooks.defaultResult", n, DEFAULT_RESULTS));
    let target = opt_string(d, &mut f, p, "notificationTargetArn");
    let role = opt_string(d, &mut f, p, "roleArn");
    let reported = f.finish(d, context);
    let mut ok = true;
    for (absent, field, help) in [
        (name.is_none(), "name", "a name, e.g. `name: drain`"),
        (
            transition.is_none(),
            "lifecycleTransition",
            "`lifecycleTransition: autoscaling:EC2_INSTANCE_LAUNCHING` or `autoscaling:EC2_INSTANCE_TERMINATING`",
        ),
    ] {
        if absent {
            ok = false;
            if !f.given(field) && !reported.contains(&field) {
                missing(d, node.span, field, context, help);
            }
        }
    }
    if let Some(name) = &name
        && !is_hook_name(&name.value)
    {
        ok = false;
        d.error(
            name.span,
            format!("`{}` is not a lifecycle hook name", name.value),
        )
        .help = Some("use 1 to 255 letters, digits, `-`, `_` and `/`".into());
    }
    ok &= check_notification(d, target.as_ref(), role.as_ref());
    let (name, transition) = (name?, transition?);
    ok.then(|| {
        let hook = LifecycleHook {
            name: name.value,
            transition: transition.value,
            heartbeat_timeout: heartbeat
                .as_ref()
                .map_or(DEFAULT_HEARTBEAT_SECONDS, |h| h.value),
            default_result: default_result.map_or("ABANDON", |r| r.value),
            notification_target_arn: target.map(|t| t.value),
            role_arn: role.map(|r| r.value),
            span: transition.span,
            heartbeat_span: heartbeat.map(|h| h.span),
        };
        (hook, name.span)
    })
}

/// An ARN with its pseudo parameters (`${AWS::Partition}`,
/// `${AWS::Region}`, `${AWS::AccountId}`) replaced by plain words, so that
/// its parts split at `:`.
fn plain_arn(text: &str) -> String {
    text.replace("${AWS::Partition}", "aws")
        .replace("${AWS::Region}", "region")
        .replace("${AWS::AccountId}", "account")
}

/// The service of an ARN (`sns`, `iam`…) and its resource part.
fn arn_service_and_resource(text: &str) -> (String, String) {
    let plain = plain_arn(text);
    let parts: Vec<&str> = plain.splitn(6, ':').collect();
    match parts.as_slice() {
        ["arn", _, service, _, _, resource] => (service.to_string(), resource.to_string()),
        _ => (String::new(), String::new()),
    }
}

fn is_hook_name(name: &str) -> bool {
    (1..=255).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/'))
}

/// A notification target is an SNS topic or an SQS queue, and comes with
/// the IAM role that lets Auto Scaling publish to it; a role alone is an
/// error.
fn check_notification(
    d: &mut Decoder,
    target: Option<&Located<String>>,
    role: Option<&Located<String>>,
) -> bool {
    match (target, role) {
        (Some(target), Some(role)) => {
            let (service, _) = arn_service_and_resource(&target.value);
            let mut ok = true;
            if !matches!(service.as_str(), "sns" | "sqs") {
                ok = false;
                let message = format!(
                    "`lifecycle.hooks.notificationTargetArn` `{}` is not an SNS topic or SQS queue",
                    target.value
                );
                d.error(target.span, message).help = Some(
                    "Auto Scaling notifies an SNS topic or an SQS queue; for EventBridge, leave the target out".into(),
                );
            }
            let (service, resource) = arn_service_and_resource(&role.value);
            let is_role = service == "iam" && resource.starts_with("role/");
            if !is_role {
                ok = false;
                let message = format!(
                    "`lifecycle.hooks.roleArn` `{}` is not an IAM role ARN",
                    role.value
                );
                d.error(role.span, message).help =
                    Some("role ARNs look like `arn:aws:iam::123456789012:role/asg-notify`".into());
            }
            ok
        }
        (Some(target), None) => {
            d.error(
                target.span,
                "`notificationTargetArn` needs `roleArn` in the same hook",
            )
            .help =
                Some("Auto Scaling publishes to the target with that role; add `roleArn`".into());
            false
        }
        (None, Some(role)) => {
            d.error(role.span, "`roleArn` is set without `notificationTargetArn`")
                .help = Some(
                "the role only lets Auto Scaling publish to a notification target; remove it or add the target".into(),
            );
            false
        }
        (None, None) => true,
    }
}

/// The rules between `lifecycle` and the rest of a self-managed group:
///
/// - `ELB` health checks need a load balancer to ask (`targetGroupArns`
///   or `classicLoadBalancerNames`).
/// - A launch hook holds each new instance in `Pending:Wait` until its
///   action completes or `heartbeatTimeout` elapses
///   (<https://docs.aws.amazon.com/autoscaling/ec2/userguide/lifecycle-hooks.html>);
///   only then does the instance go `InService` (or, with `ABANDON`, get
///   terminated). The node boots, joins and signals meanwhile, but
///   CloudFormation waits for the group's new instances for at most the
///   creation policy's `Timeout` (`signalTimeout`) and, in a rolling
///   update, `PauseTime` (the `AutoScalingRollingUpdate` and
///   `CreationPolicy` attributes,
///   <https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-attribute-updatepolicy.html>).
///   A hook that may hold an instance longer lets the stack go on, and
///   the rolling update terminate the old batch, before the new instance
///   is in service, or before an `ABANDON` takes it away. So a launch
///   hook's timeout must end by the node's own deadline for the shorter
///   of the two waits, the margin nodes keep for their signal.
/// - A termination hook in `hooks` and `terminationHookTimeout` would be
///   two draining hooks on the same instances: one is written, not both;
///   and the hook `terminationHookTimeout` makes counts toward the
///   group's [`MAX_HOOKS`].
pub(super) fn check_lifecycle(
    d: &mut Decoder,
    lifecycle: &Lifecycle,
    has_load_balancer: bool,
    signal_timeout: &str,
    pause_time: &str,
) {
    if lifecycle.health_check_types.contains(&"ELB")
        && !has_load_balancer
        && let Some(at) = lifecycle.health_check_span
    {
        d.error(
            at,
            "`lifecycle.healthCheckType: ELB` needs a load balancer to ask",
        )
        .help = Some(
            "register the instances with `targetGroupArns` or `classicLoadBalancerNames`, or leave `ELB` out".into(),
        );
    }
    if lifecycle.termination_hook.is_some()
        && lifecycle.hooks.len() >= MAX_HOOKS as usize
        && let Some(last) = lifecycle.hooks.last()
    {
        d.error(
            last.span,
            format!("`lifecycle.hooks` and `terminationHookTimeout` make more than {MAX_HOOKS} lifecycle hooks"),
        )
        .help = Some(format!(
            "an Auto Scaling group takes at most {MAX_HOOKS}; remove a hook"
        ));
    }
    let seconds = |text: &str| iso_duration_seconds(text).unwrap_or(0) as u32;
    let wait = seconds(signal_timeout).min(seconds(pause_time));
    let deadline = node_deadline_seconds(wait);
    for hook in &lifecycle.hooks {
        if hook.transition == LAUNCHING && hook.heartbeat_timeout > deadline {
            let at = hook.heartbeat_span.unwrap_or(hook.span);
            let written = if hook.heartbeat_span.is_some() {
                ""
            } else {
                " (Auto Scaling's default)"
            };
            let message = format!(
                "launch hook `{}` may hold an instance in Pending:Wait for {}s{written}, past the {deadline}s by which CloudFormation must see it in service",
                hook.name, hook.heartbeat_timeout
            );
            d.error(at, message).help = Some(format!(
                "CloudFormation waits {wait}s for the new instances (the shorter of `signalTimeout` and `updatePolicy.pauseTime`), and the hook's clock starts only once the instance launches; set `heartbeatTimeout` to at most {deadline}, or lengthen the shorter wait"
            ));
        }
        if hook.transition == TERMINATING && lifecycle.termination_hook.is_some() {
            d.error(
                hook.span,
                format!(
                    "termination hook `{}` and `lifecycle.terminationHookTimeout` are both set",
                    hook.name
                ),
            )
            .help = Some(
                "each makes a termination hook that holds every instance until it completes; keep one: this hook (named, with its own target) or `terminationHookTimeout`".into(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lambda_termination_policies_name_a_function() {
        assert!(is_lambda_function_arn(
            "arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:choose"
        ));
        assert!(is_lambda_function_arn(
            "arn:aws:lambda:eu-west-1:123456789012:function:choose:live"
        ));
        assert!(!is_lambda_function_arn(
            "arn:aws:sns:eu-west-1:123456789012:topic"
        ));
    }

    #[test]
    fn arns_with_pseudo_parameters_split_into_their_parts() {
        assert_eq!(
            arn_service_and_resource("arn:${AWS::Partition}:iam::${AWS::AccountId}:role/notify"),
            ("iam".to_string(), "role/notify".to_string())
        );
        assert_eq!(
            arn_service_and_resource("sqs"),
            (String::new(), String::new())
        );
    }
}
