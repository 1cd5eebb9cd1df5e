//! The `-V` header tree (Wireshark-like field names, each node with the
//! bytes it covers) and the `-x` hex dump.

use std::fmt::Write as _;
use std::ops::Range;

use super::json::MacText;
use super::names;
use crate::analysis::tcp::{NOTE_FIELDS, Notes, TcpSeen};
use crate::dissect::{Ip6Ext, OtherL4, Packet, RoceVersion};
use crate::units::human_ns;
use crate::wire::aeth::{AckKind, nak, rnr_timer_us};
use crate::wire::mad::CmMessage;
use crate::wire::pause::{PauseRepr, quanta_to_ns};
use crate::wire::tcp::{Tcp, TcpOption};
use crate::wire::{bth, grh};

mod infiniband;
mod network;
mod nvme;
mod tcp;
mod udp_apps;

use infiniband::{grh_node, lrh_node, roce_nodes, vcrc_line};
use network::{
    arp_node, erf_node, icmp_node, igmp_node, ipv4_node, ipv6_node, link_nodes, pause_node,
    udp_node,
};
pub use nvme::{nvme_tree, write_nvme_tree};
use tcp::tcp_nodes;

/// One line of the header tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeNode {
    pub depth: u8,
    pub text: String,
    /// Bytes of the frame this node describes.
    pub bytes: Option<Range<usize>>,
}

/// Where a tree goes: nodes kept (the TUI, tests), or lines written
/// straight to the output (`packets -V`: no string per node).
enum Sink<'o> {
    Nodes(Vec<TreeNode>),
    Lines(&'o mut Vec<u8>),
}

struct Tree<'o> {
    sink: Sink<'o>,
}

/// A node's text: formatted where the tree goes, once.
trait NodeText {
    fn into_string(self) -> String;
    fn write_to(self, out: &mut Vec<u8>);
}

impl NodeText for String {
    fn into_string(self) -> String {
        self
    }
    fn write_to(self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.as_bytes());
    }
}

impl NodeText for &str {
    fn into_string(self) -> String {
        self.to_string()
    }
    fn write_to(self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.as_bytes());
    }
}

impl NodeText for std::fmt::Arguments<'_> {
    fn into_string(self) -> String {
        std::fmt::format(self)
    }
    fn write_to(self, out: &mut Vec<u8>) {
        match self.as_str() {
            Some(s) => out.extend_from_slice(s.as_bytes()),
            // Writing to a vector cannot fail.
            None => {
                let _ = std::fmt::Write::write_fmt(&mut Bytes(out), self);
            }
        }
    }
}

/// A byte vector as a `fmt::Write`, without `io::Write`'s adapter (which
/// keeps an error a vector never gives).
struct Bytes<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Bytes<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

impl<'o> Tree<'o> {
    fn nodes() -> Self {
        Tree {
            sink: Sink::Nodes(Vec::new()),
        }
    }
    fn lines(out: &'o mut Vec<u8>) -> Self {
        Tree {
            sink: Sink::Lines(out),
        }
    }
    fn into_nodes(self) -> Vec<TreeNode> {
        match self.sink {
            Sink::Nodes(n) => n,
            Sink::Lines(_) => Vec::new(),
        }
    }
    fn node(&mut self, depth: u8, bytes: Option<Range<usize>>, text: impl NodeText) {
        match &mut self.sink {
            Sink::Nodes(n) => n.push(TreeNode {
                depth,
                text: text.into_string(),
                bytes,
            }),
            Sink::Lines(out) => {
                for _ in 0..depth {
                    out.extend_from_slice(b"    ");
                }
                text.write_to(out);
                out.push(b'\n');
            }
        }
    }
    fn add(&mut self, depth: u8, at: usize, len: usize, text: impl NodeText) {
        self.node(depth, Some(at..at.saturating_add(len)), text);
    }
    fn text(&mut self, depth: u8, text: impl NodeText) {
        self.node(depth, None, text);
    }
}

/// The big-endian 16-bit word at `at` in the frame, if captured.
fn be16(p: &Packet<'_>, at: usize) -> Option<u16> {
    let b = p.data.get(at..at.checked_add(2)?)?;
    Some(u16::from_be_bytes([*b.first()?, *b.get(1)?]))
}

fn be32(p: &Packet<'_>, at: usize) -> Option<u32> {
    let b = p.data.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes(b.try_into().ok()?))
}

