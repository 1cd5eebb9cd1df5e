//! TCP conversations, followed as Wireshark follows them, for what a TCP
//! frame's summary line and fields say that the frame alone does not:
//! sequence and acknowledgement numbers relative to each side's first
//! (the SYN's, or one before the first seen), the window scaled by the
//! shift the handshake agreed, the conversation's index (`tcp.stream`),
//! and what tshark's sequence analysis notes of the segment
//! (retransmissions, duplicate ACKs, lost segments, zero windows: see
//! [`Notes`]), and what it measures (acknowledged segments and their round
//! trips, bytes in flight: [`Measured`]). The analysis keeps it, from the
//! numbers a TCP frame's facts carry ([`TcpFacts`]); the frame loops that
//! show frames (`packets`, `-Y`, `export`, the TUI) read what it said of
//! each (`Analyzer::tcp_seen`), and the report sums each conversation up
//! (`other`).

use std::net::IpAddr;

use super::Map;
use crate::dissect::Packet;
use crate::wire::tcp::{ACK, FIN, SYN, Tcp};

/// Conversations followed at most; a capture with more (a SYN flood) has
/// the rest shown with the numbers as sent, as tshark shows them with its
/// relative numbers turned off.
pub const MAX_CONVERSATIONS: usize = 1 << 20;

/// What a conversation's window scaling is known to be, one side's
/// (tshark's `tcp.window_size_scalefactor`: -1, -2 or the multiplier).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowScale {
    /// No SYN seen: the window is shown as sent.
    Unknown,
    /// A SYN or SYN/ACK without the option: the window is as sent.
    NotUsed,
    /// The shift the side's SYN announced.
    Shift(u8),
}

impl WindowScale {
    /// tshark's `tcp.window_size_scalefactor`.
    pub fn factor(self) -> i64 {
        match self {
            Self::Unknown => -1,
            Self::NotUsed => -2,
            Self::Shift(s) => 1i64 << s,
        }
    }
}

/// What the conversation says of one TCP frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpSeen {
    /// The conversation's index, from 0 in order of first frame.
    pub stream: u32,
    /// The sender's sequence numbers are relative to this.
    pub seq_base: u32,
    /// The receiver's (the acknowledgement number's and SACK edges'), once
    /// known.
    pub ack_base: Option<u32>,
    /// The sender's window scaling as known before this frame.
    pub scale: WindowScale,
    /// What the analysis noted of the segment.
    pub notes: Notes,
    /// A duplicate ACK's frame of the ACK it repeats and its count
    /// (`[TCP Dup ACK 5#2]`).
    pub dup_ack: Option<(u64, u32)>,
    /// The handshake's round trip, once seen: from the last SYN to the
    /// first ACK after it (tshark's `tcp.analysis.initial_rtt`).
    pub handshake_ns: Option<u64>,
    /// Time since the conversation's first frame and since its previous
    /// one (`tcp.time_relative`, `tcp.time_delta`; negative when the
    /// capture is not in time order).
    pub since_first_ns: i64,
    pub since_prev_ns: i64,
    /// What the sequence analysis measured of the segment (tshark's
    /// `[SEQ/ACK analysis]`).
    pub measured: Measured,
    /// The SSH version an earlier segment's version line announced (an
    /// SSH connection's; tshark names the protocol `SSHv2` then, and reads
    /// the key exchange's packets in the clear).
    pub ssh_version: Option<u8>,
    /// The sender's side of that SSH connection sent its New Keys in an
    /// earlier segment: what it sends now is encrypted.
    pub ssh_encrypted: bool,
    /// A segment of a TLS conversation: what came before it.
    pub tls: Option<crate::wire::tls::Seen>,
    /// A segment with a payload of an HTTP conversation: what it is of
    /// the messages.
    pub http: Option<super::http::Reading>,
}

/// What tshark's sequence analysis measures of a segment beside its notes,
/// from the segments each side sent and the other has not acknowledged
/// yet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Measured {
    /// The segment has an analysis to show (a note, an acknowledged
    /// segment, or bytes in flight counted): tshark's `tcp.analysis`,
    /// under which the handshake's round trip is shown too.
    pub shown: bool,
    /// The segment this one acknowledges exactly (its end is this
    /// acknowledgement number): its frame, and the time since it
    /// (`tcp.analysis.acks_frame`, `tcp.analysis.ack_rtt`).
    pub acks: Option<(u64, i64)>,
    /// Bytes sent and not acknowledged after this segment, the other
    /// side's latest SACK blocks taken off (`tcp.analysis.bytes_in_flight`),
    /// and bytes sent since the last PSH (`tcp.analysis.push_bytes_sent`).
    pub in_flight: Option<(u32, u32)>,
    /// A retransmission's time since the segment it most likely resends
    /// (the oldest unacknowledged one), and that segment's frame
    /// (`tcp.analysis.rto`, `tcp.analysis.rto_frame`).
    pub rto: Option<(i64, u64)>,
}

/// The numbers of a TCP segment that its conversation reads: what
/// [`TcpTracker::see`] takes from a packet, and what a frame's facts carry
/// to the report's frame loop (a few words, not the frame).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpFacts {
    pub src: Endpoint,
    pub dst: Endpoint,
    pub seq: u32,
    pub ack: u32,
    /// The 12 flag bits.
    pub flags: u16,
    /// The window as sent.
    pub window: u16,
    /// The segment's length (from the IP header, padding not counted).
    pub len: u32,
    /// The window scale option's shift, if the segment has one.
    pub window_shift: Option<u8>,
    /// The first three blocks of its SACK option (tshark keeps three),
    /// and how many there are: none without the option.
    pub sack: [(u32, u32); 3],
    pub sacks: u8,
    /// The segment carries a payload to or from SSH's port.
    pub ssh: bool,
    /// The SSH version the segment's payload announces, if it is an SSH
    /// version line.
    pub ssh_version: Option<u8>,
    /// The segment's SSH packets in the clear end with New Keys.
    pub ssh_newkeys: bool,
    /// What the analysis needs of its payload for the application
    /// protocol its conversation may be read as.
    pub app: Option<AppDigest>,
}

