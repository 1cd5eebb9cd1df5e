//! What a capture carries beside RoCE flows and pauses (a switch mirror's
//! rdma_cm and NCCL bootstrap, storage control paths, ARP, LLDP): the
//! frames counted by protocol (the names of `packets`' Protocol column),
//! and the TCP conversations followed as tshark follows them, each with
//! what tshark's sequence analysis notes of its segments
//! (`tcp.analysis.*`), its resets and its handshake's round trip.

use std::net::SocketAddr;

use serde::Serialize;
use serde::ser::SerializeMap;

use super::tcp::{Endpoint, NOTE_FIELDS, TcpFacts, TcpSeen, TcpTracker};
use crate::wire::tcp::{FIN, RST, SYN};

/// Other frames and TCP conversations, as the frame loop meets them.
#[derive(Debug)]
pub struct OtherTraffic {
    /// Frames by protocol, in order of first frame (a few names, so a
    /// list is the quickest map).
    protocols: Vec<(&'static str, u64)>,
    tracker: TcpTracker,
    /// Each conversation's counts, by `tcp.stream` (numbered from 0 in
    /// order of first frame), at most `limit`.
    conversations: Vec<Conversation>,
    limit: u64,
    /// Conversations beyond `limit` (or the tracker's own cap): their
    /// frames are counted under TCP only.
    streams_beyond: u64,
    untracked_frames: u64,
    /// What the conversation said of the latest TCP frame, and its number
    /// (the frame loops that show frames read it: [`OtherTraffic::seen`]).
    last: Option<(u64, TcpSeen)>,
}

#[derive(Debug, Clone, Copy)]
struct Conversation {
    /// The first frame's sender (tshark's address A), and its receiver.
    a: Endpoint,
    b: Endpoint,
    /// Frames and bytes from A, and from B.
    frames: [u64; 2],
    bytes: [u64; 2],
    payload_bytes: u64,
    first_ts_ns: u64,
    last_ts_ns: u64,
    handshake_ns: Option<u64>,
    syns: u64,
    fins: u64,
    resets: u64,
    /// Segments with each of [`NOTE_FIELDS`]' notes.
    notes: NoteCounts,
    /// The ACKs' round trips (`tcp.analysis.ack_rtt`): how many, their
    /// sum, least and most.
    rtts: u64,
    rtt_sum_ns: u128,
    rtt_min_ns: u64,
    rtt_max_ns: u64,
}

impl OtherTraffic {
    /// Keeps the counts of at most `limit` conversations (`--max-flows`).
    pub fn new(limit: u64) -> Self {
        OtherTraffic {
            protocols: Vec::new(),
            tracker: TcpTracker::new(),
            conversations: Vec::new(),
            limit,
            streams_beyond: 0,
            untracked_frames: 0,
            last: None,
        }
    }

    /// A frame that is not TCP, by its protocol's name.
    #[cold]
    pub fn frame(&mut self, protocol: &'static str) {
        match self.protocols.iter_mut().find(|(p, _)| *p == protocol) {
            Some((_, n)) => *n += 1,
            None => self.protocols.push((protocol, 1)),
        }
    }

