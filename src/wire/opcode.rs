//! BTH opcodes: transport (bits 7-5), operation (bits 4-0), names and the
//! extended headers each one carries (IBA table 38, RoCE v2 annex A17 for CNP).

use std::fmt;

/// A BTH opcode. Unknown values are data, not errors: [`Opcode::headers`]
/// returns `None` for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Opcode(pub u8);

/// The transport service named by the opcode's top three bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Transport {
    Rc,
    Uc,
    Rd,
    Ud,
    /// Congestion Notification Packet (0x80-0x9f in RoCE v2).
    Cnp,
    Xrc,
    /// 0xc0-0xff: manufacturer specific.
    Vendor,
    /// 0xe0.. is also vendor space; kept for completeness of the 3-bit field.
    Reserved,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Rc => "RC",
            Transport::Uc => "UC",
            Transport::Rd => "RD",
            Transport::Ud => "UD",
            Transport::Cnp => "CNP",
            Transport::Xrc => "XRC",
            Transport::Vendor => "VENDOR",
            Transport::Reserved => "RESERVED",
        }
    }
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The operation in the low five bits, for the transports that share the RC
/// numbering (RC, UC, RD, XRC; UD uses 0x04/0x05 only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    SendFirst,
    SendMiddle,
    SendLast,
    SendLastImm,
    SendOnly,
    SendOnlyImm,
    WriteFirst,
    WriteMiddle,
    WriteLast,
    WriteLastImm,
    WriteOnly,
    WriteOnlyImm,
    ReadRequest,
    ReadResponseFirst,
    ReadResponseMiddle,
    ReadResponseLast,
    ReadResponseOnly,
    Acknowledge,
    AtomicAcknowledge,
    CompareSwap,
    FetchAdd,
    Resync,
    SendLastInvalidate,
    SendOnlyInvalidate,
    Cnp,
}

/// Which extended headers follow the BTH, in wire order:
/// RDETH, DETH, XRCETH, RETH | AtomicETH, AETH, AtomicAckETH, ImmDt | IETH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Headers {
    pub rdeth: bool,
    pub deth: bool,
    pub xrceth: bool,
    pub reth: bool,
    pub atomiceth: bool,
    pub aeth: bool,
    pub atomicacketh: bool,
    pub immdt: bool,
    pub ieth: bool,
    /// CNP: 16 reserved bytes instead of headers and payload.
    pub cnp_reserved: bool,
    /// Whether payload bytes may follow the headers.
    pub payload: bool,
}

impl Headers {
    /// Total length of the extended headers in bytes.
    pub const fn len(&self) -> usize {
        let mut n = 0usize;
        let mut parts: &[(bool, usize)] = &[
            (self.rdeth, 4usize),
            (self.deth, 8),
            (self.xrceth, 4),
            (self.reth, 16),
            (self.atomiceth, 28),
            (self.aeth, 4),
            (self.atomicacketh, 8),
            (self.immdt, 4),
            (self.ieth, 4),
            (self.cnp_reserved, 16),
        ];
        while let [(present, len), rest @ ..] = parts {
            if *present {
                n = n.saturating_add(*len);
            }
            parts = rest;
        }
        n
    }

    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Operation and headers of each of the 256 opcodes, worked out when the
/// program is compiled: they are looked up for every packet. (Worked out
/// at first use instead, every lookup checked that it had been, and the
/// lookup was a call: 2 % of the analysis's CPU time.)
struct Entry {
    operation: Option<Operation>,
    headers: Option<Headers>,
    headers_len: u8,
}

static TABLE: [Entry; 256] = {
    const NONE: Entry = Entry {
        operation: None,
        headers: None,
        headers_len: 0,
    };
    let mut table = [NONE; 256];
    let mut rest: &mut [Entry] = &mut table;
    let mut op = Opcode(0);
    while let [entry, tail @ ..] = rest {
        let headers = op.compute_headers();
        *entry = Entry {
            operation: op.compute_operation(),
            headers,
            headers_len: match headers {
                Some(h) => h.len() as u8,
                None => 0,
            },
        };
        op = Opcode(op.0.wrapping_add(1));
        rest = tail;
    }
    table
};

impl Opcode {
    pub const CNP: Opcode = Opcode(0x81);

    pub const fn transport(self) -> Transport {
        match self.0 >> 5 {
            0 => Transport::Rc,
            1 => Transport::Uc,
            2 => Transport::Rd,
            3 => Transport::Ud,
            4 => Transport::Cnp,
            5 => Transport::Xrc,
            6 => Transport::Vendor,
            _ => Transport::Reserved,
        }
    }

