//! Native InfiniBand packets and the ERF records ibdump wraps them in,
//! from RoCE frames: the same transport headers behind an LRH (and a GRH
//! when asked), with the ICRC and VCRC native InfiniBand has.

use std::net::{IpAddr, Ipv6Addr};

use crate::capture::{Frame, LinkType};
use crate::dissect::{DissectOptions, dissect};
use crate::wire::icrc::{self, NetHeader};
use crate::wire::lrh::{self, Lnh};
use crate::wire::{ErfRepr, GrhRepr, LrhRepr, erf, grh, vcrc};

/// Where a native packet goes: its LRH's fields, and whether a GRH rides
/// between the LRH and the BTH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IbPath {
    pub vl: u8,
    pub sl: u8,
    pub slid: u16,
    pub dlid: u16,
    pub grh: bool,
    /// Set the BTH's FECN where the RoCE frame's ECN says CE (native
    /// InfiniBand marks congestion there).
    pub ecn_to_fecn: bool,
}

/// A GID for an IP: IPv6 as it is, IPv4 mapped (`::ffff:a.b.c.d`).
fn gid(ip: IpAddr) -> [u8; 16] {
    match ip {
        IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
        IpAddr::V6(v6) => v6.octets(),
    }
}

/// The native InfiniBand packet (LRH through VCRC) carrying the transport
/// headers and payload of the RoCE frame `roce` (v1 or v2, Ethernet); the
/// GIDs of a GRH are the frame's GIDs or its IPs. `None` when the frame
/// has no whole RoCE packet.
pub fn native(roce: &[u8], path: IbPath) -> Option<Vec<u8>> {
    let frame = Frame::whole(roce, LinkType::Ethernet);
    let p = dissect(&frame, &DissectOptions::default());
    p.bth?;
    let bth_at = usize::from(p.offsets.bth);
    let icrc_at = usize::from(p.offsets.icrc?);
    let transport = roce.get(bth_at..icrc_at)?;
    let (sgid, dgid) = match (&p.grh, &p.ip) {
        (Some(g), _) => (g.sgid, g.dgid),
        (None, Some(ip)) => (gid(ip.src), gid(ip.dst)),
        _ => (Ipv6Addr::LOCALHOST.octets(), Ipv6Addr::LOCALHOST.octets()),
    };
    let grh_len = if path.grh { grh::LEN } else { 0 };
    let covered = lrh::LEN + grh_len + transport.len() + icrc::LEN;
    let l = LrhRepr {
        vl: path.vl,
        lver: 0,
        sl: path.sl,
        resv2: 0,
        lnh: if path.grh { Lnh::Global } else { Lnh::Local },
        dlid: path.dlid,
        resv5: 0,
        pkt_len: u16::try_from(covered / 4).ok()?,
        slid: path.slid,
    };
    let mut out = vec![0u8; covered + vcrc::LEN];
    l.emit(&mut out).ok()?;
    if path.grh {
        let g = GrhRepr {
            ip_ver: 6,
            tclass: p.grh.map_or(0, |g| g.tclass),
            flow_label: p.grh.map_or(0, |g| g.flow_label),
            pay_len: u16::try_from(transport.len() + icrc::LEN).ok()?,
            nxt_hdr: grh::NEXT_HEADER_BTH,
            hop_lmt: p.grh.map_or(64, |g| g.hop_lmt),
            sgid,
            dgid,
        };
        g.emit(out.get_mut(lrh::LEN..)?).ok()?;
    }
    let t = lrh::LEN + grh_len;
    out.get_mut(t..t + transport.len())?
        .copy_from_slice(transport);
    if path.ecn_to_fecn {
        // BTH byte 4 is variant: the ICRC does not cover it.
        let ce = p.ecn() == Some(3);
        let b = out.get_mut(t + crate::wire::bth::VARIANT_BYTE)?;
        *b = (*b & 0x7f) | if ce { 0x80 } else { 0 };
    }
    let crc = if path.grh {
        icrc::compute(NetHeader::Grh(out.get(lrh::LEN..t)?), transport)
    } else {
        icrc::compute(NetHeader::Lrh(out.get(..lrh::LEN)?), transport)
    };
    let at = t + transport.len();
    out.get_mut(at..at + icrc::LEN)?
        .copy_from_slice(&icrc::to_trailer(crc));
    let v = vcrc::compute(out.get(..covered)?);
    out.get_mut(covered..)?
        .copy_from_slice(&vcrc::to_trailer(v));
    Some(out)
}

/// A LID standing in for an IP address when RoCE traffic is carried
/// natively: an IPv4 address (or one mapped into a GID) its last two
/// bytes, any other IPv6 address 0x8000 | its 8th and 16th bytes.
pub fn lid_for(ip: IpAddr) -> u16 {
    let v4 = match ip {
        IpAddr::V4(v4) => Some(v4),
        IpAddr::V6(v6) => v6.to_ipv4_mapped(),
    };
    if let Some(v4) = v4 {
        let o = v4.octets();
        return u16::from_be_bytes([o[2], o[3]]);
    }
    let o = gid(ip);
    0x8000 | u16::from_be_bytes([o[7], o[15]])
}

