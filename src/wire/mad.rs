//! Management datagrams on QP1, decoded far enough for RDMA CM: the common
//! MAD header and the REQ/REP/RTU/REJ/DREQ/DREP messages of the CM class
//! (0x07), with the QPNs and starting PSNs that pair connections.

use nom::IResult;
use nom::Parser;
use nom::bytes::complete::take;
use nom::number::complete::{be_u8, be_u16, be_u32, be_u64};

use super::Truncated;

/// Length of the common MAD header.
pub const HEADER_LEN: usize = 24;
/// A full MAD is 256 bytes.
pub const MAD_LEN: usize = 256;
pub const CLASS_CM: u8 = 0x07;

/// CM attribute IDs (IBA 16.7.2 / 12.6).
pub mod attr {
    pub const CLASS_PORT_INFO: u16 = 0x0001;
    pub const REQ: u16 = 0x0010;
    pub const MRA: u16 = 0x0011;
    pub const REJ: u16 = 0x0012;
    pub const REP: u16 = 0x0013;
    pub const RTU: u16 = 0x0014;
    pub const DREQ: u16 = 0x0015;
    pub const DREP: u16 = 0x0016;
    pub const SIDR_REQ: u16 = 0x0017;
    pub const SIDR_REP: u16 = 0x0018;
    pub const LAP: u16 = 0x0019;
    pub const APR: u16 = 0x001a;
}

/// The common MAD header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MadHeader {
    pub base_version: u8,
    pub mgmt_class: u8,
    pub class_version: u8,
    pub method: u8,
    pub status: u16,
    pub class_specific: u16,
    pub transaction_id: u64,
    pub attribute_id: u16,
    pub attribute_modifier: u32,
}

/// A CM message with the fields connection pairing needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmMessage {
    Req {
        local_comm_id: u32,
        service_id: u64,
        local_qpn: u32,
        starting_psn: u32,
        /// Path MTU code (1 = 256 ... 5 = 4096).
        mtu: u8,
        /// NVMe-oF's private data, when the ServiceID is port 4420's and
        /// the private data was captured.
        nvme: Option<super::nvme::CmReqData>,
    },
    Rep {
        local_comm_id: u32,
        remote_comm_id: u32,
        local_qpn: u32,
        starting_psn: u32,
    },
    Rtu {
        local_comm_id: u32,
        remote_comm_id: u32,
    },
    Rej {
        local_comm_id: u32,
        remote_comm_id: u32,
        reason: u16,
    },
    Dreq {
        local_comm_id: u32,
        remote_comm_id: u32,
        remote_qpn: u32,
    },
    Drep {
        local_comm_id: u32,
        remote_comm_id: u32,
    },
    /// Another CM attribute (MRA, LAP, ...), named but not decoded.
    Other { attribute_id: u16 },
}

impl CmMessage {
    pub fn name(&self) -> &'static str {
        match self {
            CmMessage::Req { .. } => "ConnectRequest",
            CmMessage::Rep { .. } => "ConnectReply",
            CmMessage::Rtu { .. } => "ReadyToUse",
            CmMessage::Rej { .. } => "ConnectReject",
            CmMessage::Dreq { .. } => "DisconnectRequest",
            CmMessage::Drep { .. } => "DisconnectReply",
            CmMessage::Other { attribute_id } => attribute_name(*attribute_id),
        }
    }

    /// Short wire name (REQ, REP, ...).
    pub fn short_name(&self) -> &'static str {
        match self {
            CmMessage::Req { .. } => "REQ",
            CmMessage::Rep { .. } => "REP",
            CmMessage::Rtu { .. } => "RTU",
            CmMessage::Rej { .. } => "REJ",
            CmMessage::Dreq { .. } => "DREQ",
            CmMessage::Drep { .. } => "DREP",
            CmMessage::Other { .. } => "CM",
        }
    }
}