    /// The operation, when this opcode is defined for its transport.
    #[inline]
    pub fn operation(self) -> Option<Operation> {
        TABLE.get(usize::from(self.0)).and_then(|e| e.operation)
    }

    /// The extended headers this opcode carries, or `None` when the opcode is
    /// not defined (its layout is unknown).
    #[inline]
    pub fn headers(self) -> Option<Headers> {
        TABLE.get(usize::from(self.0)).and_then(|e| e.headers)
    }

    /// [`headers`](Self::headers) with their total length.
    #[inline]
    pub fn layout(self) -> Option<(Headers, usize)> {
        let e = TABLE.get(usize::from(self.0))?;
        Some((e.headers?, usize::from(e.headers_len)))
    }

    const fn compute_operation(self) -> Option<Operation> {
        use Operation::*;
        let low = self.0 & 0x1f;
        let op = match low {
            0x00 => SendFirst,
            0x01 => SendMiddle,
            0x02 => SendLast,
            0x03 => SendLastImm,
            0x04 => SendOnly,
            0x05 => SendOnlyImm,
            0x06 => WriteFirst,
            0x07 => WriteMiddle,
            0x08 => WriteLast,
            0x09 => WriteLastImm,
            0x0a => WriteOnly,
            0x0b => WriteOnlyImm,
            0x0c => ReadRequest,
            0x0d => ReadResponseFirst,
            0x0e => ReadResponseMiddle,
            0x0f => ReadResponseLast,
            0x10 => ReadResponseOnly,
            0x11 => Acknowledge,
            0x12 => AtomicAcknowledge,
            0x13 => CompareSwap,
            0x14 => FetchAdd,
            0x15 => Resync,
            0x16 => SendLastInvalidate,
            0x17 => SendOnlyInvalidate,
            _ => return None,
        };
        let defined = match self.transport() {
            Transport::Rc | Transport::Xrc => low <= 0x14 || low == 0x16 || low == 0x17,
            Transport::Uc => low <= 0x0b,
            Transport::Rd => low <= 0x15,
            Transport::Ud => low == 0x04 || low == 0x05,
            Transport::Cnp => return if self.0 == 0x81 { Some(Cnp) } else { None },
            Transport::Vendor | Transport::Reserved => false,
        };
        if defined { Some(op) } else { None }
    }

    const fn compute_headers(self) -> Option<Headers> {
        use Operation::*;
        let Some(op) = self.compute_operation() else {
            return None;
        };
        let mut h = Headers {
            rdeth: false,
            deth: false,
            xrceth: false,
            reth: false,
            atomiceth: false,
            aeth: false,
            atomicacketh: false,
            immdt: false,
            ieth: false,
            cnp_reserved: false,
            payload: true,
        };
        match op {
            SendFirst | SendMiddle | SendLast | SendOnly | WriteMiddle | WriteLast
            | ReadResponseMiddle => {}
            SendLastImm | SendOnlyImm | WriteLastImm => h.immdt = true,
            WriteFirst | WriteOnly => h.reth = true,
            WriteOnlyImm => {
                h.reth = true;
                h.immdt = true;
            }
            ReadRequest => {
                h.reth = true;
                h.payload = false;
            }
            ReadResponseFirst | ReadResponseLast | ReadResponseOnly => h.aeth = true,
            Acknowledge => {
                h.aeth = true;
                h.payload = false;
            }
            AtomicAcknowledge => {
                h.aeth = true;
                h.atomicacketh = true;
                h.payload = false;
            }
            CompareSwap | FetchAdd => {
                h.atomiceth = true;
                h.payload = false;
            }
            Resync => h.payload = false,
            SendLastInvalidate | SendOnlyInvalidate => h.ieth = true,
            Cnp => {
                h.cnp_reserved = true;
                h.payload = false;
            }
        }
        match self.transport() {
            Transport::Ud => h.deth = true,
            Transport::Rd => {
                h.rdeth = true;
                h.deth = op.is_request() || matches!(op, Resync);
            }
            Transport::Xrc => h.xrceth = op.is_request(),
            _ => {}
        }
        Some(h)
    }

