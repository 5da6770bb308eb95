//! Node-role permissions that make a node an administrator of the account:
//! the AWS managed policies that grant everything (`AdministratorAccess`)
//! or all of IAM (`IAMFullAccess`), statements that allow on every resource
//! an IAM action that hands out more permissions (`iam:PassRole`,
//! `iam:CreateAccessKey`, `iam:AttachRolePolicy`), and a trust policy that
//! any AWS principal may assume. Whoever runs a pod on the node reaches
//! its role's credentials through the instance metadata service.

use super::hit::{Hit, get, text};
use crate::syntax::{Node, Value};

const FULL_ACCESS: &str = "W5027";
const ESCALATION: &str = "W5028";
const OPEN_TRUST: &str = "W5029";

/// The AWS managed policies that give their role the whole account.
const FULL_ACCESS_POLICIES: &[&str] = &["AdministratorAccess", "IAMFullAccess"];

/// IAM actions with which the holder gives itself (or a service it
/// starts) permissions beyond its own.
const ESCALATING_ACTIONS: &[&str] = &[
    "iam:PassRole",
    "iam:CreateAccessKey",
    "iam:AttachRolePolicy",
];

/// A managed policy ARN (a string, `Fn::Sub` or `Fn::Join`, in any
/// partition) naming one of the policies that grant everything.
pub(super) fn managed_policy(node: &Node) -> Option<Hit> {
    let arn = flatten(node)?;
    let name = FULL_ACCESS_POLICIES
        .iter()
        .find(|name| arn.ends_with(&format!(":iam::aws:policy/{name}")))?;
    Some(Hit::new(
        FULL_ACCESS,
        node,
        format!(
            "the AWS managed policy `{name}` gives the node role, and every pod that reaches the node's credentials, full control of the account's {}",
            if *name == "AdministratorAccess" {
                "resources"
            } else {
                "IAM"
            }
        ),
        "attach the policies the nodes need (`AmazonEKSWorkerNodePolicy` and the add-ons' own), or give pods their permissions through IRSA or EKS Pod Identity",
    ))
}

/// An identity policy statement that allows an escalating action on every
/// resource: one hit per action (or `NotAction`) that covers one.
pub(super) fn statement(node: &Node) -> Vec<Hit> {
    if !allows(node) {
        return Vec::new();
    }
    let every_resource = get(node, &["NotResource"]).is_some()
        || get(node, &["Resource"]).is_some_and(|r| strings(r).iter().any(|(s, _)| s == "*"));
    if !every_resource {
        return Vec::new();
    }
    let mut hits = Vec::new();
    if let Some(actions) = get(node, &["Action"]) {
        for (pattern, at) in strings(actions) {
            let covered: Vec<&str> = ESCALATING_ACTIONS
                .iter()
                .copied()
                .filter(|action| matches(&pattern, action))
                .collect();
            if !covered.is_empty() {
                hits.push(escalation(at, &format!("`{pattern}`"), &covered));
            }
        }
    }
    if let Some(excluded) = get(node, &["NotAction"]) {
        let patterns = strings(excluded);
        let covered: Vec<&str> = ESCALATING_ACTIONS
            .iter()
            .copied()
            .filter(|action| !patterns.iter().any(|(p, _)| matches(p, action)))
            .collect();
        // An intrinsic among the exclusions may exclude anything.
        let opaque = patterns.len() < excluded.as_seq().map_or(1, <[Node]>::len);
        if !covered.is_empty() && !opaque {
            hits.push(escalation(excluded, "`NotAction`", &covered));
        }
    }
    hits
}

fn escalation(node: &Node, written: &str, covered: &[&str]) -> Hit {
    let allowed = match covered {
        [action] if written.eq_ignore_ascii_case(&format!("`{action}`")) => written.to_string(),
        _ => format!("{written} allows {}", crate::suggest::listed(covered)),
    };
    Hit::new(
        ESCALATION,
        node,
        format!(
            "{allowed} on every resource: the node (and any pod that reaches its credentials) can give itself more permissions than its role has"
        ),
        "name the roles or users the nodes may act on in `Resource`, or leave the action out",
    )
}

/// A trust policy statement that lets any AWS principal assume the role.
pub(super) fn trust_statement(node: &Node) -> Vec<Hit> {
    match get(node, &["Principal"]) {
        Some(named) if allows(node) => principal(named),
        _ => Vec::new(),
    }
}

