//! The syntax rules the blueprint must respect because Kubernetes, kubelet
//! or AWS will refuse anything else: label keys and values, taints, names,
//! CIDRs and durations.

/// Whether `id` is an EC2 resource ID of `kind` (`sg`, `vpc`): the prefix,
/// a dash, and 8 or 17 lower case hexadecimal digits, as EC2 writes them.
pub fn is_ec2_id(kind: &str, id: &str) -> bool {
    id.strip_prefix(kind)
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|hex| {
            (hex.len() == 8 || hex.len() == 17)
                && hex
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        })
}

/// Why a Kubernetes label key or value is not valid, or `None` when it is.
pub fn label_key_problem(key: &str) -> Option<String> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix
        && let Some(problem) = dns_subdomain_problem(prefix)
    {
        return Some(format!("its prefix `{prefix}` {problem}"));
    }
    if name.is_empty() {
        return Some("its name part is empty".to_string());
    }
    qualified_name_problem(name).map(|p| format!("its name part `{name}` {p}"))
}

pub fn label_value_problem(value: &str) -> Option<String> {
    if value.is_empty() {
        return None;
    }
    qualified_name_problem(value)
}

/// A name segment: at most 63 characters, alphanumerics with `-`, `_` and
/// `.` inside, beginning and ending alphanumeric. Kubernetes allows ASCII
/// only, so the characters are checked first: a name outside ASCII is
/// refused for what it holds, never for a length counted in bytes.
fn qualified_name_problem(name: &str) -> Option<String> {
    let alnum = |c: char| c.is_ascii_alphanumeric();
    if let Some(bad) = name
        .chars()
        .find(|c| !(alnum(*c) || matches!(c, '-' | '_' | '.')))
    {
        return Some(format!(
            "contains `{bad}`; only ASCII letters, digits, `-`, `_` and `.` are allowed"
        ));
    }
    if name.len() > 63 {
        return Some(format!(
            "is {} characters long; the limit is 63",
            name.len()
        ));
    }
    if !name.starts_with(alnum) || !name.ends_with(alnum) {
        return Some("must begin and end with a letter or digit".to_string());
    }
    None
}

fn dns_subdomain_problem(prefix: &str) -> Option<String> {
    // The characters are checked first (see `qualified_name_problem`), so
    // the length below counts ASCII characters.
    for part in prefix.split('.') {
        let ok = !part.is_empty()
            && part.len() <= 63
            && part
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !part.starts_with('-')
            && !part.ends_with('-');
        if !ok {
            return Some(
                "must be a DNS subdomain: lowercase letters, digits, `-` and `.`".to_string(),
            );
        }
    }
    if prefix.len() > 253 {
        return Some("must be a DNS subdomain of 1 to 253 characters".to_string());
    }
    None
}

/// kubelet refuses `--node-labels` in the `kubernetes.io` and `k8s.io`
/// namespaces, except for these keys and the `kubelet.kubernetes.io` and
/// `node.kubernetes.io` prefixes.
const KUBELET_ALLOWED_KEYS: &[&str] = &[
    "beta.kubernetes.io/arch",
    "beta.kubernetes.io/instance-type",
    "beta.kubernetes.io/os",
    "failure-domain.beta.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "kubernetes.io/arch",
    "kubernetes.io/hostname",
    "kubernetes.io/os",
    "node.kubernetes.io/instance-type",
    "topology.kubernetes.io/region",
    "topology.kubernetes.io/zone",
];

/// Why kubelet would refuse to register a node with this label key.
pub fn kubelet_refuses_label(key: &str) -> Option<String> {
    let (prefix, _) = key.rsplit_once('/')?;
    let restricted =
        |namespace: &str| prefix == namespace || prefix.ends_with(&format!(".{namespace}"));
    if !(restricted("kubernetes.io") || restricted("k8s.io")) {
        return None;
    }
    let allowed_prefix = ["kubelet.kubernetes.io", "node.kubernetes.io"]
        .iter()
        .any(|p| prefix == *p || prefix.ends_with(&format!(".{p}")));
    if allowed_prefix || KUBELET_ALLOWED_KEYS.contains(&key) {
        return None;
    }
    Some(format!(
        "kubelet refuses to set labels with the prefix `{prefix}` (the kubernetes.io and k8s.io namespaces are reserved)"
    ))
}

/// Why an IPv4 CIDR cannot be an EKS service CIDR; `Ok` gives the cluster
/// DNS IP (the `.10` address of the range).
pub fn service_cidr_dns_ip(cidr: &str) -> Result<String, String> {
    let Some((address, prefix)) = cidr.split_once('/') else {
        return Err("is not a CIDR block like `10.100.0.0/16`".to_string());
    };
    let octets: Vec<u8> = address.split('.').filter_map(|o| o.parse().ok()).collect();
    if octets.len() != 4 || address.split('.').count() != 4 {
        return Err(format!("has `{address}`, which is not an IPv4 address"));
    }
    let prefix: u32 = prefix
        .parse()
        .map_err(|_| format!("has the prefix length `{prefix}`, which is not a number"))?;
    if !(12..=24).contains(&prefix) {
        return Err(format!(
            "has the prefix length /{prefix}; EKS accepts /12 to /24"
        ));
    }
    let value = u32::from_be_bytes([octets[0], octets[1], octets[2], octets[3]]);
    let mask = u32::MAX << (32 - prefix);
    if value & !mask != 0 {
        return Err(format!(
            "has host bits set; the network address is {}",
            std::net::Ipv4Addr::from(value & mask)
        ));
    }
    Ok(std::net::Ipv4Addr::from(value + 10).to_string())
}

