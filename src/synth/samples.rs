//! Sample frames: one per defined opcode over each network layer, with field
//! values drawn from a seed. Used by the differential tests, the fuzz seed
//! corpus and `gen --scenario opcodes`.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::frame::{ExtHeaders, NetSpec, Payload, RoceFrame, build_pause, build_pfc, build_roce};
use crate::wire::{
    AckKind, AethRepr, AtomicAckEthRepr, AtomicEthRepr, BthRepr, DethRepr, IethRepr, ImmDtRepr,
    Opcode, RdethRepr, RethRepr, XrcethRepr,
};

/// A tiny deterministic generator (SplitMix64), so captures depend only on
/// the seed and not on a crate's version.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 1.0 < p
    }
}

pub const MAC_A: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x0a];
pub const MAC_B: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x0b];

/// The three network layers.
pub fn networks(sport: u16) -> [NetSpec; 3] {
    [
        NetSpec::V2Ipv4 {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 26,
            ecn: 2,
            ttl: 64,
            sport,
        },
        NetSpec::V2Ipv6 {
            src: "fd00::1".parse().unwrap_or(Ipv6Addr::LOCALHOST),
            dst: "fd00::2".parse().unwrap_or(Ipv6Addr::LOCALHOST),
            dscp: 26,
            ecn: 1,
            hop_limit: 64,
            flow_label: 0x12345,
            sport,
        },
        NetSpec::V1 {
            sgid: "fe80::2:ff:fe00:a".parse().unwrap_or(Ipv6Addr::LOCALHOST),
            dgid: "fe80::2:ff:fe00:b".parse().unwrap_or(Ipv6Addr::LOCALHOST),
            tclass: 0x68,
            hop_limit: 1,
            flow_label: 0,
        },
    ]
}

/// Every opcode with a known layout.
pub fn defined_opcodes() -> Vec<Opcode> {
    (0..=255u8)
        .map(Opcode)
        .filter(|o| o.headers().is_some())
        .collect()
}

/// Random values for every extended header.
pub fn random_ext(rng: &mut Rng) -> ExtHeaders {
    let kinds = [AckKind::Ack, AckKind::RnrNak, AckKind::Nak];
    let kind = kinds[rng.below(3) as usize];
    let value = match kind {
        AckKind::Nak => rng.below(5) as u8,
        _ => rng.below(32) as u8,
    };
    ExtHeaders {
        rdeth: Some(RdethRepr {
            ee_context: rng.next_u32() & 0xff_ffff,
        }),
        deth: Some(DethRepr {
            q_key: rng.next_u32(),
            src_qp: rng.next_u32() & 0xff_ffff,
        }),
        xrceth: Some(XrcethRepr {
            xrc_srq: rng.next_u32() & 0xff_ffff,
        }),
        reth: Some(RethRepr {
            va: rng.next_u64(),
            r_key: rng.next_u32(),
            dma_len: rng.next_u32() >> rng.below(32),
        }),
        atomiceth: Some(AtomicEthRepr {
            va: rng.next_u64(),
            r_key: rng.next_u32(),
            swap_add: rng.next_u64(),
            compare: rng.next_u64(),
        }),
        aeth: Some(AethRepr {
            syndrome: AethRepr::syndrome_for(kind, value),
            msn: rng.next_u32() & 0xff_ffff,
        }),
        atomicacketh: Some(AtomicAckEthRepr {
            orig_rem_dt: rng.next_u64(),
        }),
        immdt: Some(ImmDtRepr {
            value: rng.next_u32(),
        }),
        ieth: Some(IethRepr {
            r_key: rng.next_u32(),
        }),
    }
}

