//! What the analysis reads of a frame: a compact copy of the few fields it
//! uses, so that threads that dissect hand the analysis a couple of cache
//! lines per frame rather than a whole [`Packet`].

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::flow::{Fingerprint, FlowKey};
use super::index::hash_key;
use super::nvme::Capsule;
use super::tcp::TcpFacts;
use crate::capture::{Frame, LinkType};
use crate::dissect::{DissectOptions, ETHERTYPE_ROCE_V1, Packet, RoceVersion, dissect};
use crate::wire::icrc::{self, InPlace, NetHeader};
use crate::wire::mad::CmMessage;
use crate::wire::pause::PauseRepr;
use crate::wire::{AethRepr, BthRepr, DethRepr, GrhRepr, Operation, RethRepr, bth, grh};

/// DestQP of the GSI (CM MADs): decoded the full way.
const GSI_QP: u32 = 1;

/// One frame as the analysis sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// 1-based frame number.
    pub number: u64,
    pub ts_ns: u64,
    /// Original length.
    pub len: u32,
    /// [`Facts::TRUNCATED`] and the other flags.
    pub flags: u8,
    /// Records the capture device says it lost just before this one (an
    /// ERF record's loss counter; 0 for every other capture).
    pub lost: u16,
    pub body: Body,
}

/// The part of a frame the analysis acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// Nothing to analyse beyond the capture-wide counts and the report's
    /// count of other traffic by protocol (the `packets` Protocol column's
    /// name).
    Other { protocol: &'static str },
    /// A TCP segment: the report follows its conversation.
    Tcp(TcpFacts),
    /// A PFC or 802.3x pause frame.
    Pause {
        src_mac: Option<[u8; 6]>,
        pause: PauseRepr,
        /// The interface's stated link speed (pcapng `if_speed`).
        if_speed: Option<std::num::NonZeroU64>,
    },
    /// A RoCE packet with a BTH and addresses: it belongs to a flow.
    Roce(RoceFacts),
}

/// The fields of a RoCE packet that flows, PSNs, NAKs and CNPs use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoceFacts {
    pub key: FlowKey,
    pub version: RoceVersion,
    pub bth: BthRepr,
    pub aeth: Option<AethRepr>,
    /// [`RoceFacts::payload_len`].
    payload_len: Small,
    /// [`RoceFacts::src_qp`].
    src_qp: Small,
    pub ecn: Option<u8>,
    pub dscp: Option<u8>,
    /// Priority from the outermost VLAN tag.
    pub pcp: Option<u8>,
    /// Ethernet destination (the port a pause would stop).
    pub dst_mac: Option<[u8; 6]>,
    /// What an upper layer reads: a CM message, a SEND's capsule, a
    /// RETH's address and key.
    pub upper: Upper,
    pub fingerprint: Fingerprint,
    /// The high half of `hash_key(&key)` (all of it that the flow index
    /// reads), computed where the frame is dissected (off the analysis
    /// thread).
    flow_tag: u32,
}

impl RoceFacts {
    /// The transport payload's length, when the frame has all its headers.
    #[inline]
    pub fn payload_len(&self) -> Option<u32> {
        self.payload_len.get()
    }

    /// The RETH's DMA length (READ requests span PSNs by it).
    #[inline]
    pub fn dma_len(&self) -> Option<u32> {
        match self.upper {
            Upper::Reth { dma_len, .. } => Some(dma_len),
            _ => None,
        }
    }

    /// The DETH's source QP (UD).
    #[inline]
    pub fn src_qp(&self) -> Option<u32> {
        self.src_qp.get()
    }

    /// `hash_key(&self.key)` as the flow index reads it (its low half
    /// zero).
    #[inline]
    pub fn flow_hash(&self) -> u64 {
        u64::from(self.flow_tag) << 32
    }
}

/// A number below `u32::MAX`, or none, in four bytes where an `Option<u32>`
/// takes eight: a frame's facts carry two, a payload's length (less than a
/// frame's) and a QP number (24 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Small(u32);