pub fn attribute_name(id: u16) -> &'static str {
    match id {
        attr::CLASS_PORT_INFO => "ClassPortInfo",
        attr::REQ => "ConnectRequest",
        attr::MRA => "MsgRcptAck",
        attr::REJ => "ConnectReject",
        attr::REP => "ConnectReply",
        attr::RTU => "ReadyToUse",
        attr::DREQ => "DisconnectRequest",
        attr::DREP => "DisconnectReply",
        attr::SIDR_REQ => "ServiceIDResReq",
        attr::SIDR_REP => "ServiceIDResReqResp",
        attr::LAP => "LoadAlternatePath",
        attr::APR => "AlternatePathResponse",
        _ => "Unknown CM attribute",
    }
}

/// Management classes named in summaries.
pub mod class {
    /// Subnet management, LID routed (on QP0).
    pub const SUBN_LID: u8 = 0x01;
    /// Subnet management, directed route (on QP0).
    pub const SUBN_DIRECTED: u8 = 0x81;
    /// Subnet administration (on QP1).
    pub const SUBN_ADM: u8 = 0x03;
    pub const PERF: u8 = 0x04;
    pub const BM: u8 = 0x05;
    pub const DEV_MGT: u8 = 0x06;
    pub const CM: u8 = 0x07;
    pub const SNMP: u8 = 0x08;
}

/// The method as the IBA names it (Get, Set, GetResp, ...).
pub fn method_name(method: u8) -> &'static str {
    match method {
        0x01 => "Get",
        0x02 => "Set",
        0x81 => "GetResp",
        0x03 => "Send",
        0x05 => "Trap",
        0x06 => "Report",
        0x86 => "ReportResp",
        0x07 => "TrapRepress",
        0x12 => "GetTable",
        0x92 => "GetTableResp",
        0x13 => "GetTraceTable",
        0x93 => "GetTraceTableResp",
        0x14 => "GetMulti",
        0x94 => "GetMultiResp",
        0x15 => "Delete",
        0x95 => "DeleteResp",
        _ => "Method",
    }
}

/// Subnet management attributes (IBA 14.2.5).
fn smp_attribute(id: u16) -> Option<&'static str> {
    Some(match id {
        0x0001 => "ClassPortInfo",
        0x0002 => "Notice",
        0x0003 => "InformInfo",
        0x0010 => "NodeDescription",
        0x0011 => "NodeInfo",
        0x0012 => "SwitchInfo",
        0x0014 => "GUIDInfo",
        0x0015 => "PortInfo",
        0x0016 => "P_KeyTable",
        0x0017 => "SLtoVLMappingTable",
        0x0018 => "VLArbitrationTable",
        0x0019 => "LinearForwardingTable",
        0x001a => "RandomForwardingTable",
        0x001b => "MulticastForwardingTable",
        0x0020 => "SMInfo",
        0x0030 => "VendorDiag",
        0x0031 => "LedInfo",
        _ => return None,
    })
}

/// Subnet administration attributes (IBA 15.2.5).
fn sa_attribute(id: u16) -> Option<&'static str> {
    Some(match id {
        0x0001 => "ClassPortInfo",
        0x0002 => "Notice",
        0x0003 => "InformInfo",
        0x0011 => "NodeRecord",
        0x0012 => "PortInfoRecord",
        0x0013 => "SLtoVLMappingTableRecord",
        0x0014 => "SwitchInfoRecord",
        0x0015 => "LinearForwardingTableRecord",
        0x0016 => "RandomForwardingTableRecord",
        0x0017 => "MulticastForwardingTableRecord",
        0x0018 => "SMInfoRecord",
        0x0020 => "LinkRecord",
        0x0030 => "GuidInfoRecord",
        0x0031 => "ServiceRecord",
        0x0033 => "P_KeyTableRecord",
        0x0035 => "PathRecord",
        0x0036 => "VLArbitrationTableRecord",
        0x0038 => "MCMemberRecord",
        0x0039 => "TraceRecord",
        0x003a => "MultiPathRecord",
        0x003b => "ServiceAssociationRecord",
        0x00f3 => "InformInfoRecord",
        _ => return None,
    })
}