/// What TLS or HTTP needs of a segment: one of them, as a segment that
/// starts an HTTP message is no TLS record's (and the facts of a frame
/// have room for one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppDigest {
    /// How its conversation may be read as TLS, and what the analysis
    /// needs of its records (see [`crate::wire::tls::Digest`]).
    Tls(crate::wire::tls::Digest),
    /// A segment on one of HTTP's ports, or one that starts an HTTP
    /// message on a port no protocol has.
    Http(crate::wire::http::Digest),
}

impl AppDigest {
    /// The digest of `pkt`'s payload, if it has one.
    fn of(pkt: &Packet<'_>) -> Option<AppDigest> {
        use crate::wire::http::{Digest, StartLine};
        use crate::wire::tls::Selection;
        // On a port no protocol has, only a segment that starts a message
        // is HTTP's to digest: the scans of its head are not made on the
        // others.
        let http = pkt.http().filter(|h| {
            h.selection == Selection::Port || StartLine::parse(h.payload).line().is_some()
        });
        match http {
            Some(h) => Some(AppDigest::Http(Digest::of(h.payload, h.selection))),
            None => pkt
                .tls()
                .and_then(|t| crate::wire::tls::Digest::of(t.payload, t.selection))
                .map(AppDigest::Tls),
        }
    }

    /// The TLS digest.
    pub fn tls(&self) -> Option<&crate::wire::tls::Digest> {
        match self {
            AppDigest::Tls(d) => Some(d),
            AppDigest::Http(_) => None,
        }
    }

    /// What HTTP reads of the segment: its digest, or what a TLS digest
    /// says of a segment that starts no message.
    /// `len` is the segment's payload length.
    pub fn http(&self, len: u32) -> crate::wire::http::Digest {
        match *self {
            AppDigest::Http(d) => d,
            AppDigest::Tls(d) => crate::wire::http::Digest::of_ends(d.head, d.tail, len),
        }
    }
}

impl TcpFacts {
    /// The segment of `pkt`, if it is a TCP one.
    pub fn of(pkt: &Packet<'_>) -> Option<TcpFacts> {
        let tcp = pkt.tcp()?;
        let ip = pkt.ip?;
        let ssh = pkt.ssh();
        let (mut sack, mut sacks) = ([(0, 0); 3], 0);
        for o in tcp.options() {
            if let crate::wire::tcp::TcpOption::Sack(blocks) = o {
                sacks = 0;
                for (slot, b) in sack.iter_mut().zip(crate::wire::tcp::sack_blocks(blocks)) {
                    *slot = b;
                    sacks += 1;
                }
            }
        }
        Some(TcpFacts {
            sack,
            sacks,
            src: (ip.src, tcp.src_port()),
            dst: (ip.dst, tcp.dst_port()),
            seq: tcp.seq(),
            ack: tcp.ack(),
            flags: tcp.flags(),
            window: tcp.window(),
            len: pkt.tcp_payload_len().unwrap_or(0),
            window_shift: tcp.window_shift(),
            ssh: ssh.is_some(),
            ssh_version: ssh.and_then(|s| crate::wire::ssh::version(s.payload)),
            ssh_newkeys: ssh.is_some_and(|s| {
                crate::wire::ssh::read(s.payload, Some(2), false)
                    .plain
                    .last()
                    .is_some_and(|p| p.code == crate::wire::ssh::NEWKEYS)
            }),
            app: AppDigest::of(pkt),
        })
    }

    pub fn has(&self, flag: u16) -> bool {
        self.flags & flag != 0
    }

    /// The segment starts an HTTP message whose body goes on past it (if
    /// its conversation is HTTP's).
    pub fn may_begin_http_message(&self) -> bool {
        use crate::wire::http::BodyLen;
        let Some(AppDigest::Http(d)) = self.app else {
            return false;
        };
        let body_here = u64::from(self.len.saturating_sub(d.head_len));
        d.starts
            && (d.head_len == 0
                || match d.body() {
                    BodyLen::Empty => false,
                    BodyLen::Bytes(n) => n > body_here,
                    BodyLen::Chunked => !d.last_chunk,
                    BodyLen::UntilClose => !self.has(FIN),
                })
    }

    /// The sequence number after this segment (a SYN or FIN counts one).
    fn next_seq(&self) -> u32 {
        let extra = u32::from(self.has(SYN | FIN));
        self.seq.wrapping_add(self.len).wrapping_add(extra)
    }
}

impl TcpSeen {
    /// The Protocol column of a segment that is not SSH's: a TLS
    /// conversation's by its version (a segment inside a record is TCP),
    /// an HTTP conversation's by what the segment is of its messages.
    pub fn protocol(&self) -> &'static str {
        if let Some(h) = &self.http {
            return h.protocol();
        }
        self.tls.map_or("TCP", |t| t.protocol)
    }

    /// The Info column's notes: `[TCP Dup ACK 5#1] `, `[TCP Retransmission] `.
    pub fn write_notes(&self, s: &mut String) {
        use std::fmt::Write as _;
        for (n, text) in Notes::IN_INFO {
            if self.notes.has(n) {
                let _ = write!(s, "[{text}] ");
            }
            if n == Notes::ZERO_WINDOW_PROBE
                && let Some((frame, count)) = self.dup_ack
            {
                let _ = write!(s, "[TCP Dup ACK {frame}#{count}] ");
            }
        }
    }
}

impl TcpSeen {
    pub fn seq(&self, tcp: &Tcp<'_>) -> u32 {
        tcp.seq().wrapping_sub(self.seq_base)
    }

    /// A number of the receiver's sequence space (the acknowledgement
    /// number, a SACK edge), relative.
    pub fn acked(&self, raw: u32) -> u32 {
        raw.wrapping_sub(self.ack_base.unwrap_or(0))
    }