fn yes(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

pub fn header_tree(p: &Packet<'_>, link_bps: u64, tcp: Option<&TcpSeen>) -> Vec<TreeNode> {
    let mut t = Tree::nodes();
    header_nodes(&mut t, p, link_bps, tcp);
    t.into_nodes()
}

/// [`header_tree`] written as `packets -V` prints it (four spaces a
/// level, a line a node), straight to `out`.
pub fn write_header_tree(p: &Packet<'_>, link_bps: u64, tcp: Option<&TcpSeen>, out: &mut Vec<u8>) {
    header_nodes(&mut Tree::lines(out), p, link_bps, tcp);
}

fn header_nodes(t: &mut Tree<'_>, p: &Packet<'_>, link_bps: u64, tcp: Option<&TcpSeen>) {
    frame_node(t, p);
    let base = usize::from(p.frame_start);
    if let Some(e) = &p.erf {
        erf_node(t, e, base);
    }
    let l2_end = link_nodes(t, p, base);
    if let Some(ip) = &p.ip {
        let at = usize::from(ip.offset);
        if ip.version == 4 {
            ipv4_node(t, p, ip, at);
        } else {
            ipv6_node(t, p, ip, at);
        }
    }
    if let Some(a) = &p.arp {
        arp_node(t, a, l2_end);
    }
    match p.other_l4 {
        Some(OtherL4::Icmp { kind, code }) => {
            let meaning = names::icmp(kind, code);
            icmp_node(t, "Internet Control Message Protocol", &meaning, kind, code);
        }
        Some(OtherL4::Icmpv6 { kind, code, .. }) => {
            let meaning = names::icmpv6(kind, code);
            icmp_node(
                t,
                "Internet Control Message Protocol v6",
                &meaning,
                kind,
                code,
            );
        }
        Some(OtherL4::Igmp { offset, len }) => igmp_node(t, p, offset, len),
        Some(OtherL4::Tcp { offset, .. }) => tcp_nodes(t, p, offset, tcp),
        _ => {}
    }
    if let Some(u) = &p.udp {
        udp_node(t, p, u);
    }
    if let (Some(l), Some(at)) = (&p.lrh, p.offsets.lrh) {
        lrh_node(t, l, usize::from(at));
    }
    if let Some(g) = &p.grh {
        grh_node(t, p, g);
    }
    if let Some(b) = &p.bth {
        roce_nodes(t, p, b);
    } else if p.lrh.is_some() {
        vcrc_line(t, p, 0);
    }
    if let Some(pause) = &p.pause {
        pause_node(t, pause, l2_end, link_bps);
    }
    if let Some(e) = &p.error {
        t.text(0, format_args!("[Malformed Packet: {e}]"));
    }
}

/// The frame: its lengths and times.
fn frame_node(t: &mut Tree<'_>, p: &Packet<'_>) {
    t.add(
        0,
        0,
        p.caplen as usize,
        format_args!(
            "Frame {}: {} bytes on wire, {} bytes captured",
            p.number, p.len, p.caplen
        ),
    );
    let mut arrival = String::new();
    crate::fields::write_local_time(i128::from(p.ts_ns), &mut arrival);
    t.text(1, format_args!("Arrival Time: {arrival}"));
    t.text(
        1,
        format_args!(
            "Epoch Time: {}.{:09} seconds",
            p.ts_ns / 1_000_000_000,
            p.ts_ns % 1_000_000_000
        ),
    );
}

/// Renders kept nodes as indented text, as [`write_header_tree`] writes
/// them (the fuzz target and tests hold the two to the same lines).
pub fn render_tree(nodes: &[TreeNode]) -> String {
    let mut s = String::new();
    for n in nodes {
        for _ in 0..n.depth {
            s.push_str("    ");
        }
        s.push_str(&n.text);
        s.push('\n');
    }
    s
}

/// tshark-style hex dump: offset, 16 bytes in hex, ASCII.
pub fn hex_dump(data: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let hex = |s: &mut String, v: usize| {
        s.push(char::from(HEX[v & 0xf]));
    };
    // 16 bytes a line: offset, 16 hex pairs in two groups, the ASCII.
    let mut s = String::with_capacity(data.len().div_ceil(16) * 76);
    for (i, chunk) in data.chunks(16).enumerate() {
        // `{:04x}`: four digits, more when the offset needs them.
        let offset = i * 16;
        let digits = ((usize::BITS - offset.leading_zeros()).div_ceil(4) as usize).max(4);
        for d in (0..digits).rev() {
            hex(&mut s, offset >> (4 * d));
        }
        s.push_str("  ");
        for j in 0..16 {
            match chunk.get(j) {
                Some(&b) => {
                    hex(&mut s, usize::from(b >> 4));
                    hex(&mut s, usize::from(b));
                    s.push(' ');
                }
                None => s.push_str("   "),
            }
            if j == 7 {
                s.push(' ');
            }
        }
        s.push_str("  ");
        for &b in chunk {
            s.push(if b.is_ascii_graphic() || b == b' ' {
                char::from(b)
            } else {
                '.'
            });
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod hex_dump_tests {
    use proptest::prelude::*;
    use std::fmt::Write as _;

    /// The dump as `core::fmt` writes it.
    fn reference(data: &[u8]) -> String {
        let mut s = String::new();
        for (i, chunk) in data.chunks(16).enumerate() {
            let _ = write!(s, "{:04x}  ", i * 16);
            for j in 0..16 {
                match chunk.get(j) {
                    Some(b) => {
                        let _ = write!(s, "{b:02x} ");
                    }
                    None => s.push_str("   "),
                }
                if j == 7 {
                    s.push(' ');
                }
            }
            s.push_str("  ");
            for b in chunk {
                s.push(if b.is_ascii_graphic() || *b == b' ' {
                    *b as char
                } else {
                    '.'
                });
            }
            s.push('\n');
        }
        s
    }

    proptest! {
        #[test]
        fn as_format_writes_it(data in proptest::collection::vec(any::<u8>(), 0..300)) {
            prop_assert_eq!(super::hex_dump(&data), reference(&data));
        }
    }

    #[test]
    fn offsets_past_four_digits() {
        let data = vec![0x41u8; 70_000];
        assert_eq!(super::hex_dump(&data), reference(&data));
    }
}
