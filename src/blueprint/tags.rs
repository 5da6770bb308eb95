//! The tag keys eksynth writes itself, and the rule for a user tag with one
//! of them: `Name` replaces the generated value; any other generated key is
//! an error at the user's key, since CloudFormation refuses a resource with
//! a tag key twice. Also the rules of the services a tag reaches besides
//! EC2: IAM (a created role) and Lambda and CloudWatch Logs (the aws-auth
//! provider) take fewer characters.

use super::decode::{Decoder, Located};
use super::{Source, Taint};

/// The tag a user may set to replace eksynth's `<cluster>-<group>-Node`.
pub const NAME: &str = "Name";

const CLUSTER_PREFIX: &str = "kubernetes.io/cluster/";
const AUTOSCALER_PREFIX: &str = "k8s.io/cluster-autoscaler/";

/// What a self-managed group's Auto Scaling group is tagged with besides
/// the user's tags.
pub struct Generated<'a> {
    pub cluster_name: &'a Source,
    /// Whether the cluster autoscaler's tags are written.
    pub autoscaler: bool,
    /// The group's labels, those eksynth adds included.
    pub labels: &'a [(String, String)],
    pub taints: &'a [Located<Taint>],
}

impl Generated<'_> {
    /// What generates `key`, if eksynth writes a tag with that key (or, for
    /// a cluster name only known at deploy time, may write one).
    fn generator(&self, key: &str) -> Option<String> {
        let cluster = match self.cluster_name {
            Source::Literal(name) => Some(name.as_str()),
            Source::Parameter { .. } | Source::Import(_) => None,
        };
        if let Some(rest) = key.strip_prefix(CLUSTER_PREFIX)
            && cluster.is_none_or(|name| name == rest)
        {
            return Some(format!(
                "eksynth tags the Auto Scaling group and its instances `{CLUSTER_PREFIX}<cluster>: owned`"
            ));
        }
        if !self.autoscaler {
            return None;
        }
        let rest = key.strip_prefix(AUTOSCALER_PREFIX)?;
        let discovery = rest == "enabled"
            || match cluster {
                Some(name) => rest == name,
                None => !rest.contains('/'),
            };
        if discovery {
            return Some(format!(
                "the cluster autoscaler's discovery tags `{AUTOSCALER_PREFIX}enabled` and `{AUTOSCALER_PREFIX}<cluster>` are generated"
            ));
        }
        if let Some(label) = rest.strip_prefix("node-template/label/")
            && self.labels.iter().any(|(k, _)| k == label)
        {
            return Some(format!(
                "the scale-from-zero tag of the group's label `{label}` is generated"
            ));
        }
        if let Some(taint) = rest.strip_prefix("node-template/taint/")
            && self.taints.iter().any(|t| t.value.key == taint)
        {
            return Some(format!(
                "the scale-from-zero tag of the group's taint `{taint}` is generated"
            ));
        }
        None
    }
}

/// How many tags AWS allows on an Auto Scaling group.
const AUTO_SCALING_GROUP_TAGS: usize = 50;

/// Reports a group whose Auto Scaling group would carry more tags than AWS
/// allows: the `Name` and cluster tags (a user's `Name` replaces the
/// generated one), the user's tags and, for the cluster autoscaler, its two
/// discovery tags and one tag per label and taint.
pub fn check_count(
    d: &mut Decoder,
    group: &Located<String>,
    tags: &[(Located<String>, Located<String>)],
    generated: &Generated<'_>,
) {
    let user_name = tags.iter().any(|(k, _)| k.value == NAME);
    let autoscaler = if generated.autoscaler {
        2 + generated.labels.len() + generated.taints.len()
    } else {
        0
    };
    let count = 2 - usize::from(user_name) + tags.len() + autoscaler;
    if count > AUTO_SCALING_GROUP_TAGS {
        let message = format!(
            "node group `{}` needs {count} Auto Scaling group tags; AWS allows {AUTO_SCALING_GROUP_TAGS}",
            group.value
        );
        d.error(group.span, message).help =
            Some("remove tags or labels, or set `clusterAutoscaler: false` to drop the node-template tags".into());
    }
}

/// Reports every user tag of a self-managed group whose key eksynth also
/// writes, and every second taint of one key when the cluster autoscaler's
/// tags are on (its node-template tag describes one taint per key).
pub fn check_self_managed(
    d: &mut Decoder,
    tags: &[(Located<String>, Located<String>)],
    generated: &Generated<'_>,
) {
    for (key, _) in tags {
        if let Some(generator) = generated.generator(&key.value) {
            d.error(
                key.span,
                format!("tag `{}` is one eksynth writes itself", key.value),
            )
            .help = Some(format!(
                "{generator}; remove this tag (a tag key may appear once per resource)"
            ));
        }
    }
    if generated.autoscaler {
        for (i, taint) in generated.taints.iter().enumerate() {
            if generated.taints[..i]
                .iter()
                .any(|t| t.value.key == taint.value.key)
            {
                d.error(
                    taint.span,
                    format!(
                        "a second taint with key `{}`: the cluster autoscaler's node-template tag describes one taint per key",
                        taint.value.key
                    ),
                )
                .help = Some(
                    "keep one effect per key, or set `clusterAutoscaler: false` to drop the node-template tags".into(),
                );
            }
        }
    }
}

