//! What the analysis concluded about each frame, as it read it: RoCE's
//! counterpart of Wireshark's `tcp.analysis.*` flags. The report counts
//! them per flow; `packets` and the TUI show them on the frame.

/// One conclusion about a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mark {
    /// A request or READ response PSN seen before on its flow: a replay.
    Retransmission,
    /// A PSN behind the one expected, not seen before: it arrived late.
    OutOfOrder,
    /// PSNs were skipped just before this one ([`FrameAnalysis::missing`]).
    Gap,
    /// A capture duplicate of the flow's previous frame.
    Duplicate,
    /// A PSN already consumed by a request of another kind.
    PsnReuse,
    /// A NAK (any code but RNR).
    Nak,
    RnrNak,
    BadIcrc,
    /// IP ECN (or GRH traffic class) says Congestion Experienced.
    Ce,
    Cnp,
    /// Sent on a priority that the destination MAC had paused.
    Paused,
}

impl Mark {
    /// Every mark, most telling first (the one a one-word tag names).
    pub const ALL: [Mark; 11] = [
        Mark::BadIcrc,
        Mark::PsnReuse,
        Mark::Retransmission,
        Mark::Gap,
        Mark::OutOfOrder,
        Mark::Nak,
        Mark::RnrNak,
        Mark::Duplicate,
        Mark::Cnp,
        Mark::Ce,
        Mark::Paused,
    ];

    const fn bit(self) -> u16 {
        1 << self as u16
    }

    /// The name of its `roce.analysis.*` field and JSON key.
    pub const fn as_str(self) -> &'static str {
        match self {
            Mark::Retransmission => "retransmission",
            Mark::OutOfOrder => "out_of_order",
            Mark::Gap => "gap",
            Mark::Duplicate => "duplicate",
            Mark::PsnReuse => "psn_reuse",
            Mark::Nak => "nak",
            Mark::RnrNak => "rnr_nak",
            Mark::BadIcrc => "bad_icrc",
            Mark::Ce => "ce",
            Mark::Cnp => "cnp",
            Mark::Paused => "paused",
        }
    }

    /// The tag shown on the frame in `packets` and the TUI.
    pub const fn label(self) -> &'static str {
        match self {
            Mark::Retransmission => "retransmit",
            Mark::OutOfOrder => "out of order",
            Mark::Gap => "gap",
            Mark::Duplicate => "duplicate",
            Mark::PsnReuse => "PSN reuse",
            Mark::Nak => "NAK",
            Mark::RnrNak => "RNR NAK",
            Mark::BadIcrc => "bad ICRC",
            Mark::Ce => "CE",
            Mark::Cnp => "CNP",
            Mark::Paused => "paused",
        }
    }
}

/// A set of [`Mark`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Marks(u16);

impl Marks {
    pub const NONE: Marks = Marks(0);

    #[inline]
    pub fn set(&mut self, m: Mark) {
        self.0 |= m.bit();
    }

    #[inline]
    pub const fn has(self, m: Mark) -> bool {
        self.0 & m.bit() != 0
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The marks present, most telling first.
    pub fn iter(self) -> impl Iterator<Item = Mark> {
        Mark::ALL.into_iter().filter(move |m| self.has(*m))
    }

    /// The most telling mark, if any.
    pub fn first(self) -> Option<Mark> {
        self.iter().next()
    }
}

impl From<Mark> for Marks {
    fn from(m: Mark) -> Self {
        Marks(m.bit())
    }
}

/// No flow: the frame is not a RoCE packet with a BTH and addresses.
pub const NO_FLOW: u32 = u32::MAX;

/// What the analysis found in one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameAnalysis {
    /// The analysis's id of the frame's flow ([`NO_FLOW`] when none); the
    /// report's flow index is `finish_indexed`'s map of it.
    pub flow: u32,
    pub marks: Marks,
    /// With [`Mark::Gap`]: how many PSNs were skipped.
    pub missing: u32,
    /// With [`Mark::Retransmission`]: the number of its flow's
    /// retransmission episode (1-based; 0 for none).
    pub episode: u32,
    /// On an ACK, NAK or READ response: the round trip it samples
    /// (`roce.analysis.ack_rtt`).
    pub ack_rtt_ns: Option<u64>,
    /// On the answer that completes a message: its completion time (the
    /// oldest one's, when it completes several;
    /// `roce.analysis.message_completion`).
    pub completion_ns: Option<u64>,
    /// A frame of an NVMe-oF connection: a command or response capsule,
    /// an I/O's data or the READ request for it, or none of these.
    pub nvme: Option<NvmeRole>,
}

