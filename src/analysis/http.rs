//! HTTP messages across the segments of a TCP conversation, followed as
//! tshark reassembles them: a message whose head says its body goes on
//! past the segment that starts it (by `Content-Length`, or chunks up to
//! the last) is shown on the segment that ends it, the segments before
//! being `[TCP segment of a reassembled PDU]`. The conversation is read
//! as HTTP by its port, or from the first segment whose first line
//! tshark's heuristic takes (`wire::http`).
//!
//! A message's head is in the frame that starts it, and the Info column
//! of the segment that ends it is the head's first line: the frame loops
//! that show frames give the head's bytes to the conversation
//! ([`Conversation::keep_head`]) when the analysis says a message begins
//! ([`Reading::Begins`]); the report's loop does not need them.

use std::sync::Arc;

use crate::wire::http::{BodyLen, Digest, Media, Tail};

/// Bytes of a message's head kept at most (a longer head is kept cut).
pub const MAX_HEAD: usize = 16 * 1024;

/// Bytes of heads kept at most for all conversations together: a capture
/// of many conversations each with a message begun is shown with the
/// later ones' first lines left out, not with memory without bound.
pub const HEAD_BUDGET: usize = 32 << 20;

/// What the conversation says of one segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// A message starts and ends in it: `HTTP` (or `HTTP/XML`, when its
    /// body is in a media tshark reads), its first line the Info column.
    Whole { media: Media },
    /// A message starts in it whose body goes on: `TCP`, the first line
    /// and `[TCP segment of a reassembled PDU]`.
    Begins,
    /// Part of a body that began earlier and goes on past it (or bytes
    /// without a line end that start no message): `TCP`, its TCP summary
    /// and `[TCP segment of a reassembled PDU]`.
    Middle,
    /// Part of a message whose length tshark learns a segment at a time
    /// (a chunked body, a head split over segments): HTTP reads what it
    /// has so far again, so the line is the message's first line (from
    /// the head the frame loop kept, else the TCP summary) and
    /// `[TCP segment of a reassembled PDU]`.
    Grows { head: Option<Arc<[u8]>> },
    /// The segment that ends a message begun earlier: named as a whole
    /// message is, with the head the frame loop kept (none in the
    /// report's loop, or past [`HEAD_BUDGET`]).
    Ends(Ended),
    /// The segment that ends a chunked body begun earlier with the `\r`
    /// of its last line end, the `\n` still to come: tshark 4.0 takes
    /// the `\r` for the line end and ends the message, then finds it
    /// malformed (`TCP`, the first line and `[Malformed Packet]`, HTTP
    /// among the frame's protocols but none of its fields); the `\n` is
    /// a `Continuation`.
    Malformed { head: Option<Arc<[u8]>> },
    /// Neither a message's start nor part of one (tshark's
    /// `Continuation`).
    Continuation,
    /// Sent again (a retransmission or out of order): plain TCP, the
    /// message it may belong to unchanged.
    Resent,
}

/// A message that ends in a segment after the one that began it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// The head's bytes, first line through blank line (cut at
    /// [`MAX_HEAD`]).
    pub head: Option<Arc<[u8]>>,
    /// The frame the message began in, and its segments and bytes.
    pub first_frame: u64,
    pub segments: u32,
    pub bytes: u64,
    pub media: Media,
}

impl Reading {
    /// The Protocol column.
    pub fn protocol(&self) -> &'static str {
        match self {
            Reading::Whole { .. } | Reading::Ends(_) | Reading::Continuation => {
                self.media().protocol().unwrap_or("HTTP")
            }
            Reading::Begins
            | Reading::Middle
            | Reading::Grows { .. }
            | Reading::Malformed { .. }
            | Reading::Resent => "TCP",
        }
    }

    /// The media of the message's body, when it is whole or ends here.
    pub fn media(&self) -> Media {
        match self {
            Reading::Whole { media } | Reading::Ends(Ended { media, .. }) => *media,
            // What follows no message's head is data.
            Reading::Continuation => Media::Data,
            _ => Media::None,
        }
    }

    /// Whether tshark's HTTP dissects this segment (it lists `http` among
    /// the frame's protocols, and its fields have values).
    pub fn is_http(&self) -> bool {
        matches!(
            self,
            Reading::Whole { .. }
                | Reading::Ends(_)
                | Reading::Malformed { .. }
                | Reading::Continuation
        )
    }

    /// Whether HTTP's protocol item is in the frame's tree (the `http`
    /// field is present): as [`is_http`](Self::is_http), but for a
    /// malformed message, which tshark lists among the frame's protocols
    /// without the item.
    pub fn has_item(&self) -> bool {
        self.is_http() && !matches!(self, Reading::Malformed { .. })
    }
}