/// Performance management attributes (IBA 16.1.3).
fn perf_attribute(id: u16) -> Option<&'static str> {
    Some(match id {
        0x0001 => "ClassPortInfo",
        0x0010 => "PortSamplesControl",
        0x0011 => "PortSamplesResult",
        0x0012 => "PortCounters",
        0x0013 => "PortRcvErrorDetails",
        0x0014 => "PortXmitDiscardDetails",
        0x0015 => "PortOpRcvCounters",
        0x0016 => "PortFlowCtlCounters",
        0x0017 => "PortVLOpPackets",
        0x0018 => "PortVLOpData",
        0x0019 => "PortVLXmitFlowCtlUpdateErrors",
        0x001a => "PortVLXmitWaitCounters",
        0x001d => "PortCountersExtended",
        0x001e => "PortSamplesResultExtended",
        0x001f => "PortXmitDataSL",
        0x0020 => "PortRcvDataSL",
        _ => return None,
    })
}

/// A MAD as a summary names it: `SubnGet(SMInfo)`, `SubnAdmGetResp(PathRecord)`,
/// `PerfGet(PortCounters)`, `CM: ConnectRequest`, else the class and
/// method in numbers.
pub fn describe(hdr: &MadHeader) -> String {
    let method = method_name(hdr.method);
    let attr = hdr.attribute_id;
    let named = |prefix: &str, name: Option<&str>| match name {
        Some(n) => format!("{prefix}{method}({n})"),
        None => format!("{prefix}{method}(attribute 0x{attr:04x})"),
    };
    match hdr.mgmt_class {
        class::SUBN_LID | class::SUBN_DIRECTED => named("Subn", smp_attribute(attr)),
        class::SUBN_ADM => named("SubnAdm", sa_attribute(attr)),
        class::PERF => named("Perf", perf_attribute(attr)),
        class::CM => format!("CM: {}", attribute_name(attr)),
        class::BM => named("BM", None),
        class::DEV_MGT => named("DevMgt", None),
        class::SNMP => named("SNMP", None),
        c @ (0x09..=0x0f | 0x30..=0x4f) => {
            format!("Vendor class 0x{c:02x} {method} (attribute 0x{attr:04x})")
        }
        c => format!("MAD class 0x{c:02x} {method} (attribute 0x{attr:04x})"),
    }
}

fn header(i: &[u8]) -> IResult<&[u8], MadHeader> {
    let (i, (base_version, mgmt_class, class_version, method)) =
        (be_u8, be_u8, be_u8, be_u8).parse(i)?;
    let (i, (status, class_specific, transaction_id, attribute_id)) =
        (be_u16, be_u16, be_u64, be_u16).parse(i)?;
    let (i, (_reserved, attribute_modifier)) = (be_u16, be_u32).parse(i)?;
    Ok((
        i,
        MadHeader {
            base_version,
            mgmt_class,
            class_version,
            method,
            status,
            class_specific,
            transaction_id,
            attribute_id,
            attribute_modifier,
        },
    ))
}

fn be_u24(i: &[u8]) -> IResult<&[u8], u32> {
    let (i, b) = take(3usize).parse(i)?;
    let v = b
        .iter()
        .fold(0u32, |acc, &x| acc.wrapping_shl(8) | u32::from(x));
    Ok((i, v))
}

fn req(i: &[u8]) -> IResult<&[u8], CmMessage> {
    let (i, (local_comm_id, _resv, service_id, _guid, _resv2, _qkey)) =
        (be_u32, be_u32, be_u64, be_u64, be_u32, be_u32).parse(i)?;
    let (i, (local_qpn, _rr, _eecn, _idepth, _reecn, _flags)) =
        (be_u24, be_u8, be_u24, be_u8, be_u24, be_u8).parse(i)?;
    let (i, (starting_psn, _timeouts, _pkey, mtu_byte)) =
        (be_u24, be_u8, be_u16, be_u8).parse(i)?;
    Ok((
        i,
        CmMessage::Req {
            local_comm_id,
            service_id,
            local_qpn,
            starting_psn,
            mtu: mtu_byte >> 4,
            nvme: None,
        },
    ))
}