    /// The window as the receiver reads it: scaled, except on a SYN.
    pub fn window(&self, tcp: &Tcp<'_>) -> u32 {
        let raw = u32::from(tcp.window());
        match self.scale {
            WindowScale::Shift(s) if !tcp.has(SYN) => raw << s,
            _ => raw,
        }
    }
}

/// What tshark's TCP analysis noted of a segment (`tcp.analysis.*`,
/// the Info column's `[TCP ...]` notes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Notes(u16);

impl Notes {
    pub const RETRANSMISSION: Notes = Notes(1);
    pub const FAST_RETRANSMISSION: Notes = Notes(1 << 1);
    pub const SPURIOUS_RETRANSMISSION: Notes = Notes(1 << 2);
    pub const OUT_OF_ORDER: Notes = Notes(1 << 3);
    /// A segment beyond the next expected one: one before it was missed.
    pub const LOST_SEGMENT: Notes = Notes(1 << 4);
    /// An ACK of bytes the capture never had.
    pub const ACK_LOST_SEGMENT: Notes = Notes(1 << 5);
    pub const WINDOW_UPDATE: Notes = Notes(1 << 6);
    pub const WINDOW_FULL: Notes = Notes(1 << 7);
    pub const KEEP_ALIVE: Notes = Notes(1 << 8);
    pub const KEEP_ALIVE_ACK: Notes = Notes(1 << 9);
    pub const DUPLICATE_ACK: Notes = Notes(1 << 10);
    pub const ZERO_WINDOW: Notes = Notes(1 << 11);
    pub const ZERO_WINDOW_PROBE: Notes = Notes(1 << 12);
    pub const ZERO_WINDOW_PROBE_ACK: Notes = Notes(1 << 13);
    pub const REUSED_PORTS: Notes = Notes(1 << 14);
    /// Any of them (`has(ANY)`: the segment has a note).
    pub const ANY: Notes = Notes(u16::MAX);

    /// Both sets.
    pub const fn with(self, other: Notes) -> Notes {
        Notes(self.0 | other.0)
    }

