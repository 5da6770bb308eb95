//! Length limits of the AWS values a blueprint writes, each counted the way
//! the service that enforces it counts: AWS tags in characters, the
//! CloudFormation template description in bytes. Kubernetes names are
//! ASCII only, so their characters and bytes agree (see `rules`).

use super::decode::{Decoder, Located};

/// AWS tag keys hold 1 to 128 Unicode characters and values up to 256,
/// counted in characters, not in the bytes of their UTF-8 encoding
/// (<https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/Using_Tags.html#tag-restrictions>,
/// <https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/allocation-tag-restrictions.html>).
pub const TAG_KEY_MAX_CHARS: usize = 128;
pub const TAG_VALUE_MAX_CHARS: usize = 256;

/// A template's `Description` is a literal string of 0 to 1024 bytes
/// (<https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/template-description-structure.html>):
/// bytes, so a description outside ASCII holds fewer characters.
pub const DESCRIPTION_MAX_BYTES: usize = 1024;

/// The number of characters (Unicode scalar values) in `text`, which is
/// what AWS counts for tags; `str::len` counts UTF-8 bytes.
pub fn characters(text: &str) -> usize {
    text.chars().count()
}

/// Why AWS would refuse this tag key, or `None` when it accepts it.
pub fn tag_key_problem(key: &str) -> Option<String> {
    let length = characters(key);
    if length == 0 {
        return Some("is empty".into());
    }
    if length > TAG_KEY_MAX_CHARS {
        return Some(format!(
            "is {length} characters long; the limit is {TAG_KEY_MAX_CHARS}"
        ));
    }
    // AWS reserves the prefix in any case: `aws:`, `AWS:`, `Aws:`...
    if key
        .get(..4)
        .is_some_and(|prefix| prefix.eq_ignore_ascii_case("aws:"))
    {
        return Some("starts with `aws:`, a prefix AWS reserves".into());
    }
    None
}

/// Why AWS would refuse this tag value, or `None` when it accepts it.
pub fn tag_value_problem(value: &str) -> Option<String> {
    let length = characters(value);
    (length > TAG_VALUE_MAX_CHARS)
        .then(|| format!("is {length} characters long; the limit is {TAG_VALUE_MAX_CHARS}"))
}

/// Why CloudFormation would refuse this template description.
pub fn description_problem(description: &str) -> Option<String> {
    let bytes = description.len();
    (bytes > DESCRIPTION_MAX_BYTES).then(|| {
        format!(
            "is {bytes} bytes long in UTF-8; CloudFormation allows {DESCRIPTION_MAX_BYTES} bytes"
        )
    })
}

pub(super) fn check_tag(d: &mut Decoder, key: &Located<String>, value: &Located<String>) {
    if let Some(problem) = tag_key_problem(&key.value) {
        d.error(key.span, format!("tag key `{}` {problem}", key.value))
            .help = Some(format!(
            "tag keys have 1 to {TAG_KEY_MAX_CHARS} characters and cannot start with `aws:`"
        ));
    }
    if let Some(problem) = tag_value_problem(&value.value) {
        d.error(
            value.span,
            format!("the value of tag `{}` {problem}", key.value),
        );
    }
}

pub(super) fn check_description(d: &mut Decoder, description: &Located<String>) {
    if let Some(problem) = description_problem(&description.value) {
        d.error(description.span, format!("`description` {problem}"))
            .help = Some(
            "shorten it; the limit counts bytes, and a character outside ASCII takes 2 to 4".into(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_lengths_count_characters_at_the_exact_limit() {
        assert_eq!(tag_value_problem(&"a".repeat(256)), None);
        assert_eq!(tag_value_problem(&"é".repeat(256)), None);
        assert_eq!(tag_value_problem(&"日".repeat(256)), None);
        assert_eq!(
            tag_value_problem(&"a".repeat(257)).as_deref(),
            Some("is 257 characters long; the limit is 256")
        );
        assert_eq!(
            tag_value_problem(&"é".repeat(257)).as_deref(),
            Some("is 257 characters long; the limit is 256")
        );
        assert_eq!(tag_key_problem(&"k".repeat(128)), None);
        assert_eq!(tag_key_problem(&"ü".repeat(128)), None);
        assert!(tag_key_problem(&"k".repeat(129)).is_some());
        assert!(tag_key_problem(&"ü".repeat(129)).is_some());
    }

    #[test]
    fn tag_keys_cannot_use_the_aws_prefix_in_any_case() {
        assert!(tag_key_problem("aws:team").is_some());
        assert!(tag_key_problem("AWS:team").is_some());
        assert!(tag_key_problem("Aws:team").is_some());
        assert_eq!(tag_key_problem("awsteam"), None);
        assert_eq!(tag_key_problem("é"), None);
    }

    #[test]
    fn the_description_limit_counts_bytes() {
        assert_eq!(description_problem(&"a".repeat(1024)), None);
        assert!(description_problem(&"a".repeat(1025)).is_some());
        // 512 two-byte characters are exactly 1024 bytes; one more is over.
        assert_eq!(description_problem(&"é".repeat(512)), None);
        assert_eq!(
            description_problem(&"é".repeat(513)).as_deref(),
            Some("is 1026 bytes long in UTF-8; CloudFormation allows 1024 bytes")
        );
    }
}
