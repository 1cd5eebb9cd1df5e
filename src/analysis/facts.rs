//! What the analysis reads of a frame: a compact copy of the few fields it
//! uses, so that threads that dissect hand the analysis a couple of cache
//! lines per frame rather than a whole [`Packet`].

use super::flow::{Fingerprint, FlowKey};
use crate::dissect::{Packet, RoceVersion};
use crate::wire::mad::CmMessage;
use crate::wire::pause::PauseRepr;
use crate::wire::{AethRepr, BthRepr};

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
    pub body: Body,
}

/// The part of a frame the analysis acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// Nothing to analyse beyond the capture-wide counts.
    Other,
    /// A PFC or 802.3x pause frame.
    Pause {
        src_mac: Option<[u8; 6]>,
        pause: PauseRepr,
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
    pub payload_len: Option<u32>,
    /// RETH DMA length (READ requests span PSNs by it).
    pub dma_len: Option<u32>,
    /// DETH source QP (UD).
    pub src_qp: Option<u32>,
    pub ecn: Option<u8>,
    pub dscp: Option<u8>,
    /// Priority from the outermost VLAN tag.
    pub pcp: Option<u8>,
    /// Ethernet destination (the port a pause would stop).
    pub dst_mac: Option<[u8; 6]>,
    pub cm: Option<CmMessage>,
    pub fingerprint: Fingerprint,
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
            }
        } else if let (Some(bth), Some((src, dst))) = (pkt.bth, pkt.endpoints()) {
            Body::Roce(RoceFacts {
                key: FlowKey {
                    src,
                    dst,
                    dest_qp: bth.dest_qp,
                },
                version: pkt.roce.unwrap_or(RoceVersion::V2),
                bth,
                aeth: pkt.aeth,
                payload_len: pkt.payload_len,
                dma_len: pkt.reth.map(|r| r.dma_len),
                src_qp: pkt.deth.map(|d| d.src_qp),
                ecn: pkt.ecn(),
                dscp: pkt.dscp(),
                pcp: pkt.pcp(),
                dst_mac: pkt.eth.map(|e| e.dst),
                cm: pkt.cm,
                fingerprint: Fingerprint::of(pkt),
            })
        } else {
            Body::Other
        };
        Facts {
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
}