/// What a message begun on one side waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rest {
    /// The blank line that ends its head (then it ends: the length of
    /// a body after a head split over segments is not followed).
    Head,
    /// Body bytes still to come.
    Bytes(u64),
    /// A chunked body's last chunk.
    LastChunk,
    /// Its side's FIN (a response that says neither a length nor chunks).
    Fin,
}

/// A message begun on one side whose body has not all come.
#[derive(Debug, Clone)]
struct Pending {
    rest: Rest,
    head: Option<Arc<[u8]>>,
    first_frame: u64,
    segments: u32,
    bytes: u64,
    /// Its head's length (0 while it goes on).
    head_len: u32,
    /// The body's media, were there a body.
    media: Media,
    /// The last bytes of the message so far (a chunked body's last chunk
    /// may come over two segments).
    tail: Tail,
}

impl Pending {
    /// The message, ended by this segment.
    fn ended(self) -> Reading {
        let body = self.bytes.saturating_sub(u64::from(self.head_len));
        Reading::Ends(Ended {
            head: self.head,
            first_frame: self.first_frame,
            segments: self.segments,
            bytes: self.bytes,
            media: if self.rest != Rest::Head && (body > 0 || self.rest == Rest::LastChunk) {
                self.media
            } else {
                Media::None
            },
        })
    }
}

/// An HTTP conversation: each side's message in progress.
#[derive(Debug, Clone, Default)]
pub struct Conversation {
    pending: [Option<Pending>; 2],
    /// A request was read (on either side): from then on, a segment that
    /// starts with binary bytes is HTTP's `Continuation` too.
    seen_request: bool,
}

impl Conversation {
    /// Reads a segment of `len` payload bytes sent by side `fwd` in frame
    /// `number`, with a FIN or not (its digest, when the segment has one:
    /// a segment on a heuristic port that starts no message may have
    /// none). None for a segment without payload that ends nothing.
    pub fn segment(
        &mut self,
        fwd: usize,
        len: u32,
        fin: bool,
        resent: bool,
        number: u64,
        d: Option<&Digest>,
    ) -> Option<Reading> {
        let slot = self.pending.get_mut(fwd)?;
        if resent {
            return (len > 0).then_some(Reading::Resent);
        }
        if let Some(p) = slot.as_mut() {
            if len == 0 && !fin {
                return None;
            }
            p.segments = p.segments.saturating_add(1);
            p.bytes = p.bytes.saturating_add(u64::from(len));
            // Unknown bytes (a segment without a digest) end no chunk.
            p.tail = p.tail.then(d.map(|d| d.tail).unwrap_or_default(), len);
            let done = match &mut p.rest {
                Rest::Bytes(rest) => {
                    *rest = rest.saturating_sub(u64::from(len));
                    *rest == 0
                }
                Rest::LastChunk => p.tail.ends_last_chunk(),
                Rest::Head => d.is_some_and(|d| d.head_ends),
                Rest::Fin => fin,
            };
            if p.rest == Rest::LastChunk && p.tail.ends_last_chunk_but_lf() {
                let head = slot.take().and_then(|p| p.head);
                return Some(Reading::Malformed { head });
            }
            if !done {
                return Some(match p.rest {
                    Rest::LastChunk | Rest::Head => Reading::Grows {
                        head: p.head.clone(),
                    },
                    Rest::Bytes(_) | Rest::Fin => Reading::Middle,
                });
            }
            return slot.take().map(Pending::ended);
        }
        if len == 0 {
            return None;
        }
        // Binary bytes are HTTP's only in a conversation with a request.
        if d.is_some_and(|d| !d.starts && !d.printable) {
            return self.seen_request.then_some(Reading::Continuation);
        }
        let Some(d) = d.filter(|d| d.starts) else {
            // tshark waits for a line end before it reads a first line.
            return Some(match d {
                Some(d) if !d.line_end => Reading::Middle,
                _ => Reading::Continuation,
            });
        };
        self.seen_request |= d.request;
        let body_here = u64::from(len.saturating_sub(d.head_len));
        let rest = match d.body() {
            _ if d.head_len == 0 => Rest::Head,
            BodyLen::Empty => Rest::Bytes(0),
            BodyLen::Bytes(n) => Rest::Bytes(n.saturating_sub(body_here)),
            BodyLen::Chunked if d.last_chunk => Rest::Bytes(0),
            BodyLen::Chunked => Rest::LastChunk,
            BodyLen::UntilClose if fin => Rest::Bytes(0),
            BodyLen::UntilClose => Rest::Fin,
        };
        let body = match d.body() {
            BodyLen::Chunked => true,
            BodyLen::Bytes(n) => n > 0,
            BodyLen::UntilClose => body_here > 0,
            BodyLen::Empty => false,
        };
        if rest == Rest::Bytes(0) {
            let media = if body { d.media } else { Media::None };
            return Some(Reading::Whole { media });
        }
        *slot = Some(Pending {
            rest,
            head: None,
            first_frame: number,
            segments: 1,
            bytes: u64::from(len),
            head_len: d.head_len,
            media: d.media,
            tail: d.tail,
        });
        Some(Reading::Begins)
    }

