//! IPv4 and IPv6 CIDR blocks as security group rules take them, judged by
//! arithmetic: what a string is refused for, the range it stands for, and
//! whether several ranges together cover every address of their family.
//! The blueprint loader checks `ssh.sourceCidrs` with it, and `validate`
//! every literal security group rule, so both say the same thing.
//!
//! What is accepted is what the provider schemas' `ipv4-network` and
//! `ipv6-network` formats take as cfn-lint 1.58.0 asserts them
//! (`cfnlint/jsonschema/_format.py`: Python's `ipaddress.IPv4Network` and
//! `IPv6Network`, strict): an address without spaces or leading zeros in
//! its octets, a decimal prefix length within the family's, and no bit set
//! past the prefix. EC2 itself canonicalizes a block with host bits set to
//! its network (`100.68.0.18/18` is kept as `100.68.0.0/18`: Amazon EC2 API
//! Reference, `IpRange` and `Ipv6Range`), so such a block opens its whole
//! network; [`Cidr::read`] reads a refused string the way a lenient reader
//! would, so that what it would open is still judged.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The two address families.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    V4,
    V6,
}

impl Family {
    pub fn bits(self) -> u32 {
        match self {
            Family::V4 => 32,
            Family::V6 => 128,
        }
    }

    /// The block of every address of the family, as written.
    pub fn everything(self) -> &'static str {
        match self {
            Family::V4 => "0.0.0.0/0",
            Family::V6 => "::/0",
        }
    }
}

/// A CIDR block: its family, network address (host bits cleared) and
/// prefix length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    pub family: Family,
    /// The network address, as a number (an IPv4 address in the low bits).
    pub network: u128,
    pub prefix: u32,
}

/// Why a CIDR string is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    NoSlash,
    /// Spaces or other white space anywhere in it.
    Spaces,
    BadPrefix,
    /// An IPv4 octet written with a leading zero (`010`), which readers
    /// take as decimal or octal.
    LeadingZeros,
    BadAddress,
    PrefixTooLong,
    /// The address has bits set past the prefix; the network EC2 keeps.
    HostBits(Cidr),
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::NoSlash => f.write_str("is not a CIDR (no `/`)"),
            Problem::Spaces => f.write_str("has white space in it"),
            Problem::BadPrefix => f.write_str("has no valid prefix length"),
            Problem::LeadingZeros => f.write_str("has an octet with a leading zero"),
            Problem::BadAddress => f.write_str("is not a CIDR (bad address)"),
            Problem::PrefixTooLong => f.write_str("has a prefix length too long for its address"),
            Problem::HostBits(network) => {
                write!(f, "has host bits set: its network is `{network}`")
            }
        }
    }
}

impl Cidr {
    /// The block a string names, strictly: what the provider schema's
    /// network formats accept.
    pub fn parse(text: &str) -> Result<Cidr, Problem> {
        if text.contains(char::is_whitespace) {
            return Err(Problem::Spaces);
        }
        let (address, prefix) = text.split_once('/').ok_or(Problem::NoSlash)?;
        // Python's `int()` after an ASCII-digits test: leading zeros are
        // fine in a prefix length, signs and spaces are not.
        if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Problem::BadPrefix);
        }
        let address: IpAddr = address.parse().map_err(|_| {
            let zeros = !address.contains(':')
                && address
                    .split('.')
                    .any(|octet| octet.len() > 1 && octet.starts_with('0'));
            if zeros {
                Problem::LeadingZeros
            } else {
                Problem::BadAddress
            }
        })?;
        let (family, value) = match address {
            IpAddr::V4(v4) => (Family::V4, u128::from(u32::from(v4))),
            IpAddr::V6(v6) => (Family::V6, u128::from(v6)),
        };
        // All digits: only a length too large to be a number fails here,
        // and `/00` trims to nothing, which is 0.
        let prefix = match prefix.trim_start_matches('0') {
            "" => 0,
            digits => digits.parse::<u32>().map_err(|_| Problem::PrefixTooLong)?,
        };
        if prefix > family.bits() {
            return Err(Problem::PrefixTooLong);
        }
        let cidr = Cidr {
            family,
            network: value & mask(family, prefix),
            prefix,
        };
        if cidr.network != value {
            return Err(Problem::HostBits(cidr));
        }
        Ok(cidr)
    }

    /// The block a string would open if it were taken leniently: spaces
    /// around it and its parts ignored, leading zeros read as decimal, host
    /// bits cleared as EC2 clears them. `None` when even that reads nothing.
    pub fn read(text: &str) -> Option<Cidr> {
        match Cidr::parse(text) {
            Ok(cidr) | Err(Problem::HostBits(cidr)) => return Some(cidr),
            Err(_) => {}
        }
        let (address, prefix) = text.split_once('/')?;
        let prefix: u32 = prefix.trim().parse().ok()?;
        let address = address.trim();
        let (family, value) = if address.contains(':') {
            (Family::V6, u128::from(address.parse::<Ipv6Addr>().ok()?))
        } else {
            let octets: Vec<u8> = address
                .split('.')
                .map(|octet| octet.trim().parse::<u8>().ok())
                .collect::<Option<_>>()?;
            let octets: [u8; 4] = octets.try_into().ok()?;
            (Family::V4, u128::from(u32::from(Ipv4Addr::from(octets))))
        };
        (prefix <= family.bits()).then(|| Cidr {
            family,
            network: value & mask(family, prefix),
            prefix,
        })
    }

    /// The first and last address of the block.
    fn range(self) -> (u128, u128) {
        let size_bits = self.family.bits() - self.prefix;
        let last = if size_bits == 128 {
            u128::MAX
        } else {
            self.network | ((1u128 << size_bits) - 1)
        };
        (self.network, last)
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.family {
            // An IPv4 network is kept in the low 32 bits.
            Family::V4 => write!(
                f,
                "{}/{}",
                Ipv4Addr::from(u32::try_from(self.network).unwrap_or(u32::MAX)),
                self.prefix
            ),
            Family::V6 => write!(f, "{}/{}", Ipv6Addr::from(self.network), self.prefix),
        }
    }
}