/// One frame per defined opcode per network layer, with random field values.
pub fn every_opcode(seed: u64) -> Vec<Vec<u8>> {
    let mut rng = Rng::new(seed);
    let mut frames = Vec::new();
    for net in networks(0xc000 | (seed as u16 & 0x3fff)) {
        for op in defined_opcodes() {
            let bth = BthRepr {
                opcode: op,
                se: rng.chance(0.5),
                m: rng.chance(0.5),
                padcnt: 0,
                tver: 0,
                p_key: rng.next_u32() as u16,
                fecn: rng.chance(0.3),
                becn: rng.chance(0.3),
                dest_qp: rng.next_u32() & 0xff_ffff,
                ack_req: rng.chance(0.5),
                psn: crate::wire::Psn::new(rng.next_u32()),
            };
            let f = RoceFrame {
                src_mac: MAC_A,
                dst_mac: MAC_B,
                vlan: None,
                net,
                bth,
                ext: random_ext(&mut rng),
                payload: Payload::Pattern(rng.below(200) as usize),
                bad_icrc: false,
            };
            let mut out = Vec::new();
            build_roce(&f, &mut out);
            frames.push(out);
        }
    }
    let mut out = Vec::new();
    build_pfc(MAC_A, 0x08, [0, 0, 0, 0xffff, 0, 0, 0, 0], &mut out);
    frames.push(out);
    let mut out = Vec::new();
    build_pause(MAC_B, 1616, &mut out);
    frames.push(out);
    frames
}

