//! Auto Scaling group sizes, creation and update policies, and the signal
//! wiring between a group and the user data of its launch template.

use super::{Finding, literal, literal_number};
use crate::blueprint::rules::iso_duration_seconds;
use crate::cfn::{Expr, Resource, Template};

const ASG: &str = "AWS::AutoScaling::AutoScalingGroup";

pub fn check(template: &Template, findings: &mut Vec<Finding>) {
    for (id, resource) in &template.resources {
        if resource.kind == ASG {
            check_group(template, id, resource, findings);
        }
    }
}

fn field<'a>(expr: Option<&'a Expr>, key: &str) -> Option<&'a Expr> {
    match expr? {
        Expr::Map(entries) => entries.get(key),
        _ => None,
    }
}

/// `MinSize <= desired <= MaxSize` (`E4002`), each compared when it is a
/// literal: the sizes of an Auto Scaling group or of a managed node
/// group's `ScalingConfig` at `path`, whose desired size is `desired_key`.
pub(super) fn sizes_in_order(
    (min, desired, max): (Option<i64>, Option<i64>, Option<i64>),
    path: &str,
    desired_key: &str,
    findings: &mut Vec<Finding>,
) {
    if let (Some(min), Some(max)) = (min, max)
        && min > max
    {
        findings.push(Finding::new(
            "E4002",
            format!("{path}/MinSize"),
            format!("`MinSize` ({min}) is greater than `MaxSize` ({max})"),
        ));
    }
    if let Some(desired) = desired
        && (min.is_some_and(|min| desired < min) || max.is_some_and(|max| desired > max))
    {
        findings.push(Finding::new(
            "E4002",
            format!("{path}/{desired_key}"),
            format!("`{desired_key}` ({desired}) is outside [MinSize, MaxSize]"),
        ));
    }
}

fn check_group(template: &Template, id: &str, group: &Resource, findings: &mut Vec<Finding>) {
    let props = &group.properties;
    let number = |key: &str| props.get(key).and_then(literal_number);
    let (min, max, desired) = (
        number("MinSize"),
        number("MaxSize"),
        number("DesiredCapacity"),
    );
    let base = format!("Resources/{id}");
    sizes_in_order(
        (min, desired, max),
        &format!("{base}/Properties"),
        "DesiredCapacity",
        findings,
    );

    let rolling = field(group.update_policy.as_ref(), "AutoScalingRollingUpdate");
    let replacing = field(group.update_policy.as_ref(), "AutoScalingReplacingUpdate");
    if let Some(rolling) = rolling {
        let path = format!("{base}/UpdatePolicy/AutoScalingRollingUpdate");
        if let (Some(in_service), Some(max)) = (
            field(Some(rolling), "MinInstancesInService").and_then(literal_number),
            max,
        ) && in_service >= max
        {
            findings.push(
                    Finding::new(
                        "E4001",
                        format!("{path}/MinInstancesInService"),
                        format!("`MinInstancesInService` ({in_service}) must be lower than `MaxSize` ({max})"),
                    )
                    .help("otherwise the update cannot launch a replacement instance and fails"),
                );
        }
        if let Some(pause) = field(Some(rolling), "PauseTime") {
            check_duration(pause, &format!("{path}/PauseTime"), 3600, findings);
        }
        if replacing.is_some() {
            findings.push(
                Finding::new("W4003", format!("{base}/UpdatePolicy"), "both `AutoScalingRollingUpdate` and `AutoScalingReplacingUpdate` are set")
                    .help("`WillReplace` decides which one runs; keep one so that updates behave as reviewed"),
            );
        }
    }

    let signal = field(group.creation_policy.as_ref(), "ResourceSignal");
    if let Some(signal) = signal {
        let path = format!("{base}/CreationPolicy/ResourceSignal");
        if let Some(timeout) = field(Some(signal), "Timeout") {
            check_duration(timeout, &format!("{path}/Timeout"), 43_200, findings);
        }
        let count = field(Some(signal), "Count")
            .and_then(literal_number)
            .unwrap_or(1);
        let launched = desired.or(min);
        if let Some(launched) = launched
            && count > launched
        {
            findings.push(
                    Finding::new(
                        "E4004",
                        format!("{path}/Count"),
                        format!("the creation policy waits for {count} signals but the group starts with {launched} instances"),
                    )
                    .help("the stack would wait until the timeout and roll back; make `Count` at most the initial capacity"),
                );
        }
    }
    let waits_on_update = field(rolling, "WaitOnResourceSignals")
        .is_some_and(|w| matches!(w, Expr::Bool(true)) || literal(w).as_deref() == Some("true"));
    if signal.is_some() || waits_on_update {
        check_signal_wiring(template, id, group, findings);
    }
    if let (Some(rolling), Some(signal)) = (rolling, signal)
        && waits_on_update
    {
        check_pause_time(rolling, signal, &base, findings);
    }
}

/// CloudFormation's `PauseTime` when `WaitOnResourceSignals` is on and it is
/// not set.
const DEFAULT_SIGNAL_PAUSE: &str = "PT5M";

