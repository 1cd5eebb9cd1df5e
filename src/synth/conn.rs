//! A connection between two endpoints, for building traffic by hand:
//! requests from A to B, responses and CNPs from B to A.

use super::frame::{ExtHeaders, NetSpec, Payload, RoceFrame, build_roce};
use crate::wire::Psn;
use crate::wire::{AckKind, AethRepr, BthRepr, Opcode, RethRepr};

/// Two endpoints and their QPs; A is the requester.
#[derive(Debug, Clone, Copy)]
pub struct Conn {
    pub mac_a: [u8; 6],
    pub mac_b: [u8; 6],
    /// The path from A to B.
    pub net: NetSpec,
    pub qp_a: u32,
    pub qp_b: u32,
    pub vlan: Option<(u16, u8)>,
}

impl Conn {
    /// A frame of `opcode` from A (else from B) to the other's QP.
    pub fn frame(
        &self,
        from_a: bool,
        opcode: u8,
        psn: impl Into<Psn>,
        payload: usize,
        ext: ExtHeaders,
    ) -> RoceFrame<'static> {
        let (src, dst, net, qp) = if from_a {
            (self.mac_a, self.mac_b, self.net, self.qp_b)
        } else {
            (self.mac_b, self.mac_a, self.net.reversed(), self.qp_a)
        };
        RoceFrame {
            src_mac: src,
            dst_mac: dst,
            vlan: self.vlan,
            net,
            bth: BthRepr {
                opcode: Opcode(opcode),
                p_key: 0xffff,
                dest_qp: qp,
                psn: psn.into(),
                ack_req: true,
                ..BthRepr::default()
            },
            ext,
            payload: Payload::Pattern(payload),
            bad_icrc: false,
        }
    }

    /// A SEND ONLY carrying `payload` (a capsule), from A or from B.
    pub fn send<'a>(&self, from_a: bool, psn: impl Into<Psn>, payload: &'a [u8]) -> RoceFrame<'a> {
        RoceFrame {
            payload: Payload::Bytes(payload),
            ..self.frame(from_a, 0x04, psn, 0, ExtHeaders::default())
        }
    }

    /// A request from A (SEND, WRITE, atomics) with `payload` bytes.
    pub fn req(&self, opcode: u8, psn: impl Into<Psn>, payload: usize) -> RoceFrame<'static> {
        let ext = ExtHeaders {
            reth: Some(RethRepr {
                va: 0x7f00_0000_0000,
                r_key: 0x1234,
                dma_len: payload as u32,
            }),
            ..ExtHeaders::default()
        };
        self.frame(true, opcode, psn, payload, ext)
    }

    /// An RDMA READ request from A for `len` bytes.
    pub fn read(&self, psn: impl Into<Psn>, len: u32) -> RoceFrame<'static> {
        let ext = ExtHeaders {
            reth: Some(RethRepr {
                va: 0x7f00_0000_0000,
                r_key: 0x1234,
                dma_len: len,
            }),
            ..ExtHeaders::default()
        };
        self.frame(true, 0x0c, psn, 0, ext)
    }

    /// A READ response packet from B.
    pub fn read_resp(
        &self,
        opcode: u8,
        psn: impl Into<Psn>,
        payload: usize,
        msn: u32,
    ) -> RoceFrame<'static> {
        let ext = ExtHeaders {
            aeth: Some(AethRepr {
                syndrome: AethRepr::syndrome_for(AckKind::Ack, 31),
                msn,
            }),
            ..ExtHeaders::default()
        };
        self.frame(false, opcode, psn, payload, ext)
    }

    /// An ACK, NAK or RNR NAK from B.
    pub fn ack(
        &self,
        psn: impl Into<Psn>,
        kind: AckKind,
        value: u8,
        msn: u32,
    ) -> RoceFrame<'static> {
        let ext = ExtHeaders {
            aeth: Some(AethRepr {
                syndrome: AethRepr::syndrome_for(kind, value),
                msn,
            }),
            ..ExtHeaders::default()
        };
        self.frame(false, 0x11, psn, 0, ext)
    }

    /// A CNP from B telling A's QP to slow down.
    pub fn cnp(&self) -> RoceFrame<'static> {
        let mut f = super::frame::cnp(
            self.mac_b,
            self.mac_a,
            self.net.reversed().with_dscp(48),
            self.qp_a,
        );
        f.vlan = self.vlan.map(|(id, _)| (id, 6));
        f
    }
}

/// Frame bytes of a [`RoceFrame`].
pub fn bytes(f: &RoceFrame<'_>) -> Vec<u8> {
    let mut v = Vec::with_capacity(128);
    build_roce(f, &mut v);
    v
}
