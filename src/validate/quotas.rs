//! CloudFormation quotas: resource, parameter and output counts, logical
//! IDs, template size, and user data size.

use super::{Context, Finding, literal};
use crate::cfn::{Expr, Template};

const MAX_RESOURCES: usize = 500;
const MAX_PARAMETERS: usize = 200;
const MAX_OUTPUTS: usize = 200;
const MAX_LOGICAL_ID: usize = 255;
/// A count above this share of its limit is reported (`W3009`): a stack
/// should stay well under the limits, so that it can still grow.
const NEAR_LIMIT_PERCENT: usize = 80;
const INLINE_DEPLOY_BYTES: usize = 51_200;
const MAX_TEMPLATE_BYTES: usize = 1_000_000;
const MAX_USER_DATA_BYTES: usize = 16 * 1024;

pub fn check(template: &Template, context: &Context<'_>, findings: &mut Vec<Finding>) {
    let split = context.split_help;
    let counts = [
        (
            "E3001",
            "Resources",
            template.resources.len(),
            MAX_RESOURCES,
            "resources",
        ),
        (
            "E3002",
            "Parameters",
            template.parameters.len(),
            MAX_PARAMETERS,
            "parameters",
        ),
        (
            "E3003",
            "Outputs",
            template.outputs.len(),
            MAX_OUTPUTS,
            "outputs",
        ),
    ];
    for (id, section, count, limit, what) in counts {
        if count > limit {
            findings.push(
                Finding::new(
                    id,
                    section,
                    format!("{count} {what}; CloudFormation allows {limit}"),
                )
                .help(split),
            );
        } else if count > limit * NEAR_LIMIT_PERCENT / 100 {
            findings.push(
                Finding::new(
                    "W3009",
                    section,
                    format!(
                        "{count} {what}, close to CloudFormation's limit of {limit}: a few more node groups will not fit"
                    ),
                )
                .help(format!("to keep room to grow, {split}")),
            );
        }
    }
    let sections = [
        ("Parameters", template.parameters.keys().collect::<Vec<_>>()),
        ("Resources", template.resources.keys().collect()),
        ("Outputs", template.outputs.keys().collect()),
        ("Conditions", template.conditions.keys().collect()),
        ("Mappings", template.mappings.keys().collect()),
    ];
    for (section, names) in sections {
        for name in names {
            let valid = !name.is_empty()
                && name.len() <= MAX_LOGICAL_ID
                && name.chars().all(|c| c.is_ascii_alphanumeric());
            if !valid {
                findings.push(
                    Finding::new(
                        "E3004",
                        format!("{section}/{name}"),
                        format!("`{name}` is not a valid logical ID"),
                    )
                    .help("logical IDs have 1 to 255 letters and digits"),
                );
            }
        }
    }
    if let Some(bytes) = context.template_bytes {
        if bytes > MAX_TEMPLATE_BYTES {
            findings.push(
                Finding::new("E3006", "", format!("the template is {bytes} bytes; CloudFormation accepts at most {MAX_TEMPLATE_BYTES}"))
                    .help(split),
            );
        } else if bytes > INLINE_DEPLOY_BYTES {
            findings.push(
                Finding::new(
                    "I3005",
                    "",
                    format!("the template is {bytes} bytes; `aws cloudformation deploy` sends at most {INLINE_DEPLOY_BYTES} inline"),
                )
                .help("deploy it with `aws cloudformation deploy --s3-bucket BUCKET` (or `aws cloudformation package --s3-bucket BUCKET` first), which uploads it to S3"),
            );
        }
    }
    for (id, resource) in &template.resources {
        if resource.kind != "AWS::EC2::LaunchTemplate" {
            continue;
        }
        let Some(Expr::Map(data)) = resource.properties.get("LaunchTemplateData") else {
            continue;
        };
        let Some(user_data) = data.get("UserData") else {
            continue;
        };
        let path = format!("Resources/{id}/Properties/LaunchTemplateData/UserData");
        check_user_data(user_data, &path, findings);
    }
}

