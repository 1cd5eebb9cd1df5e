//! RoCE v1 (GRH) and v2 (UDP) transport: BTH, extended headers, payload and
//! pad lengths, ICRC, and CM MADs on QP1.

use super::{DecodeError, DissectOptions, Icrc, Packet, RoceVersion, to_u16};
use crate::wire::icrc::{self, NetHeader};
use crate::wire::{
    AethRepr, AtomicAckEthRepr, AtomicEthRepr, BthRepr, DethRepr, GrhRepr, IethRepr, ImmDtRepr,
    RdethRepr, RethRepr, Transport, Truncated, XrcethRepr, bth, grh, mad,
};

/// The network headers a v2 packet's ICRC covers.
pub(super) enum Net<'a> {
    Ipv4 { ip: &'a [u8], udp: &'a [u8] },
    Ipv6 { ip: &'a [u8], udp: &'a [u8] },
}

/// QP1 carries GSI MADs (RDMA CM and subnet administration among them),
/// QP0 subnet management packets (SMPs).
const GSI_QP: u32 = 1;

pub(super) fn dissect_v1(
    pkt: &mut Packet<'_>,
    payload: &[u8],
    off: usize,
    _complete: bool,
    opts: &DissectOptions,
) {
    pkt.roce = Some(RoceVersion::V1);
    let g = match GrhRepr::parse(payload) {
        Ok(g) => g,
        Err(t) => {
            pkt.error = Some(truncated(t, off));
            return;
        }
    };
    pkt.grh = Some(g);
    pkt.offsets.grh = Some(to_u16(off));
    if g.nxt_hdr != grh::NEXT_HEADER_BTH {
        pkt.error = Some(DecodeError::NotBth {
            next_header: g.nxt_hdr,
            offset: off,
        });
        return;
    }
    let grh_bytes = payload.get(..grh::LEN).unwrap_or_default();
    let transport = payload.get(grh::LEN..).unwrap_or_default();
    let claimed = usize::from(g.pay_len);
    let complete = transport.len() >= claimed;
    dissect_transport(
        pkt,
        transport,
        claimed,
        off.saturating_add(grh::LEN),
        complete,
        NetHeader::Grh(grh_bytes),
        "GRH PayLen",
        opts,
    );
}

pub(super) fn dissect_v2(
    pkt: &mut Packet<'_>,
    payload: &[u8],
    claimed: usize,
    off: usize,
    complete: bool,
    net: Net<'_>,
    opts: &DissectOptions,
) {
    pkt.roce = Some(RoceVersion::V2);
    let net = match net {
        Net::Ipv4 { ip, udp } => NetHeader::Ipv4 { ip, udp },
        Net::Ipv6 { ip, udp } => NetHeader::Ipv6 { ip, udp },
    };
    dissect_transport(
        pkt,
        payload,
        claimed,
        off,
        complete,
        net,
        "UDP length",
        opts,
    );
}

/// The transport headers of a native InfiniBand packet (see
/// `ib::dissect_ib`): `claimed` from the LRH's PktLen, less the LRH (and
/// GRH).
pub(super) fn dissect_ib_transport(
    pkt: &mut Packet<'_>,
    transport: &[u8],
    claimed: usize,
    off: usize,
    net: NetHeader<'_>,
    opts: &DissectOptions,
) {
    let complete = transport.len() >= claimed;
    dissect_transport(
        pkt,
        transport,
        claimed,
        off,
        complete,
        net,
        "LRH PktLen",
        opts,
    );
}

fn truncated(t: Truncated, offset: usize) -> DecodeError {
    DecodeError::Truncated {
        layer: t.layer,
        offset,
        needed: t.needed,
        got: t.got,
    }
}