impl Small {
    fn new(n: Option<u32>) -> Small {
        Small(n.map_or(u32::MAX, |n| n.min(u32::MAX - 1)))
    }

    fn get(self) -> Option<u32> {
        (self.0 != u32::MAX).then_some(self.0)
    }
}

/// The high half of a flow key's hash, which [`RoceFacts`] keep.
#[inline]
fn flow_tag(key: &FlowKey) -> u32 {
    (hash_key(key) >> 32) as u32
}

/// What a RoCE packet carries for the layers above the transport. One
/// frame has at most one of them: CM messages ride UD SENDs on QP 1,
/// capsules are RC SENDs, a RETH is on WRITEs and READ requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upper {
    None,
    Cm(CmMessage),
    /// The start of a SEND FIRST or ONLY of 16 bytes or more: an NVMe-oF
    /// capsule, if its connection carries NVMe-oF.
    Capsule(Capsule),
    /// The RETH's virtual address, key and DMA length.
    Reth {
        va: u64,
        r_key: u32,
        dma_len: u32,
    },
}

impl Upper {
    /// For a packet of operation `op` with these headers and payload.
    #[inline]
    fn of(
        op: Option<Operation>,
        cm: Option<CmMessage>,
        reth: Option<RethRepr>,
        payload: impl FnOnce() -> Option<Capsule>,
    ) -> Upper {
        if let Some(m) = cm {
            return Upper::Cm(m);
        }
        if let Some(r) = reth {
            return Upper::Reth {
                va: r.va,
                r_key: r.r_key,
                dma_len: r.dma_len,
            };
        }
        match op {
            Some(
                Operation::SendFirst
                | Operation::SendOnly
                | Operation::SendOnlyImm
                | Operation::SendOnlyInvalidate,
            ) => payload().map_or(Upper::None, Upper::Capsule),
            _ => Upper::None,
        }
    }

    pub fn cm(&self) -> Option<&CmMessage> {
        match self {
            Upper::Cm(m) => Some(m),
            _ => None,
        }
    }
}

impl Facts {
    /// A TCP segment that may begin an HTTP message whose body goes on:
    /// the frame loops that show frames read it again (see
    /// [`crate::analysis::Analyzer::frame_bytes_wanted`]).
    pub fn may_begin_http_message(&self) -> bool {
        matches!(&self.body, Body::Tcp(seg) if seg.may_begin_http_message())
    }
}

impl Facts {
    /// Captured fewer bytes than were on the wire.
    pub const TRUNCATED: u8 = 1;
    /// Could not be decoded, for a reason other than a short capture.
    pub const MALFORMED: u8 = 2;
    /// The ICRC was checked and is wrong.
    pub const BAD_ICRC: u8 = 4;
    /// RoCE v1 or v2 (with or without a decodable BTH).
    pub const ROCE: u8 = 8;
    /// Sent on a priority its receiver had paused: set by the frame loop
    /// of an analysis split by host pair ([`super::split`]), which follows
    /// the pauses for every part.
    pub const SENT_PAUSED: u8 = 16;