/// What an NVMe-oF SEND carries, and the queue it is on when known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NvmeRole {
    Command {
        qid: Option<u16>,
        /// A Fabrics command (Connect, Property Get, ...).
        fabrics: bool,
    },
    Response {
        qid: Option<u16>,
        /// Its command's latency (`nvme.cmd_latency`), when the command
        /// was seen.
        latency_ns: Option<u64>,
        /// Its command was a Fabrics command (`nvme.fabrics.cmd_latency`).
        fabrics: bool,
    },
    /// A packet of an I/O's data: an RDMA WRITE to the host (a read's
    /// data) or a READ response from it (a write's).
    Data {
        qid: Option<u16>,
        cid: u16,
        /// The command (opcode, or Fabrics type + 0x100).
        code: u16,
        /// Bytes of the I/O's data before this packet's, when known.
        offset: Option<u32>,
    },
    /// An RDMA READ request from the controller for an I/O's data.
    DataRequest {
        qid: Option<u16>,
        cid: u16,
        code: u16,
    },
    /// Any other frame with a payload on an NVMe-oF queue's QPs (a SEND
    /// that is no capsule, data of no known I/O), or the CM reply that
    /// connects one: Wireshark's `nvme-rdma` without `nvme`.
    Queue { qid: Option<u16> },
}

impl NvmeRole {
    /// The frame carries NVMe itself (Wireshark's `nvme`): a command of
    /// the NVMe command sets, its response once matched, or its data;
    /// Fabrics commands (Connect, Property Get, ...) are `nvme-rdma` only.
    pub fn is_nvme(&self) -> bool {
        match *self {
            NvmeRole::Command { fabrics, .. } => !fabrics,
            NvmeRole::Response {
                latency_ns,
                fabrics,
                ..
            } => latency_ns.is_some() && !fabrics,
            NvmeRole::Data { code, .. } => code < 0x100,
            NvmeRole::DataRequest { .. } | NvmeRole::Queue { .. } => false,
        }
    }

    /// The NVMe-oF queue's ID, when known.
    pub fn qid(&self) -> Option<u16> {
        match *self {
            NvmeRole::Command { qid, .. }
            | NvmeRole::Response { qid, .. }
            | NvmeRole::Data { qid, .. }
            | NvmeRole::DataRequest { qid, .. }
            | NvmeRole::Queue { qid } => qid,
        }
    }
}

impl Default for FrameAnalysis {
    fn default() -> Self {
        FrameAnalysis {
            flow: NO_FLOW,
            marks: Marks::NONE,
            missing: 0,
            episode: 0,
            ack_rtt_ns: None,
            completion_ns: None,
            nvme: None,
        }
    }
}

impl FrameAnalysis {
    pub fn flow(&self) -> Option<u32> {
        (self.flow != NO_FLOW).then_some(self.flow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_distinct_bits_listed_once() {
        let mut all = Marks::NONE;
        for m in Mark::ALL {
            assert!(!all.has(m), "{m:?} listed twice or shares a bit");
            all.set(m);
        }
        assert_eq!(all.iter().count(), Mark::ALL.len());
        let mut m = Marks::NONE;
        m.set(Mark::Ce);
        m.set(Mark::Retransmission);
        assert_eq!(m.first(), Some(Mark::Retransmission));
        assert_eq!(
            m.iter().collect::<Vec<_>>(),
            [Mark::Retransmission, Mark::Ce]
        );
    }
}
