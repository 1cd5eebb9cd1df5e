//! NVMe over Fabrics on RDMA: the command capsule's 64-byte SQE (with its
//! SGL descriptor and the Fabrics commands), the response capsule's
//! 16-byte CQE, the Connect command's data, and what the RDMA CM carries
//! for it (the ServiceID's port, the private data). All NVMe fields are
//! little-endian (`../shared/spec/nvmeof-facts.md`).

use super::{Truncated, fixed, fixed_mut, put, take};

/// A submission queue entry: the command capsule's first 64 bytes.
pub const SQE_LEN: usize = 64;
/// A completion queue entry: the response capsule.
pub const CQE_LEN: usize = 16;
/// An SGL descriptor.
pub const SGL_LEN: usize = 16;
/// The Connect command's data (host id, cntlid, NQNs).
pub const CONNECT_DATA_LEN: usize = 1024;
/// The RDMA CM's IP header before a ULP's private data in a CM REQ.
pub const CM_IP_HEADER_LEN: usize = 36;
/// The NVMe-oF RDMA port IANA assigned.
pub const NVME_PORT: u16 = 4420;
/// The opcode of every Fabrics command.
pub const FABRICS_OPCODE: u8 = 0x7f;

fn le16(b: [u8; 2]) -> u16 {
    u16::from_le_bytes(b)
}
fn le32(b: [u8; 4]) -> u32 {
    u32::from_le_bytes(b)
}
fn le64(b: [u8; 8]) -> u64 {
    u64::from_le_bytes(b)
}

mod sqe {
    pub const OPCODE: usize = 0;
    pub const FLAGS: usize = 1;
    pub const CID: usize = 2;
    pub const NSID: usize = 4;
    pub const CDW2: usize = 8;
    pub const CDW3: usize = 12;
    pub const MPTR: usize = 16;
    pub const SGL: usize = 24;
    pub const CDW10: usize = 40;
}

mod sgl {
    pub const ADDRESS: usize = 0;
    pub const LENGTH: usize = 8;
    pub const KEY: usize = 11;
    pub const TYPE: usize = 15;
}

mod cqe {
    pub const RESULT: usize = 0;
    pub const SQHD: usize = 8;
    pub const SQID: usize = 10;
    pub const CID: usize = 12;
    pub const STATUS: usize = 14;
}

/// SGL descriptor types (the high nibble of byte 15).
pub mod sgl_type {
    pub const DATA_BLOCK: u8 = 0x0;
    pub const BIT_BUCKET: u8 = 0x1;
    pub const SEGMENT: u8 = 0x2;
    pub const LAST_SEGMENT: u8 = 0x3;
    pub const KEYED_DATA_BLOCK: u8 = 0x4;
    /// Data Block subtype: the address is an offset into the capsule.
    pub const SUBTYPE_OFFSET: u8 = 0x1;
    /// Keyed Data Block subtype: the controller may invalidate the key.
    pub const SUBTYPE_INVALIDATE: u8 = 0xf;
}

/// An SGL descriptor: a keyed data block (address, 24-bit length, key)
/// or a data block (address or capsule offset, 32-bit length).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SglRepr {
    pub address: u64,
    /// 24 bits in a keyed data block, 32 in the others.
    pub length: u32,
    /// Keyed data blocks only (else 0).
    pub key: u32,
    pub sgl_type: u8,
    pub subtype: u8,
}

impl SglRepr {
    pub const LEN: usize = SGL_LEN;

    pub fn keyed(&self) -> bool {
        self.sgl_type == sgl_type::KEYED_DATA_BLOCK
    }

    /// In-capsule data: a data block whose address is an offset.
    pub fn in_capsule(&self) -> bool {
        self.sgl_type == sgl_type::DATA_BLOCK && self.subtype == sgl_type::SUBTYPE_OFFSET
    }

    pub fn parse(buf: &[u8]) -> Result<Self, Truncated> {
        let b = fixed::<SGL_LEN>("NVMe SGL", buf)?;
        let t = b[sgl::TYPE];
        let (sgl_type, subtype) = (t >> 4, t & 0x0f);
        let (length, key) = if sgl_type == sgl_type::KEYED_DATA_BLOCK {
            let l: [u8; 3] = take(b, sgl::LENGTH);
            (
                u32::from_le_bytes([l[0], l[1], l[2], 0]),
                le32(take(b, sgl::KEY)),
            )
        } else {
            (le32(take(b, sgl::LENGTH)), 0)
        };
        Ok(SglRepr {
            address: le64(take(b, sgl::ADDRESS)),
            length,
            key,
            sgl_type,
            subtype,
        })
    }