/// Where a REQ's private data starts in its message: after the primary
/// and alternate paths (92 bytes of it).
pub const REQ_PRIVATE_DATA: usize = 140;

/// A REQ to the NVMe-oF port with NVMe-oF's private data read (after the
/// RDMA CM's IP header).
fn with_private_data(m: CmMessage, body: &[u8]) -> CmMessage {
    use super::nvme::{CM_IP_HEADER_LEN, CmReqData, NVME_PORT, service_port};
    match m {
        CmMessage::Req {
            local_comm_id,
            service_id,
            local_qpn,
            starting_psn,
            mtu,
            ..
        } if service_port(service_id) == Some(NVME_PORT) => CmMessage::Req {
            local_comm_id,
            service_id,
            local_qpn,
            starting_psn,
            mtu,
            nvme: body
                .get(REQ_PRIVATE_DATA.saturating_add(CM_IP_HEADER_LEN)..)
                .and_then(|d| CmReqData::parse(d).ok()),
        },
        other => other,
    }
}

fn rep(i: &[u8]) -> IResult<&[u8], CmMessage> {
    let (i, (local_comm_id, remote_comm_id, _qkey)) = (be_u32, be_u32, be_u32).parse(i)?;
    let (i, (local_qpn, _r1, _eec, _r2, starting_psn)) =
        (be_u24, be_u8, be_u24, be_u8, be_u24).parse(i)?;
    Ok((
        i,
        CmMessage::Rep {
            local_comm_id,
            remote_comm_id,
            local_qpn,
            starting_psn,
        },
    ))
}

fn two_ids(i: &[u8]) -> IResult<&[u8], (u32, u32)> {
    (be_u32, be_u32).parse(i)
}

/// Parses a MAD (the UD payload after the DETH). Returns the header and, for
/// the CM class, the message.
pub fn parse(buf: &[u8]) -> Result<(MadHeader, Option<CmMessage>), Truncated> {
    let short = |needed: usize| Truncated {
        layer: "MAD",
        needed,
        got: buf.len(),
    };
    let (body, hdr) = header(buf).map_err(|_| short(HEADER_LEN))?;
    if hdr.mgmt_class != CLASS_CM {
        return Ok((hdr, None));
    }
    let msg = match hdr.attribute_id {
        attr::REQ => req(body).map(|(_, m)| with_private_data(m, body)),
        attr::REP => rep(body).map(|(_, m)| m),
        attr::RTU => two_ids(body).map(|(_, (l, r))| CmMessage::Rtu {
            local_comm_id: l,
            remote_comm_id: r,
        }),
        attr::DREP => two_ids(body).map(|(_, (l, r))| CmMessage::Drep {
            local_comm_id: l,
            remote_comm_id: r,
        }),
        attr::REJ => {
            (be_u32, be_u32, be_u8, be_u8, be_u16)
                .parse(body)
                .map(|(_, (l, r, _, _, reason))| CmMessage::Rej {
                    local_comm_id: l,
                    remote_comm_id: r,
                    reason,
                })
        }
        attr::DREQ => (be_u32, be_u32, be_u24)
            .parse(body)
            .map(|(_, (l, r, q))| CmMessage::Dreq {
                local_comm_id: l,
                remote_comm_id: r,
                remote_qpn: q,
            }),
        other => Ok(CmMessage::Other {
            attribute_id: other,
        }),
    };
    let msg = msg.map_err(|_| short(HEADER_LEN.saturating_add(52)))?;
    Ok((hdr, Some(msg)))
}