/// Decodes from the BTH on. `buf` holds the captured bytes from the BTH,
/// `claimed` the transport length the network header announces (BTH to ICRC
/// inclusive), `off` the BTH's offset in the frame.
#[allow(clippy::too_many_arguments)]
fn dissect_transport(
    pkt: &mut Packet<'_>,
    buf: &[u8],
    claimed: usize,
    off: usize,
    complete: bool,
    net: NetHeader<'_>,
    length_field: &'static str,
    opts: &DissectOptions,
) {
    let b = match BthRepr::parse(buf) {
        Ok(b) => b,
        Err(t) => {
            pkt.error = Some(truncated(t, off));
            return;
        }
    };
    pkt.bth = Some(b);
    pkt.offsets.bth = to_u16(off);
    // The contract promises an `icrc` object with every BTH.
    pkt.icrc = Some(Icrc::default());

    let region = buf.get(..claimed.min(buf.len())).unwrap_or_default();
    let at_off = |at: usize| Some(to_u16(off.saturating_add(at)));
    let rest = |at: usize| buf.get(at..).unwrap_or_default();

    let headers = b.opcode.headers();
    let mut at = bth::LEN;
    let mut err: Option<DecodeError> = None;
    if let Some(h) = headers {
        macro_rules! ext {
            ($present:expr, $repr:ty, $field:ident) => {
                if $present && err.is_none() {
                    match <$repr>::parse(rest(at)) {
                        Ok(r) => {
                            pkt.$field = Some(r);
                            pkt.offsets.$field = at_off(at);
                            at = at.saturating_add(<$repr>::LEN);
                        }
                        Err(t) => err = Some(truncated(t, off.saturating_add(at))),
                    }
                }
            };
        }
        ext!(h.rdeth, RdethRepr, rdeth);
        ext!(h.deth, DethRepr, deth);
        ext!(h.xrceth, XrcethRepr, xrceth);
        ext!(h.reth, RethRepr, reth);
        ext!(h.atomiceth, AtomicEthRepr, atomiceth);
        ext!(h.aeth, AethRepr, aeth);
        ext!(h.atomicacketh, AtomicAckEthRepr, atomicacketh);
        ext!(h.immdt, ImmDtRepr, immdt);
        ext!(h.ieth, IethRepr, ieth);
        if h.cnp_reserved && err.is_none() {
            if rest(at).len() >= 16 {
                pkt.offsets.cnp_reserved = at_off(at);
            } else {
                err = Some(DecodeError::Truncated {
                    layer: "CNP reserved",
                    offset: off.saturating_add(at),
                    needed: 16,
                    got: rest(at).len(),
                });
            }
        }

        // Lengths come from the network header, so they are known even when
        // the capture stopped early.
        let hdr_end = bth::LEN.saturating_add(h.len());
        let need = hdr_end
            .saturating_add(usize::from(b.padcnt))
            .saturating_add(icrc::LEN);
        if claimed < need {
            err = err.or(Some(DecodeError::BadLength {
                layer: length_field,
                offset: off,
                claimed,
                needed: need,
            }));
        } else {
            let payload_len = claimed.saturating_sub(need);
            pkt.payload_len = Some(u32::try_from(payload_len).unwrap_or(u32::MAX));
            if payload_len > 0 {
                pkt.offsets.payload = at_off(hdr_end);
            }
            if b.padcnt > 0 {
                pkt.offsets.pad = at_off(hdr_end.saturating_add(payload_len));
            }
            pkt.offsets.icrc = at_off(claimed.saturating_sub(icrc::LEN));
            if b.opcode.transport() == Transport::Ud
                && b.dest_qp <= GSI_QP
                && err.is_none()
                && let Some(body) = region.get(hdr_end..hdr_end.saturating_add(payload_len))
                && let Ok((hdr, cm)) = mad::parse(body)
            {
                pkt.mad = Some(hdr);
                pkt.cm = cm;
            }
        }
    } else {
        err = Some(DecodeError::UnknownOpcode {
            opcode: b.opcode.0,
            offset: off,
        });
        if claimed >= bth::LEN.saturating_add(icrc::LEN) {
            pkt.offsets.icrc = at_off(claimed.saturating_sub(icrc::LEN));
        }
    }

    // ICRC: judged only when the whole packet was captured.
    if complete && claimed >= bth::LEN.saturating_add(icrc::LEN) {
        let body_len = claimed.saturating_sub(icrc::LEN);
        if let (Some(body), Some(trailer)) = (
            region.get(..body_len),
            region
                .get(body_len..claimed)
                .and_then(|t| t.first_chunk::<4>()),
        ) {
            // The CRC first: it streams through the frame, so the trailer
            // is in cache when it is read (reading it first is a cache miss
            // of its own on large frames).
            let expected = opts
                .check_icrc
                .then(|| u32::from_be_bytes(icrc::to_trailer(icrc::compute(net, body))));
            let value = u32::from_be_bytes(*trailer);
            pkt.icrc = Some(Icrc {
                value: Some(value),
                expected,
                valid: expected.map(|e| e == value),
            });
        }
    } else if err.is_none() && !complete && buf.len() < claimed {
        // Headers decoded but the tail was not captured: the frame is short,
        // not malformed; `icrc.valid` stays null.
        if pkt.caplen >= pkt.len {
            err = Some(DecodeError::Truncated {
                layer: "RoCE payload",
                offset: off.saturating_add(buf.len()),
                needed: claimed,
                got: buf.len(),
            });
        }
    }
    if err.is_some() {
        pkt.error = err;
    }
}