    /// A TCP segment of `len` bytes on the wire, in frame `number`.
    #[cold]
    pub fn tcp(&mut self, seg: &TcpFacts, ts_ns: u64, number: u64, len: u32) {
        let seen = self.tracker.see_facts(seg, ts_ns, number);
        // Named as the Protocol column names it: an SSH connection's
        // segments by what its version line said, a TLS conversation's by
        // its version (a segment inside a record is TCP).
        self.frame(if seg.ssh {
            crate::wire::ssh::protocol(seen.as_ref().and_then(|s| s.ssh_version))
        } else {
            seen.as_ref().map_or("TCP", TcpSeen::protocol)
        });
        let Some(seen) = seen else {
            self.untracked_frames += 1;
            self.last = None;
            return;
        };
        let seen = &self.last.insert((number, seen)).1;
        let stream = u64::from(seen.stream);
        if stream >= self.limit {
            self.streams_beyond = self.streams_beyond.max(stream + 1 - self.limit);
            self.untracked_frames += 1;
            return;
        }
        let at = seen.stream as usize;
        if at >= self.conversations.len() {
            // Streams are numbered in order of first frame: this is the
            // next one.
            self.conversations.push(Conversation {
                a: seg.src,
                b: seg.dst,
                frames: [0; 2],
                bytes: [0; 2],
                payload_bytes: 0,
                first_ts_ns: ts_ns,
                last_ts_ns: ts_ns,
                handshake_ns: None,
                syns: 0,
                fins: 0,
                resets: 0,
                notes: NoteCounts::default(),
                rtts: 0,
                rtt_sum_ns: 0,
                rtt_min_ns: u64::MAX,
                rtt_max_ns: 0,
            });
        }
        let Some(c) = self.conversations.get_mut(at) else {
            return;
        };
        let side = usize::from(seg.src != c.a);
        c.frames[side] += 1;
        c.bytes[side] += u64::from(len);
        c.payload_bytes += u64::from(seg.len);
        c.first_ts_ns = c.first_ts_ns.min(ts_ns);
        c.last_ts_ns = c.last_ts_ns.max(ts_ns);
        c.handshake_ns = c.handshake_ns.or(seen.handshake_ns);
        c.syns += u64::from(seg.has(SYN));
        c.fins += u64::from(seg.has(FIN));
        c.resets += u64::from(seg.has(RST));
        for (n, f) in c.notes.0.iter_mut().zip(&NOTE_FIELDS) {
            *n += u64::from(seen.notes.has(f.notes));
        }
        if let Some((_, rtt)) = seen.measured.acks
            && let Ok(rtt @ 1..) = u64::try_from(rtt)
        {
            c.rtts += 1;
            c.rtt_sum_ns += u128::from(rtt);
            c.rtt_min_ns = c.rtt_min_ns.min(rtt);
            c.rtt_max_ns = c.rtt_max_ns.max(rtt);
        }
    }

    /// Keeps the head of the HTTP message TCP frame `pkt` begins (see
    /// [`TcpTracker::keep_http_head`]).
    pub fn keep_http_head(&mut self, pkt: &crate::dissect::Packet<'_>) {
        self.tracker.keep_http_head(pkt);
    }

    /// What the conversation said of frame `number`, if it is the latest
    /// TCP frame seen.
    pub fn seen(&self, number: u64) -> Option<TcpSeen> {
        self.last
            .as_ref()
            .filter(|(n, _)| *n == number)
            .map(|(_, s)| s.clone())
    }

    /// Conversations beyond the limit.
    pub fn conversations_dropped(&self) -> u64 {
        self.streams_beyond
    }