    /// The facts of a dissected packet (its bytes are read for the
    /// fingerprint, so call this where the packet still has them).
    pub fn of(pkt: &Packet<'_>) -> Facts {
        let mut flags = 0;
        if pkt.is_truncated() {
            flags |= Self::TRUNCATED;
        }
        if let Some(e) = &pkt.error
            && !(pkt.is_truncated() && e.is_truncation())
        {
            flags |= Self::MALFORMED;
        }
        if pkt.icrc.is_some_and(|i| i.valid == Some(false)) {
            flags |= Self::BAD_ICRC;
        }
        if pkt.roce.is_some() {
            flags |= Self::ROCE;
        }
        let body = if let Some(pause) = pkt.pause {
            Body::Pause {
                src_mac: pkt.src_mac(),
                pause,
                if_speed: pkt.if_speed,
            }
        } else if let (Some(bth), Some((src, dst))) = (pkt.bth, pkt.endpoints()) {
            let key = FlowKey {
                src,
                dst,
                dest_qp: bth.dest_qp,
            };
            Body::Roce(RoceFacts {
                key,
                flow_tag: flow_tag(&key),
                version: pkt.roce.unwrap_or(RoceVersion::V2),
                bth,
                aeth: pkt.aeth,
                payload_len: Small::new(pkt.payload_len),
                src_qp: Small::new(pkt.deth.map(|d| d.src_qp)),
                ecn: pkt.ecn(),
                dscp: pkt.dscp(),
                pcp: pkt.pcp(),
                dst_mac: pkt.eth.map(|e| e.dst),
                upper: Upper::of(bth.opcode.operation(), pkt.cm, pkt.reth, || {
                    Capsule::of(pkt.payload()?)
                }),
                fingerprint: Fingerprint::of(pkt),
            })
        } else if let Some(tcp) = TcpFacts::of(pkt) {
            Body::Tcp(tcp)
        } else {
            Body::Other {
                protocol: pkt.protocol(),
            }
        };
        Facts {
            lost: pkt.erf.filter(|e| e.counts_losses()).map_or(0, |e| e.lctr),
            number: pkt.number,
            ts_ns: pkt.ts_ns,
            len: pkt.len,
            flags,
            body,
        }
    }

    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// The facts of a frame: `Facts::of(&dissect(frame, opts))`, computed
    /// directly for the common shape of a RoCE frame (whole, Ethernet with
    /// up to three VLAN tags, IPv4/IPv6 + UDP or a GRH, a known opcode, no
    /// CM, lengths that agree) without building the [`Packet`] first;
    /// anything else goes the full way. Tested equal on every frame of the
    /// test captures and on truncated and mutated frames.
    pub fn from_frame(frame: &Frame<'_>, opts: &DissectOptions) -> Facts {
        Self::quick(frame, opts).unwrap_or_else(|| Facts::of(&dissect(frame, opts)))
    }

    /// Puts the facts of `frame` at `out[n]`, where `n <= out.len()`: over
    /// the facts already there when `n < out.len()`, else pushed.
    ///
    /// Overwriting is the fast way, so a buffer is best reused as it is
    /// and cut to what was put only when it is handed on. A push may have
    /// to grow `out`, so the facts were built on the stack first and then
    /// copied, and the copy's wide loads stalled on the narrow stores that
    /// had just built them: 15 % of the samples of building facts, on the
    /// 500 k-frame bench capture. Put over old facts, they are built where
    /// they stay: 2-7 % less CPU time in all (medians over 16-40 pairs of
    /// alternating runs).
    #[inline]
    pub fn put_from_frame(
        out: &mut Vec<Facts>,
        n: usize,
        frame: &Frame<'_>,
        opts: &DissectOptions,
    ) {
        debug_assert!(n <= out.len(), "facts {n} put past the end ({})", out.len());
        match out.get_mut(n) {
            Some(slot) => {
                if fast(frame, opts, |f| *slot = f).is_none() {
                    *slot = Facts::of(&dissect(frame, opts));
                }
            }
            None => {
                if fast(frame, opts, |f| out.push(f)).is_none() {
                    out.push(Facts::of(&dissect(frame, opts)));
                }
            }
        }
    }

    /// The direct computation alone: `None` for a frame it does not cover.
    pub fn quick(frame: &Frame<'_>, opts: &DissectOptions) -> Option<Facts> {
        fast(frame, opts, |f| f)
    }
}

fn be16(d: &[u8], at: usize) -> Option<u16> {
    let b = d.get(at..at.checked_add(2)?)?.first_chunk::<2>()?;
    Some(u16::from_be_bytes(*b))
}

/// The network part of a fast-path frame.
struct Net<'a> {
    src: IpAddr,
    dst: IpAddr,
    tclass: u8,
    version: RoceVersion,
    header: NetHeader<'a>,
}