/// Builds a CM MAD (256 bytes) for the generator.
pub fn emit_cm(transaction_id: u64, msg: &CmMessage, buf: &mut [u8]) -> Result<(), Truncated> {
    let b = super::fixed_mut::<MAD_LEN>("MAD", buf)?;
    *b = [0u8; MAD_LEN];
    let (attr_id, method) = match msg {
        CmMessage::Req { .. } => (attr::REQ, 3),
        CmMessage::Rep { .. } => (attr::REP, 3),
        CmMessage::Rtu { .. } => (attr::RTU, 3),
        CmMessage::Rej { .. } => (attr::REJ, 3),
        CmMessage::Dreq { .. } => (attr::DREQ, 3),
        CmMessage::Drep { .. } => (attr::DREP, 3),
        CmMessage::Other { attribute_id } => (*attribute_id, 3),
    };
    let mut w = Writer { b, at: 0 };
    w.bytes(&[1, CLASS_CM, 2, method]);
    w.bytes(&[0, 0, 0, 0]);
    w.bytes(&transaction_id.to_be_bytes());
    w.bytes(&attr_id.to_be_bytes());
    w.bytes(&[0, 0, 0, 0, 0, 0]);
    match *msg {
        CmMessage::Req {
            local_comm_id,
            service_id,
            local_qpn,
            starting_psn,
            mtu,
            nvme,
        } => {
            if let Some(d) = nvme {
                // The RDMA CM's IP header (addresses left zero), then
                // NVMe-oF's data.
                use super::nvme::{CM_IP_HEADER_LEN, CmIpHeader, CmReqData};
                let mut p = [0u8; CM_IP_HEADER_LEN + CmReqData::LEN];
                let (h, rest) = p.split_at_mut(CM_IP_HEADER_LEN);
                let ip = CmIpHeader {
                    ip_version: 4,
                    port: super::nvme::NVME_PORT,
                    ..CmIpHeader::default()
                };
                ip.emit(h)?;
                d.emit(rest)?;
                w.at = HEADER_LEN.saturating_add(REQ_PRIVATE_DATA);
                w.bytes(&p);
                w.at = HEADER_LEN;
            }
            w.bytes(&local_comm_id.to_be_bytes());
            w.bytes(&[0; 4]);
            w.bytes(&service_id.to_be_bytes());
            w.bytes(&[0; 8]); // CA GUID
            w.bytes(&[0; 4]);
            w.bytes(&0u32.to_be_bytes()); // Q_Key
            w.bytes(&(local_qpn << 8).to_be_bytes());
            w.bytes(&[0; 4]);
            w.bytes(&[0, 0, 0, 0x02]); // RC
            w.bytes(&(starting_psn << 8 | 0x07).to_be_bytes());
            w.bytes(&[0xff, 0xff, (mtu & 0xf) << 4 | 0x07]);
        }
        CmMessage::Rep {
            local_comm_id,
            remote_comm_id,
            local_qpn,
            starting_psn,
        } => {
            w.bytes(&local_comm_id.to_be_bytes());
            w.bytes(&remote_comm_id.to_be_bytes());
            w.bytes(&[0; 4]);
            w.bytes(&(local_qpn << 8).to_be_bytes());
            w.bytes(&[0; 4]);
            w.bytes(&(starting_psn << 8).to_be_bytes());
        }
        CmMessage::Rtu {
            local_comm_id,
            remote_comm_id,
        }
        | CmMessage::Drep {
            local_comm_id,
            remote_comm_id,
        } => {
            w.bytes(&local_comm_id.to_be_bytes());
            w.bytes(&remote_comm_id.to_be_bytes());
        }
        CmMessage::Rej {
            local_comm_id,
            remote_comm_id,
            reason,
        } => {
            w.bytes(&local_comm_id.to_be_bytes());
            w.bytes(&remote_comm_id.to_be_bytes());
            w.bytes(&[0, 0]);
            w.bytes(&reason.to_be_bytes());
        }
        CmMessage::Dreq {
            local_comm_id,
            remote_comm_id,
            remote_qpn,
        } => {
            w.bytes(&local_comm_id.to_be_bytes());
            w.bytes(&remote_comm_id.to_be_bytes());
            w.bytes(&(remote_qpn << 8).to_be_bytes());
        }
        CmMessage::Other { .. } => {}
    }
    Ok(())
}