    /// Writes the descriptor; bytes a type leaves reserved are zero.
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), Truncated> {
        let b = fixed_mut::<SGL_LEN>("NVMe SGL", buf)?;
        *b = [0; SGL_LEN];
        put(b, sgl::ADDRESS, &self.address.to_le_bytes());
        if self.keyed() {
            let l = self.length.to_le_bytes();
            put(b, sgl::LENGTH, &[l[0], l[1], l[2]]);
            put(b, sgl::KEY, &self.key.to_le_bytes());
        } else {
            put(b, sgl::LENGTH, &self.length.to_le_bytes());
        }
        b[sgl::TYPE] = (self.sgl_type & 0x0f) << 4 | (self.subtype & 0x0f);
        Ok(())
    }

    pub fn type_name(&self) -> &'static str {
        match self.sgl_type {
            sgl_type::DATA_BLOCK => "Data Block",
            sgl_type::BIT_BUCKET => "Bit Bucket",
            sgl_type::SEGMENT => "Segment",
            sgl_type::LAST_SEGMENT => "Last Segment",
            sgl_type::KEYED_DATA_BLOCK => "Keyed Data Block",
            _ => "Reserved",
        }
    }
}

/// A submission queue entry. The command dwords 10-15 are kept as they
/// are; what they mean depends on the opcode ([`slba`](Self::slba),
/// [`connect`](Self::connect), ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SqeRepr {
    pub opcode: u8,
    pub flags: u8,
    pub cid: u16,
    /// Namespace id (for a Fabrics command, byte 4 is its type).
    pub nsid: u32,
    pub cdw2: u32,
    pub cdw3: u32,
    pub mptr: u64,
    pub sgl: SglRepr,
    pub cdw10_15: [u32; 6],
}

/// Which command set an opcode is read in: the admin queue's (qid 0) or
/// an I/O queue's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueKind {
    Admin,
    Io,
}

impl QueueKind {
    pub fn of_qid(qid: u16) -> Self {
        if qid == 0 {
            QueueKind::Admin
        } else {
            QueueKind::Io
        }
    }
}

/// The Fabrics Connect command's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Connect {
    pub recfmt: u16,
    pub qid: u16,
    /// 0-based.
    pub sqsize: u16,
    pub cattr: u8,
    /// Keep-alive timeout, ms.
    pub kato: u32,
}

/// Property Get and Set: the register and, for Set, its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Property {
    /// 0: 4 bytes, 1: 8 bytes.
    pub attrib: u8,
    pub offset: u32,
    pub value: u64,
}

impl SqeRepr {
    pub const LEN: usize = SQE_LEN;

    pub fn parse(buf: &[u8]) -> Result<Self, Truncated> {
        let b = fixed::<SQE_LEN>("NVMe SQE", buf)?;
        let sgl = SglRepr::parse(&take::<SQE_LEN, SGL_LEN>(b, sqe::SGL))?;
        let mut cdw10_15 = [0u32; 6];
        for (k, dw) in cdw10_15.iter_mut().enumerate() {
            *dw = le32(take(b, sqe::CDW10.wrapping_add(k.wrapping_mul(4))));
        }
        Ok(SqeRepr {
            opcode: b[sqe::OPCODE],
            flags: b[sqe::FLAGS],
            cid: le16(take(b, sqe::CID)),
            nsid: le32(take(b, sqe::NSID)),
            cdw2: le32(take(b, sqe::CDW2)),
            cdw3: le32(take(b, sqe::CDW3)),
            mptr: le64(take(b, sqe::MPTR)),
            sgl,
            cdw10_15,
        })
    }