    /// Whether any of `n` is noted.
    pub fn has(self, n: Notes) -> bool {
        self.0 & n.0 != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    fn add(&mut self, n: Notes) {
        self.0 |= n.0;
    }

    /// The notes as the Info column has them, in tshark's order (each one
    /// it adds goes in front of the ones before).
    const IN_INFO: [(Notes, &'static str); 14] = [
        (Notes::ZERO_WINDOW_PROBE_ACK, "TCP ZeroWindowProbeAck"),
        (Notes::ZERO_WINDOW, "TCP ZeroWindow"),
        (Notes::ZERO_WINDOW_PROBE, "TCP ZeroWindowProbe"),
        (Notes::KEEP_ALIVE_ACK, "TCP Keep-Alive ACK"),
        (Notes::KEEP_ALIVE, "TCP Keep-Alive"),
        (Notes::WINDOW_FULL, "TCP Window Full"),
        (Notes::WINDOW_UPDATE, "TCP Window Update"),
        (Notes::ACK_LOST_SEGMENT, "TCP ACKed unseen segment"),
        (Notes::LOST_SEGMENT, "TCP Previous segment not captured"),
        (Notes::OUT_OF_ORDER, "TCP Out-Of-Order"),
        (
            Notes::SPURIOUS_RETRANSMISSION,
            "TCP Spurious Retransmission",
        ),
        (Notes::FAST_RETRANSMISSION, "TCP Fast Retransmission"),
        (Notes::RETRANSMISSION, "TCP Retransmission"),
        (Notes::REUSED_PORTS, "TCP Port numbers reused"),
    ];
}

/// A note's field: tshark's name and title, and the notes that set it (a
/// fast or spurious retransmission is a retransmission too).
#[derive(Debug, Clone, Copy)]
pub struct NoteField {
    pub notes: Notes,
    pub name: &'static str,
    pub title: &'static str,
}

/// The notes' fields (`tcp.analysis.*`), as the header tree lists them.
pub const NOTE_FIELDS: [NoteField; 15] = [
    note_field(
        Notes::RETRANSMISSION
            .with(Notes::FAST_RETRANSMISSION)
            .with(Notes::SPURIOUS_RETRANSMISSION),
        "tcp.analysis.retransmission",
        "This frame is a (suspected) retransmission",
    ),
    note_field(
        Notes::FAST_RETRANSMISSION,
        "tcp.analysis.fast_retransmission",
        "This frame is a (suspected) fast retransmission",
    ),
    note_field(
        Notes::SPURIOUS_RETRANSMISSION,
        "tcp.analysis.spurious_retransmission",
        "This frame is a (suspected) spurious retransmission",
    ),
    note_field(
        Notes::OUT_OF_ORDER,
        "tcp.analysis.out_of_order",
        "This frame is a (suspected) out-of-order segment",
    ),
    note_field(
        Notes::REUSED_PORTS,
        "tcp.analysis.reused_ports",
        "A new tcp session is started with the same ports as an earlier session in this trace",
    ),
    note_field(
        Notes::LOST_SEGMENT,
        "tcp.analysis.lost_segment",
        "Previous segment(s) not captured (common at capture start)",
    ),
    note_field(
        Notes::ACK_LOST_SEGMENT,
        "tcp.analysis.ack_lost_segment",
        "ACKed segment that wasn't captured (common at capture start)",
    ),
    note_field(
        Notes::WINDOW_UPDATE,
        "tcp.analysis.window_update",
        "TCP window update",
    ),
    note_field(
        Notes::WINDOW_FULL,
        "tcp.analysis.window_full",
        "TCP window specified by the receiver is now completely full",
    ),
    note_field(
        Notes::KEEP_ALIVE,
        "tcp.analysis.keep_alive",
        "TCP keep-alive segment",
    ),
    note_field(
        Notes::KEEP_ALIVE_ACK,
        "tcp.analysis.keep_alive_ack",
        "ACK to a TCP keep-alive segment",
    ),
    note_field(
        Notes::DUPLICATE_ACK,
        "tcp.analysis.duplicate_ack",
        "Duplicate ACK",
    ),
    note_field(
        Notes::ZERO_WINDOW,
        "tcp.analysis.zero_window",
        "TCP Zero Window segment",
    ),
    note_field(
        Notes::ZERO_WINDOW_PROBE,
        "tcp.analysis.zero_window_probe",
        "TCP Zero Window Probe",
    ),
    note_field(
        Notes::ZERO_WINDOW_PROBE_ACK,
        "tcp.analysis.zero_window_probe_ack",
        "ACK to a TCP Zero Window Probe",
    ),
];

const fn note_field(notes: Notes, name: &'static str, title: &'static str) -> NoteField {
    NoteField { notes, name, title }
}

/// The next sequence number's time within which an earlier one is out of
/// order rather than sent again, when the handshake's round trip is not
/// known (tshark's 3 ms).
const OUT_OF_ORDER_WITHIN_NS: u64 = 3_000_000;
/// A segment at most this long after the duplicate ACKs that asked for it
/// is a fast retransmission (tshark's 20 ms).
const FAST_RETRANSMISSION_WITHIN_NS: u64 = 20_000_000;

/// One side of a conversation.
#[derive(Debug, Clone)]
struct Side {
    base: Option<u32>,
    scale: WindowScale,
    /// The sequence number after the highest segment sent (0: none yet,
    /// as tshark keeps it), the frame and time it was sent at.
    nextseq: u32,
    nextseq_ns: u64,
    /// The highest sequence number up to which the bytes were all seen.
    maxseqtobeacked: u32,
    /// The last acknowledgement number sent, and when.
    lastack: u32,
    lastack_ns: u64,
    /// Duplicate ACKs in a row (-1: one that acknowledged unseen bytes
    /// came first), and the frame of the last ACK that was not one.
    dupacks: i32,
    lastnondupack: u64,
    /// The last window sent as it was sent, and whether a SYN sent it
    /// (not scaled).
    window: u32,
    window_from_syn: bool,
    /// The notes of the last segment sent.
    last_notes: Notes,
    /// The frame that sent `nextseq`.
    nextseq_frame: u64,
    /// Segments sent and not acknowledged yet, oldest first (at most
    /// [`MAX_UNACKED`]).
    unacked: Vec<Unacked>,
    /// Whether bytes in flight are counted: not after a segment was
    /// missed, until the other side acknowledges something.
    valid_bif: bool,
    /// The blocks of the side's latest SACK option.
    sack: [(u32, u32); 3],
    sacks: u8,
    /// Bytes sent since the last PSH, and whether the last segment had it.
    push_bytes: u32,
    push_last: bool,
}

/// A segment sent and not acknowledged yet.
#[derive(Debug, Clone, Copy)]
struct Unacked {
    seq: u32,
    nextseq: u32,
    frame: u64,
    ns: u64,
}

/// Unacknowledged segments kept per side (tshark's
/// `TCP_MAX_UNACKED_SEGMENTS`) and in all (24 bytes each: 96 MiB).
const MAX_UNACKED: usize = 10_000;
pub const MAX_UNACKED_TOTAL: usize = 1 << 22;

/// `b - a` in signed nanoseconds (negative out of time order).
fn delta_ns(a: u64, b: u64) -> i64 {
    let d = i128::from(b) - i128::from(a);
    i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
}

impl Default for Side {
    fn default() -> Self {
        Side {
            base: None,
            scale: WindowScale::Unknown,
            nextseq: 0,
            nextseq_ns: 0,
            maxseqtobeacked: 0,
            lastack: 0,
            lastack_ns: 0,
            dupacks: 0,
            lastnondupack: 0,
            window: u32::MAX,
            window_from_syn: false,
            last_notes: Notes::default(),
            nextseq_frame: 0,
            unacked: Vec::new(),
            valid_bif: true,
            sack: [(0, 0); 3],
            sacks: 0,
            push_bytes: 0,
            push_last: false,
        }
    }
}

#[derive(Debug, Clone)]
struct Conversation {
    stream: u32,
    /// The side of the lower endpoint first.
    sides: [Side; 2],
    /// The last SYN's time, and the handshake's round trip (from it to
    /// the first ACK after it).
    last_syn_ns: Option<u64>,
    first_rtt_ns: Option<u64>,
    /// When its first frame and its latest were sent.
    first_ns: u64,
    prev_ns: u64,
    /// The SSH version the first version line announced, and whether
    /// each side has sent its New Keys.
    ssh_version: Option<u8>,
    ssh_newkeys: [bool; 2],
    /// Its TLS records, once it is read as TLS (boxed: most conversations
    /// are not).
    tls: Option<Box<crate::wire::tls::Conversation>>,
    /// Its HTTP messages, once it is read as HTTP.
    http: Option<Box<super::http::Conversation>>,
}

/// `a` after `b` in sequence space (tshark's GT_SEQ).
fn after(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) < 0
}

/// What one segment says to its side (`fwd`) and the other (`rev`), and
/// what tshark notes of it (its `tcp_analyze_sequence_number`, the numbers
/// as sent).
fn analyse(
    fwd: &mut Side,
    rev: &mut Side,
    seg: &TcpFacts,
    ns: u64,
    number: u64,
    rtt: Option<u64>,
    budget: &mut usize,
) -> (Notes, Option<(u64, u32)>, Measured) {
    use crate::wire::tcp::RST;
    let (seq, ack, flags, len) = (seg.seq, seg.ack, seg.flags, seg.len);
    let window = u32::from(seg.window);
    let plain = flags & (SYN | FIN | RST) == 0;
    let mut notes = Notes::default();
    let mut dup = None;
    let mut measured = Measured::default();
    // An ACK from the other side counts its bytes in flight again.
    if flags & ACK != 0 {
        rev.valid_bif = true;
    }
    let since = |then: u64| ns.checked_sub(then).unwrap_or(u64::MAX);
    'fwd: {
        if len == 1 && seq == fwd.nextseq && rev.window == 0 {
            notes.add(Notes::ZERO_WINDOW_PROBE);
            break 'fwd;
        }
        if window == 0 && plain {
            notes.add(Notes::ZERO_WINDOW);
        }
        if fwd.nextseq != 0 && after(seq, fwd.nextseq) && flags & RST == 0 {
            notes.add(Notes::LOST_SEGMENT);
            fwd.valid_bif = false;
        }
        if len <= 1 && seq == fwd.nextseq.wrapping_sub(1) && plain {
            notes.add(Notes::KEEP_ALIVE);
        }
        let repeats = len == 0 && seq == fwd.nextseq && ack == fwd.lastack && plain;
        if repeats && window != 0 && window != fwd.window {
            notes.add(Notes::WINDOW_UPDATE);
        }
        if len > 0 && rev.scale != WindowScale::Unknown && plain {
            let shift = match rev.scale {
                WindowScale::Shift(s) if !rev.window_from_syn => u32::from(s),
                _ => 0,
            };
            if seq.wrapping_add(len) == rev.lastack.wrapping_add(rev.window.wrapping_shl(shift)) {
                notes.add(Notes::WINDOW_FULL);
            }
        }
        let same = repeats && window == fwd.window;
        if same && window != 0 && rev.last_notes.has(Notes::KEEP_ALIVE) {
            notes.add(Notes::KEEP_ALIVE_ACK);
            break 'fwd;
        }
        if same && window == 0 && rev.last_notes.has(Notes::ZERO_WINDOW_PROBE) {
            notes.add(Notes::ZERO_WINDOW_PROBE_ACK);
            break 'fwd;
        }
        if same && window != 0 {
            fwd.dupacks = if fwd.dupacks == -1 {
                1
            } else {
                fwd.dupacks.saturating_add(1)
            };
            notes.add(Notes::DUPLICATE_ACK);
            dup = Some((fwd.lastnondupack, u32::try_from(fwd.dupacks).unwrap_or(0)));
        }
    }
    if ack != fwd.lastack {
        fwd.lastnondupack = number;
        fwd.dupacks = 0;
    }
    if rev.maxseqtobeacked != 0 && after(ack, rev.maxseqtobeacked) && flags & ACK != 0 {
        if rev.maxseqtobeacked > rev.nextseq {
            rev.maxseqtobeacked = rev.nextseq;
            notes.add(Notes::ACK_LOST_SEGMENT);
        } else {
            if rev.dupacks == 0 {
                notes.add(Notes::ACK_LOST_SEGMENT);
            }
            rev.dupacks = -1;
        }
    }
    if (len > 0 || flags & (SYN | FIN) != 0) && !notes.has(Notes::KEEP_ALIVE) {
        let mut behind = fwd.nextseq != 0 && after(fwd.nextseq, seq);
        if len > 1 && fwd.nextseq.wrapping_sub(1) == seq {
            behind = false;
        }
        let end = seq.wrapping_add(len);
        let extra = u32::from(flags & (SYN | FIN) != 0);
        if len > 0 && rev.lastack != 0 && !after(end, rev.lastack) {
            notes.add(Notes::SPURIOUS_RETRANSMISSION);
        } else if behind
            && rev.dupacks >= 2
            && rev.lastack == seq
            && since(rev.lastack_ns) < FAST_RETRANSMISSION_WITHIN_NS
        {
            notes.add(Notes::FAST_RETRANSMISSION);
        } else if behind
            && since(fwd.nextseq_ns) < rtt.unwrap_or(OUT_OF_ORDER_WITHIN_NS)
            && fwd.nextseq != end.wrapping_add(extra)
        {
            notes.add(Notes::OUT_OF_ORDER);
        } else if behind {
            notes.add(Notes::RETRANSMISSION);
            // Timed from the oldest segment not acknowledged, else from
            // the highest one sent.
            let (then, frame) = match fwd.unacked.first() {
                Some(u) => (u.ns, u.frame),
                None => (fwd.nextseq_ns, fwd.nextseq_frame),
            };
            let d = delta_ns(then, ns);
            if d != 0 {
                measured.rto = Some((d, frame));
            }
        }
    }
    let next = seg.next_seq();
    if (len > 0 || flags & (SYN | FIN) != 0) && fwd.unacked.len() < MAX_UNACKED && *budget > 0 {
        *budget -= 1;
        fwd.unacked.push(Unacked {
            seq,
            nextseq: next,
            frame: number,
            ns,
        });
    }
    let probe = notes.has(Notes::ZERO_WINDOW_PROBE);
    if (after(next, fwd.nextseq) || fwd.nextseq == 0) && !probe {
        fwd.nextseq = next;
        fwd.nextseq_ns = ns;
        fwd.nextseq_frame = number;
    }
    if (seq == fwd.maxseqtobeacked || fwd.maxseqtobeacked == 0) && !probe {
        fwd.maxseqtobeacked = fwd.nextseq;
    }
    fwd.window = window;
    fwd.window_from_syn = flags & SYN != 0;
    fwd.lastack = ack;
    fwd.lastack_ns = ns;
    fwd.last_notes = notes;
    // What this acknowledgement number covers of the other side's
    // segments: the oldest that ends at it is the one acknowledged; one
    // it ends inside is cut at it; those it passes are done.
    let before = rev.unacked.len();
    rev.unacked.retain_mut(|u| {
        if ack == u.nextseq {
            if measured.acks.is_none() {
                measured.acks = Some((u.frame, delta_ns(u.ns, ns)));
            }
            false
        } else if after(ack, u.seq) && !after(ack, u.nextseq) {
            u.seq = ack;
            true
        } else {
            after(u.nextseq, ack)
        }
    });
    *budget += before - rev.unacked.len();
    // Bytes in flight: the span of this side's unacknowledged segments,
    // less what the other side's latest SACK says arrived.
    if len != 0 && fwd.valid_bif && !fwd.unacked.is_empty() {
        let base = fwd.base.unwrap_or(0);
        let (first, last) = fwd.unacked.iter().fold((u32::MAX, 0), |(lo, hi), u| {
            let (s, e) = (u.seq.wrapping_sub(base), u.nextseq.wrapping_sub(base));
            (lo.min(s), hi.max(e))
        });
        let mut in_flight = last.wrapping_sub(first);
        for (l, r) in rev.sack.iter().take(usize::from(rev.sacks)) {
            in_flight = in_flight.wrapping_sub(r.wrapping_sub(*l));
        }
        let push = flags & crate::wire::tcp::PSH != 0;
        // Counted again from this segment after one with PSH.
        fwd.push_bytes = if fwd.push_last {
            len
        } else {
            fwd.push_bytes.wrapping_add(len)
        };
        fwd.push_last = push;
        if in_flight != 0 && in_flight < 2_000_000_000 {
            let virtual_byte = u32::from(flags & (SYN | FIN) != 0);
            let bif = in_flight.wrapping_sub(virtual_byte);
            if bif != 0 {
                measured.in_flight = Some((bif, fwd.push_bytes));
            }
        }
        measured.shown = true;
    }
    if seg.sacks > 0 {
        fwd.sack = seg.sack;
        fwd.sacks = seg.sacks;
    }
    measured.shown |= !notes.is_empty() || measured.acks.is_some();
    (notes, dup, measured)
}