/// The bits of a family's address that a prefix of `prefix` bits keeps.
fn mask(family: Family, prefix: u32) -> u128 {
    let all = match family {
        Family::V4 => u128::from(u32::MAX),
        Family::V6 => u128::MAX,
    };
    if prefix == 0 {
        0
    } else {
        all & !(all >> prefix)
    }
}

/// Whether `blocks` of one family together cover every address of it.
pub fn cover_everything(family: Family, blocks: impl IntoIterator<Item = Cidr>) -> bool {
    let mut ranges: Vec<(u128, u128)> = blocks
        .into_iter()
        .filter(|block| block.family == family)
        .map(Cidr::range)
        .collect();
    ranges.sort_unstable();
    let last = match family {
        Family::V4 => u128::from(u32::MAX),
        Family::V6 => u128::MAX,
    };
    // The first address not covered yet, `None` once past the last one.
    let mut next = Some(0u128);
    for (start, end) in ranges {
        match next {
            // A block inside what is covered already moves nothing.
            Some(first) if start <= first => {
                next = end
                    .checked_add(1)
                    .map(|after| after.max(first))
                    .filter(|n| *n <= last)
            }
            Some(_) => return false,
            None => break,
        }
        if end >= last {
            return true;
        }
    }
    next.is_none()
}

/// How blocks open every address of a family, as indices into the blocks
/// given: each block that is all of it by itself, or, when none is, the
/// blocks in order up to the one that completes the cover together. The
/// loader (`ssh.sourceCidrs`) and `validate` (a security group's rules)
/// both report SSH open to the internet (`E5005`) from it.
#[derive(Debug, PartialEq, Eq)]
pub enum Cover {
    Alone(Vec<usize>),
    Together(Vec<usize>),
}

/// How `blocks` open every address of `family`; `None` when they do not.
pub fn cover(family: Family, blocks: &[Cidr]) -> Option<Cover> {
    let of_family: Vec<usize> = (0..blocks.len())
        .filter(|&i| blocks[i].family == family)
        .collect();
    let alone: Vec<usize> = of_family
        .iter()
        .copied()
        .filter(|&i| blocks[i].prefix == 0)
        .collect();
    if !alone.is_empty() {
        return Some(Cover::Alone(alone));
    }
    let cidrs: Vec<Cidr> = of_family.iter().map(|&i| blocks[i]).collect();
    let end = blocks_to_cover(family, &cidrs)?;
    Some(Cover::Together(of_family[..end].to_vec()))
}