/// A trust policy's `Principal` (or its `AWS` entry) that names every AWS
/// principal: in a statement, or written on its own by an override.
pub(super) fn principal(node: &Node) -> Vec<Hit> {
    let everyone = match &node.value {
        Value::Map(_) => get(node, &["AWS"]).map(strings).unwrap_or_default(),
        _ => strings(node),
    };
    everyone
        .into_iter()
        .filter(|(principal, _)| principal == "*")
        .map(|(_, at)| {
            Hit::new(
                OPEN_TRUST,
                at,
                "the trust policy lets any AWS principal, in any account, assume the node role (`Principal: {AWS: \"*\"}`)".into(),
                "trust the `Service` principal `ec2.amazonaws.com` only, as the generated trust policy does",
            )
        })
        .collect()
}

/// Whether a statement allows (a missing `Effect` is IAM's error, not ours).
fn allows(node: &Node) -> bool {
    get(node, &["Effect"]).and_then(Node::as_str) == Some("Allow")
}

/// The literal strings of a string or a list of them, with their nodes;
/// intrinsics are left out.
fn strings(node: &Node) -> Vec<(String, &Node)> {
    match &node.value {
        Value::Seq(items) => items
            .iter()
            .filter_map(|item| Some((text(item)?.to_string(), item)))
            .collect(),
        _ => text(node)
            .map(|s| vec![(s.to_string(), node)])
            .unwrap_or_default(),
    }
}

/// The text a value makes when every variable in it is left as written:
/// a string, `Fn::Sub`'s text, or the parts of `Fn::Join` joined (a part
/// that is an intrinsic becomes its `${...}` stand-in).
fn flatten(node: &Node) -> Option<String> {
    let (function, argument) = intrinsic(node)?;
    match function {
        None => node.as_str().map(str::to_string),
        Some("Sub") => match &argument.value {
            Value::Seq(items) => items.first()?.as_str().map(str::to_string),
            _ => argument.as_str().map(str::to_string),
        },
        Some("Join") => {
            let [separator, parts] = argument.as_seq()? else {
                return None;
            };
            let parts: Vec<String> = parts
                .as_seq()?
                .iter()
                .map(|part| flatten(part).unwrap_or_else(|| "${}".to_string()))
                .collect();
            Some(parts.join(separator.as_str()?))
        }
        Some(_) => None,
    }
}

/// A value's intrinsic function (short form `!Sub`, long form `Fn::Sub`)
/// and its argument; `None` for the function of a plain value.
fn intrinsic(node: &Node) -> Option<(Option<&str>, &Node)> {
    if let Some(tag) = &node.tag {
        return Some((Some(tag.trim_start_matches('!')), node));
    }
    match node.as_map() {
        Some([(key, argument)]) if key.name.starts_with("Fn::") => {
            Some((key.name.strip_prefix("Fn::"), argument))
        }
        Some(_) => None,
        None => Some((None, node)),
    }
}

/// Whether an IAM action pattern (`*` and `?` wildcards, case-insensitive)
/// matches `action`: the classic greedy match, going back to the last `*`
/// on a mismatch, so that any pattern takes linear time per star.
fn matches(pattern: &str, action: &str) -> bool {
    let (pattern, action) = (pattern.as_bytes(), action.as_bytes());
    let (mut p, mut a) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while a < action.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, a));
                p += 1;
            }
            Some(c) if *c == b'?' || c.eq_ignore_ascii_case(&action[a]) => {
                p += 1;
                a += 1;
            }
            _ => match star {
                Some((star_p, star_a)) => {
                    p = star_p + 1;
                    a = star_a + 1;
                    star = Some((star_p, star_a + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|c| *c == b'*')
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn action_wildcards_match_as_iam_matches_them() {
        assert!(matches("*", "iam:PassRole"));
        assert!(matches("iam:*", "iam:PassRole"));
        assert!(matches("IAM:pass*", "iam:PassRole"));
        assert!(matches("iam:?assRole", "iam:PassRole"));
        assert!(!matches("i*:*Role", "iam:AttachRolePolicy"));
        assert!(matches("i*:*Policy", "iam:AttachRolePolicy"));
        assert!(!matches("iam:Get*", "iam:PassRole"));
        assert!(!matches("iam:PassRol", "iam:PassRole"));
        assert!(!matches("s3:*", "iam:PassRole"));
    }
}