    /// Keeps the head of the message side `fwd` began in frame `number`
    /// (from `payload`, that frame's), within `budget` bytes left of
    /// [`HEAD_BUDGET`].
    pub fn keep_head(&mut self, fwd: usize, number: u64, payload: &[u8], budget: &mut usize) {
        let Some(Some(p)) = self.pending.get_mut(fwd) else {
            return;
        };
        if p.first_frame != number || p.head.is_some() {
            return;
        }
        let head = crate::wire::http::Head::parse(payload);
        let len = head.len.unwrap_or(payload.len()).min(MAX_HEAD);
        let Some(bytes) = payload.get(..len).filter(|_| len <= *budget) else {
            return;
        };
        *budget -= len;
        p.head = Some(Arc::from(bytes));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::tls::Selection;

    fn digest(payload: &[u8]) -> Digest {
        Digest::of(payload, Selection::Port)
    }

    /// A segment of `payload` from side `fwd`, not sent again, no FIN.
    fn seg(c: &mut Conversation, fwd: usize, payload: &[u8], number: u64) -> Option<Reading> {
        let d = digest(payload);
        c.segment(fwd, payload.len() as u32, false, false, number, Some(&d))
    }

    #[test]
    fn a_body_by_its_length_ends_in_the_segment_that_completes_it() {
        let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\nContent-Length: 10\r\n\r\n";
        let mut c = Conversation::default();
        let mut budget = HEAD_BUDGET;
        assert_eq!(seg(&mut c, 1, head, 5), Some(Reading::Begins));
        c.keep_head(1, 5, head, &mut budget);
        assert_eq!(budget, HEAD_BUDGET - head.len());
        // The other side's request, whole, meanwhile.
        assert_eq!(
            seg(&mut c, 0, b"GET / HTTP/1.1\r\n\r\n", 6),
            Some(Reading::Whole { media: Media::None })
        );
        assert_eq!(c.segment(1, 4, false, true, 7, None), Some(Reading::Resent));
        assert_eq!(c.segment(1, 0, false, false, 7, None), None);
        assert_eq!(seg(&mut c, 1, b"<a>1", 8), Some(Reading::Middle));
        let Some(Reading::Ends(e)) = seg(&mut c, 1, b"23</a>", 9) else {
            panic!()
        };
        assert_eq!(e.head.as_deref(), Some(&head[..]));
        assert_eq!((e.first_frame, e.segments, e.media), (5, 3, Media::Xml));
        assert_eq!(e.bytes, head.len() as u64 + 10);
        assert_eq!(Reading::Ends(e).protocol(), "HTTP/XML");
        // Then a line that starts nothing, and bytes without a line end.
        assert_eq!(seg(&mut c, 1, b"abc\r\n", 10), Some(Reading::Continuation));
        assert_eq!(seg(&mut c, 1, b"abc", 11), Some(Reading::Middle));
    }

    #[test]
    fn binary_bytes_are_a_continuation_only_after_a_request() {
        let mut c = Conversation::default();
        assert_eq!(seg(&mut c, 1, b"\x01\x02", 1), None);
        // A line end before them is looked past, in more than 3 bytes.
        assert_eq!(seg(&mut c, 1, b"\r\n\x01\x02", 2), None);
        assert_eq!(
            seg(&mut c, 1, b"HTTP/1.1 204 No Content\r\n\r\n", 3).map(|r| r.is_http()),
            Some(true)
        );
        assert_eq!(seg(&mut c, 0, b"\x7f", 4), None);
        assert!(seg(&mut c, 0, b"GET / HTTP/1.1\r\n\r\n", 5).is_some());
        // From then on, on either side.
        let r = seg(&mut c, 1, b"\r\n\x01\x02", 6);
        assert_eq!(r, Some(Reading::Continuation));
        assert_eq!(
            r.map(|r| (r.protocol(), r.media())),
            Some(("HTTP", Media::Data))
        );
        assert_eq!(seg(&mut c, 0, b"\x00", 7), Some(Reading::Continuation));
        // A TLS digest's ends say as much.
        let d = Digest::of_ends(*b"\r\n\x01\x02", *b"\r\n\x01\x02", 4);
        assert!(!d.printable);
        let d = Digest::of_ends(*b"\r\nab", *b"\nab\x00", 3);
        assert!(!d.printable);
    }

    #[test]
    fn a_chunked_body_ends_with_its_last_chunk() {
        let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n";
        let mut c = Conversation::default();
        assert_eq!(seg(&mut c, 0, head, 1), Some(Reading::Begins));
        assert_eq!(
            seg(&mut c, 0, b"3\r\nabc\r\n", 2),
            Some(Reading::Grows { head: None })
        );
        assert!(matches!(
            seg(&mut c, 0, b"0\r\n\r\n", 3),
            Some(Reading::Ends(Ended { head: None, .. }))
        ));
        // The last chunk over two segments, and over three.
        for parts in [
            &[&b"3\r\nabc\r\n0\r\n"[..], b"\r\n"][..],
            &[b"3\r\nabc\r\n0", b"\r\n\r\n"],
            &[b"3\r\nabc\r\n", b"0\r", b"\n\r\n"],
            &[b"3\r\nabc\r", b"\n0\r\n", b"\r\n"],
        ] {
            assert_eq!(seg(&mut c, 0, head, 1), Some(Reading::Begins));
            let (last, before) = parts.split_last().unwrap();
            for p in before {
                assert_eq!(seg(&mut c, 0, p, 2), Some(Reading::Grows { head: None }));
            }
            assert!(matches!(seg(&mut c, 0, last, 3), Some(Reading::Ends(_))));
        }
        // Cut between the \r and \n of its last line end: malformed, as
        // tshark finds it, and the \n is a continuation (of a
        // conversation with a request).
        assert!(seg(&mut c, 1, b"GET / HTTP/1.1\r\n\r\n", 1).is_some());
        assert_eq!(seg(&mut c, 0, head, 1), Some(Reading::Begins));
        let r = seg(&mut c, 0, b"3\r\nabc\r\n0\r\n\r", 2);
        assert_eq!(r, Some(Reading::Malformed { head: None }));
        assert_eq!(
            r.map(|r| (r.protocol(), r.is_http(), r.has_item())),
            Some(("TCP", true, false))
        );
        assert_eq!(seg(&mut c, 0, b"\n", 3), Some(Reading::Continuation));
        // A chunk of 16 bytes ("10") cut before its "0" is no last chunk.
        assert_eq!(seg(&mut c, 0, head, 1), Some(Reading::Begins));
        for p in [&b"1"[..], b"0\r\n\r\n", b"0123456789abcd\r\n"] {
            assert!(matches!(seg(&mut c, 0, p, 2), Some(Reading::Grows { .. })));
        }
        assert!(matches!(
            seg(&mut c, 0, b"0\r\n\r\n", 3),
            Some(Reading::Ends(_))
        ));
        // Whole in one segment.
        let whole = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
        assert!(matches!(
            seg(&mut c, 0, whole, 4),
            Some(Reading::Whole { .. })
        ));
    }

    #[test]
    fn a_response_without_a_length_ends_with_its_fin() {
        let head = b"HTTP/1.1 200 OK\r\n\r\n";
        let mut c = Conversation::default();
        assert_eq!(seg(&mut c, 0, head, 1), Some(Reading::Begins));
        assert_eq!(seg(&mut c, 0, b"abc", 2), Some(Reading::Middle));
        let Some(Reading::Ends(e)) = c.segment(0, 0, true, false, 3, None) else {
            panic!()
        };
        assert_eq!((e.segments, e.media), (3, Media::Data));
        // With its FIN, whole; without a body, none to name.
        let d = digest(head);
        assert_eq!(
            c.segment(0, head.len() as u32, true, false, 4, Some(&d)),
            Some(Reading::Whole { media: Media::None })
        );
    }

    #[test]
    fn a_head_split_over_segments_ends_with_its_blank_line() {
        let mut c = Conversation::default();
        assert_eq!(
            seg(&mut c, 0, b"GET / HTTP/1.1\r\nHost: a\r\n", 1),
            Some(Reading::Begins)
        );
        assert_eq!(
            seg(&mut c, 0, b"Accept: */*\r\n", 2),
            Some(Reading::Grows { head: None })
        );
        assert!(matches!(seg(&mut c, 0, b"\r\n", 3), Some(Reading::Ends(_))));
    }

    #[test]
    fn heads_are_kept_within_the_budget() {
        let head = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n";
        let mut c = Conversation::default();
        seg(&mut c, 0, head, 1);
        let mut budget = 10;
        c.keep_head(0, 1, head, &mut budget);
        assert_eq!(budget, 10);
        let Some(Reading::Ends(e)) = seg(&mut c, 0, &[b'x'; 10], 2) else {
            panic!()
        };
        assert_eq!(e.head, None);
    }
}