    pub fn emit(&self, buf: &mut [u8]) -> Result<(), Truncated> {
        let b = fixed_mut::<SQE_LEN>("NVMe SQE", buf)?;
        b[sqe::OPCODE] = self.opcode;
        b[sqe::FLAGS] = self.flags;
        put(b, sqe::CID, &self.cid.to_le_bytes());
        put(b, sqe::NSID, &self.nsid.to_le_bytes());
        put(b, sqe::CDW2, &self.cdw2.to_le_bytes());
        put(b, sqe::CDW3, &self.cdw3.to_le_bytes());
        put(b, sqe::MPTR, &self.mptr.to_le_bytes());
        let mut s = [0u8; SGL_LEN];
        self.sgl.emit(&mut s)?;
        put(b, sqe::SGL, &s);
        for (k, dw) in self.cdw10_15.iter().enumerate() {
            put(
                b,
                sqe::CDW10.wrapping_add(k.wrapping_mul(4)),
                &dw.to_le_bytes(),
            );
        }
        Ok(())
    }

    /// Fused operation (flags bits 1:0).
    pub fn fuse(&self) -> u8 {
        self.flags & 0x03
    }

    /// PRP or SGL (flags bits 7:6; 1 = SGL).
    pub fn psdt(&self) -> u8 {
        self.flags >> 6
    }

    pub fn is_fabrics(&self) -> bool {
        self.opcode == FABRICS_OPCODE
    }

    /// A Fabrics command's type (byte 4).
    pub fn fctype(&self) -> Option<u8> {
        self.is_fabrics().then_some(self.nsid.to_le_bytes()[0])
    }

    /// Whether it reads or writes logical blocks (Read, Write, Compare,
    /// Write Zeroes, Write Uncorrectable) on an I/O queue.
    pub fn has_lba(&self, q: QueueKind) -> bool {
        q == QueueKind::Io && matches!(self.opcode, 0x01 | 0x02 | 0x04 | 0x05 | 0x08)
    }

    /// Starting LBA (dwords 10-11).
    pub fn slba(&self) -> u64 {
        u64::from(self.cdw10_15[0]) | u64::from(self.cdw10_15[1]) << 32
    }

    /// Number of logical blocks, 0-based (dword 12 bits 15:0).
    pub fn nlb(&self) -> u16 {
        (self.cdw10_15[2] & 0xffff) as u16
    }

    /// The Connect command's fields, for a Fabrics Connect.
    pub fn connect(&self) -> Option<Connect> {
        (self.fctype() == Some(fctype::CONNECT)).then(|| {
            let [d10, d11, d12, ..] = self.cdw10_15;
            Connect {
                recfmt: (d10 & 0xffff) as u16,
                qid: (d10 >> 16) as u16,
                sqsize: (d11 & 0xffff) as u16,
                cattr: (d11 >> 16) as u8,
                kato: d12,
            }
        })
    }

    /// Property Get or Set: the attribute (byte 40), the register's offset
    /// (bytes 44-47) and, for Set, the value (bytes 48-55).
    pub fn property(&self) -> Option<Property> {
        matches!(
            self.fctype(),
            Some(fctype::PROPERTY_GET | fctype::PROPERTY_SET)
        )
        .then(|| {
            let [d10, d11, d12, d13, ..] = self.cdw10_15;
            Property {
                attrib: (d10 & 0xff) as u8,
                offset: d11,
                value: u64::from(d12) | u64::from(d13) << 32,
            }
        })
    }

    /// The command's name in `q`'s command set.
    pub fn name(&self, q: QueueKind) -> &'static str {
        match self.fctype() {
            Some(t) => fctype::name(t),
            None => opcode_name(self.opcode, q),
        }
    }
}

/// The controller register a Property Get or Set names (by its offset).
pub fn property_name(offset: u32) -> &'static str {
    match offset {
        0x00 => "Controller Capabilities",
        0x08 => "Version",
        0x14 => "Controller Configuration",
        0x1c => "Controller Status",
        0x20 => "NVM Subsystem Reset",
        _ => "another register",
    }
}

/// Fabrics command types.
pub mod fctype {
    pub const PROPERTY_SET: u8 = 0x00;
    pub const CONNECT: u8 = 0x01;
    pub const PROPERTY_GET: u8 = 0x04;
    pub const AUTH_SEND: u8 = 0x05;
    pub const AUTH_RECEIVE: u8 = 0x06;
    pub const DISCONNECT: u8 = 0x08;

    pub fn name(t: u8) -> &'static str {
        match t {
            PROPERTY_SET => "Property Set",
            CONNECT => "Connect",
            PROPERTY_GET => "Property Get",
            AUTH_SEND => "Authentication Send",
            AUTH_RECEIVE => "Authentication Receive",
            DISCONNECT => "Disconnect",
            _ => "Fabrics (unknown type)",
        }
    }
}

