//! The finding ID reference of the book (docs/src/reference/findings.md),
//! written from the findings registry and the policy module's rule
//! findings, so that no finding goes undocumented. It stands above both:
//! validation knows nothing of policies.

use crate::diagnostic::Severity;
use crate::validate::FINDINGS;

/// What the findings of each family (the ID's first digit) are about.
const FAMILIES: &[(char, &str)] = &[
    ('0', "Files, transforms and blueprints"),
    ('1', "Resource properties (the provider schemas)"),
    ('2', "References"),
    ('3', "Quotas and sizes"),
    ('4', "Auto Scaling groups"),
    ('5', "Security"),
    ('6', "Tags and EBS volumes"),
    ('7', "Rules across properties"),
    ('8', "EKS"),
    ('9', "Template structure"),
];

/// The findings reference page: every ID of [`FINDINGS`] with its level
/// and meaning, family by family, then the policy rule findings.
pub fn reference() -> String {
    let mut out = String::from(
        "# Finding IDs\n\n\
         <!-- Written by `eksynth::findings_reference::reference` from the findings registry \
         (`eksynth::validate::FINDINGS`) and `eksynth::policy::REFERENCE`; regenerate with `INSTA_UPDATE=always cargo test --test docs`. -->\n\n\
         Every finding `eksynth validate` and `eksynth synth` report, with its level: \
         the first letter of an ID is its level, `E` error, `W` warning, `I` note. \
         A blueprint accepts a finding with a suppression that gives a reason; \
         [Validating templates](../guide/validate.md#findings) says how, and explains \
         the findings that need more words than this table gives them.\n",
    );
    let family_of = |id: &str| id.chars().nth(1).unwrap_or('?');
    let mut families: Vec<(char, &str)> = FAMILIES.to_vec();
    // A family without a title of its own still gets its findings listed.
    for (id, _) in FINDINGS {
        let digit = family_of(id);
        if !families.iter().any(|(known, _)| *known == digit) {
            families.push((digit, "Other findings"));
        }
    }
    for (digit, title) in families {
        let rows: Vec<String> = FINDINGS
            .iter()
            .filter(|(id, _)| family_of(id) == digit)
            .map(|(id, meaning)| {
                let level = Severity::of_id(id).name();
                format!("| `{id}` | {level} | {} |\n", meaning.replace('|', "\\|"))
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "\n## {title}\n\n| ID | level | meaning |\n| --- | --- | --- |\n"
        ));
        out.extend(rows);
    }
    out.push_str(
        "\n## Policy rules (CloudFormation Guard)\n\n\
         A rule file's findings carry the rule's own name \
         ([Policy as code](../guide/policy.md)).\n\n\
         | ID | level | meaning |\n| --- | --- | --- |\n",
    );
    for (id, level, meaning) in crate::policy::REFERENCE {
        out.push_str(&format!("| `{id}` | {level} | {meaning} |\n"));
    }
    out
}