/// Whether IAM, Lambda and CloudWatch Logs take `text` in a tag: letters,
/// digits, spaces and `_.:/=+-@` (the provider schema's `Tag` pattern of
/// `AWS::IAM::Role`, `^[\p{L}\p{Z}\p{N}_.:/=+\-@]+$`; the Lambda and
/// CloudWatch Logs tagging guides list the same characters).
pub fn iam_text(text: &str) -> bool {
    text.chars().all(|c| {
        c.is_alphanumeric() || (c.is_whitespace() && !c.is_control()) || "_.:/=+-@".contains(c)
    })
}

/// Reports each character IAM refuses in the tags that reach `what` (an
/// IAM role, or the aws-auth provider's role, function and log group), at
/// the key or value that holds it. `Name` names the nodes only and reaches
/// no role.
pub fn check_iam_text(d: &mut Decoder, tags: &[(Located<String>, Located<String>)], what: &str) {
    for (key, value) in tags.iter().filter(|(key, _)| key.value != NAME) {
        for (text, part) in [(key, "key"), (value, "value")] {
            if !iam_text(&text.value) {
                // One message whatever the tag reaches, so that a tag of
                // `defaults` or of the top level is reported once.
                let message = format!(
                    "the {part} of tag `{}` holds a character IAM refuses",
                    key.value
                );
                d.error(text.span, message).help = Some(format!(
                    "the tag reaches {what}, and IAM takes letters, digits, spaces and `_.:/=+-@` only"
                ));
            }
        }
    }
}

/// How many tags IAM keeps on a role.
pub const ROLE_TAGS: usize = 50;

/// Reports a created role whose tags, the group's (but `Name`) with its
/// `iam.roleTags` over them, are more than IAM keeps.
pub fn check_role_count(
    d: &mut Decoder,
    group: &Located<String>,
    tags: &[(Located<String>, Located<String>)],
    role_tags: &[(Located<String>, Located<String>)],
) {
    let extra = tags
        .iter()
        .filter(|(key, _)| {
            key.value != NAME && !role_tags.iter().any(|(k, _)| k.value == key.value)
        })
        .count();
    let count = role_tags.len() + extra;
    if count > ROLE_TAGS {
        let message = format!(
            "the node role of group `{}` would carry {count} tags (its `tags` and `iam.roleTags`); IAM keeps at most {ROLE_TAGS}",
            group.value
        );
        d.error(group.span, message).help =
            Some("remove tags, or give the group an existing role (`iam.roleName`)".into());
    }
}

/// Reports a top-level tag whose key eksynth writes on a shared resource:
/// the node security group's `kubernetes.io/cluster/<cluster>`.
pub fn check_blueprint(
    d: &mut Decoder,
    tags: &[(Located<String>, Located<String>)],
    cluster_name: &Source,
) {
    let generated = Generated {
        cluster_name,
        autoscaler: false,
        labels: &[],
        taints: &[],
    };
    for (key, _) in tags {
        if key.value.starts_with(CLUSTER_PREFIX) && generated.generator(&key.value).is_some() {
            d.error(
                key.span,
                format!("tag `{}` is one eksynth writes itself", key.value),
            )
            .help = Some(format!(
                "eksynth tags the node security group and self-managed groups `{CLUSTER_PREFIX}<cluster>: owned`; remove this tag (a tag key may appear once per resource)"
            ));
        }
    }
}

/// The `Name` tag of a group's resources: the user's, when written, in
/// place of eksynth's.
pub fn user_name(tags: &[(String, String)]) -> Option<&str> {
    tags.iter()
        .find(|(key, _)| key == NAME)
        .map(|(_, value)| value.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{SourceFile, Span};

    #[test]
    fn the_tag_count_takes_the_labels_eksynth_adds() {
        let at = Span::new(1, 1, 1);
        let tags = |n: usize| -> Vec<(Located<String>, Located<String>)> {
            (0..n)
                .map(|i| {
                    (
                        Located::new(format!("team-{i}"), at),
                        Located::new("platform".into(), at),
                    )
                })
                .collect()
        };
        let spot = [("node-lifecycle".to_string(), "spot".to_string())];
        let generated = Generated {
            cluster_name: &Source::Literal("demo".into()),
            autoscaler: true,
            labels: &spot,
            taints: &[],
        };
        let group = Located::new("spot".to_string(), at);
        let errors = |n: usize| {
            let mut d = Decoder::new(vec![SourceFile::new("t.yaml", "x")]);
            check_count(&mut d, &group, &tags(n), &generated);
            d.diagnostics
                .iter()
                .map(|d| d.message.clone())
                .collect::<Vec<_>>()
        };
        // Name, the cluster tag, two discovery tags and the label's: 5.
        assert!(errors(45).is_empty());
        assert_eq!(
            errors(46),
            ["node group `spot` needs 51 Auto Scaling group tags; AWS allows 50"]
        );
    }
}