/// The facts of a frame the direct way, handed to `emit`.
#[inline(always)]
fn fast<R>(frame: &Frame<'_>, opts: &DissectOptions, emit: impl FnOnce(Facts) -> R) -> Option<R> {
    let data = frame.data;
    if frame.link != LinkType::Ethernet || frame.caplen < frame.len {
        return None;
    }
    let dst_mac = *data.first_chunk::<6>()?;
    let mut ethertype = be16(data, 12)?;
    let mut at = 14usize;
    let mut pcp = None;
    let mut tags = 0;
    while matches!(ethertype, 0x8100 | 0x88a8 | 0x9100) {
        if tags == 3 {
            return None;
        }
        let tci = be16(data, at)?;
        pcp = pcp.or(Some((tci >> 13) as u8));
        ethertype = be16(data, at.checked_add(2)?)?;
        at = at.checked_add(4)?;
        tags += 1;
    }
    let rest = data.get(at..)?;
    // `transport`: the captured bytes from the BTH; `claimed`: the length
    // the network header gives them (BTH to ICRC); `in_place`: how to read
    // the ICRC's message from `data` (`None`: IPv4 options), and where
    // the transport starts there.
    let (net, transport, claimed, in_place, t_at) = match ethertype {
        0x0800 => {
            let h = rest.first_chunk::<20>()?;
            let ihl = usize::from(h[0] & 0x0f) * 4;
            let total = usize::from(u16::from_be_bytes([h[2], h[3]]));
            let frag = u16::from_be_bytes([h[6], h[7]]);
            if h[0] >> 4 != 4 || ihl < 20 || total < ihl || frag & 0x3fff != 0 || h[9] != 17 {
                return None;
            }
            let ip = rest.get(..ihl)?;
            let (udp, transport, claimed) = udp(rest.get(ihl..total)?, opts)?;
            let net = Net {
                src: Ipv4Addr::new(h[12], h[13], h[14], h[15]).into(),
                dst: Ipv4Addr::new(h[16], h[17], h[18], h[19]).into(),
                tclass: h[1],
                version: RoceVersion::V2,
                header: NetHeader::Ipv4 { ip, udp },
            };
            let in_place = (ihl == 20).then_some(InPlace::Ipv4);
            (net, transport, claimed, in_place, at + ihl + 8)
        }
        0x86dd => {
            let h = rest.first_chunk::<40>()?;
            let plen = usize::from(u16::from_be_bytes([h[4], h[5]]));
            if h[0] >> 4 != 6 || h[6] != 17 || plen == 0 {
                return None;
            }
            let ip = rest.get(..40)?;
            let (udp, transport, claimed) = udp(rest.get(40..40 + plen)?, opts)?;
            let src: [u8; 16] = h.get(8..24)?.try_into().ok()?;
            let dst: [u8; 16] = h.get(24..40)?.try_into().ok()?;
            let net = Net {
                src: Ipv6Addr::from(src).into(),
                dst: Ipv6Addr::from(dst).into(),
                tclass: (h[0] << 4) | (h[1] >> 4),
                version: RoceVersion::V2,
                header: NetHeader::Ipv6 { ip, udp },
            };
            (net, transport, claimed, Some(InPlace::Ipv6), at + 48)
        }
        ETHERTYPE_ROCE_V1 => {
            let g = GrhRepr::parse(rest).ok()?;
            if g.nxt_hdr != grh::NEXT_HEADER_BTH {
                return None;
            }
            let net = Net {
                src: IpAddr::V6(g.sgid_addr()),
                dst: IpAddr::V6(g.dgid_addr()),
                tclass: g.tclass,
                version: RoceVersion::V1,
                header: NetHeader::Grh(rest.get(..grh::LEN)?),
            };
            let claimed = usize::from(g.pay_len);
            let t_at = at + grh::LEN;
            (
                net,
                rest.get(grh::LEN..)?,
                claimed,
                Some(InPlace::Grh),
                t_at,
            )
        }
        _ => return None,
    };
    // Whole, with headers, pad and ICRC inside the claimed length.
    let region = transport.get(..claimed)?;
    let b = BthRepr::from_bytes(region.first_chunk()?);
    let (h, headers_len) = b.opcode.layout()?;
    if b.dest_qp == GSI_QP {
        return None;
    }
    let need = bth::LEN + headers_len + usize::from(b.padcnt) + icrc::LEN;
    if claimed < need {
        return None;
    }
    let mut off = bth::LEN;
    let mut skip = |present: bool, len: usize| {
        let here = off;
        if present {
            off += len;
        }
        here
    };
    skip(h.rdeth, 4);
    let deth_at = skip(h.deth, DethRepr::LEN);
    skip(h.xrceth, 4);
    let reth_at = skip(h.reth, RethRepr::LEN);
    skip(h.atomiceth, 28);
    let aeth_at = skip(h.aeth, AethRepr::LEN);
    let parse_at = |present: bool, at: usize| region.get(at..).filter(|_| present);
    let deth = parse_at(h.deth, deth_at).and_then(|r| DethRepr::parse(r).ok());
    let reth = parse_at(h.reth, reth_at).and_then(|r| RethRepr::parse(r).ok());
    let aeth = parse_at(h.aeth, aeth_at).and_then(|r| AethRepr::parse(r).ok());

    let mut flags = Facts::ROCE;
    if opts.check_icrc {
        let body = region.get(..claimed - icrc::LEN)?;
        let trailer = region.get(claimed - icrc::LEN..)?.first_chunk::<4>()?;
        let icrc_at = t_at + claimed - icrc::LEN;
        let crc = in_place
            .and_then(|kind| icrc::compute_in_place(data, at, icrc_at, kind))
            .unwrap_or_else(|| icrc::compute(net.header, body));
        if icrc::to_trailer(crc) != *trailer {
            flags |= Facts::BAD_ICRC;
        }
    }
    let key = FlowKey {
        src: crate::dissect::Addr::Ip(net.src),
        dst: crate::dissect::Addr::Ip(net.dst),
        dest_qp: b.dest_qp,
    };
    Some(emit(Facts {
        lost: 0,
        number: frame.number,
        ts_ns: frame.ts_ns,
        len: frame.len,
        flags,
        body: Body::Roce(RoceFacts {
            key,
            flow_tag: flow_tag(&key),
            version: net.version,
            bth: b,
            aeth,
            payload_len: Small::new(Some((claimed - need) as u32)),
            src_qp: Small::new(deth.map(|d| d.src_qp)),
            ecn: Some(net.tclass & 0x3),
            dscp: Some(net.tclass >> 2),
            pcp,
            dst_mac: Some(dst_mac),
            upper: Upper::of(b.opcode.operation(), None, reth, || {
                let at = bth::LEN + headers_len;
                Capsule::of(region.get(at..claimed - icrc::LEN - usize::from(b.padcnt))?)
            }),
            fingerprint: Fingerprint::of_bytes(data),
        }),
    }))
}