/// How a RoCE address reads once carried natively: its GID when a GRH
/// rides along, else `lid:N` of [`lid_for`]; addresses that are not IPs
/// are kept.
pub fn native_addr(addr: &str, grh: bool) -> String {
    match addr.parse::<IpAddr>() {
        Ok(ip) if grh => Ipv6Addr::from(gid(ip)).to_string(),
        Ok(ip) => crate::dissect::Addr::Lid(lid_for(ip)).to_string(),
        Err(_) => addr.to_string(),
    }
}

/// The RoCE frame `roce` carried natively, its path taken from the frame:
/// the LIDs of [`lid_for`] its addresses, VL and SL its priority, FECN
/// its CE mark. `None` for frames that are not RoCE (PFC, other traffic).
pub fn carry(roce: &[u8], grh: bool) -> Option<Vec<u8>> {
    let frame = Frame::whole(roce, LinkType::Ethernet);
    let p = dissect(&frame, &DissectOptions::default());
    p.bth?;
    let (crate::dissect::Addr::Ip(s), crate::dissect::Addr::Ip(d)) = p.endpoints()? else {
        return None;
    };
    let prio = p.pcp().unwrap_or(0);
    native(
        roce,
        IbPath {
            vl: prio.min(14),
            sl: prio,
            slid: lid_for(s),
            dlid: lid_for(d),
            grh,
            ecn_to_fecn: true,
        },
    )
}

/// An ERF record of type InfiniBand holding `packet`, as ibdump writes it:
/// varying length, captured on `port`, no extension header, the record
/// length rounded up to 8 bytes (the padding itself is not written).
pub fn erf_record(packet: &[u8], ts_ns: u64, port: u8) -> Vec<u8> {
    let e = ErfRepr {
        ts: ErfRepr::ts_from_ns(ts_ns),
        kind: erf::types::INFINIBAND,
        has_ext: false,
        flags: 0x04 | (port & 3),
        rlen: u16::try_from((erf::LEN + packet.len()).next_multiple_of(8)).unwrap_or(u16::MAX),
        lctr: 0,
        wlen: u16::try_from(packet.len()).unwrap_or(u16::MAX),
    };
    let mut out = vec![0u8; erf::LEN];
    let _ = e.emit(&mut out);
    out.extend_from_slice(packet);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_packets_decode_with_good_crcs_and_the_same_transport() {
        for (i, roce) in crate::synth::samples::every_opcode(3).iter().enumerate() {
            for grh in [false, true] {
                let path = IbPath {
                    vl: (i % 15) as u8,
                    sl: (i % 16) as u8,
                    slid: 0x10 + i as u16,
                    dlid: 0x20,
                    grh,
                    ecn_to_fecn: false,
                };
                let Some(ib) = native(roce, path) else {
                    continue;
                };
                let f = Frame {
                    number: 1,
                    ts_ns: 0,
                    len: ib.len() as u32,
                    caplen: ib.len() as u32,
                    link: LinkType::InfiniBand,
                    if_speed: None,
                    interface: 0,
                    data: &ib,
                    offset: 0,
                };
                let p = dissect(&f, &DissectOptions::default());
                assert_eq!(p.error, None, "frame {i} grh {grh}");
                assert_eq!(p.icrc.unwrap().valid, Some(true), "frame {i}");
                assert_eq!(p.vcrc.unwrap().valid, Some(true), "frame {i}");
                let l = p.lrh.unwrap();
                assert_eq!(
                    (l.vl, l.sl, l.slid, l.dlid),
                    (path.vl, path.sl, path.slid, 0x20)
                );
                assert_eq!(p.grh.is_some(), grh);
                let ethernet = Frame {
                    link: LinkType::Ethernet,
                    data: roce,
                    len: roce.len() as u32,
                    caplen: roce.len() as u32,
                    ..f
                };
                let q = dissect(&ethernet, &DissectOptions::default());
                assert_eq!(p.bth, q.bth);
                assert_eq!(p.reth, q.reth);
                assert_eq!(p.aeth, q.aeth);
                assert_eq!(p.deth, q.deth);
                assert_eq!(p.payload_len, q.payload_len);
                // In an ERF record, the same.
                let rec = erf_record(&ib, 1_700_000_000_123_456_789, 1);
                let e = Frame {
                    link: LinkType::Erf,
                    data: &rec,
                    len: rec.len() as u32,
                    caplen: rec.len() as u32,
                    ..f
                };
                let r = dissect(&e, &DissectOptions::default());
                assert_eq!(
                    (r.bth, r.lrh, r.icrc, r.vcrc),
                    (p.bth, p.lrh, p.icrc, p.vcrc)
                );
                assert_eq!((r.len, r.caplen), (ib.len() as u32, ib.len() as u32));
                assert_eq!(r.erf.unwrap().port(), 1);
                // ibdump --erf 1 on an Ethernet port: type InfiniBand, an
                // Ethernet frame inside; read as the Ethernet frame it is.
                let mislabelled = erf_record(roce, 5, 0);
                let m = Frame {
                    link: LinkType::Erf,
                    data: &mislabelled,
                    len: mislabelled.len() as u32,
                    caplen: mislabelled.len() as u32,
                    ..f
                };
                let m = dissect(&m, &DissectOptions::default());
                assert_eq!(
                    (m.bth, m.reth, m.icrc),
                    (q.bth, q.reth, q.icrc),
                    "frame {i}"
                );
                assert_eq!(m.lrh, None);
            }
        }
    }
}