/// User data must be base64 text of at most 16 KB once decoded. Its size
/// is counted with every `${...}` substitution left out, so the real size
/// is at least this.
fn check_user_data(user_data: &Expr, path: &str, findings: &mut Vec<Finding>) {
    let inner = match user_data {
        Expr::Base64(inner) => inner.as_ref(),
        Expr::Ref(_) | Expr::If { .. } | Expr::ImportValue(_) | Expr::FindInMap { .. } => return,
        Expr::String(text) if is_base64(text) => {
            let size = text.trim_end_matches('=').len() * 3 / 4;
            if size > MAX_USER_DATA_BYTES {
                findings.push(Finding::new(
                    "E3007",
                    path,
                    format!("user data is {size} bytes; EC2 accepts at most {MAX_USER_DATA_BYTES}"),
                ));
            }
            return;
        }
        _ => {
            findings.push(
                Finding::new("E3008", path, "`UserData` is not wrapped in `Fn::Base64`")
                    .help("EC2 expects base64 user data; write `UserData: !Base64 ...`"),
            );
            return;
        }
    };
    let size = text_size(inner);
    if size > MAX_USER_DATA_BYTES {
        findings.push(
            Finding::new(
                "E3007",
                path,
                format!(
                    "user data is at least {size} bytes; EC2 accepts at most {MAX_USER_DATA_BYTES}"
                ),
            )
            .help("move long scripts to S3 or SSM and fetch them at boot"),
        );
    }
}

/// The size of user data text once CloudFormation has filled it in, each
/// value it cannot know (`${Name}`, a `Ref`) counted as nothing. An
/// `Fn::Join` is the size of its items, and an item that is `Fn::Base64`
/// (a MIME part sent base64) counts as EC2 receives it, four bytes for
/// every three of its text.
fn text_size(expr: &Expr) -> usize {
    match expr {
        Expr::Sub { template, .. } => substituted_size(template),
        Expr::Join { delimiter, items } => match items.as_ref() {
            Expr::List(items) => {
                let delimiters = delimiter.len() * items.len().saturating_sub(1);
                let texts: usize = items
                    .iter()
                    .map(|item| match item {
                        Expr::Base64(inner) => text_size(inner).div_ceil(3) * 4,
                        other => text_size(other),
                    })
                    .sum();
                texts + delimiters
            }
            _ => 0,
        },
        other => literal(other).map_or(0, |text| text.len()),
    }
}

/// Text that is already base64: what EC2 expects without `Fn::Base64`.
fn is_base64(text: &str) -> bool {
    !text.is_empty()
        && text.len().is_multiple_of(4)
        && text
            .trim_end_matches('=')
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '/')
        && text.len() - text.trim_end_matches('=').len() <= 2
}

/// The length of a `Fn::Sub` template after substitution, counting each
/// `${Name}` as nothing and each `${!x}` as `${x}`.
fn substituted_size(template: &str) -> usize {
    let mut size = 0;
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        size += start;
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return size + rest.len() - start;
        };
        if let Some(literal) = after[..end].strip_prefix('!') {
            size += literal.len() + 3;
        }
        rest = &after[end + 1..];
    }
    size + rest.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitutions_count_as_nothing_and_escapes_as_themselves() {
        assert_eq!(substituted_size("abc"), 3);
        assert_eq!(substituted_size("a${X}b"), 2);
        assert_eq!(substituted_size("a${!X}b"), 6);
        assert_eq!(substituted_size("a${X"), 4);
    }

    #[test]
    fn a_join_counts_its_items_its_delimiters_and_a_base64_item_encoded() {
        let join = Expr::join(
            "--",
            vec![
                Expr::str("abc"),
                Expr::base64(Expr::str("abcd")),
                Expr::reference("Unknown"),
            ],
        );
        assert_eq!(text_size(&join), 3 + 8 + 2 * 2);
    }
}
