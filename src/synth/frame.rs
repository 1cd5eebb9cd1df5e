//! Frame builders: the emit side of `wire`. Any BTH opcode with its extended
//! headers over RoCE v1 or v2 (IPv4/IPv6, optional VLAN), a correct or
//! deliberately bad ICRC; CNPs, PFC and 802.3x PAUSE, RDMA CM MADs.

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::wire::icrc::{self, NetHeader};
use crate::wire::mad::{self, CmMessage};
use crate::wire::{
    AethRepr, AtomicAckEthRepr, AtomicEthRepr, BthRepr, DethRepr, GrhRepr, IethRepr, ImmDtRepr,
    Opcode, PauseRepr, RdethRepr, RethRepr, XrcethRepr, bth, grh, pause,
};

/// The network layer of a RoCE frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetSpec {
    V2Ipv4 {
        src: Ipv4Addr,
        dst: Ipv4Addr,
        dscp: u8,
        ecn: u8,
        ttl: u8,
        sport: u16,
    },
    V2Ipv6 {
        src: Ipv6Addr,
        dst: Ipv6Addr,
        dscp: u8,
        ecn: u8,
        hop_limit: u8,
        flow_label: u32,
        sport: u16,
    },
    V1 {
        sgid: Ipv6Addr,
        dgid: Ipv6Addr,
        tclass: u8,
        hop_limit: u8,
        flow_label: u32,
    },
}

impl NetSpec {
    /// The traffic class byte (DSCP << 2 | ECN) wherever this layer keeps it.
    fn set_class(mut self, f: impl FnOnce(u8) -> u8) -> Self {
        match &mut self {
            NetSpec::V2Ipv4 { dscp, ecn, .. } | NetSpec::V2Ipv6 { dscp, ecn, .. } => {
                let tc = f((*dscp << 2) | (*ecn & 3));
                *dscp = tc >> 2;
                *ecn = tc & 3;
            }
            NetSpec::V1 { tclass, .. } => *tclass = f(*tclass),
        }
        self
    }

    /// Sets the ECN bits (v1: the low bits of the GRH traffic class).
    pub fn with_ecn(self, e: u8) -> Self {
        self.set_class(|tc| (tc & !3) | (e & 3))
    }

    /// Sets the DSCP (v1: the top six bits of the traffic class).
    pub fn with_dscp(self, d: u8) -> Self {
        self.set_class(|tc| ((d & 0x3f) << 2) | (tc & 3))
    }

    /// The same path in the other direction.
    pub fn reversed(mut self) -> Self {
        match &mut self {
            NetSpec::V2Ipv4 { src, dst, .. } => std::mem::swap(src, dst),
            NetSpec::V2Ipv6 { src, dst, .. } => std::mem::swap(src, dst),
            NetSpec::V1 { sgid, dgid, .. } => std::mem::swap(sgid, dgid),
        }
        self
    }
}

/// Extended header values; those the opcode needs and that are `None` get
/// defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExtHeaders {
    pub rdeth: Option<RdethRepr>,
    pub deth: Option<DethRepr>,
    pub xrceth: Option<XrcethRepr>,
    pub reth: Option<RethRepr>,
    pub atomiceth: Option<AtomicEthRepr>,
    pub aeth: Option<AethRepr>,
    pub atomicacketh: Option<AtomicAckEthRepr>,
    pub immdt: Option<ImmDtRepr>,
    pub ieth: Option<IethRepr>,
}

/// Everything that describes one RoCE frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoceFrame<'a> {
    pub src_mac: [u8; 6],
    pub dst_mac: [u8; 6],
    /// 802.1Q tag: (VLAN id, PCP).
    pub vlan: Option<(u16, u8)>,
    pub net: NetSpec,
    /// PadCnt is computed from the payload length.
    pub bth: BthRepr,
    pub ext: ExtHeaders,
    pub payload: Payload<'a>,
    /// Store a wrong ICRC (the correct one with its low bit flipped).
    pub bad_icrc: bool,
}

/// The payload: given bytes, or `len` bytes of a repeating pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload<'a> {
    Bytes(&'a [u8]),
    Pattern(usize),
}

impl Payload<'_> {
    pub fn len(&self) -> usize {
        match self {
            Payload::Bytes(b) => b.len(),
            Payload::Pattern(n) => *n,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The payload pattern (byte i is 31 i + 7), computed once.
fn pattern() -> &'static [u8] {
    static PATTERN: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    PATTERN.get_or_init(|| {
        (0..8192u32)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(7))
            .collect()
    })
}