/// The name of a command the analysis keeps as a code (an opcode, or a
/// Fabrics type + 0x100), on queue `qid` (an I/O queue when unknown).
pub fn code_name(code: u16, qid: Option<u16>) -> &'static str {
    match u8::try_from(code) {
        Ok(op) => opcode_name(op, QueueKind::of_qid(qid.unwrap_or(1))),
        Err(_) => fctype::name((code & 0xff) as u8),
    }
}

/// An opcode's name in the admin or the I/O command set.
pub fn opcode_name(opcode: u8, q: QueueKind) -> &'static str {
    match (q, opcode) {
        (_, FABRICS_OPCODE) => "Fabrics",
        (QueueKind::Io, 0x00) => "Flush",
        (QueueKind::Io, 0x01) => "Write",
        (QueueKind::Io, 0x02) => "Read",
        (QueueKind::Io, 0x04) => "Write Uncorrectable",
        (QueueKind::Io, 0x05) => "Compare",
        (QueueKind::Io, 0x08) => "Write Zeroes",
        (QueueKind::Io, 0x09) => "Dataset Management",
        (QueueKind::Io, 0x0d) => "Reservation Register",
        (QueueKind::Io, 0x0e) => "Reservation Report",
        (QueueKind::Io, 0x11) => "Reservation Acquire",
        (QueueKind::Io, 0x15) => "Reservation Release",
        (QueueKind::Admin, 0x00) => "Delete I/O Submission Queue",
        (QueueKind::Admin, 0x01) => "Create I/O Submission Queue",
        (QueueKind::Admin, 0x02) => "Get Log Page",
        (QueueKind::Admin, 0x04) => "Delete I/O Completion Queue",
        (QueueKind::Admin, 0x05) => "Create I/O Completion Queue",
        (QueueKind::Admin, 0x06) => "Identify",
        (QueueKind::Admin, 0x08) => "Abort",
        (QueueKind::Admin, 0x09) => "Set Features",
        (QueueKind::Admin, 0x0a) => "Get Features",
        (QueueKind::Admin, 0x0c) => "Asynchronous Event Request",
        (QueueKind::Admin, 0x0d) => "Namespace Management",
        (QueueKind::Admin, 0x10) => "Firmware Commit",
        (QueueKind::Admin, 0x11) => "Firmware Image Download",
        (QueueKind::Admin, 0x18) => "Keep Alive",
        _ => "Unknown",
    }
}

/// A completion queue entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CqeRepr {
    /// Command specific (dwords 0-1).
    pub result: u64,
    pub sqhd: u16,
    pub sqid: u16,
    pub cid: u16,
    /// Phase (bit 0) and status (bits 15:1).
    pub status: u16,
}

impl CqeRepr {
    pub const LEN: usize = CQE_LEN;

    pub fn parse(buf: &[u8]) -> Result<Self, Truncated> {
        let b = fixed::<CQE_LEN>("NVMe CQE", buf)?;
        Ok(CqeRepr {
            result: le64(take(b, cqe::RESULT)),
            sqhd: le16(take(b, cqe::SQHD)),
            sqid: le16(take(b, cqe::SQID)),
            cid: le16(take(b, cqe::CID)),
            status: le16(take(b, cqe::STATUS)),
        })
    }

    pub fn emit(&self, buf: &mut [u8]) -> Result<(), Truncated> {
        let b = fixed_mut::<CQE_LEN>("NVMe CQE", buf)?;
        put(b, cqe::RESULT, &self.result.to_le_bytes());
        put(b, cqe::SQHD, &self.sqhd.to_le_bytes());
        put(b, cqe::SQID, &self.sqid.to_le_bytes());
        put(b, cqe::CID, &self.cid.to_le_bytes());
        put(b, cqe::STATUS, &self.status.to_le_bytes());
        Ok(())
    }

    pub fn phase(&self) -> bool {
        self.status & 1 != 0
    }

    /// Status code (bits 8:1).
    pub fn sc(&self) -> u8 {
        (self.status >> 1) as u8
    }

    /// Status code type (bits 11:9).
    pub fn sct(&self) -> u8 {
        ((self.status >> 9) & 0x7) as u8
    }