/// TCP, ICMP, ICMPv6, IGMP (a version 2 and a version 3 report) and ARP
/// frames, built by hand: what a mirror carries beside RoCE, for the tests
/// of the registry and the filter fuzzer.
pub fn other_traffic() -> Vec<Vec<u8>> {
    let eth = |ty: u16| {
        let mut f = vec![0x01, 0x00, 0x5e, 0, 0, 0xfb, 2, 0, 0, 0, 0, 1];
        f.extend(ty.to_be_bytes());
        f
    };
    let ipv4 = |proto: u8, payload: &[u8]| {
        let mut f = eth(0x0800);
        let len = u16::try_from(20 + payload.len()).unwrap_or(u16::MAX);
        f.extend([0x45, 0]);
        f.extend(len.to_be_bytes());
        f.extend([0, 1, 0x40, 0, 64, proto, 0, 0, 10, 0, 0, 1, 224, 0, 0, 251]);
        f.extend(payload);
        f
    };
    let tcp = [
        0x9c, 0x40, 0, 22, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0,
    ];
    // A SYN with Linux's options, and a pushed urgent ACK with a SACK
    // block and 3 bytes.
    let syn = [
        0x9c, 0x41, 0, 22, 0, 0, 0x10, 0, 0, 0, 0, 0, 0xa0, 0x02, 0xfa, 0xf0, 0, 0, 0, 0, 2, 4, 5,
        0xb4, 4, 2, 8, 10, 0, 0, 0, 7, 0, 0, 0, 0, 1, 3, 3, 7,
    ];
    let ack = [
        0, 22, 0x9c, 0x41, 0, 0, 0x20, 0, 0, 0, 0x10, 1, 0x80, 0x38, 1, 0xf5, 0, 0, 0, 1, 1, 1, 5,
        10, 0, 0, 0x10, 5, 0, 0, 0x10, 9, b'h', b'i', b'!',
    ];
    let icmp = [8, 0, 0, 0, 0, 1, 0, 1];
    let igmp2 = [0x16, 0, 0x09, 0x04, 224, 0, 0, 251];
    let igmp3 = [0x22, 0, 0, 0, 0, 0, 0, 1, 4, 0, 0, 0, 224, 1, 1, 50];
    let mut icmp6 = eth(0x86dd);
    icmp6.extend([0x60, 0, 0, 0, 0, 8, 58, 64]);
    icmp6.extend([0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    icmp6.extend([0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    icmp6.extend([128, 0, 0, 0, 0, 1, 0, 1]);
    let mut arp = eth(0x0806);
    arp.extend([0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 1, 10, 0, 0, 1]);
    arp.extend([0, 0, 0, 0, 0, 0, 10, 0, 0, 2]);
    vec![
        ipv4(6, &tcp),
        ipv4(6, &syn),
        ipv4(6, &ack),
        ipv4(1, &icmp),
        ipv4(2, &igmp2),
        ipv4(2, &igmp3),
        icmp6,
        arp,
    ]
}

/// One TCP segment of a test conversation.
#[derive(Debug, Clone, Copy)]
pub struct Segment<'a> {
    /// Source and destination: (IPv4 address's last byte, port).
    pub from: (u8, u16),
    pub to: (u8, u16),
    pub seq: u32,
    pub ack: u32,
    /// The 12 bits of flags.
    pub flags: u16,
    pub window: u16,
    pub urgent: u16,
    pub options: &'a [u8],
    pub payload: &'a [u8],
}

impl<'a> Segment<'a> {
    /// A segment without options or urgent data, its window 502.
    pub fn new(
        from: (u8, u16),
        to: (u8, u16),
        (seq, ack): (u32, u32),
        flags: u16,
        payload: &'a [u8],
    ) -> Segment<'a> {
        Segment {
            from,
            to,
            seq,
            ack,
            flags,
            window: 502,
            urgent: 0,
            options: &[],
            payload,
        }
    }
}

/// `seg` over IPv4 (10.0.0.x) and Ethernet, its options padded with
/// end-of-list bytes to a whole word and the checksum left 0.
pub fn tcp_frame(seg: &Segment<'_>) -> Vec<u8> {
    let mut options = seg.options.to_vec();
    while !options.len().is_multiple_of(4) {
        options.push(0);
    }
    let hlen = 20 + options.len();
    let mut tcp = Vec::with_capacity(hlen + seg.payload.len());
    tcp.extend(seg.from.1.to_be_bytes());
    tcp.extend(seg.to.1.to_be_bytes());
    tcp.extend(seg.seq.to_be_bytes());
    tcp.extend(seg.ack.to_be_bytes());
    let offset_flags = (u16::try_from(hlen / 4).unwrap_or(15) << 12) | (seg.flags & 0x0fff);
    tcp.extend(offset_flags.to_be_bytes());
    tcp.extend(seg.window.to_be_bytes());
    tcp.extend([0, 0]);
    tcp.extend(seg.urgent.to_be_bytes());
    tcp.extend(&options);
    tcp.extend(seg.payload);
    let mut f = Vec::with_capacity(34 + tcp.len());
    f.extend(MAC_B);
    f.extend(MAC_A);
    f.extend(0x0800u16.to_be_bytes());
    let total = u16::try_from(20 + tcp.len()).unwrap_or(u16::MAX);
    f.extend([0x45, 0]);
    f.extend(total.to_be_bytes());
    f.extend([
        0, 1, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, seg.from.0, 10, 0, 0, seg.to.0,
    ]);
    f.extend(tcp);
    f
}

/// TCP conversations with what tshark's TCP summary line and fields
/// depend on: a handshake whose both sides scale their windows, one whose
/// SYN/ACK does not, one whose SYN is missed, one seen from its middle, the
/// same ports used again, and flags, urgent data, SACK blocks, resets and
/// closes. Frames in order; a conversation's frames may interleave.
pub fn tcp_conversations() -> Vec<Vec<u8>> {
    use crate::wire::tcp::{ACK, FIN, PSH, RST, SYN, URG};
    let syn_opts: &[u8] = &[
        2, 4, 5, 0xb4, 4, 2, 8, 10, 0, 0, 0, 7, 0, 0, 0, 0, 1, 3, 3, 7,
    ];
    let synack_opts: &[u8] = &[2, 4, 5, 0xb4, 1, 1, 4, 2, 1, 3, 3, 2];
    let ts: &[u8] = &[1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 8];
    let seg = |from, to, seq, ack, flags| Segment::new(from, to, (seq, ack), flags, &[]);
    let (a, b) = ((1, 40000), (2, 22));
    let (c, d) = ((3, 40001), (4, 9000));
    let (e, g) = ((5, 40002), (6, 80));
    let (h, i) = ((7, 40003), (8, 443));
    let segments = vec![
        // Both sides scale: A by 128, B by 4.
        Segment {
            options: syn_opts,
            window: 64240,
            ..seg(a, b, 1000, 0, SYN)
        },
        Segment {
            options: synack_opts,
            window: 65160,
            ..seg(b, a, 5000, 1001, SYN | ACK)
        },
        Segment {
            options: ts,
            ..seg(a, b, 1001, 5001, ACK)
        },
        // The SYN/ACK offers no scaling, so neither side scales.
        Segment {
            options: syn_opts,
            ..seg(c, d, 70, 0, SYN)
        },
        Segment {
            options: &[2, 4, 5, 0xb4],
            ..seg(d, c, 0xffff_fff0, 71, SYN | ACK)
        },
        Segment {
            payload: b"hello",
            ..seg(c, d, 71, 0xffff_fff1, PSH | ACK)
        },
        Segment {
            payload: b"x",
            urgent: 1,
            ..seg(c, d, 76, 0xffff_fff1, URG | PSH | ACK)
        },
        // Bytes of B: a SACK of A, its edges relative to B's numbers.
        Segment {
            payload: &[0; 40],
            ..seg(b, a, 5001, 1001, PSH | ACK)
        },
        Segment {
            options: &[1, 1, 5, 10, 0, 0, 0x13, 0xb1, 0, 0, 0x13, 0xc1],
            ..seg(a, b, 1001, 5001, ACK)
        },
        // Seen from its middle: the first numbers count as 1.
        Segment {
            payload: &[1; 12],
            ..seg(e, g, 800_000, 300_000, PSH | ACK)
        },
        seg(g, e, 300_000, 800_012, ACK),
        // Every flag, and a reset without ACK.
        seg(e, g, 800_012, 300_000, 0x0fff),
        seg(g, e, 300_000, 0, RST),
        seg(e, g, 800_012, 300_000, 0),
        // A SYN missed: the SYN/ACK's scale stands for its side only.
        Segment {
            options: &[1, 3, 3, 5],
            ..seg(i, h, 9_000, 1_234, SYN | ACK)
        },
        seg(h, i, 1_234, 9_001, ACK),
        seg(i, h, 9_001, 1_234, ACK),
        // Closes, and the same ports again with a new first number.
        seg(a, b, 1001, 5041, FIN | ACK),
        seg(b, a, 5041, 1002, FIN | ACK),
        seg(a, b, 1002, 5042, ACK),
        Segment {
            options: syn_opts,
            ..seg(a, b, 777_777, 0, SYN)
        },
        Segment {
            options: &[2, 4, 5, 0xb4, 1, 3, 3, 0x14],
            ..seg(b, a, 123, 777_778, SYN | ACK)
        },
        seg(a, b, 777_778, 124, ACK),
    ];
    segments.iter().map(tcp_frame).collect()
}

/// HTTP over TCP as tshark reads it: on HTTP's port, a request whole in
/// one segment, a response whose body (by `Content-Length`, in JSON) goes
/// on over three segments with one of them sent again, a POST with its
/// body, a 304 that says a length and has no body, chunked responses
/// (over three segments; the last chunk over two, and cut inside its
/// last line end; a chunk's size cut before a 0), bodies of plain text and of octets, bytes that
/// start no message, and binary bytes (HTTP's continuation after a
/// request, TCP's alone where no request was seen); on ports no protocol has, an HTTP/1.1 request and
/// an XML response, and an HTTP/1.0 request, that its heuristic takes,
/// and an HTTP/2 request line that it does not (tshark's `data`).
pub fn http_conversations() -> Vec<Vec<u8>> {
    use crate::wire::tcp::{ACK, PSH, SYN};
    let seg =
        |from, to, seq, ack, flags, payload| Segment::new(from, to, (seq, ack), flags, payload);
    let (c, s) = ((11, 50000), (12, 80));
    let get: &[u8] =
        b"GET /index.json HTTP/1.1\r\nHost: example.test\r\nUser-Agent: roce-dissect-test\r\n\r\n";
    let head: &[u8] = b"HTTP/1.1 200 OK\r\nServer: test/1\r\nContent-Type: application/json\r\nContent-Length: 30\r\n\r\n{\"a\": 1, ";
    let (b1, b2): (&[u8], &[u8]) = (b"\"b\": 2, \"c\"", b": [3, 4]}\n");
    let post: &[u8] = b"POST /up HTTP/1.1\r\nHost: example.test\r\nContent-Length: 5\r\n\r\nhello";
    let not_modified: &[u8] = b"HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n";
    let chunked: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n";
    let last: &[u8] = b"0\r\n\r\n";
    let text: &[u8] =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nabc";
    let octets: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 2\r\n\r\n\x00\x01";
    let other: &[u8] =
        b"HTTP/1.1 200 OK\r\nContent-Type: application/x-roce-test\r\nContent-Length: 2\r\n\r\nab";
    let stray: &[u8] = b"stray bytes";
    let (x, y) = ((13, 46000), (14, 40541));
    let get2: &[u8] = b"GET /desc.xml HTTP/1.1\r\nHost: 10.0.0.14:40541\r\n\r\n";
    let xml: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/xml; charset=\"utf-8\"\r\nContent-Length: 12\r\n\r\n<root></root>";
    let (u, v) = ((15, 46001), (16, 40542));
    let old: &[u8] = b"GET / HTTP/1.0\r\n\r\n";
    let (w, z) = ((17, 46002), (18, 40543));
    let two: &[u8] = b"GET / HTTP/2.0\r\n\r\n";
    let mut frames = vec![
        seg(c, s, 1000, 0, SYN, &[][..]),
        seg(s, c, 5000, 1001, SYN | ACK, &[]),
        seg(c, s, 1001, 5001, ACK, &[]),
    ];
    // (From the client, payload, sent again.)
    let plan: [(bool, &[u8], bool); 26] = [
        (true, get, false),
        (false, head, false),
        (false, b1, false),
        (false, b1, true),
        (false, b2, false),
        (true, post, false),
        (false, not_modified, false),
        (false, chunked, false),
        (false, b"3\r\nabc\r\n", false),
        (false, last, false),
        (false, text, false),
        (false, octets, false),
        (false, other, false),
        // A last chunk over two segments; cut between the \r and \n of
        // its last line end (tshark's malformed message, then a
        // continuation); a chunk of 16 bytes cut before the 0 of its
        // size, then a segment like a last chunk that is not.
        (false, chunked, false),
        (false, b"3\r\nabc\r\n0\r\n", false),
        (false, b"\r\n", false),
        (false, chunked, false),
        (false, b"0\r\n\r", false),
        (false, b"\n", false),
        (false, chunked, false),
        (false, b"1", false),
        (false, last, false),
        (false, b"0123456789abcd\r\n", false),
        (false, last, false),
        (false, stray, false),
        (true, b"\x01\x02binary", false),
    ];
    let (mut next_c, mut next_s) = (1001u32, 5001u32);
    for (from_client, payload, again) in plan {
        let len = payload.len() as u32;
        let (from, to, next, ack) = if from_client {
            (c, s, &mut next_c, next_s)
        } else {
            (s, c, &mut next_s, next_c)
        };
        let seq = if again { next.wrapping_sub(len) } else { *next };
        *next = seq.wrapping_add(len);
        frames.push(seg(from, to, seq, ack, PSH | ACK, payload));
    }
    frames.push(seg(x, y, 1, 1, PSH | ACK, get2));
    frames.push(seg(y, x, 1, 1 + get2.len() as u32, PSH | ACK, xml));
    frames.push(seg(u, v, 1, 1, PSH | ACK, old));
    frames.push(seg(w, z, 1, 1, PSH | ACK, two));
    // Binary bytes on HTTP's port with no request before them.
    let (m, n) = ((19, 46003), (20, 80));
    frames.push(seg(n, m, 1, 1, PSH | ACK, b"\r\n\x01\x02"));
    frames.iter().map(tcp_frame).collect()
}

/// TCP segments that tshark's analysis notes, in a capture whose frames
/// are a microsecond apart (as the tests write them): a fast
/// retransmission after two duplicate ACKs, a spurious one, a segment after
/// a gap and the one out of order that fills it, a retransmission later
/// than the handshake's round trip, a zero window with its probe, the
/// probe's ACK and the window update, a keep-alive and its ACK, an ACK of
/// bytes never seen, and a segment that fills the receiver's window.
pub fn tcp_analysis_cases() -> Vec<Vec<u8>> {
    use crate::wire::tcp::{ACK, PSH, SYN};
    let data = [5u8; 100];
    let seg = |from: (u8, u16),
               to: (u8, u16),
               seq: u32,
               ack: u32,
               flags: u16,
               window: u16,
               len: usize| Segment {
        from,
        to,
        seq,
        ack,
        flags,
        window,
        urgent: 0,
        options: &[],
        payload: data.get(..len).unwrap_or_default(),
    };
    let (p, q) = ((11, 50000), (12, 5201));
    let (r, s) = ((13, 50001), (14, 5201));
    let ws0: &[u8] = &[1, 3, 3, 0];
    // p's first byte is 1001, q's 7001.
    let segments = vec![
        seg(p, q, 1000, 0, SYN, 500, 0),
        seg(q, p, 7000, 1001, SYN | ACK, 500, 0),
        seg(p, q, 1001, 7001, ACK, 500, 0),
        seg(p, q, 1001, 7001, PSH | ACK, 500, 10),
        seg(p, q, 1011, 7001, PSH | ACK, 500, 10),
        seg(q, p, 7001, 1011, ACK, 500, 0),
        seg(q, p, 7001, 1011, ACK, 500, 0),
        seg(q, p, 7001, 1011, ACK, 500, 0),
        // Asked for twice: a fast retransmission; then bytes already
        // acknowledged: a spurious one.
        seg(p, q, 1011, 7001, PSH | ACK, 500, 10),
        seg(p, q, 1001, 7001, PSH | ACK, 500, 10),
        // 1031 before 1021: a gap, then the segment out of order.
        seg(p, q, 1031, 7001, PSH | ACK, 500, 10),
        seg(p, q, 1021, 7001, PSH | ACK, 500, 10),
        // Another conversation's handshake between: r and s scale by 1.
        Segment {
            options: ws0,
            ..seg(r, s, 3000, 0, SYN, 100, 0)
        },
        Segment {
            options: ws0,
            ..seg(s, r, 9000, 3001, SYN | ACK, 100, 0)
        },
        // Long after the segment it repeats: a retransmission.
        seg(p, q, 1021, 7001, PSH | ACK, 500, 10),
        seg(q, p, 7001, 1041, ACK, 0, 0),
        seg(p, q, 1041, 7001, ACK, 500, 1),
        seg(q, p, 7001, 1041, ACK, 0, 0),
        seg(q, p, 7001, 1041, ACK, 800, 0),
        seg(p, q, 1040, 7001, ACK, 500, 0),
        seg(q, p, 7001, 1041, ACK, 800, 0),
        seg(q, p, 7001, 1200, ACK, 800, 0),
        // r fills s's window of 100 bytes.
        seg(r, s, 3001, 9001, ACK, 100, 0),
        seg(r, s, 3001, 9001, PSH | ACK, 100, 100),
    ];
    segments.iter().map(tcp_frame).collect()
}

/// A UDP datagram from `sport` to `dport` over IPv4 (10.0.0.1 to
/// 10.0.0.2) and Ethernet, checksums left 0.
pub fn udp_frame(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
    let udp_len = u16::try_from(8 + payload.len()).unwrap_or(u16::MAX);
    let ip_len = udp_len.saturating_add(20);
    f.extend([0x45, 0]);
    f.extend(ip_len.to_be_bytes());
    f.extend([0, 1, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
    f.extend(sport.to_be_bytes());
    f.extend(dport.to_be_bytes());
    f.extend(udp_len.to_be_bytes());
    f.extend([0, 0]);
    f.extend(payload);
    f
}

/// A NetBIOS name (15 characters padded with spaces, then its type) in
/// first-level encoding, as a one-label DNS name with an optional scope.
fn netbios_name(name: &[u8], kind: u8, scope: &[&[u8]]) -> Vec<u8> {
    let mut raw = [b' '; 16];
    for (d, s) in raw.iter_mut().zip(name.iter().take(15)) {
        *d = *s;
    }
    raw[15] = kind;
    let mut out = vec![32];
    for c in raw {
        out.extend([b'A' + (c >> 4), b'A' + (c & 15)]);
    }
    for label in scope {
        out.push(u8::try_from(label.len()).unwrap_or(63));
        out.extend(*label);
    }
    out.push(0);
    out
}

/// A DNS-layout message: the header, then the records as given.
fn name_service_message(id: u16, flags: u16, counts: [u16; 4], records: &[Vec<u8>]) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend(id.to_be_bytes());
    m.extend(flags.to_be_bytes());
    for c in counts {
        m.extend(c.to_be_bytes());
    }
    for r in records {
        m.extend(r);
    }
    m
}

/// A question for `name` of type `kind` (class IN).
fn question(name: &[u8], kind: u16) -> Vec<u8> {
    let mut q = name.to_vec();
    q.extend(kind.to_be_bytes());
    q.extend([0, 1]);
    q
}

/// A resource record for `name` (class IN, a TTL of 300 000 s).
fn record(name: &[u8], kind: u16, data: &[u8]) -> Vec<u8> {
    let mut r = question(name, kind);
    r.extend(300_000u32.to_be_bytes());
    r.extend(u16::try_from(data.len()).unwrap_or(u16::MAX).to_be_bytes());
    r.extend(data);
    r
}

/// A BOOTP message (op 1 request, 2 reply) with transaction ID `xid`,
/// the client 02:00:5e:10:00:01, and `options` after the DHCP magic
/// cookie (none: plain BOOTP without its vendor area) and an end option.
fn bootp(op: u8, xid: u32, options: Option<&[u8]>) -> Vec<u8> {
    let mut m = vec![op, 1, 6, 0];
    m.extend(xid.to_be_bytes());
    m.extend([0, 0, 0x80, 0]);
    m.extend([0; 16]);
    m.extend([2, 0, 0x5e, 0x10, 0, 1]);
    m.resize(236, 0);
    if let Some(o) = options {
        m.extend([99, 130, 83, 99]);
        m.extend(o);
        m.push(255);
    }
    m
}

/// What a fabric's management network broadcasts beside RoCE and DNS:
/// NetBIOS name queries, registrations and their answers (port 137),
/// BOOTP and every DHCP message type (ports 67 and 68), and SSDP's
/// discovery requests, notifications and answers (HTTP over UDP port
/// 1900); with the odd ones tshark has words for (unknown operations and
/// types, illegal names, messages cut short).
pub fn name_and_discovery() -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    let host = netbios_name(b"INDEL1RES01", 0x00, &[]);
    let server = netbios_name(b"HOST", 0x20, &[]);
    let nb = |flags: u16, ip: [u8; 4]| {
        let mut d = flags.to_be_bytes().to_vec();
        d.extend(ip);
        d
    };
    let nbns = [
        name_service_message(0x1234, 0x0110, [1, 0, 0, 0], &[question(&host, 32)]),
        name_service_message(
            0x1234,
            0x8500,
            [0, 1, 0, 0],
            &[record(&host, 32, &nb(0x6000, [10, 0, 0, 5]))],
        ),
        name_service_message(0x1235, 0x8503, [0, 1, 0, 0], &[record(&host, 10, &[])]),
        name_service_message(
            2,
            0x2910,
            [1, 0, 0, 1],
            &[
                question(&netbios_name(b"WORKGROUP", 0x1e, &[]), 32),
                record(
                    &netbios_name(b"WORKGROUP", 0x1e, &[]),
                    32,
                    &nb(0x8000, [10, 0, 0, 7]),
                ),
            ],
        ),
        name_service_message(
            3,
            0x3010,
            [1, 0, 0, 1],
            &[
                question(&server, 32),
                record(&server, 32, &nb(0, [10, 0, 0, 8])),
            ],
        ),
        // A wait-for-acknowledgement response: flags in its data.
        name_service_message(
            4,
            0xbc00,
            [0, 1, 0, 0],
            &[record(&server, 32, &[0x29, 0x10])],
        ),
        name_service_message(
            5,
            0x0000,
            [1, 0, 0, 0],
            &[question(&netbios_name(b"*", 0, &[]), 33)],
        ),
        name_service_message(
            5,
            0x8400,
            [0, 1, 0, 0],
            &[record(&netbios_name(b"*", 0, &[]), 33, &[0; 20])],
        ),
        name_service_message(6, 0x4010, [1, 0, 0, 0], &[question(&server, 32)]),
        name_service_message(7, 0x7810, [1, 0, 0, 0], &[question(&server, 32)]),
        name_service_message(8, 0x5810, [1, 0, 0, 0], &[question(&server, 32)]),
        name_service_message(
            9,
            0x0110,
            [1, 0, 0, 0],
            &[question(
                &netbios_name(b"HOST", 0x20, &[b"corp", b"example"]),
                32,
            )],
        ),
        name_service_message(10, 0x0110, [1, 0, 0, 0], &[question(b"\x04ABCD\x00", 32)]),
        name_service_message(
            11,
            0x0110,
            [1, 0, 0, 0],
            &[question(&netbios_name(b"h\x01st", 3, &[]), 32)],
        ),
        name_service_message(12, 0x0110, [1, 0, 0, 0], &[question(&host, 12)]),
        name_service_message(13, 0x8501, [0, 1, 0, 0], &[record(&host, 32, &[])]),
        name_service_message(14, 0x8506, [0, 1, 0, 0], &[record(&host, 12, &[1, 2])]),
    ];
    for (i, m) in nbns.iter().enumerate() {
        frames.push(udp_frame(137, 137, m));
        if i == 0 {
            // Cut inside the question's name, and shorter than a header.
            frames.push(udp_frame(137, 137, &m[..30]));
            frames.push(udp_frame(137, 137, &m[..3]));
        }
    }
    for t in 0..=19u8 {
        let op = if matches!(t, 1 | 3 | 4 | 7 | 8) { 1 } else { 2 };
        let (sport, dport) = if op == 1 { (68, 67) } else { (67, 68) };
        let m = bootp(op, 0xd18f_1a96 + u32::from(t), Some(&[53, 1, t]));
        frames.push(udp_frame(sport, dport, &m));
    }
    for (op, options) in [
        (1, None),
        (2, None),
        (1, Some(&[12, 3, b'a', b'b', b'c'][..])),
        (1, Some(&[0, 0, 53, 1, 3][..])),
        (1, Some(&[53, 1, 1, 53, 1, 3][..])),
        (1, Some(&[12, 200, b'x'][..])),
        (1, Some(&[53, 0][..])),
        (3, Some(&[53, 1, 3][..])),
    ] {
        frames.push(udp_frame(68, 67, &bootp(op, 0x11, options)));
    }
    let request = bootp(1, 0x12, Some(&[53, 1, 1]));
    for cut in [2, 30, 100] {
        frames.push(udp_frame(68, 67, &request[..cut]));
    }
    for payload in [
        &b"M-SEARCH * HTTP/1.1\r\nHOST: 239.255.255.250:1900\r\nMAN: \"ssdp:discover\"\r\nMX: 1\r\nST: ssdp:all\r\n\r\n"[..],
        b"NOTIFY * HTTP/1.1\r\nHOST: 239.255.255.250:1900\r\nNT: upnp:rootdevice\r\nNTS: ssdp:alive\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nCACHE-CONTROL: max-age=1800\r\nST: upnp:rootdevice\r\n\r\n",
        b"M-SEARCH * HTTP/1.1\nHOST: x\n\n",
        b"HTTP/1.1 404 Not Found\r\n\r\n",
        b"M-SEARCH  *  HTTP/1.1\r\n\r\n",
        b"SUBSCRIBE /event HTTP/1.1\r\n\r\n",
        b"HTTP/1.1 \r\n\r\n",
        b"HTTP/1.1 abc OK\r\n\r\n",
        b"GET /\xc3\xa9\x01 HTTP/1.1\r\n\r\n",
    ] {
        frames.push(udp_frame(50000, 1900, payload));
    }
    // Not HTTP, in a conversation that had none: UDP's.
    for payload in [&b"FOO * HTTP/1.1\r\n\r\n"[..], b"not http\r\n"] {
        frames.push(udp_frame(50001, 1900, payload));
    }
    frames.push(udp_frame(
        1900,
        50000,
        b"HTTP/1.1 200 OK\r\nST: ssdp:all\r\n\r\n",
    ));
    // Ports: the lower one's protocol first; an empty datagram is UDP's.
    frames.push(udp_frame(137, 53, &[0; 12]));
    frames.push(udp_frame(5353, 137, &[0; 12]));
    frames.push(udp_frame(67, 1900, b"x\r\n"));
    frames.push(udp_frame(1900, 5353, b"x\r\n"));
    frames.push(udp_frame(5000, 137, b""));
    frames
}