/// The UDP header and RoCE bytes of an IP payload, when it is RoCE and its
/// UDP length fits what was captured.
fn udp<'a>(ip_payload: &'a [u8], opts: &DissectOptions) -> Option<(&'a [u8], &'a [u8], usize)> {
    let h = ip_payload.first_chunk::<8>()?;
    if u16::from_be_bytes([h[2], h[3]]) != opts.roce_port {
        return None;
    }
    let len = usize::from(u16::from_be_bytes([h[4], h[5]]));
    if len <= 8 || len > ip_payload.len() {
        return None;
    }
    Some((ip_payload.get(..8)?, ip_payload.get(8..len)?, len - 8))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decoding threads write a frame's facts and the analysing thread
    /// reads them: three cache lines, no more (padding them from 224 bytes
    /// to 256 cost the analysing thread about 3 ns a frame).
    #[test]
    fn a_frames_facts_fit_in_three_cache_lines() {
        assert!(
            std::mem::size_of::<Facts>() <= 192,
            "{}",
            std::mem::size_of::<Facts>()
        );
    }

    #[test]
    fn small_numbers_keep_none_apart_from_the_largest() {
        for n in [None, Some(0), Some(0xff_ffff), Some(u32::MAX - 1)] {
            assert_eq!(Small::new(n).get(), n);
        }
        assert_eq!(Small::new(Some(u32::MAX)).get(), Some(u32::MAX - 1));
    }
}