    /// Command retry delay (bits 13:12).
    pub fn crd(&self) -> u8 {
        ((self.status >> 12) & 0x3) as u8
    }

    /// More status information in a log page (bit 14).
    pub fn more(&self) -> bool {
        self.status & 0x4000 != 0
    }

    /// Do not retry (bit 15).
    pub fn dnr(&self) -> bool {
        self.status & 0x8000 != 0
    }

    /// Whether the command failed (any status code type or code).
    pub fn failed(&self) -> bool {
        self.status & 0x0ffe != 0
    }

    pub fn status_name(&self) -> &'static str {
        status_name(self.sct(), self.sc())
    }
}

/// A status code type's name.
pub fn sct_name(sct: u8) -> &'static str {
    match sct {
        0 => "Generic Command Status",
        1 => "Command Specific Status",
        2 => "Media and Data Integrity Errors",
        3 => "Path Related Status",
        7 => "Vendor Specific",
        _ => "Reserved",
    }
}

/// A status's name (code type, code).
pub fn status_name(sct: u8, sc: u8) -> &'static str {
    match (sct, sc) {
        (0, 0x00) => "Successful Completion",
        (0, 0x01) => "Invalid Command Opcode",
        (0, 0x02) => "Invalid Field in Command",
        (0, 0x03) => "Command ID Conflict",
        (0, 0x04) => "Data Transfer Error",
        (0, 0x05) => "Commands Aborted due to Power Loss Notification",
        (0, 0x06) => "Internal Error",
        (0, 0x07) => "Command Abort Requested",
        (0, 0x08) => "Command Aborted due to SQ Deletion",
        (0, 0x09) => "Command Aborted due to Failed Fused Command",
        (0, 0x0a) => "Command Aborted due to Missing Fused Command",
        (0, 0x0b) => "Invalid Namespace or Format",
        (0, 0x0c) => "Command Sequence Error",
        (0, 0x0d) => "Invalid SGL Segment Descriptor",
        (0, 0x0e) => "Invalid Number of SGL Descriptors",
        (0, 0x0f) => "Data SGL Length Invalid",
        (0, 0x10) => "Metadata SGL Length Invalid",
        (0, 0x11) => "SGL Descriptor Type Invalid",
        (0, 0x15) => "Invalid SGL Offset",
        (0, 0x80) => "LBA Out of Range",
        (0, 0x81) => "Capacity Exceeded",
        (0, 0x82) => "Namespace Not Ready",
        (0, 0x83) => "Reservation Conflict",
        (1, 0x80) => "Conflicting Attributes",
        (1, 0x81) => "Invalid Protection Information",
        (1, 0x82) => "Attempted Write to Read Only Range",
        (2, 0x80) => "Write Fault",
        (2, 0x81) => "Unrecovered Read Error",
        (2, 0x82) => "End-to-end Guard Check Error",
        (2, 0x83) => "End-to-end Application Tag Check Error",
        (2, 0x84) => "End-to-end Reference Tag Check Error",
        (2, 0x85) => "Compare Failure",
        (2, 0x86) => "Access Denied",
        (2, 0x87) => "Deallocated or Unwritten Logical Block",
        (3, 0x00) => "Internal Path Error",
        (3, 0x01) => "Asymmetric Access Persistent Loss",
        (3, 0x02) => "Asymmetric Access Inaccessible",
        (3, 0x03) => "Asymmetric Access Transition",
        _ => "Unknown Status",
    }
}

/// The Connect command's data: the host id, the controller id asked for
/// and the two NQNs (NUL-terminated strings of at most 256 bytes).
#[derive(Debug, Clone, Copy)]
pub struct ConnectData<'a> {
    buf: &'a [u8; CONNECT_DATA_LEN],
}

impl<'a> ConnectData<'a> {
    pub fn new(buf: &'a [u8]) -> Result<Self, Truncated> {
        Ok(ConnectData {
            buf: fixed::<CONNECT_DATA_LEN>("NVMe Connect data", buf)?,
        })
    }

    pub fn hostid(&self) -> [u8; 16] {
        take(self.buf, 0)
    }

    pub fn cntlid(&self) -> u16 {
        le16(take(self.buf, 16))
    }