/// A rolling update that waits for signals must wait as long as a node has
/// to signal: the creation policy's `Timeout` says how long that is. A
/// shorter `PauseTime` fails the update of a slow but healthy node, and a
/// node's FAILURE, with its reason, arrives after the update has given up.
fn check_pause_time(rolling: &Expr, signal: &Expr, base: &str, findings: &mut Vec<Finding>) {
    let Some(timeout) = field(Some(signal), "Timeout").and_then(literal) else {
        return;
    };
    let pause = match field(Some(rolling), "PauseTime") {
        Some(pause) => match literal(pause) {
            Some(pause) => pause,
            None => return,
        },
        None => DEFAULT_SIGNAL_PAUSE.to_string(),
    };
    let (Some(pause_seconds), Some(timeout_seconds)) =
        (iso_duration_seconds(&pause), iso_duration_seconds(&timeout))
    else {
        return;
    };
    if pause_seconds < timeout_seconds {
        findings.push(
            Finding::new(
                "W4007",
                format!("{base}/UpdatePolicy/AutoScalingRollingUpdate/PauseTime"),
                format!(
                    "the rolling update waits {pause} for a node's signal, but a node has {timeout} to send it (the creation policy's `Timeout`)"
                ),
            )
            .help(format!(
                "a slow but healthy node fails the update, and a node's FAILURE and its reason arrive after the update gave up; make `PauseTime` at least {timeout} (in a blueprint: leave `updatePolicy.pauseTime` unset, or at least `signalTimeout`)"
            )),
        );
    }
}

fn check_duration(value: &Expr, path: &str, max_seconds: u64, findings: &mut Vec<Finding>) {
    let Some(text) = literal(value) else { return };
    match iso_duration_seconds(&text) {
        Some(seconds) if seconds <= max_seconds => {}
        Some(seconds) => findings.push(Finding::new(
            "E4005",
            path,
            format!("`{text}` is {seconds} seconds; the limit is {max_seconds}"),
        )),
        None => findings.push(
            Finding::new(
                "E4005",
                path,
                format!("`{text}` is not an ISO 8601 duration"),
            )
            .help("write it like `PT15M` or `PT1H30M`"),
        ),
    }
}

/// The group's launch template, when it is one of this template's.
fn launch_template<'a>(
    template: &'a Template,
    group: &Resource,
) -> Option<(&'a str, &'a Resource)> {
    let spec = group.properties.get("LaunchTemplate").or_else(|| {
        field(
            field(
                group.properties.get("MixedInstancesPolicy"),
                "LaunchTemplate",
            ),
            "LaunchTemplateSpecification",
        )
    })?;
    let Some(Expr::Ref(name)) = field(Some(spec), "LaunchTemplateId") else {
        return None;
    };
    template
        .resources
        .get_key_value(name)
        .map(|(k, v)| (k.as_str(), v))
}

/// The text of a launch template's user data. `Fn::Sub` variables with a
/// literal value or a `Ref` are written in; other `${...}` stay as written.
fn user_data_text(launch_template: &Resource) -> Option<String> {
    let data = field(
        launch_template.properties.get("LaunchTemplateData"),
        "UserData",
    )?;
    let Expr::Base64(inner) = data else {
        return None;
    };
    text_of(inner)
}

/// The text of `expr` as [`user_data_text`] reads it. An `Fn::Join` is the
/// text of its items, and an item that is `Fn::Base64` (a MIME part sent
/// base64) counts as the text it encodes: what the node runs.
fn text_of(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Join { delimiter, items } => match items.as_ref() {
            Expr::List(items) => {
                let texts: Option<Vec<String>> = items
                    .iter()
                    .map(|item| match item {
                        Expr::Base64(inner) => text_of(inner),
                        other => text_of(other),
                    })
                    .collect();
                Some(texts?.join(delimiter))
            }
            _ => None,
        },
        Expr::Sub {
            template,
            variables,
        } => {
            // Variables with a known text are filled in; the rest stay
            // `${Name}`.
            Some(crate::cfn::sub::rewrite(template, |name| {
                match variables.get(name)? {
                    Expr::Ref(target) => Some(target.clone()),
                    other => literal(other),
                }
            }))
        }
        other => literal(other),
    }
}

/// A group that waits for signals must have instances that send them, for
/// this group's logical ID.
fn check_signal_wiring(
    template: &Template,
    id: &str,
    group: &Resource,
    findings: &mut Vec<Finding>,
) {
    let Some((lt_id, lt)) = launch_template(template, group) else {
        return;
    };
    let path = format!("Resources/{lt_id}/Properties/LaunchTemplateData/UserData");
    let Some(text) = user_data_text(lt) else {
        return;
    };
    let signals = [
        "cfn-signal",
        "SignalResource",
        "should-signal",
        "signal-resource",
    ]
    .iter()
    .any(|m| text.contains(m));
    if !signals {
        findings.push(
            Finding::new("E4006", path, format!("`{id}` waits for signals, but the user data of `{lt_id}` never sends one"))
                .help("signal SUCCESS from the node once it is healthy, or remove the creation policy and `WaitOnResourceSignals`"),
        );
        return;
    }
    if names(&text, id) {
        return;
    }
    let others: Vec<&str> = template
        .resources
        .iter()
        .filter(|(other, r)| r.kind == ASG && other.as_str() != id && names(&text, other))
        .map(|(other, _)| other.as_str())
        .collect();
    let message = match others.first() {
        Some(other) => format!(
            "the user data of `{lt_id}` signals `{other}`, not `{id}`, which waits for the signals"
        ),
        None => format!(
            "the user data of `{lt_id}` signals, but never for `{id}`, which waits for the signals"
        ),
    };
    findings.push(
        Finding::new("E4006", path, message)
            .help(format!("the signal's logical resource ID must be `{id}`; a signal for another resource leaves this one waiting until its timeout")),
    );
}

/// Whether `text` names `id` as a whole word.
fn names(text: &str, id: &str) -> bool {
    text.match_indices(id).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + id.len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        !word(before) && !word(after)
    })
}