    /// The report's part, or none when every frame was RoCE or a pause.
    pub fn report(&self) -> Option<OtherReport> {
        let frames = self.protocols.iter().map(|(_, n)| n).sum();
        if frames == 0 {
            return None;
        }
        let mut protocols: Vec<ProtocolCount> = (self.protocols.iter())
            .map(|&(protocol, frames)| ProtocolCount { protocol, frames })
            .collect();
        protocols.sort_by(|x, y| y.frames.cmp(&x.frames).then(x.protocol.cmp(y.protocol)));
        let tcp_conversations = (self.conversations.iter().enumerate())
            .map(|(stream, c)| TcpConversation {
                stream: stream as u32,
                a: SocketAddr::from(c.a).to_string(),
                b: SocketAddr::from(c.b).to_string(),
                frames: c.frames[0] + c.frames[1],
                bytes: c.bytes[0] + c.bytes[1],
                frames_a_to_b: c.frames[0],
                bytes_a_to_b: c.bytes[0],
                frames_b_to_a: c.frames[1],
                bytes_b_to_a: c.bytes[1],
                payload_bytes: c.payload_bytes,
                first_ts_ns: c.first_ts_ns,
                last_ts_ns: c.last_ts_ns,
                handshake_rtt_ns: c.handshake_ns,
                syns: c.syns,
                fins: c.fins,
                resets: c.resets,
                ack_rtt: (c.rtts > 0).then(|| AckRtt {
                    count: c.rtts,
                    min_ns: c.rtt_min_ns,
                    mean_ns: u64::try_from(c.rtt_sum_ns / u128::from(c.rtts)).unwrap_or(u64::MAX),
                    max_ns: c.rtt_max_ns,
                }),
                analysis: c.notes,
            })
            .collect();
        Some(OtherReport {
            frames,
            protocols,
            tcp_conversations,
            tcp_conversations_dropped: self.streams_beyond,
            tcp_untracked_frames: self.untracked_frames,
        })
    }
}

/// The report's `other`: frames that are neither RoCE flows' nor pauses.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OtherReport {
    pub frames: u64,
    /// Frames by protocol, most first.
    pub protocols: Vec<ProtocolCount>,
    /// Every conversation kept, in `tcp.stream` order.
    pub tcp_conversations: Vec<TcpConversation>,
    /// Conversations beyond `--max-flows`: counted under TCP only.
    pub tcp_conversations_dropped: u64,
    /// Their frames (and those of conversations past the tracker's own
    /// cap of 2^20).
    pub tcp_untracked_frames: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ProtocolCount {
    pub protocol: &'static str,
    pub frames: u64,
}

/// One TCP conversation, as tshark's `-z conv,tcp` and its sequence
/// analysis see it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TcpConversation {
    /// `tcp.stream`.
    pub stream: u32,
    /// The first frame's sender (tshark's address A), as `address:port`.
    pub a: String,
    pub b: String,
    pub frames: u64,
    /// Frames' lengths on the wire.
    pub bytes: u64,
    pub frames_a_to_b: u64,
    pub bytes_a_to_b: u64,
    pub frames_b_to_a: u64,
    pub bytes_b_to_a: u64,
    /// TCP payload (`tcp.len`) summed.
    pub payload_bytes: u64,
    pub first_ts_ns: u64,
    pub last_ts_ns: u64,
    /// The last SYN to the first ACK after it (tshark's
    /// `tcp.analysis.initial_rtt`); null without a handshake.
    pub handshake_rtt_ns: Option<u64>,
    /// Segments with SYN, FIN and RST set.
    pub syns: u64,
    pub fins: u64,
    pub resets: u64,
    /// The round trips of the ACKs that acknowledge a segment exactly
    /// (`tcp.analysis.ack_rtt`, from the segment to its ACK); null
    /// without one.
    pub ack_rtt: Option<AckRtt>,
    /// Segments with each `tcp.analysis.*` note, by the field's last name
    /// (`retransmission` counts fast and spurious ones too, as the
    /// filter `tcp.analysis.retransmission` does).
    pub analysis: NoteCounts,
}

/// A conversation's ACK round trips.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct AckRtt {
    pub count: u64,
    pub min_ns: u64,
    /// Rounded down.
    pub mean_ns: u64,
    pub max_ns: u64,
}

impl TcpConversation {
    /// Segments with the note `name` (`retransmission`, `duplicate_ack`).
    pub fn noted(&self, name: &str) -> u64 {
        (NOTE_FIELDS.iter().zip(&self.analysis.0))
            .find(|(f, _)| f.name.strip_prefix("tcp.analysis.") == Some(name))
            .map_or(0, |(_, n)| *n)
    }

    /// What goes wrong on the conversation: retransmissions, lost and
    /// out-of-order segments, duplicate ACKs, zero windows and resets.
    pub fn trouble(&self) -> u64 {
        [
            "retransmission",
            "lost_segment",
            "out_of_order",
            "duplicate_ack",
            "zero_window",
        ]
        .iter()
        .map(|n| self.noted(n))
        .sum::<u64>()
            + self.resets
    }
}

/// Segments with each of [`NOTE_FIELDS`]' notes, serialised as a map by
/// the fields' last names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoteCounts(pub [u64; NOTE_FIELDS.len()]);

impl Serialize for NoteCounts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (f, n) in NOTE_FIELDS.iter().zip(&self.0) {
            let name = f.name.strip_prefix("tcp.analysis.").unwrap_or(f.name);
            m.serialize_entry(name, n)?;
        }
        m.end()
    }
}