    fn nqn(&self, at: usize) -> &'a [u8] {
        let field: &'a [u8] = self.buf.get(at..at.wrapping_add(256)).unwrap_or_default();
        let end = field.iter().position(|&c| c == 0).unwrap_or(field.len());
        field.get(..end).unwrap_or_default()
    }

    /// The subsystem NQN's bytes (up to its NUL).
    pub fn subnqn(&self) -> &'a [u8] {
        self.nqn(256)
    }

    /// The host NQN's bytes (up to its NUL).
    pub fn hostnqn(&self) -> &'a [u8] {
        self.nqn(512)
    }
}

/// The upper-layer protocol of an RDMA connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ulp {
    Nvme,
    Iser,
    Nfs,
    SmbDirect,
    Unknown,
}

impl Ulp {
    pub fn name(self) -> &'static str {
        match self {
            Ulp::Nvme => "nvme",
            Ulp::Iser => "iser",
            Ulp::Nfs => "nfs",
            Ulp::SmbDirect => "smb-direct",
            Ulp::Unknown => "unknown",
        }
    }

    /// The protocol served on an RDMA CM TCP port.
    pub fn of_port(port: u16) -> Ulp {
        match port {
            NVME_PORT => Ulp::Nvme,
            3260 => Ulp::Iser,
            20049 | 2050 => Ulp::Nfs,
            445 | 5445 => Ulp::SmbDirect,
            _ => Ulp::Unknown,
        }
    }
}

/// The port of an RDMA CM ServiceID in the TCP port space
/// (`0x0000000001 06 PPPP`), if it is one.
pub fn service_port(service_id: u64) -> Option<u16> {
    (service_id >> 24 == 0x01 && (service_id >> 16) & 0xff == 0x06)
        .then_some((service_id & 0xffff) as u16)
}

/// The ServiceID of a TCP port (what a CM REQ to it carries).
pub fn service_id(port: u16) -> u64 {
    0x0106_0000 | u64::from(port)
}

/// The RDMA CM's IP header at the start of a CM REQ's private data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CmIpHeader {
    pub version: u8,
    /// 4 or 6 (the high nibble).
    pub ip_version: u8,
    pub port: u16,
    pub src: [u8; 16],
    pub dst: [u8; 16],
}

impl CmIpHeader {
    pub const LEN: usize = CM_IP_HEADER_LEN;

    pub fn parse(buf: &[u8]) -> Result<Self, Truncated> {
        let b = fixed::<CM_IP_HEADER_LEN>("RDMA CM IP header", buf)?;
        Ok(CmIpHeader {
            version: b[0],
            ip_version: b[1] >> 4,
            port: u16::from_be_bytes(take(b, 2)),
            src: take(b, 4),
            dst: take(b, 20),
        })
    }

    pub fn emit(&self, buf: &mut [u8]) -> Result<(), Truncated> {
        let b = fixed_mut::<CM_IP_HEADER_LEN>("RDMA CM IP header", buf)?;
        b[0] = self.version;
        b[1] = (self.ip_version & 0x0f) << 4;
        put(b, 2, &self.port.to_be_bytes());
        put(b, 4, &self.src);
        put(b, 20, &self.dst);
        Ok(())
    }
}

/// NVMe-oF's private data in a CM REQ (after the IP header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CmReqData {
    pub recfmt: u16,
    /// 0: the admin queue.
    pub qid: u16,
    pub hrqsize: u16,
    /// 0-based.
    pub hsqsize: u16,
    pub cntlid: u16,
}

impl CmReqData {
    pub const LEN: usize = 32;

    pub fn parse(buf: &[u8]) -> Result<Self, Truncated> {
        let b = fixed::<32>("NVMe-oF CM REQ data", buf)?;
        Ok(CmReqData {
            recfmt: le16(take(b, 0)),
            qid: le16(take(b, 2)),
            hrqsize: le16(take(b, 4)),
            hsqsize: le16(take(b, 6)),
            cntlid: le16(take(b, 8)),
        })
    }

    pub fn emit(&self, buf: &mut [u8]) -> Result<(), Truncated> {
        let b = fixed_mut::<32>("NVMe-oF CM REQ data", buf)?;
        *b = [0; 32];
        put(b, 0, &self.recfmt.to_le_bytes());
        put(b, 2, &self.qid.to_le_bytes());
        put(b, 4, &self.hrqsize.to_le_bytes());
        put(b, 6, &self.hsqsize.to_le_bytes());
        put(b, 8, &self.cntlid.to_le_bytes());
        Ok(())
    }
}