    /// Name as Wireshark's InfiniBand dissector would print it, e.g.
    /// `RC RDMA WRITE First`; unknown opcodes read `Unknown (0xNN)`.
    pub fn name(self) -> &'static str {
        let Some(op) = self.operation() else {
            return match self.transport() {
                Transport::Vendor | Transport::Reserved => "Manufacturer Specific",
                _ => "Unknown",
            };
        };
        let names = match self.transport() {
            Transport::Rc => &RC_NAMES,
            Transport::Uc => &UC_NAMES,
            Transport::Rd => &RD_NAMES,
            Transport::Ud => &UD_NAMES,
            Transport::Xrc => &XRC_NAMES,
            Transport::Cnp => return "CNP",
            Transport::Vendor | Transport::Reserved => return "Manufacturer Specific",
        };
        names.get(op as usize).copied().unwrap_or("Unknown")
    }
}

impl Operation {
    /// Carries a request PSN sequence (SEND, WRITE, READ request, atomics).
    pub const fn is_request(self) -> bool {
        use Operation::*;
        matches!(
            self,
            SendFirst
                | SendMiddle
                | SendLast
                | SendLastImm
                | SendOnly
                | SendOnlyImm
                | WriteFirst
                | WriteMiddle
                | WriteLast
                | WriteLastImm
                | WriteOnly
                | WriteOnlyImm
                | ReadRequest
                | CompareSwap
                | FetchAdd
                | SendLastInvalidate
                | SendOnlyInvalidate
        )
    }

    pub fn is_read_response(self) -> bool {
        use Operation::*;
        matches!(
            self,
            ReadResponseFirst | ReadResponseMiddle | ReadResponseLast | ReadResponseOnly
        )
    }

    /// First or Middle packet of a multi-packet message: its payload is
    /// exactly one PMTU.
    pub fn is_first_or_middle(self) -> bool {
        use Operation::*;
        matches!(
            self,
            SendFirst
                | SendMiddle
                | WriteFirst
                | WriteMiddle
                | ReadResponseFirst
                | ReadResponseMiddle
        )
    }

    /// Starts a message (First or Only).
    pub fn starts_message(self) -> bool {
        use Operation::*;
        matches!(
            self,
            SendFirst
                | SendOnly
                | SendOnlyImm
                | SendOnlyInvalidate
                | WriteFirst
                | WriteOnly
                | WriteOnlyImm
                | ReadRequest
                | ReadResponseFirst
                | ReadResponseOnly
                | CompareSwap
                | FetchAdd
        )
    }
}