const IPV4_LEN: usize = 20;
const IPV6_LEN: usize = 40;
const UDP_LEN: usize = 8;

fn push_eth(
    out: &mut Vec<u8>,
    src: [u8; 6],
    dst: [u8; 6],
    vlan: Option<(u16, u8)>,
    ethertype: u16,
) {
    out.extend_from_slice(&dst);
    out.extend_from_slice(&src);
    if let Some((id, pcp)) = vlan {
        out.extend_from_slice(&0x8100u16.to_be_bytes());
        let tci = (u16::from(pcp & 7) << 13) | (id & 0x0fff);
        out.extend_from_slice(&tci.to_be_bytes());
    }
    out.extend_from_slice(&ethertype.to_be_bytes());
}

fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut sum = 0u32;
    for c in h.chunks(2) {
        let w = u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]);
        sum += u32::from(w);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The UDP header of a RoCE v2 frame (checksum left zero).
fn put_udp(u: &mut [u8], sport: u16, len: usize) {
    u[0..2].copy_from_slice(&sport.to_be_bytes());
    u[2..4].copy_from_slice(&crate::dissect::ROCE_V2_PORT.to_be_bytes());
    u[4..6].copy_from_slice(&(len as u16).to_be_bytes());
}

/// Appends the frame to `out` and returns its length.
pub fn build_roce(f: &RoceFrame<'_>, out: &mut Vec<u8>) -> usize {
    let start = out.len();
    let opcode = f.bth.opcode;
    let layout = opcode.headers().unwrap_or_default();
    let payload_len = if layout.payload || opcode.headers().is_none() {
        f.payload.len()
    } else {
        0
    };
    let pad = (4 - payload_len % 4) % 4;
    let transport_len = bth::LEN + layout.len() + payload_len + pad + icrc::LEN;

    let (ethertype, net_len) = match f.net {
        NetSpec::V2Ipv4 { .. } => (0x0800, IPV4_LEN + UDP_LEN),
        NetSpec::V2Ipv6 { .. } => (0x86dd, IPV6_LEN + UDP_LEN),
        NetSpec::V1 { .. } => (crate::dissect::ETHERTYPE_ROCE_V1, grh::LEN),
    };
    push_eth(out, f.src_mac, f.dst_mac, f.vlan, ethertype);
    let net_start = out.len();
    out.resize(net_start + net_len, 0);
    match f.net {
        NetSpec::V2Ipv4 {
            src,
            dst,
            dscp,
            ecn,
            ttl,
            sport,
        } => {
            let total = (IPV4_LEN + UDP_LEN + transport_len) as u16;
            let h = &mut out[net_start..net_start + IPV4_LEN];
            h[0] = 0x45;
            h[1] = (dscp << 2) | (ecn & 3);
            h[2..4].copy_from_slice(&total.to_be_bytes());
            h[4..6].copy_from_slice(&0u16.to_be_bytes());
            h[6] = 0x40; // don't fragment
            h[8] = ttl;
            h[9] = 17;
            h[12..16].copy_from_slice(&src.octets());
            h[16..20].copy_from_slice(&dst.octets());
            let c = ipv4_checksum(h);
            h[10..12].copy_from_slice(&c.to_be_bytes());
            put_udp(
                &mut out[net_start + IPV4_LEN..],
                sport,
                UDP_LEN + transport_len,
            );
        }
        NetSpec::V2Ipv6 {
            src,
            dst,
            dscp,
            ecn,
            hop_limit,
            flow_label,
            sport,
        } => {
            let tc = (dscp << 2) | (ecn & 3);
            let w0 = (6u32 << 28) | (u32::from(tc) << 20) | (flow_label & 0xfffff);
            let h = &mut out[net_start..net_start + IPV6_LEN];
            h[0..4].copy_from_slice(&w0.to_be_bytes());
            h[4..6].copy_from_slice(&((UDP_LEN + transport_len) as u16).to_be_bytes());
            h[6] = 17;
            h[7] = hop_limit;
            h[8..24].copy_from_slice(&src.octets());
            h[24..40].copy_from_slice(&dst.octets());
            put_udp(
                &mut out[net_start + IPV6_LEN..],
                sport,
                UDP_LEN + transport_len,
            );
        }
        NetSpec::V1 {
            sgid,
            dgid,
            tclass,
            hop_limit,
            flow_label,
        } => {
            let g = GrhRepr {
                ip_ver: 6,
                tclass,
                flow_label,
                pay_len: transport_len as u16,
                nxt_hdr: grh::NEXT_HEADER_BTH,
                hop_lmt: hop_limit,
                sgid: sgid.octets(),
                dgid: dgid.octets(),
            };
            let _ = g.emit(&mut out[net_start..]);
        }
    }

    let t = out.len();
    out.resize(t + transport_len, 0);
    let mut b = f.bth;
    b.padcnt = pad as u8;
    let _ = b.emit(&mut out[t..]);
    let mut at = t + bth::LEN;
    let e = &f.ext;
    macro_rules! put {
        ($present:expr, $val:expr, $ty:ty) => {
            if $present {
                let _ = $val.unwrap_or_default().emit(&mut out[at..]);
                at += <$ty>::LEN;
            }
        };
    }
    put!(layout.rdeth, e.rdeth, RdethRepr);
    put!(layout.deth, e.deth, DethRepr);
    put!(layout.xrceth, e.xrceth, XrcethRepr);
    put!(layout.reth, e.reth, RethRepr);
    put!(layout.atomiceth, e.atomiceth, AtomicEthRepr);
    put!(layout.aeth, e.aeth, AethRepr);
    put!(layout.atomicacketh, e.atomicacketh, AtomicAckEthRepr);
    put!(layout.immdt, e.immdt, ImmDtRepr);
    put!(layout.ieth, e.ieth, IethRepr);
    if layout.cnp_reserved {
        at += 16;
    }
    match f.payload {
        Payload::Bytes(p) => out[at..at + payload_len].copy_from_slice(&p[..payload_len]),
        Payload::Pattern(_) => {
            let pattern = pattern();
            let mut done = 0;
            while done < payload_len {
                let n = (payload_len - done).min(pattern.len());
                out[at + done..at + done + n].copy_from_slice(&pattern[..n]);
                done += n;
            }
        }
    }
    let body_end = out.len() - icrc::LEN;
    let net_hdr = &out[net_start..t];
    let net = match f.net {
        NetSpec::V2Ipv4 { .. } => NetHeader::Ipv4 {
            ip: &net_hdr[..IPV4_LEN],
            udp: &net_hdr[IPV4_LEN..],
        },
        NetSpec::V2Ipv6 { .. } => NetHeader::Ipv6 {
            ip: &net_hdr[..IPV6_LEN],
            udp: &net_hdr[IPV6_LEN..],
        },
        NetSpec::V1 { .. } => NetHeader::Grh(net_hdr),
    };
    let mut crc = icrc::compute(net, &out[t..body_end]);
    if f.bad_icrc {
        crc ^= 1;
    }
    out[body_end..].copy_from_slice(&icrc::to_trailer(crc));
    // IPv6 forbids a zero UDP checksum (RFC 8200); the ICRC skips it, so it
    // is computed last, over the finished datagram.
    if let NetSpec::V2Ipv6 { src, dst, .. } = f.net {
        let udp_start = net_start + IPV6_LEN;
        let c = udp6_checksum(&src, &dst, &out[udp_start..]);
        out[udp_start + 6..udp_start + 8].copy_from_slice(&c.to_be_bytes());
    }
    out.len() - start
}