/// Why a controller rejected a connection (CM REJ private data status).
pub fn rej_status_name(status: u16) -> &'static str {
    match status {
        1 => "invalid private data length",
        2 => "invalid RECFMT",
        3 => "invalid QID",
        4 => "invalid HSQSIZE",
        5 => "invalid HRQSIZE",
        6 => "no resources",
        7 => "invalid IRD",
        8 => "invalid ORD",
        9 => "invalid CNTLID",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A Linux host's Read of 8 blocks at LBA 2048 with a keyed SGL (the
    /// layout of nvme-rdma's command capsules).
    fn read_sqe() -> [u8; SQE_LEN] {
        let mut b = [0u8; SQE_LEN];
        b[0] = 0x02;
        b[1] = 0x40; // PSDT 01: SGL
        b[2..4].copy_from_slice(&17u16.to_le_bytes());
        b[4..8].copy_from_slice(&1u32.to_le_bytes());
        b[24..32].copy_from_slice(&0x7f00_1234_5000u64.to_le_bytes());
        b[32..35].copy_from_slice(&[0x00, 0x10, 0x00]); // 4096
        b[35..39].copy_from_slice(&0x1a2bu32.to_le_bytes());
        b[39] = 0x40;
        b[40..48].copy_from_slice(&2048u64.to_le_bytes());
        b[48..50].copy_from_slice(&7u16.to_le_bytes());
        b
    }

    #[test]
    fn a_read_command() {
        let s = SqeRepr::parse(&read_sqe()).unwrap();
        assert_eq!((s.opcode, s.cid, s.nsid, s.psdt()), (0x02, 17, 1, 1));
        assert_eq!(s.name(QueueKind::Io), "Read");
        assert_eq!(s.name(QueueKind::Admin), "Get Log Page");
        assert!(s.has_lba(QueueKind::Io));
        assert_eq!((s.slba(), s.nlb()), (2048, 7));
        assert!(s.sgl.keyed() && !s.sgl.in_capsule());
        assert_eq!(
            (s.sgl.address, s.sgl.length, s.sgl.key),
            (0x7f00_1234_5000, 4096, 0x1a2b)
        );
        let mut back = [0u8; SQE_LEN];
        s.emit(&mut back).unwrap();
        assert_eq!(back, read_sqe());
        assert!(SqeRepr::parse(&read_sqe()[..63]).is_err());
    }

    #[test]
    fn fabrics_connect_and_property_get() {
        let mut b = [0u8; SQE_LEN];
        b[0] = 0x7f;
        b[4] = fctype::CONNECT;
        b[42..44].copy_from_slice(&3u16.to_le_bytes());
        b[44..46].copy_from_slice(&127u16.to_le_bytes());
        b[46] = 0x04;
        b[48..52].copy_from_slice(&15_000u32.to_le_bytes());
        let s = SqeRepr::parse(&b).unwrap();
        assert_eq!(s.name(QueueKind::Admin), "Connect");
        assert_eq!(
            s.connect(),
            Some(Connect {
                recfmt: 0,
                qid: 3,
                sqsize: 127,
                cattr: 4,
                kato: 15_000
            })
        );
        assert_eq!(s.property(), None);
        b[4] = fctype::PROPERTY_GET;
        b[40] = 1;
        b[44..48].copy_from_slice(&0x14u32.to_le_bytes());
        let s = SqeRepr::parse(&b).unwrap();
        assert_eq!(s.name(QueueKind::Admin), "Property Get");
        assert_eq!(s.property().map(|p| (p.attrib, p.offset)), Some((1, 0x14)));
        assert_eq!(s.connect(), None);
    }

    #[test]
    fn a_failed_completion() {
        // Unrecovered Read Error (media, 0x81) with DNR.
        let status: u16 = 0x8000 | 2 << 9 | 0x81 << 1;
        let mut b = [0u8; CQE_LEN];
        b[8..10].copy_from_slice(&5u16.to_le_bytes());
        b[10..12].copy_from_slice(&1u16.to_le_bytes());
        b[12..14].copy_from_slice(&17u16.to_le_bytes());
        b[14..16].copy_from_slice(&status.to_le_bytes());
        let c = CqeRepr::parse(&b).unwrap();
        assert_eq!((c.sqhd, c.sqid, c.cid), (5, 1, 17));
        assert_eq!((c.sct(), c.sc(), c.dnr(), c.more()), (2, 0x81, true, false));
        assert!(c.failed());
        assert_eq!(c.status_name(), "Unrecovered Read Error");
        assert_eq!(sct_name(c.sct()), "Media and Data Integrity Errors");
        let ok = CqeRepr {
            status: 1,
            ..CqeRepr::default()
        };
        assert!(!ok.failed() && ok.phase());
        assert_eq!(ok.status_name(), "Successful Completion");
    }

    #[test]
    fn service_ids_and_cm_private_data() {
        assert_eq!(service_id(4420), 0x0000_0000_0106_1144);
        assert_eq!(service_port(service_id(4420)), Some(4420));
        assert_eq!(Ulp::of_port(4420), Ulp::Nvme);
        assert_eq!(Ulp::of_port(20049), Ulp::Nfs);
        assert_eq!(Ulp::of_port(5445), Ulp::SmbDirect);
        assert_eq!(Ulp::of_port(3260).name(), "iser");
        // Not the TCP port space: no port.
        assert_eq!(service_port(0x0000_0000_0111_1144), None);
        assert_eq!(service_port(0x0106_0000_0000_4791), None);
        let h = CmIpHeader {
            version: 0,
            ip_version: 4,
            port: 4420,
            src: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 1],
            dst: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 1, 1],
        };
        let mut b = [0u8; CM_IP_HEADER_LEN + CmReqData::LEN];
        h.emit(&mut b).unwrap();
        let d = CmReqData {
            recfmt: 0,
            qid: 2,
            hrqsize: 128,
            hsqsize: 127,
            cntlid: 0xffff,
        };
        d.emit(&mut b[CM_IP_HEADER_LEN..]).unwrap();
        assert_eq!(CmIpHeader::parse(&b).unwrap(), h);
        assert_eq!(CmReqData::parse(&b[CM_IP_HEADER_LEN..]).unwrap(), d);
        assert_eq!(rej_status_name(3), "invalid QID");
    }

    #[test]
    fn connect_data_nqns() {
        let mut b = vec![0u8; CONNECT_DATA_LEN];
        b[16..18].copy_from_slice(&0xffffu16.to_le_bytes());
        b[256..256 + 21].copy_from_slice(b"nqn.2014-08.org.test1");
        // A host NQN with no NUL: all 256 bytes.
        b[512..768].fill(b'h');
        let c = ConnectData::new(&b).unwrap();
        assert_eq!(c.cntlid(), 0xffff);
        assert_eq!(c.subnqn(), b"nqn.2014-08.org.test1");
        assert_eq!(c.hostnqn().len(), 256);
        assert!(ConnectData::new(&b[..1023]).is_err());
    }

    proptest! {
        #[test]
        fn sqe_round_trip(bytes in proptest::collection::vec(any::<u8>(), SQE_LEN)) {
            // Every SQE whose SGL leaves its reserved bytes zero comes back
            // the same.
            let s = SqeRepr::parse(&bytes).unwrap();
            let mut out = [0u8; SQE_LEN];
            s.emit(&mut out).unwrap();
            prop_assert_eq!(SqeRepr::parse(&out).unwrap(), s);
        }

        #[test]
        fn cqe_round_trip(result in any::<u64>(), sqhd in any::<u16>(), sqid in any::<u16>(),
                          cid in any::<u16>(), status in any::<u16>()) {
            let c = CqeRepr { result, sqhd, sqid, cid, status };
            let mut b = [0u8; CQE_LEN];
            c.emit(&mut b).unwrap();
            prop_assert_eq!(CqeRepr::parse(&b).unwrap(), c);
        }

        #[test]
        fn sgl_round_trip(address in any::<u64>(), length in any::<u32>(), key in any::<u32>(),
                          t in 0u8..16, subtype in 0u8..16) {
            let keyed = t == sgl_type::KEYED_DATA_BLOCK;
            let s = SglRepr {
                address,
                length: if keyed { length & 0xff_ffff } else { length },
                key: if keyed { key } else { 0 },
                sgl_type: t,
                subtype,
            };
            let mut b = [0u8; SGL_LEN];
            s.emit(&mut b).unwrap();
            prop_assert_eq!(SglRepr::parse(&b).unwrap(), s);
        }
    }
}