struct Writer<'a> {
    b: &'a mut [u8; MAD_LEN],
    at: usize,
}

impl Writer<'_> {
    fn bytes(&mut self, src: &[u8]) {
        for s in src {
            if let Some(d) = self.b.get_mut(self.at) {
                *d = *s;
            }
            self.at = self.at.saturating_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn management_datagrams_are_named_as_wireshark_names_them() {
        let h = |mgmt_class, method, attribute_id| MadHeader {
            mgmt_class,
            method,
            attribute_id,
            ..Default::default()
        };
        // From Wireshark's infiniband.pcap sample: an SM polling SMInfo on
        // QP0 (directed route), a PathRecord query to the SA on QP1.
        assert_eq!(describe(&h(0x81, 0x01, 0x0020)), "SubnGet(SMInfo)");
        assert_eq!(describe(&h(0x81, 0x81, 0x0020)), "SubnGetResp(SMInfo)");
        assert_eq!(describe(&h(0x03, 0x01, 0x0035)), "SubnAdmGet(PathRecord)");
        assert_eq!(
            describe(&h(0x03, 0x92, 0x0038)),
            "SubnAdmGetTableResp(MCMemberRecord)"
        );
        assert_eq!(describe(&h(0x04, 0x01, 0x0012)), "PerfGet(PortCounters)");
        assert_eq!(describe(&h(0x07, 0x03, 0x0010)), "CM: ConnectRequest");
        assert_eq!(
            describe(&h(0x01, 0x02, 0x7777)),
            "SubnSet(attribute 0x7777)"
        );
        assert_eq!(
            describe(&h(0x22, 0x01, 1)),
            "MAD class 0x22 Get (attribute 0x0001)"
        );
    }

    #[test]
    fn req_rep_round_trip() {
        for msg in [
            CmMessage::Req {
                local_comm_id: 0x1234,
                service_id: 0x0106_0000_0000_4e20,
                local_qpn: 0x11,
                starting_psn: 0xabcdef,
                mtu: 3,
                nvme: None,
            },
            // An NVMe-oF I/O queue's REQ: its private data comes back.
            CmMessage::Req {
                local_comm_id: 0x99,
                service_id: super::super::nvme::service_id(4420),
                local_qpn: 0x21,
                starting_psn: 5,
                mtu: 5,
                nvme: Some(super::super::nvme::CmReqData {
                    recfmt: 0,
                    qid: 3,
                    hrqsize: 128,
                    hsqsize: 127,
                    cntlid: 1,
                }),
            },
            CmMessage::Rep {
                local_comm_id: 7,
                remote_comm_id: 0x1234,
                local_qpn: 0x12,
                starting_psn: 0x10,
            },
            CmMessage::Rtu {
                local_comm_id: 1,
                remote_comm_id: 2,
            },
            CmMessage::Rej {
                local_comm_id: 1,
                remote_comm_id: 2,
                reason: 28,
            },
            CmMessage::Dreq {
                local_comm_id: 1,
                remote_comm_id: 2,
                remote_qpn: 0x99,
            },
            CmMessage::Drep {
                local_comm_id: 1,
                remote_comm_id: 2,
            },
        ] {
            let mut b = [0u8; MAD_LEN];
            emit_cm(42, &msg, &mut b).unwrap();
            let (hdr, parsed) = parse(&b).unwrap();
            assert_eq!(hdr.mgmt_class, CLASS_CM);
            assert_eq!(hdr.transaction_id, 42);
            assert_eq!(parsed, Some(msg));
        }
    }

    #[test]
    fn short_mad_is_truncated() {
        assert!(parse(&[1, 7, 2]).is_err());
    }
}