/// The most a node keeps back from CloudFormation's timeout: CloudFormation's
/// clock starts when it creates or updates the group, before the instance
/// is launched and boots, and the signal's retries take time too.
pub const SIGNAL_MARGIN_SECONDS: u32 = 300;

/// How long after its user data starts a node waits for kubelet and its
/// registration before it signals FAILURE: CloudFormation's timeout minus [`SIGNAL_MARGIN_SECONDS`],
/// or half the timeout when that is shorter, so that the FAILURE and its
/// reason reach CloudFormation while it still waits.
pub fn node_deadline_seconds(timeout_seconds: u32) -> u32 {
    timeout_seconds - SIGNAL_MARGIN_SECONDS.min(timeout_seconds / 2)
}

/// Checks an ISO 8601 duration of the `PT#H#M#S` form CloudFormation uses
/// for timeouts and pause times; returns the number of seconds.
pub fn iso_duration_seconds(text: &str) -> Option<u64> {
    let rest = text.strip_prefix("PT")?;
    if rest.is_empty() {
        return None;
    }
    let mut seconds = 0u64;
    let mut number = String::new();
    let mut last_unit = 0;
    for c in rest.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let (unit, order) = match c {
            'H' => (3600, 1),
            'M' => (60, 2),
            'S' => (1, 3),
            _ => return None,
        };
        if number.is_empty() || order <= last_unit {
            return None;
        }
        seconds = seconds.checked_add(number.parse::<u64>().ok()?.checked_mul(unit)?)?;
        number.clear();
        last_unit = order;
    }
    number.is_empty().then_some(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_keys_follow_kubernetes_syntax() {
        assert_eq!(label_key_problem("env"), None);
        assert_eq!(label_key_problem("example.com/team-a"), None);
        assert!(label_key_problem("-env").is_some());
        assert!(label_key_problem("Example.com/x").is_some());
        assert!(label_key_problem("a/b/c").is_some());
        assert!(label_key_problem(&"x".repeat(64)).is_some());
        assert!(label_key_problem("example.com/").is_some());
    }

    #[test]
    fn label_values_may_be_empty_but_not_malformed() {
        assert_eq!(label_value_problem(""), None);
        assert_eq!(label_value_problem("staging_1.a"), None);
        assert!(label_value_problem("a b").is_some());
        assert!(label_value_problem("a-").is_some());
    }

    #[test]
    fn label_lengths_are_checked_at_the_exact_limit_and_non_ascii_for_its_characters() {
        assert_eq!(label_value_problem(&"v".repeat(63)), None);
        assert_eq!(
            label_value_problem(&"v".repeat(64)).as_deref(),
            Some("is 64 characters long; the limit is 63")
        );
        assert_eq!(label_key_problem(&"k".repeat(63)), None);
        // 32 characters, 64 bytes: refused for `é`, not for a length.
        assert_eq!(
            label_value_problem(&"é".repeat(32)).as_deref(),
            Some("contains `é`; only ASCII letters, digits, `-`, `_` and `.` are allowed")
        );
        assert_eq!(
            label_value_problem(&"é".repeat(63)).as_deref(),
            Some("contains `é`; only ASCII letters, digits, `-`, `_` and `.` are allowed")
        );
        let prefix = format!("{}/name", "é".repeat(200));
        assert!(label_key_problem(&prefix).is_some_and(|p| p.contains("lowercase letters")));
        let long_prefix = format!("{}/name", vec!["a".repeat(63); 4].join("."));
        assert!(label_key_problem(&long_prefix).is_some_and(|p| p.contains("1 to 253")));
    }

    #[test]
    fn kubelet_reserved_prefixes_are_refused_except_the_allowed_ones() {
        assert!(kubelet_refuses_label("kubernetes.io/role").is_some());
        assert!(kubelet_refuses_label("node-role.kubernetes.io/worker").is_some());
        assert!(kubelet_refuses_label("k8s.io/foo").is_some());
        assert_eq!(kubelet_refuses_label("node.kubernetes.io/lifecycle"), None);
        assert_eq!(kubelet_refuses_label("topology.kubernetes.io/zone"), None);
        assert_eq!(kubelet_refuses_label("example.com/role"), None);
        assert_eq!(kubelet_refuses_label("role"), None);
    }

    #[test]
    fn service_cidr_gives_the_dns_ip() {
        assert_eq!(
            service_cidr_dns_ip("10.100.0.0/16").as_deref(),
            Ok("10.100.0.10")
        );
        assert_eq!(
            service_cidr_dns_ip("172.20.0.0/16").as_deref(),
            Ok("172.20.0.10")
        );
        assert!(service_cidr_dns_ip("10.100.0.1/16").is_err());
        assert!(service_cidr_dns_ip("10.100.0.0/8").is_err());
        assert!(service_cidr_dns_ip("10.100.0.0").is_err());
        assert!(service_cidr_dns_ip("10.300.0.0/16").is_err());
    }

    #[test]
    fn durations_are_iso_8601_time_parts_in_order() {
        assert_eq!(iso_duration_seconds("PT15M"), Some(900));
        assert_eq!(iso_duration_seconds("PT1H30M"), Some(5400));
        assert_eq!(iso_duration_seconds("PT90S"), Some(90));
        assert_eq!(iso_duration_seconds("PT"), None);
        assert_eq!(iso_duration_seconds("15M"), None);
        assert_eq!(iso_duration_seconds("PT5M1H"), None);
        assert_eq!(iso_duration_seconds("PT5"), None);
    }
}