fn udp6_checksum(src: &Ipv6Addr, dst: &Ipv6Addr, udp: &[u8]) -> u16 {
    // RFC 1071: the one's-complement sum can run over 32-bit words and be
    // folded at the end.
    fn add(sum: u64, b: &[u8]) -> u64 {
        let mut sum = sum;
        let mut words = b.chunks_exact(4);
        for w in &mut words {
            sum += u64::from(u32::from_be_bytes([w[0], w[1], w[2], w[3]]));
        }
        let rest = words.remainder();
        let mut last = [0u8; 4];
        last[..rest.len()].copy_from_slice(rest);
        sum + u64::from(u32::from_be_bytes(last))
    }
    let mut sum = add(0, &src.octets());
    sum = add(sum, &dst.octets());
    sum = add(sum, &(udp.len() as u32).to_be_bytes());
    sum = add(sum, &[0, 0, 0, 17]);
    sum = add(sum, &udp[..4]);
    sum = add(sum, &[udp[4], udp[5], 0, 0]);
    sum = add(sum, &udp[8..]);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    match !(sum as u16) {
        0 => 0xffff,
        c => c,
    }
}

/// Appends a PFC frame (padded to 60 bytes) and returns its length.
pub fn build_pfc(src_mac: [u8; 6], class_enable: u16, times: [u16; 8], out: &mut Vec<u8>) -> usize {
    build_mac_control(
        src_mac,
        &PauseRepr::Pfc(crate::wire::PfcRepr {
            class_enable,
            times,
        }),
        out,
    )
}