// Indexed by `Operation as usize` (declaration order above).
const RC_NAMES: [&str; 25] = [
    "RC SEND First",
    "RC SEND Middle",
    "RC SEND Last",
    "RC SEND Last with Immediate",
    "RC SEND Only",
    "RC SEND Only with Immediate",
    "RC RDMA WRITE First",
    "RC RDMA WRITE Middle",
    "RC RDMA WRITE Last",
    "RC RDMA WRITE Last with Immediate",
    "RC RDMA WRITE Only",
    "RC RDMA WRITE Only with Immediate",
    "RC RDMA READ Request",
    "RC RDMA READ Response First",
    "RC RDMA READ Response Middle",
    "RC RDMA READ Response Last",
    "RC RDMA READ Response Only",
    "RC Acknowledge",
    "RC ATOMIC Acknowledge",
    "RC CmpSwap",
    "RC FetchAdd",
    "RC RESYNC",
    "RC SEND Last with Invalidate",
    "RC SEND Only with Invalidate",
    "CNP",
];
const UC_NAMES: [&str; 25] = [
    "UC SEND First",
    "UC SEND Middle",
    "UC SEND Last",
    "UC SEND Last with Immediate",
    "UC SEND Only",
    "UC SEND Only with Immediate",
    "UC RDMA WRITE First",
    "UC RDMA WRITE Middle",
    "UC RDMA WRITE Last",
    "UC RDMA WRITE Last with Immediate",
    "UC RDMA WRITE Only",
    "UC RDMA WRITE Only with Immediate",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "CNP",
];
const RD_NAMES: [&str; 25] = [
    "RD SEND First",
    "RD SEND Middle",
    "RD SEND Last",
    "RD SEND Last with Immediate",
    "RD SEND Only",
    "RD SEND Only with Immediate",
    "RD RDMA WRITE First",
    "RD RDMA WRITE Middle",
    "RD RDMA WRITE Last",
    "RD RDMA WRITE Last with Immediate",
    "RD RDMA WRITE Only",
    "RD RDMA WRITE Only with Immediate",
    "RD RDMA READ Request",
    "RD RDMA READ Response First",
    "RD RDMA READ Response Middle",
    "RD RDMA READ Response Last",
    "RD RDMA READ Response Only",
    "RD Acknowledge",
    "RD ATOMIC Acknowledge",
    "RD CmpSwap",
    "RD FetchAdd",
    "RD RESYNC",
    "Unknown",
    "Unknown",
    "CNP",
];
const UD_NAMES: [&str; 25] = [
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "UD SEND Only",
    "UD SEND Only with Immediate",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "Unknown",
    "CNP",
];
const XRC_NAMES: [&str; 25] = [
    "XRC SEND First",
    "XRC SEND Middle",
    "XRC SEND Last",
    "XRC SEND Last with Immediate",
    "XRC SEND Only",
    "XRC SEND Only with Immediate",
    "XRC RDMA WRITE First",
    "XRC RDMA WRITE Middle",
    "XRC RDMA WRITE Last",
    "XRC RDMA WRITE Last with Immediate",
    "XRC RDMA WRITE Only",
    "XRC RDMA WRITE Only with Immediate",
    "XRC RDMA READ Request",
    "XRC RDMA READ Response First",
    "XRC RDMA READ Response Middle",
    "XRC RDMA READ Response Last",
    "XRC RDMA READ Response Only",
    "XRC Acknowledge",
    "XRC ATOMIC Acknowledge",
    "XRC CmpSwap",
    "XRC FetchAdd",
    "Unknown",
    "XRC SEND Last with Invalidate",
    "XRC SEND Only with Invalidate",
    "CNP",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_defined_opcode_has_a_layout_and_a_name() {
        let defined: Vec<u8> = (0..=255u8)
            .filter(|&o| Opcode(o).headers().is_some())
            .collect();
        // RC 23 + UC 12 + RD 22 + UD 2 + CNP 1 + XRC 23
        assert_eq!(defined.len(), 23 + 12 + 22 + 2 + 1 + 23);
        for o in defined {
            assert!(!Opcode(o).name().starts_with("Unknown"), "{o:#x}");
        }
        assert_eq!(Opcode(0x06).name(), "RC RDMA WRITE First");
        assert_eq!(Opcode(0x64).name(), "UD SEND Only");
        assert_eq!(Opcode(0x81).name(), "CNP");
        assert_eq!(Opcode(0x15).name(), "Unknown");
        assert_eq!(Opcode(0xc0).name(), "Manufacturer Specific");
    }

    #[test]
    fn layouts_match_the_facts_table() {
        let h = Opcode(0x0b).headers().unwrap();
        assert!(h.reth && h.immdt && h.payload);
        assert_eq!(h.len(), 20);
        let h = Opcode(0x0c).headers().unwrap();
        assert!(h.reth && !h.payload);
        let h = Opcode(0x12).headers().unwrap();
        assert_eq!(h.len(), 12);
        let h = Opcode(0x65).headers().unwrap();
        assert!(h.deth && h.immdt);
        let h = Opcode(0x4c).headers().unwrap(); // RD READ request
        assert!(h.rdeth && h.deth && h.reth);
        let h = Opcode(0x51).headers().unwrap(); // RD ACK
        assert!(h.rdeth && !h.deth && h.aeth);
        let h = Opcode(0xa0).headers().unwrap(); // XRC SEND First
        assert!(h.xrceth);
        let h = Opcode(0xb1).headers().unwrap(); // XRC ACK
        assert!(!h.xrceth && h.aeth);
        let h = Opcode(0x81).headers().unwrap();
        assert_eq!(h.len(), 16);
        assert!(Opcode(0x2c).headers().is_none(), "UC has no READ");
    }

    /// The table built at compile time holds, for every opcode, what the
    /// opcode's own rules give, lengths included.
    #[test]
    fn table_entries_are_the_rules() {
        for o in 0..=255u8 {
            let op = Opcode(o);
            assert_eq!(op.operation(), op.compute_operation(), "{o:#x}");
            assert_eq!(op.headers(), op.compute_headers(), "{o:#x}");
            assert_eq!(
                op.layout(),
                op.compute_headers().map(|h| (h, h.len())),
                "{o:#x}"
            );
        }
        assert_eq!(Opcode(0x0a).layout().map(|(_, n)| n), Some(16));
        assert_eq!(Opcode(0x73).layout().map(|(_, n)| n), None);
    }
}