/// How many of `blocks`, taken in order, first cover every address of
/// `family` together; `None` when all of them do not. The rule a finding
/// is reported at is the one that completes the cover. Covering only grows
/// as blocks are added, so the count is found by bisection.
fn blocks_to_cover(family: Family, blocks: &[Cidr]) -> Option<usize> {
    let covers = |count: usize| cover_everything(family, blocks[..count].iter().copied());
    if !covers(blocks.len()) {
        return None;
    }
    // `covers(high)` holds and `covers(low)` does not.
    let (mut low, mut high) = (0, blocks.len());
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if covers(middle) {
            high = middle;
        } else {
            low = middle;
        }
    }
    Some(high)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(texts: &[&str]) -> Vec<Cidr> {
        texts.iter().map(|t| Cidr::read(t).unwrap()).collect()
    }

    #[test]
    fn strict_parsing_refuses_what_the_network_formats_refuse() {
        assert!(Cidr::parse("10.0.0.0/16").is_ok());
        assert!(Cidr::parse("0.0.0.0/00").is_ok());
        assert!(Cidr::parse("2001:db8::/32").is_ok());
        assert_eq!(Cidr::parse("000.0.0.0/0"), Err(Problem::LeadingZeros));
        assert_eq!(Cidr::parse(" 0.0.0.0/0"), Err(Problem::Spaces));
        assert_eq!(Cidr::parse("0.0.0.0/ 0"), Err(Problem::Spaces));
        assert_eq!(Cidr::parse("1.2.3/8"), Err(Problem::BadAddress));
        assert_eq!(Cidr::parse("0.0.0.0/+0"), Err(Problem::BadPrefix));
        assert_eq!(Cidr::parse("10.0.0.0/33"), Err(Problem::PrefixTooLong));
        assert_eq!(Cidr::parse("bastion"), Err(Problem::NoSlash));
        assert_eq!(
            Cidr::parse("0.0.0.1/0").map_err(|p| p.to_string()),
            Err("has host bits set: its network is `0.0.0.0/0`".to_string())
        );
        assert_eq!(
            Cidr::parse("8000::1/1").map_err(|p| p.to_string()),
            Err("has host bits set: its network is `8000::/1`".to_string())
        );
    }

    #[test]
    fn lenient_reading_finds_the_block_a_refused_string_names() {
        for text in ["000.0.0.0/0", " 0.0.0.0/0", "0.0.0.1/0", "0.0.0.0/ 00"] {
            assert_eq!(Cidr::read(text).unwrap().to_string(), "0.0.0.0/0", "{text}");
        }
        assert_eq!(Cidr::read("010.1.2.3/8").unwrap().to_string(), "10.0.0.0/8");
        assert_eq!(Cidr::read("bastion"), None);
        assert_eq!(Cidr::read("1.2.3/8"), None);
    }

    #[test]
    fn pieces_that_cover_a_family_are_found() {
        assert!(cover_everything(Family::V4, blocks(&["0.0.0.0/0"])));
        assert!(cover_everything(
            Family::V4,
            blocks(&["128.0.0.0/1", "0.0.0.0/1"])
        ));
        assert!(cover_everything(
            Family::V4,
            blocks(&["0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/1", "10.0.0.0/8"])
        ));
        assert!(!cover_everything(
            Family::V4,
            blocks(&["0.0.0.0/2", "128.0.0.0/1"])
        ));
        assert!(!cover_everything(
            Family::V4,
            blocks(&["0.0.0.0/1", "128.0.0.0/2"])
        ));
        assert!(cover_everything(Family::V6, blocks(&["::/1", "8000::/1"])));
        assert!(!cover_everything(
            Family::V6,
            blocks(&["::/1", "0.0.0.0/0"])
        ));
        assert!(!cover_everything(Family::V6, blocks(&["::/1", "c000::/2"])));
        assert!(!cover_everything(Family::V4, Vec::new()));
        let pieces = blocks(&[
            "10.0.0.0/8",
            "0.0.0.0/1",
            "172.16.0.0/12",
            "128.0.0.0/1",
            "::/1",
        ]);
        assert_eq!(blocks_to_cover(Family::V4, &pieces), Some(4));
        assert_eq!(blocks_to_cover(Family::V6, &pieces), None);
        assert_eq!(
            cover(Family::V4, &pieces),
            Some(Cover::Together(vec![0, 1, 2, 3]))
        );
        assert_eq!(cover(Family::V6, &pieces), None);
        let whole = blocks(&["0.0.0.0/1", "::/0", "128.0.0.0/1", "0.0.0.1/0"]);
        assert_eq!(cover(Family::V4, &whole), Some(Cover::Alone(vec![3])));
        assert_eq!(cover(Family::V6, &whole), Some(Cover::Alone(vec![1])));
    }
}