/// Appends an 802.3x PAUSE frame (padded to 60 bytes).
pub fn build_pause(src_mac: [u8; 6], time: u16, out: &mut Vec<u8>) -> usize {
    build_mac_control(src_mac, &PauseRepr::Pause { time }, out)
}

fn build_mac_control(src_mac: [u8; 6], p: &PauseRepr, out: &mut Vec<u8>) -> usize {
    let start = out.len();
    push_eth(out, src_mac, pause::DST_MAC, None, pause::ETHERTYPE);
    let at = out.len();
    out.resize(at + p.buffer_len(), 0);
    let _ = p.emit(&mut out[at..]);
    if out.len() - start < 60 {
        out.resize(start + 60, 0);
    }
    out.len() - start
}

/// A CNP for `dest_qp` (the data sender's QP), as a ConnectX sends it.
pub fn cnp(src_mac: [u8; 6], dst_mac: [u8; 6], net: NetSpec, dest_qp: u32) -> RoceFrame<'static> {
    RoceFrame {
        src_mac,
        dst_mac,
        vlan: None,
        net,
        bth: BthRepr {
            opcode: Opcode::CNP,
            p_key: 0xffff,
            becn: true,
            dest_qp,
            ..BthRepr::default()
        },
        ext: ExtHeaders::default(),
        payload: Payload::Pattern(0),
        bad_icrc: false,
    }
}

/// The 256-byte MAD of an RDMA CM message.
pub fn cm_mad(transaction_id: u64, msg: &CmMessage) -> [u8; mad::MAD_LEN] {
    let mut b = [0u8; mad::MAD_LEN];
    let _ = mad::emit_cm(transaction_id, msg, &mut b);
    b
}

/// Where a CM REQ's primary path names the local and remote port GIDs
/// (in the MAD: its header, then 52 bytes of the REQ before the path's
/// two LIDs).
const REQ_PRIMARY_GIDS: usize = mad::HEADER_LEN + 52 + 4;

/// Fills a CM REQ's primary path with the connection's GIDs (for RoCE v2
/// its IPs, IPv4 as `::ffff:a.b.c.d`), as a real REQ does: tshark ties
/// the connection's later packets (NVMe-oF capsules) to the REQ by them.
pub fn fill_req_primary_path(mad_bytes: &mut [u8], net: &NetSpec) {
    let (src, dst) = match *net {
        NetSpec::V2Ipv4 { src, dst, .. } => (src.to_ipv6_mapped(), dst.to_ipv6_mapped()),
        NetSpec::V2Ipv6 { src, dst, .. } => (src, dst),
        NetSpec::V1 { sgid, dgid, .. } => (sgid, dgid),
    };
    if let Some(b) = mad_bytes.get_mut(REQ_PRIMARY_GIDS..REQ_PRIMARY_GIDS + 32) {
        b[..16].copy_from_slice(&src.octets());
        b[16..].copy_from_slice(&dst.octets());
    }
}

/// A UD SEND Only to QP1 carrying `mad_bytes` (RDMA CM).
pub fn cm_frame<'a>(
    src_mac: [u8; 6],
    dst_mac: [u8; 6],
    net: NetSpec,
    psn: u32,
    mad_bytes: &'a [u8],
) -> RoceFrame<'a> {
    RoceFrame {
        src_mac,
        dst_mac,
        vlan: None,
        net,
        bth: BthRepr {
            opcode: Opcode(0x64),
            p_key: 0xffff,
            dest_qp: 1,
            psn: crate::wire::Psn::new(psn),
            ..BthRepr::default()
        },
        ext: ExtHeaders {
            deth: Some(DethRepr {
                q_key: 0x8001_0000,
                src_qp: 1,
            }),
            ..ExtHeaders::default()
        },
        payload: Payload::Bytes(mad_bytes),
        bad_icrc: false,
    }
}