/// An address and port.
pub type Endpoint = (IpAddr, u16);

/// The TCP conversations of a capture.
#[derive(Debug)]
pub struct TcpTracker {
    conversations: Map<(Endpoint, Endpoint), Conversation>,
    streams: u32,
    /// [`MAX_CONVERSATIONS`] (smaller in tests).
    limit: usize,
    /// Unacknowledged segments that may still be kept, all conversations
    /// together (from [`MAX_UNACKED_TOTAL`]).
    unacked_left: usize,
    /// Bytes of HTTP heads that may still be kept, all conversations
    /// together (from [`super::http::HEAD_BUDGET`]).
    heads_left: usize,
}

impl Default for TcpTracker {
    fn default() -> Self {
        TcpTracker {
            conversations: Map::default(),
            streams: 0,
            limit: MAX_CONVERSATIONS,
            unacked_left: MAX_UNACKED_TOTAL,
            heads_left: super::http::HEAD_BUDGET,
        }
    }
}

impl TcpTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps the head of the HTTP message that TCP segment `pkt` begins
    /// (when its conversation said so: [`super::http::Reading::Begins`]),
    /// for the segment that ends it.
    pub fn keep_http_head(&mut self, pkt: &Packet<'_>) {
        let (Some(tcp), Some(ip), Some((payload, _))) = (pkt.tcp(), pkt.ip, pkt.tcp_payload())
        else {
            return;
        };
        let (src, dst) = ((ip.src, tcp.src_port()), (ip.dst, tcp.dst_port()));
        let (key, fwd) = if src <= dst {
            ((src, dst), 0)
        } else {
            ((dst, src), 1)
        };
        if let Some(h) = self
            .conversations
            .get_mut(&key)
            .and_then(|c| c.http.as_mut())
        {
            h.keep_head(fwd, pkt.number, payload, &mut self.heads_left);
        }
    }

    /// Follows `pkt` if it is a TCP segment, and says what its
    /// conversation makes of it.
    pub fn see(&mut self, pkt: &Packet<'_>) -> Option<TcpSeen> {
        self.see_facts(&TcpFacts::of(pkt)?, pkt.ts_ns, pkt.number)
    }

    /// [`see`](Self::see) for a segment's numbers, sent at `ts_ns` in
    /// frame `number`.
    pub fn see_facts(&mut self, seg: &TcpFacts, ts_ns: u64, number: u64) -> Option<TcpSeen> {
        let (src, dst) = (seg.src, seg.dst);
        let (key, fwd) = if src <= dst {
            ((src, dst), 0)
        } else {
            ((dst, src), 1)
        };
        let rev = 1 - fwd;
        let flags = seg.flags;
        let syn_only = flags & (SYN | ACK) == SYN;
        if self.conversations.len() >= self.limit && !self.conversations.contains_key(&key) {
            return None;
        }
        let streams = &mut self.streams;
        let mut fresh = || {
            let stream = *streams;
            *streams = streams.saturating_add(1);
            Conversation {
                stream,
                sides: Default::default(),
                last_syn_ns: None,
                first_rtt_ns: None,
                first_ns: ts_ns,
                prev_ns: ts_ns,
                ssh_version: None,
                ssh_newkeys: [false; 2],
                tls: None,
                http: None,
            }
        };
        let conv = self.conversations.entry(key).or_insert_with(&mut fresh);
        // A SYN with another first sequence number than the side's: the
        // ports are used again. A SYN alone opens a new conversation; a
        // SYN/ACK starts its side's numbers again (as tshark does).
        let reused = flags & SYN != 0 && conv.sides[fwd].base.is_some_and(|b| b != seg.seq);
        if reused && syn_only {
            let kept: usize = conv.sides.iter().map(|s| s.unacked.len()).sum();
            self.unacked_left += kept;
            *conv = fresh();
        } else if reused {
            conv.sides[fwd].base = Some(seg.seq);
        }
        // The window as it stood before this frame's options.
        let scale = conv.sides[fwd].scale;
        let sides = &mut conv.sides;
        if sides[fwd].base.is_none() {
            sides[fwd].base = Some(if flags & SYN != 0 {
                seg.seq
            } else {
                seg.seq.wrapping_sub(1)
            });
        }
        if sides[rev].base.is_none() && flags & ACK != 0 {
            sides[rev].base = Some(seg.ack.wrapping_sub(1));
        }
        let [lo, hi] = sides;
        let (f, r) = if fwd == 0 { (lo, hi) } else { (hi, lo) };
        let (mut notes, dup_ack, mut measured) = analyse(
            f,
            r,
            seg,
            ts_ns,
            number,
            conv.first_rtt_ns,
            &mut self.unacked_left,
        );
        if reused {
            notes.add(Notes::REUSED_PORTS);
            measured.shown = true;
        }
        let sides = &mut conv.sides;
        if let Some(shift) = seg.window_shift {
            sides[fwd].scale = WindowScale::Shift(shift);
        }
        if flags & SYN != 0 {
            // Scaling is used only if both SYNs offer it (RFC 7323).
            if sides[fwd].scale == WindowScale::Unknown {
                sides[fwd].scale = WindowScale::NotUsed;
                sides[rev].scale = WindowScale::NotUsed;
            } else if flags & ACK != 0 && sides[rev].scale == WindowScale::NotUsed {
                sides[fwd].scale = WindowScale::NotUsed;
            }
        }
        if syn_only {
            conv.last_syn_ns = Some(ts_ns);
        } else if flags & (SYN | ACK) == ACK
            && conv.first_rtt_ns.is_none()
            && let Some(syn) = conv.last_syn_ns
        {
            conv.first_rtt_ns = Some(ts_ns.saturating_sub(syn));
        }
        let since = |then: u64| {
            let d = i128::from(ts_ns) - i128::from(then);
            i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
        };
        let (since_first_ns, since_prev_ns) = (since(conv.first_ns), since(conv.prev_ns));
        conv.prev_ns = ts_ns;
        let ssh_version = conv.ssh_version;
        let ssh_encrypted = conv.ssh_newkeys[fwd];
        if conv.ssh_version.is_none() {
            conv.ssh_version = seg.ssh_version;
        }
        // New Keys counts once the version is known (before it, tshark
        // reads nothing in the clear).
        if conv.ssh_version.is_some() && seg.ssh_newkeys {
            conv.ssh_newkeys[fwd] = true;
        }
        let resent = notes.has(Notes::RETRANSMISSION) || notes.has(Notes::OUT_OF_ORDER);
        // A conversation is read as HTTP from the segment that makes it
        // one on (its first with a payload, on HTTP's port), unless it is
        // TLS already.
        let http_digest = seg.app.map(|a| a.http(seg.len));
        if conv.http.is_none()
            && conv.tls.is_none()
            && http_digest.is_some_and(|d| d.by_port || d.looks)
        {
            conv.http = Some(Box::default());
        }
        let http = conv.http.as_mut().and_then(|h| {
            h.segment(
                fwd,
                seg.len,
                seg.has(FIN),
                resent,
                number,
                http_digest.as_ref(),
            )
        });
        let tls = seg
            .app
            .as_ref()
            .and_then(AppDigest::tls)
            .filter(|_| conv.http.is_none())
            .and_then(|digest| {
                use crate::wire::tls::Selection;
                // A conversation is read as TLS from the segment that makes
                // it one on.
                if conv.tls.is_none() && (digest.selection() == Selection::Port || digest.looks()) {
                    conv.tls = Some(Box::default());
                }
                Some(
                    conv.tls
                        .as_mut()?
                        .segment(fwd, seg.seq, seg.len, resent, digest),
                )
            });
        let sides = &conv.sides;
        Some(TcpSeen {
            stream: conv.stream,
            seq_base: sides[fwd].base.unwrap_or(0),
            ack_base: sides[rev].base,
            scale,
            notes,
            dup_ack,
            handshake_ns: conv.first_rtt_ns,
            since_first_ns,
            since_prev_ns,
            measured,
            ssh_version,
            ssh_encrypted,
            tls,
            http,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{Frame, LinkType};
    use crate::dissect::{DissectOptions, dissect};
    use crate::synth::samples::{Segment, tcp_conversations, tcp_frame};

    /// (stream, seq, ack, window, ports reused), the numbers relative.
    type Said = (u32, u32, u32, u32, bool);

    /// What the tracker says of each frame.
    fn follow(frames: &[Vec<u8>], tracker: &mut TcpTracker) -> Vec<Option<Said>> {
        frames
            .iter()
            .map(|f| {
                let p = dissect(
                    &Frame::whole(f, LinkType::Ethernet),
                    &DissectOptions::default(),
                );
                let t = p.tcp().unwrap();
                tracker.see(&p).map(|s| {
                    (
                        s.stream,
                        s.seq(&t),
                        s.acked(t.ack()),
                        s.window(&t),
                        s.notes.has(Notes::REUSED_PORTS),
                    )
                })
            })
            .collect()
    }

    /// A data segment or ACK from p (10.0.0.1:1000) or q, `len` bytes.
    fn data(from_p: bool, seq: u32, ack: u32, len: usize) -> Vec<u8> {
        use crate::wire::tcp::PSH;
        let (p, q) = ((1, 1000), (2, 2000));
        let (from, to) = if from_p { (p, q) } else { (q, p) };
        let payload = [0u8; 64];
        tcp_frame(&Segment {
            from,
            to,
            seq,
            ack,
            flags: ACK | if len > 0 { PSH } else { 0 },
            window: 1000,
            urgent: 0,
            options: &[],
            payload: &payload[..len],
        })
    }

    fn measure(tracker: &mut TcpTracker, frames: &[Vec<u8>]) -> Vec<Measured> {
        let mut out = Vec::new();
        for (i, f) in frames.iter().enumerate() {
            let frame = Frame {
                number: i as u64 + 1,
                ts_ns: (i as u64 + 1) * 1000,
                ..Frame::whole(f, LinkType::Ethernet)
            };
            let p = dissect(&frame, &DissectOptions::default());
            out.push(tracker.see(&p).unwrap().measured);
        }
        out
    }

    #[test]
    fn acks_bytes_in_flight_and_rto() {
        let frames = [
            data(true, 100, 500, 10), // 1: 10 in flight
            data(true, 110, 500, 10), // 2: 20 in flight
            data(false, 500, 120, 0), // 3: acks 2 (ends at 120), 2 µs after it
            data(true, 120, 500, 10), // 4
            data(true, 120, 500, 10), // 5: 4 sent again, timed from 4 (the oldest unacked)
            data(false, 500, 125, 0), // 6: inside 4: no segment ends there
        ];
        let m = measure(&mut TcpTracker::new(), &frames);
        assert_eq!(m[0].in_flight, Some((10, 10)));
        // After a PSH the count starts again.
        assert_eq!(m[1].in_flight, Some((20, 10)));
        assert_eq!(m[2].acks, Some((2, 1000)));
        assert!(m[2].shown && m[2].in_flight.is_none());
        assert_eq!(m[4].rto, Some((1000, 4)));
        assert!(m[5].acks.is_none() && !m[5].shown);
    }

    #[test]
    fn unacknowledged_segments_are_kept_within_the_budget() {
        let mut tracker = TcpTracker::new();
        tracker.unacked_left = 3;
        let frames: Vec<Vec<u8>> = (0..5).map(|i| data(true, 100 + 10 * i, 500, 10)).collect();
        let m = measure(&mut tracker, &frames);
        assert_eq!(tracker.unacked_left, 0);
        // The kept ones span 30 bytes; the others are not counted.
        assert_eq!(m[4].in_flight, Some((30, 10)));
        // An ACK of them all gives the budget back.
        let m = measure(&mut tracker, &[data(false, 500, 150, 0)]);
        assert!(m[0].acks.is_none());
        assert_eq!(tracker.unacked_left, 3);
    }

    #[test]
    fn a_handshake_sets_bases_and_scales() {
        let got = follow(&tcp_conversations(), &mut TcpTracker::new());
        // SYN, SYN/ACK, then the ACK: relative 1 and 1, window × 128.
        assert_eq!(got[0], Some((0, 0, 0, 64240, false)));
        assert_eq!(got[1], Some((0, 0, 1, 65160, false)));
        assert_eq!(got[2], Some((0, 1, 1, 502 << 7, false)));
        // The SYN/ACK offered no scaling: neither side scales.
        assert_eq!(got[5].map(|g| (g.1, g.2, g.3)), Some((1, 1, 502)));
        // B's bytes, scaled by B's 4; A's SACK of them.
        assert_eq!(got[7].map(|g| (g.1, g.3)), Some((1, 502 << 2)));
        // From the middle: 1 and 1, scaling unknown, the window as sent.
        assert_eq!(got[9], Some((2, 1, 1, 502, false)));
        assert_eq!(got[10], Some((2, 1, 13, 502, false)));
        // The same ports with a new SYN: a new conversation from 0.
        let n = got.len();
        assert_eq!(got[n - 3], Some((4, 0, 0, 502, true)));
        assert_eq!(got[n - 2].map(|g| (g.0, g.1, g.2)), Some((4, 0, 1)));
        assert_eq!(got[n - 1], Some((4, 1, 1, 502 << 7, false)));
    }

    #[test]
    fn a_syn_ack_with_new_numbers_starts_its_side_again() {
        let seg = |from: (u8, u16), to: (u8, u16), seq, ack, flags| {
            tcp_frame(&Segment {
                from,
                to,
                seq,
                ack,
                flags,
                window: 100,
                urgent: 0,
                options: &[],
                payload: &[],
            })
        };
        let (a, b) = ((1, 1000), (2, 80));
        let frames = [
            seg(a, b, 10, 0, 0x002),
            seg(b, a, 50, 11, 0x012),
            seg(b, a, 90, 11, 0x012),
            seg(a, b, 11, 91, 0x010),
        ];
        let got = follow(&frames, &mut TcpTracker::new());
        assert_eq!(got[2], Some((0, 0, 1, 100, true)));
        assert_eq!(got[3], Some((0, 1, 1, 100, false)));
    }

    #[test]
    fn the_analysis_notes_what_tshark_notes() {
        let mut t = TcpTracker::new();
        let mut info = Vec::new();
        for (i, f) in crate::synth::samples::tcp_analysis_cases()
            .iter()
            .enumerate()
        {
            let frame = Frame {
                number: i as u64 + 1,
                ts_ns: 1_000 * i as u64,
                ..Frame::whole(f, LinkType::Ethernet)
            };
            let p = dissect(&frame, &DissectOptions::default());
            let mut s = String::new();
            if let Some(seen) = t.see(&p) {
                seen.write_notes(&mut s);
            }
            info.push(s);
        }
        let want = [
            (7, "[TCP Dup ACK 6#1] "),
            (8, "[TCP Dup ACK 6#2] "),
            (9, "[TCP Fast Retransmission] "),
            (10, "[TCP Spurious Retransmission] "),
            (11, "[TCP Previous segment not captured] "),
            (12, "[TCP Out-Of-Order] "),
            (15, "[TCP Retransmission] "),
            (16, "[TCP ZeroWindow] "),
            (17, "[TCP ZeroWindowProbe] "),
            (18, "[TCP ZeroWindowProbeAck] [TCP ZeroWindow] "),
            (19, "[TCP Window Update] "),
            (20, "[TCP Keep-Alive] "),
            (21, "[TCP Keep-Alive ACK] "),
            (22, "[TCP ACKed unseen segment] "),
            (24, "[TCP Window Full] "),
        ];
        for (n, text) in info.iter().enumerate() {
            let expected = want.iter().find(|w| w.0 == n + 1).map_or("", |w| w.1);
            assert_eq!(text, expected, "frame {}", n + 1);
        }
    }

    #[test]
    fn conversations_beyond_the_limit_are_not_followed() {
        let frames = tcp_conversations();
        let mut t = TcpTracker::new();
        t.limit = 2;
        let got = follow(&frames, &mut t);
        assert!(got[0].is_some() && got[3].is_some());
        // The third conversation's frames: as sent.
        assert_eq!(got[9], None);
        // The first two still followed.
        assert_eq!(got[2].map(|g| g.1), Some(1));
        assert_eq!(t.conversations.len(), 2);
    }
}
