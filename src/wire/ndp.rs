//! IPv6 neighbour discovery (RFC 4861), as a view over an ICMPv6 message
//! etherparse has found: the target address, an advertisement's flags and
//! the link-layer address options, which the summary line names. RoCE v2
//! over IPv6 resolves its peers' MACs by it, as IPv4 does by ARP.

use std::net::Ipv6Addr;

pub const ROUTER_SOLICIT: u8 = 133;
pub const ROUTER_ADVERT: u8 = 134;
pub const NEIGHBOR_SOLICIT: u8 = 135;
pub const NEIGHBOR_ADVERT: u8 = 136;
pub const REDIRECT: u8 = 137;

/// Option types: the sender's and the target's link-layer address.
pub const SOURCE_LINK_ADDR: u8 = 1;
pub const TARGET_LINK_ADDR: u8 = 2;

/// The target address of a neighbour solicitation, advertisement or
/// redirect (after the type, code, checksum and 4 bytes of flags or
/// reserved).
pub fn target(msg: &[u8]) -> Option<Ipv6Addr> {
    let b: [u8; 16] = msg.get(8..24)?.try_into().ok()?;
    Some(Ipv6Addr::from(b))
}

/// A neighbour advertisement's flags as tshark lists them: `rtr, sol, ovr`
/// (those set), or `none`.
pub fn advert_flags(msg: &[u8]) -> String {
    let flags = msg.get(4).copied().unwrap_or(0);
    let set: Vec<&str> = [(0x80, "rtr"), (0x40, "sol"), (0x20, "ovr")]
        .into_iter()
        .filter(|(bit, _)| flags & bit != 0)
        .map(|(_, name)| name)
        .collect();
    if set.is_empty() {
        "none".into()
    } else {
        set.join(", ")
    }
}

/// Where a message's options start, for the messages that have them.
fn options_at(kind: u8) -> Option<usize> {
    Some(match kind {
        ROUTER_SOLICIT => 8,
        ROUTER_ADVERT => 16,
        NEIGHBOR_SOLICIT | NEIGHBOR_ADVERT => 24,
        REDIRECT => 40,
        _ => return None,
    })
}

/// The source and target link-layer address options that hold a MAC (an
/// option of 8 bytes), in order, as (option type, MAC). Options are walked
/// by their lengths (in 8-byte units) while they are captured whole; a
/// length of 0 ends the walk, as RFC 4861 makes it invalid.
pub fn link_addresses(kind: u8, msg: &[u8]) -> impl Iterator<Item = (u8, [u8; 6])> + '_ {
    let mut at = options_at(kind).unwrap_or(usize::MAX);
    std::iter::from_fn(move || {
        loop {
            let head = msg.get(at..)?.first_chunk::<2>()?;
            let len = usize::from(head[1]).checked_mul(8).filter(|&l| l > 0)?;
            let opt = msg.get(at..at.checked_add(len)?)?;
            at = at.checked_add(len)?;
            if matches!(head[0], SOURCE_LINK_ADDR | TARGET_LINK_ADDR) && len == 8 {
                let mac: [u8; 6] = opt.get(2..8)?.try_into().ok()?;
                return Some((head[0], mac));
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solicitation_and_advertisement() {
        let mut ns = vec![135, 0, 0, 0, 0, 0, 0, 0];
        ns.extend(Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 1).octets());
        // A nonce option (type 14) first, then the source link-layer one.
        ns.extend([14, 1, 1, 2, 3, 4, 5, 6]);
        ns.extend([1, 1, 2, 0, 0, 0, 0, 7]);
        assert_eq!(target(&ns), Some("fe80::1".parse().unwrap()));
        let opts: Vec<_> = link_addresses(NEIGHBOR_SOLICIT, &ns).collect();
        assert_eq!(opts, [(SOURCE_LINK_ADDR, [2, 0, 0, 0, 0, 7])]);
        let mut na = vec![136, 0, 0, 0, 0xe0, 0, 0, 0];
        na.extend([0; 16]);
        assert_eq!(advert_flags(&na), "rtr, sol, ovr");
        na[4] = 0x40;
        assert_eq!(advert_flags(&na), "sol");
        na[4] = 0;
        assert_eq!(advert_flags(&na), "none");
        // A zero length ends the walk; a cut option is not read.
        na.extend([2, 0, 9, 9, 9, 9, 9, 9]);
        assert_eq!(link_addresses(NEIGHBOR_ADVERT, &na).count(), 0);
        let cut = [&ns[..ns.len() - 1]].concat();
        assert_eq!(link_addresses(NEIGHBOR_SOLICIT, &cut).count(), 0);
        assert!(target(&[135, 0, 0, 0]).is_none());
    }
}
