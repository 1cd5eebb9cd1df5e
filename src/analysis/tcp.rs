//! TCP conversations, followed as Wireshark follows them, for what a TCP
//! frame's summary line and fields say that the frame alone does not:
//! sequence and acknowledgement numbers relative to each side's first
//! (the SYN's, or one before the first seen), the window scaled by the
//! shift the handshake agreed, and the conversation's index
//! (`tcp.stream`). Only the frame loops of `packets`, `-Y` and `export`
//! keep it, on TCP frames only; the report does not.

use std::net::IpAddr;

use super::Map;
use crate::dissect::Packet;
use crate::wire::tcp::{ACK, SYN, Tcp, TcpOption};

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    /// A SYN that starts the ports' numbers again (tshark's `[TCP Port
    /// numbers reused]`).
    pub reused: bool,
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

/// One side of a conversation.
#[derive(Debug, Clone, Copy)]
struct Side {
    base: Option<u32>,
    scale: WindowScale,
}

impl Default for Side {
    fn default() -> Self {
        Side {
            base: None,
            scale: WindowScale::Unknown,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Conversation {
    stream: u32,
    /// The side of the lower endpoint first.
    sides: [Side; 2],
}

type Endpoint = (IpAddr, u16);

/// The TCP conversations of a capture.
#[derive(Debug)]
pub struct TcpTracker {
    conversations: Map<(Endpoint, Endpoint), Conversation>,
    streams: u32,
    /// [`MAX_CONVERSATIONS`] (smaller in tests).
    limit: usize,
}

impl Default for TcpTracker {
    fn default() -> Self {
        TcpTracker {
            conversations: Map::default(),
            streams: 0,
            limit: MAX_CONVERSATIONS,
        }
    }
}

impl TcpTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Follows `pkt` if it is a TCP segment, and says what its
    /// conversation makes of it.
    pub fn see(&mut self, pkt: &Packet<'_>) -> Option<TcpSeen> {
        let tcp = pkt.tcp()?;
        let ip = pkt.ip?;
        let src = (ip.src, tcp.src_port());
        let dst = (ip.dst, tcp.dst_port());
        let (key, fwd) = if src <= dst {
            ((src, dst), 0)
        } else {
            ((dst, src), 1)
        };
        let rev = 1 - fwd;
        let flags = tcp.flags();
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
            }
        };
        let conv = self.conversations.entry(key).or_insert_with(&mut fresh);
        // A SYN with another first sequence number than the side's: the
        // ports are used again. A SYN alone opens a new conversation; a
        // SYN/ACK starts its side's numbers again (as tshark does).
        let reused = flags & SYN != 0 && conv.sides[fwd].base.is_some_and(|b| b != tcp.seq());
        if reused && syn_only {
            *conv = fresh();
        } else if reused {
            conv.sides[fwd].base = Some(tcp.seq());
        }
        // The window as it stood before this frame's options.
        let scale = conv.sides[fwd].scale;
        let sides = &mut conv.sides;
        if sides[fwd].base.is_none() {
            sides[fwd].base = Some(if flags & SYN != 0 {
                tcp.seq()
            } else {
                tcp.seq().wrapping_sub(1)
            });
        }
        if sides[rev].base.is_none() && flags & ACK != 0 {
            sides[rev].base = Some(tcp.ack().wrapping_sub(1));
        }
        if let Some(shift) = tcp.window_shift() {
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
        Some(TcpSeen {
            stream: conv.stream,
            seq_base: sides[fwd].base.unwrap_or(0),
            ack_base: sides[rev].base,
            scale,
            reused,
        })
    }
}

/// The options as the summary line lists them after `Len=`: `MSS=1460
/// SACK_PERM TSval=.. TSecr=.. WS=128`, SACK blocks relative.
pub fn write_options(s: &mut String, tcp: &Tcp<'_>, seen: Option<&TcpSeen>) {
    use std::fmt::Write as _;
    for option in tcp.options() {
        let _ = match option {
            TcpOption::Mss(v) => write!(s, " MSS={v}"),
            TcpOption::WindowScale(shift) => {
                let shift = shift.min(crate::wire::tcp::MAX_WINDOW_SHIFT);
                write!(s, " WS={}", 1u32 << shift)
            }
            TcpOption::SackPermitted => write!(s, " SACK_PERM"),
            TcpOption::Timestamps { value, echo } => write!(s, " TSval={value} TSecr={echo}"),
            TcpOption::Sack(blocks) => {
                for (l, r) in crate::wire::tcp::sack_blocks(blocks) {
                    let (l, r) = match seen {
                        Some(t) => (t.acked(l), t.acked(r)),
                        None => (l, r),
                    };
                    let _ = write!(s, " SLE={l} SRE={r}");
                }
                Ok(())
            }
            _ => Ok(()),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{Frame, LinkType};
    use crate::dissect::{DissectOptions, dissect};
    use crate::synth::samples::{Segment, tcp_conversations, tcp_frame};

    /// (stream, seq, ack, window, reused), the numbers relative.
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
                        s.reused,
                    )
                })
            })
            .collect()
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
