//! A node group's `clusterDNS`: the nameservers kubelet gives pods, in
//! place of the DNS IP eksynth derives from the service CIDR (a node-local
//! DNS cache at `169.254.20.10`, for one). Each address is checked where
//! it is written: an IP literal of the cluster's family that pods can
//! reach, listed once, and on Windows a single one.

use std::net::IpAddr;

use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::*;
use crate::source::Span;
use crate::syntax::Node;

/// The most nameservers a pod's `resolv.conf` takes: glibc reads three
/// (`MAXNS`), and kubelet drops the ones past it with a warning
/// (kubernetes `pkg/kubelet/network/dns/dns.go`, `validation.MaxDNSNameservers`).
pub(super) const MAX_NAMESERVERS: u32 = 3;

/// `clusterDNS` as written: one to three IP literals, each listed once.
/// `None` (every mistake reported) when it is not.
pub(super) fn decode_cluster_dns(
    d: &mut Decoder,
    node: &Node,
) -> Option<Located<Vec<Located<String>>>> {
    let items = d.string_list("clusterDNS", node)?;
    if items.is_empty() {
        d.error(node.span, "`clusterDNS` is empty").help = Some(
            "list one to three nameserver addresses, or leave `clusterDNS` out for the service CIDR's DNS IP"
                .into(),
        );
        return None;
    }
    let errors_before = d.diagnostics.iter().filter(|x| x.is_error()).count();
    for (i, item) in items.iter().enumerate() {
        if let Some(problem) = address_problem(&item.value) {
            d.error(
                item.span,
                format!("`clusterDNS` entry `{}` {problem}", item.value),
            )
            .help = Some(
                "write the IP address of a nameserver pods reach, e.g. `169.254.20.10` (a node-local DNS cache) or `fd00:ab12::a`, without a prefix length"
                    .into(),
            );
        } else if items[..i].iter().any(|earlier| same_address(earlier, item)) {
            d.error(
                item.span,
                format!("`clusterDNS` lists `{}` twice", item.value),
            )
            .help = Some("list each nameserver once".into());
        }
    }
    if let Some(extra) = items.get(MAX_NAMESERVERS as usize) {
        d.error(
            extra.span,
            format!("`clusterDNS` lists more than {MAX_NAMESERVERS} nameservers"),
        )
        .help =
            Some("a pod's resolv.conf takes three nameservers; kubelet drops the others".into());
    }
    let errors_after = d.diagnostics.iter().filter(|x| x.is_error()).count();
    (errors_after == errors_before).then(|| Located::new(items, node.span))
}

/// Why `text` is no nameserver address a pod can use, if it is not.
fn address_problem(text: &str) -> Option<&'static str> {
    let Ok(ip) = text.parse::<IpAddr>() else {
        return Some("is not an IP address");
    };
    if ip.is_unspecified() {
        Some("is the unspecified address, which names no nameserver")
    } else if ip.is_loopback() {
        Some("is a loopback address, which inside a pod is the pod itself")
    } else if ip.is_multicast() {
        Some("is a multicast address")
    } else {
        None
    }
}

/// Two spellings of one address (`fd00::a` and `fd00:0::a`) are the same.
fn same_address(a: &Located<String>, b: &Located<String>) -> bool {
    a.value.parse::<IpAddr>().ok() == b.value.parse::<IpAddr>().ok()
}

/// A group's `clusterDNS` and what the rules about it read of the group:
/// where its key is written, and whether the group is managed on the EKS
/// AMI (not a custom one).
pub(super) struct GroupDns<'a> {
    pub(super) addresses: &'a Located<Vec<Located<String>>>,
    pub(super) key_at: Option<Span>,
    pub(super) eks_managed_ami: bool,
}

/// The rules between `clusterDNS` and the rest of the group: addresses of
/// the cluster's IP family, and what Windows nodes can take.
pub(super) fn check_cluster_dns(
    d: &mut Decoder,
    group: &GroupDns<'_>,
    cluster: &Cluster,
    family: AmiFamily,
) {
    let addresses = group.addresses;
    let ipv6_cluster = matches!(cluster.ip_family, Some((IpFamily::Ipv6, _)));
    for address in &addresses.value {
        let Ok(ip) = address.value.parse::<IpAddr>() else {
            continue;
        };
        if ip.is_ipv6() != ipv6_cluster {
            let (this, cluster_family) = if ipv6_cluster {
                ("IPv4", "IPv6")
            } else {
                ("IPv6", "IPv4")
            };
            d.error(
                address.span,
                format!(
                    "`clusterDNS` entry `{}` is an {this} address on an {cluster_family} cluster",
                    address.value
                ),
            )
            .help = Some(ip_family_help(cluster));
        }
    }
    if family.is_windows() {
        check_windows(d, group, family);
    }
}

fn ip_family_help(cluster: &Cluster) -> String {
    match cluster.ip_family {
        Some((IpFamily::Ipv6, at)) => format!(
            "pods on an IPv6 cluster (`cluster.ipFamily: ipv6` at line {}) resolve through IPv6 nameservers",
            at.line
        ),
        _ => "pods on an IPv4 cluster resolve through IPv4 nameservers".into(),
    }
}

/// Windows nodes take the cluster DNS address as `Start-EKSBootstrap.ps1`'s
/// `-DNSClusterIP`, a single string; on the EKS Windows AMI of a managed
/// group EKS runs that script itself.
fn check_windows(d: &mut Decoder, group: &GroupDns<'_>, family: AmiFamily) {
    let addresses = group.addresses;
    if group.eks_managed_ami {
        let at = group.key_at.unwrap_or(addresses.span);
        d.error(
            at,
            format!(
                "`clusterDNS` cannot be set on a managed `{}` group on the EKS AMI",
                family.name()
            ),
        )
        .help = Some("EKS writes that bootstrap itself; pin a custom `ami` to control it".into());
    } else if let Some(second) = addresses.value.get(1) {
        d.error(second.span, "Windows nodes take one `clusterDNS` address")
            .help =
            Some("Start-EKSBootstrap.ps1 takes a single `-DNSClusterIP`; list one address".into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nameserver_is_an_address_pods_can_reach() {
        assert_eq!(address_problem("169.254.20.10"), None);
        assert_eq!(address_problem("fd00:ab12::a"), None);
        assert!(address_problem("10.100.0.0/16").is_some());
        assert!(address_problem("kube-dns").is_some());
        assert!(address_problem("0.0.0.0").is_some());
        assert!(address_problem("127.0.0.53").is_some());
        assert!(address_problem("::1").is_some());
        assert!(address_problem("ff02::1").is_some());
    }

    #[test]
    fn two_spellings_of_one_address_are_the_same_address() {
        let at = |text: &str| Located::new(text.to_string(), Span::default());
        assert!(same_address(&at("fd00:ab12::a"), &at("fd00:ab12:0::a")));
        assert!(!same_address(&at("10.100.0.10"), &at("169.254.20.10")));
    }
}
