//! Hand-written filters, each against a predicate written in Rust over
//! the decoded packet, on every frame of the sample captures and of one
//! frame per opcode over every network layer; and parse errors.

use super::*;
use crate::capture::{CaptureFile, Frame, LinkType};
use crate::dissect::{DissectOptions, Packet, dissect};
use crate::wire::PauseRepr;

fn frames() -> Vec<(u64, Vec<u8>)> {
    let mut out = Vec::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    for name in ["mixed.pcapng", "pfc-storm.pcapng", "loss.pcap"] {
        let file = CaptureFile::from_bytes(std::fs::read(dir.join(name)).unwrap());
        for f in file.frames().unwrap() {
            let f = f.unwrap();
            out.push((f.ts_ns, f.data.to_vec()));
        }
    }
    for seed in 1..4 {
        for (i, f) in crate::synth::samples::every_opcode(seed)
            .into_iter()
            .enumerate()
        {
            out.push((1_000 + i as u64, f));
        }
    }
    for (i, f) in crate::synth::samples::tcp_conversations()
        .into_iter()
        .enumerate()
    {
        out.push((2_000 + i as u64, f));
    }
    out
}

fn with_packets(each: &mut dyn FnMut(&Packet<'_>)) {
    for (i, (ts, data)) in frames().iter().enumerate() {
        let f = Frame {
            number: i as u64 + 1,
            ts_ns: *ts,
            ..Frame::whole(data, LinkType::Ethernet)
        };
        each(&dissect(&f, &DissectOptions::default()));
    }
}

type Pred = fn(&Packet<'_>) -> bool;

fn bth(p: &Packet<'_>) -> Option<crate::wire::BthRepr> {
    p.bth
}

fn v4(p: &Packet<'_>) -> Option<(std::net::Ipv4Addr, std::net::Ipv4Addr)> {
    match p.ip.map(|i| (i.src, i.dst)) {
        Some((std::net::IpAddr::V4(a), std::net::IpAddr::V4(b))) => Some((a, b)),
        _ => None,
    }
}

/// (filter, what it must select, whether some frames must pass and
/// some fail).
const CASES: &[(&str, Pred, bool)] = &[
    // presence
    ("infiniband", |p| p.roce.is_some(), true),
    ("bth", |p| p.bth.is_some(), true),
    ("infiniband.reth", |p| p.reth.is_some(), true),
    ("aeth", |p| p.aeth.is_some(), true),
    ("macc", |p| p.pause.is_some(), true),
    ("ip", |p| p.ip.is_some_and(|i| i.version == 4), true),
    ("ipv6", |p| p.ip.is_some_and(|i| i.version == 6), true),
    ("vlan", |p| p.vlans[0].is_some(), false),
    ("grh", |p| p.grh.is_some(), true),
    (
        "infiniband.cnp",
        |p| bth(p).is_some_and(|b| b.opcode.0 == 0x81),
        true,
    ),
    // every comparison operator, symbol and word
    (
        "bth.opcode == 4",
        |p| bth(p).is_some_and(|b| b.opcode.0 == 4),
        true,
    ),
    (
        "bth.opcode eq 0x04",
        |p| bth(p).is_some_and(|b| b.opcode.0 == 4),
        true,
    ),
    (
        "bth.opcode any_eq 4",
        |p| bth(p).is_some_and(|b| b.opcode.0 == 4),
        true,
    ),
    (
        "bth.opcode != 4",
        |p| bth(p).is_some_and(|b| b.opcode.0 != 4),
        true,
    ),
    (
        "bth.opcode ne 4",
        |p| bth(p).is_some_and(|b| b.opcode.0 != 4),
        true,
    ),
    (
        "bth.opcode all_ne 4",
        |p| bth(p).is_some_and(|b| b.opcode.0 != 4),
        true,
    ),
    (
        "bth.opcode === 4",
        |p| bth(p).is_some_and(|b| b.opcode.0 == 4),
        true,
    ),
    (
        "bth.opcode !== 4",
        |p| bth(p).is_some_and(|b| b.opcode.0 != 4),
        true,
    ),
    (
        "bth.opcode ~= 4",
        |p| bth(p).is_some_and(|b| b.opcode.0 != 4),
        true,
    ),
    (
        "bth.psn < 1000",
        |p| bth(p).is_some_and(|b| b.psn.get() < 1000),
        true,
    ),
    (
        "bth.psn lt 1000",
        |p| bth(p).is_some_and(|b| b.psn.get() < 1000),
        true,
    ),
    (
        "bth.psn <= 1000",
        |p| bth(p).is_some_and(|b| b.psn.get() <= 1000),
        true,
    ),
    (
        "bth.psn le 1000",
        |p| bth(p).is_some_and(|b| b.psn.get() <= 1000),
        true,
    ),
    (
        "bth.psn > 1000",
        |p| bth(p).is_some_and(|b| b.psn.get() > 1000),
        true,
    ),
    (
        "bth.psn gt 1000",
        |p| bth(p).is_some_and(|b| b.psn.get() > 1000),
        true,
    ),
    (
        "bth.psn >= 1000",
        |p| bth(p).is_some_and(|b| b.psn.get() >= 1000),
        true,
    ),
    (
        "bth.psn ge 1000",
        |p| bth(p).is_some_and(|b| b.psn.get() >= 1000),
        true,
    ),
    (
        "bth.opcode == 0x81",
        |p| bth(p).is_some_and(|b| b.opcode.0 == 0x81),
        true,
    ),
    (
        "bth.opcode == 0201",
        |p| bth(p).is_some_and(|b| b.opcode.0 == 0o201),
        true,
    ),
    (
        "bth.opcode == 0b10000001",
        |p| bth(p).is_some_and(|b| b.opcode.0 == 0x81),
        true,
    ),
    // booleans
    ("bth.se == 1", |p| bth(p).is_some_and(|b| b.se), true),
    ("bth.se == True", |p| bth(p).is_some_and(|b| b.se), true),
    ("bth.se == false", |p| bth(p).is_some_and(|b| !b.se), true),
    ("infiniband.bth.becn", |p| p.bth.is_some(), true),
    ("bth.becn == 1", |p| bth(p).is_some_and(|b| b.becn), true),
    // sets and ranges
    (
        "bth.opcode in {0 1 2}",
        |p| bth(p).is_some_and(|b| b.opcode.0 <= 2),
        true,
    ),
    (
        "bth.opcode in {0, 1, 2}",
        |p| bth(p).is_some_and(|b| b.opcode.0 <= 2),
        true,
    ),
    (
        "bth.opcode in {0..5, 0x81}",
        |p| bth(p).is_some_and(|b| b.opcode.0 <= 5 || b.opcode.0 == 0x81),
        true,
    ),
    (
        "udp.dstport in {4791}",
        |p| p.udp.is_some_and(|u| u.dport == 4791),
        true,
    ),
    (
        "not bth.opcode in {0..0x7f}",
        |p| bth(p).is_none_or(|b| b.opcode.0 > 0x7f),
        true,
    ),
    // logic and precedence: not > and > xor > or
    (
        "reth && aeth",
        |p| p.reth.is_some() && p.aeth.is_some(),
        false,
    ),
    (
        "reth and bth.se == 1",
        |p| p.reth.is_some() && bth(p).is_some_and(|b| b.se),
        true,
    ),
    (
        "reth || aeth",
        |p| p.reth.is_some() || p.aeth.is_some(),
        true,
    ),
    (
        "reth or aeth",
        |p| p.reth.is_some() || p.aeth.is_some(),
        true,
    ),
    (
        "reth ^^ bth.se == 1",
        |p| p.reth.is_some() != bth(p).is_some_and(|b| b.se),
        true,
    ),
    (
        "reth xor bth.se == 1",
        |p| p.reth.is_some() != bth(p).is_some_and(|b| b.se),
        true,
    ),
    ("!reth", |p| p.reth.is_none(), true),
    ("not reth", |p| p.reth.is_none(), true),
    ("!!reth", |p| p.reth.is_some(), true),
    (
        "reth or aeth and bth.se == 1",
        |p| p.reth.is_some() || (p.aeth.is_some() && bth(p).is_some_and(|b| b.se)),
        true,
    ),
    (
        "(reth or aeth) and bth.se == 1",
        |p| (p.reth.is_some() || p.aeth.is_some()) && bth(p).is_some_and(|b| b.se),
        true,
    ),
    (
        "not reth and aeth",
        |p| p.reth.is_none() && p.aeth.is_some(),
        true,
    ),
    (
        "not (reth and bth.se == 1)",
        |p| !(p.reth.is_some() && bth(p).is_some_and(|b| b.se)),
        true,
    ),
    (
        "reth or aeth xor bth.se == 1",
        |p| p.reth.is_some() || (p.aeth.is_some() != bth(p).is_some_and(|b| b.se)),
        true,
    ),
    (
        "reth xor aeth and bth.se == 1",
        |p| p.reth.is_some() != (p.aeth.is_some() && bth(p).is_some_and(|b| b.se)),
        true,
    ),
    ("((bth))", |p| p.bth.is_some(), true),
    // addresses
    (
        "ip.src == 10.0.0.1",
        |p| v4(p).is_some_and(|(s, _)| s.octets() == [10, 0, 0, 1]),
        true,
    ),
    (
        "ip.addr == 10.0.0.1",
        |p| v4(p).is_some_and(|(s, d)| s.octets() == [10, 0, 0, 1] || d.octets() == [10, 0, 0, 1]),
        true,
    ),
    (
        "ip.addr != 10.0.0.1",
        |p| v4(p).is_some_and(|(s, d)| s.octets() != [10, 0, 0, 1] && d.octets() != [10, 0, 0, 1]),
        true,
    ),
    (
        "ip.addr ~= 10.0.0.1",
        |p| v4(p).is_some_and(|(s, d)| s.octets() != [10, 0, 0, 1] || d.octets() != [10, 0, 0, 1]),
        true,
    ),
    (
        "ip.dst == 10.0.1.0/24",
        |p| v4(p).is_some_and(|(_, d)| d.octets()[..3] == [10, 0, 1]),
        true,
    ),
    (
        "ip.src > 10.0.0.2",
        |p| {
            v4(p).is_some_and(|(s, _)| {
                u32::from(s) > u32::from(std::net::Ipv4Addr::new(10, 0, 0, 2))
            })
        },
        true,
    ),
    (
        "ipv6.src == fd00::/16",
        |p| {
            p.ip.is_some_and(
                |i| matches!(i.src, std::net::IpAddr::V6(a) if a.segments()[0] == 0xfd00),
            )
        },
        true,
    ),
    (
        "eth.src == 02:00:00:00:01:01",
        |p| p.eth.is_some_and(|e| e.src == [2, 0, 0, 0, 1, 1]),
        true,
    ),
    (
        "eth.src == 02-00-00-00-01-01",
        |p| p.eth.is_some_and(|e| e.src == [2, 0, 0, 0, 1, 1]),
        true,
    ),
    (
        "eth.dst == 01:80:c2:00:00:01",
        |p| p.eth.is_some_and(|e| e.dst == [1, 0x80, 0xc2, 0, 0, 1]),
        true,
    ),
    // slices
    (
        "eth.src[0:3] == 02:00:00",
        |p| p.eth.is_some_and(|e| e.src[..3] == [2, 0, 0]),
        true,
    ),
    (
        "eth.dst[0] == 02",
        |p| p.eth.is_some_and(|e| e.dst[0] == 2),
        true,
    ),
    (
        "eth.src[1-2] == 00:00",
        |p| p.eth.is_some_and(|e| e.src[1..3] == [0, 0]),
        true,
    ),
    (
        "eth.src[-1] == 01",
        |p| p.eth.is_some_and(|e| e.src[5] == 1),
        true,
    ),
    (
        "eth.src[4:] == 01:01",
        |p| p.eth.is_some_and(|e| e.src[4..] == [1, 1]),
        true,
    ),
    (
        "eth.dst[:2] == 01:80",
        |p| p.eth.is_some_and(|e| e.dst[..2] == [1, 0x80]),
        true,
    ),
    (
        "ip.src[3] == 1",
        |p| v4(p).is_some_and(|(s, _)| s.octets()[3] == 1),
        true,
    ),
    // bitwise and
    (
        "bth.opcode & 0x80",
        |p| bth(p).is_some_and(|b| b.opcode.0 & 0x80 != 0),
        true,
    ),
    (
        "bth.opcode & 0xe0 == 0x60",
        |p| bth(p).is_some_and(|b| b.opcode.0 & 0xe0 == 0x60),
        true,
    ),
    (
        "!(bth.opcode & 0x80)",
        |p| bth(p).is_none_or(|b| b.opcode.0 & 0x80 == 0),
        true,
    ),
    (
        "aeth.syndrome & 0x60 == 0x60",
        |p| p.aeth.is_some_and(|a| a.syndrome & 0x60 == 0x60),
        true,
    ),
    // strings and contains
    (
        "bth.opcode_name contains \"READ\"",
        |p| bth(p).is_some_and(|b| b.opcode.name().contains("READ")),
        true,
    ),
    (
        "bth.opcode_name == \"CNP\"",
        |p| bth(p).is_some_and(|b| b.opcode.0 == 0x81),
        true,
    ),
    (
        "roce.version == \"v1\"",
        |p| p.roce == Some(crate::dissect::RoceVersion::V1),
        true,
    ),
    (
        "roce.version == v2",
        |p| p.roce == Some(crate::dissect::RoceVersion::V2),
        true,
    ),
    (
        "eth.src contains 00:01",
        |p| p.eth.is_some_and(|e| e.src.windows(2).any(|w| w == [0, 1])),
        true,
    ),
    (
        "infiniband.immdt contains 00",
        |p| p.immdt.is_some_and(|i| i.value.to_be_bytes().contains(&0)),
        true,
    ),
    // regular expressions: case-insensitive unless (?-i); raw strings
    (
        "bth.opcode_name matches \"^rc rdma (read|write) \"",
        |p| {
            bth(p).is_some_and(|b| {
                let n = b.opcode.name();
                n.starts_with("RC RDMA READ ") || n.starts_with("RC RDMA WRITE ")
            })
        },
        true,
    ),
    (
        "bth.opcode_name ~ \"(?-i)only$\"",
        |p| bth(p).is_some_and(|b| b.opcode.name().ends_with("only")),
        false,
    ),
    (
        "bth.opcode_name ~ r\"^[A-Z]+ \\w+ only\\b\"",
        |p| {
            bth(p).is_some_and(|b| {
                let w: Vec<&str> = b.opcode.name().split(' ').collect();
                w.len() >= 3 && w[2].eq_ignore_ascii_case("only")
            })
        },
        true,
    ),
    (
        "eth.src matches \"^\\x02\\x00\"",
        |p| p.eth.is_some_and(|e| e.src.starts_with(&[2, 0])),
        true,
    ),
    (
        // (In a plain string "\\x5e" would be `^`, an anchor, in both tools.)
        "eth.dst ~ r\"\\x5e\\x00\\x00\\x00\\x01$\"",
        |p| p.eth.is_some_and(|e| e.dst.ends_with(&[0x5e, 0, 0, 0, 1])),
        true,
    ),
    (
        "icrc.status == \"good\"",
        |p| p.icrc.is_some_and(|i| i.valid == Some(true)),
        true,
    ),
    // functions
    (
        "count(vlan.id) == 0",
        |p| p.bth.is_some() && p.vlans[0].is_none() || p.vlans[0].is_none(),
        false,
    ),
    ("count(ip.addr) == 2", |p| v4(p).is_some(), true),
    ("len(eth.src) == 6", |p| p.eth.is_some(), false),
    (
        "len(bth.opcode_name) > 10",
        |p| bth(p).is_some_and(|b| b.opcode.name().len() > 10),
        true,
    ),
    // field against field
    (
        "udp.srcport == udp.dstport",
        |p| p.udp.is_some_and(|u| u.sport == u.dport),
        false,
    ),
    (
        "udp.srcport > udp.dstport",
        |p| p.udp.is_some_and(|u| u.sport > u.dport),
        true,
    ),
    // absent fields make comparisons false, != included
    (
        "reth.dmalen != 0",
        |p| p.reth.is_some_and(|r| r.dma_len != 0),
        true,
    ),
    (
        "!(reth.dmalen == 0)",
        |p| p.reth.is_none_or(|r| r.dma_len != 0),
        true,
    ),
    (
        "macc.cbfc.pause_time.c3 > 0",
        |p| matches!(p.pause, Some(PauseRepr::Pfc(f)) if f.times[3] > 0),
        true,
    ),
    (
        "macc.cbfc.enbv.c3 == 1",
        |p| matches!(p.pause, Some(PauseRepr::Pfc(f)) if f.class_enable & 8 != 0),
        true,
    ),
    (
        "macc.pause_time == 1616",
        |p| matches!(p.pause, Some(PauseRepr::Pause { time: 1616 })),
        true,
    ),
    // time
    (
        "frame.time_epoch < 1000000",
        |p| p.ts_ns < 1_000_000_000_000_000,
        true,
    ),
    ("frame.len > 1000", |p| p.len > 1000, true),
    ("frame.number <= 10", |p| p.number <= 10, true),
    // case of keywords
    (
        "reth AND aeth OR bth.se == 1",
        |p| (p.reth.is_some() && p.aeth.is_some()) || bth(p).is_some_and(|b| b.se),
        true,
    ),
    // names of values (Wireshark's value strings), any case
    (
        "ip.proto == \"UDP\"",
        |p| p.ip.is_some_and(|i| i.version == 4 && i.protocol == 17),
        true,
    ),
    (
        "ipv6.nxt == udp",
        |p| p.ip.is_some_and(|i| i.version == 6 && i.protocol == 17),
        true,
    ),
    (
        "infiniband.bth.opcode == \"Reliable Connection (RC) - RDMA WRITE First\"",
        |p| bth(p).is_some_and(|b| b.opcode.0 == 6),
        true,
    ),
    (
        "bth.opcode in {\"rc rdma write only\" \"CNP\"}",
        |p| bth(p).is_some_and(|b| b.opcode.0 == 10 || b.opcode.0 == 0x81),
        true,
    ),
    (
        "bth.opcode >= \"RC Acknowledge\"",
        |p| bth(p).is_some_and(|b| b.opcode.0 >= 17),
        true,
    ),
    (
        "eth.type == \"IPv6\"",
        |p| p.eth.is_some_and(|e| e.ethertype == 0x86dd),
        true,
    ),
    (
        "ip.flags.df == \"Not set\"",
        |p| {
            p.ip.is_some_and(|i| i.version == 4)
                && p.data.get(14 + 6).is_some_and(|f| f & 0x40 == 0)
        },
        false,
    ),
    (
        "aeth.syndrome.opcode == \"Nak\"",
        |p| p.aeth.is_some_and(|a| a.syndrome >> 5 == 3),
        true,
    ),
    // any / all: which of a field's occurrences (ip.addr: source and
    // destination) must pass
    (
        "all ip.addr != 10.0.0.1",
        |p| v4(p).is_some_and(|(s, d)| s.octets() != [10, 0, 0, 1] && d.octets() != [10, 0, 0, 1]),
        true,
    ),
    (
        "any ip.addr != 10.0.0.1",
        |p| v4(p).is_some_and(|(s, d)| s.octets() != [10, 0, 0, 1] || d.octets() != [10, 0, 0, 1]),
        true,
    ),
    (
        "all ip.addr == 10.0.0.1",
        |p| v4(p).is_some_and(|(s, d)| s.octets() == [10, 0, 0, 1] && d.octets() == [10, 0, 0, 1]),
        false,
    ),
    (
        "ALL ip.addr > 10.0.0.1",
        |p| v4(p).is_some_and(|(s, d)| s.octets() > [10, 0, 0, 1] && d.octets() > [10, 0, 0, 1]),
        true,
    ),
    (
        "any ip.addr > 10.0.0.1",
        |p| v4(p).is_some_and(|(s, d)| s.octets() > [10, 0, 0, 1] || d.octets() > [10, 0, 0, 1]),
        true,
    ),
    (
        "all ip.addr in {10.0.0.1 10.0.1.1}",
        |p| {
            v4(p).is_some_and(|(s, d)| {
                [s, d]
                    .iter()
                    .all(|a| a.octets() == [10, 0, 0, 1] || a.octets() == [10, 0, 1, 1])
            })
        },
        true,
    ),
    (
        "all eth.addr matches r\"^\\x02\"",
        |p| p.eth.is_some_and(|e| e.src[0] == 2 && e.dst[0] == 2),
        true,
    ),
    // times in words
    (
        "frame.time >= \"2026-01-01 00:00:00.0005 UTC\"",
        |p| p.ts_ns >= 1_767_225_600_000_500_000,
        true,
    ),
    (
        "frame.time < \"Jan  1, 2026 00:00:00.000500000 UTC\" && frame.time > 1",
        |p| p.ts_ns < 1_767_225_600_000_500_000 && p.ts_ns > 1_000_000_000,
        true,
    ),
    // functions that make text
    (
        "upper(bth.opcode_name) == \"RC RDMA WRITE FIRST\"",
        |p| bth(p).is_some_and(|b| b.opcode.0 == 6),
        true,
    ),
    (
        "lower(infiniband.bth.opcode_name) contains \"rdma read\"",
        |p| bth(p).is_some_and(|b| b.opcode.name().contains("RDMA READ")),
        true,
    ),
    (
        "string(bth.destqp) == \"256\"",
        |p| bth(p).is_some_and(|b| b.dest_qp == 256),
        true,
    ),
    (
        "string(ip.dst) matches \"\\\\.1$\"",
        |p| v4(p).is_some_and(|(_, d)| d.octets()[3] == 1),
        true,
    ),
    (
        "string(eth.dst) == \"01:80:c2:00:00:01\"",
        |p| p.eth.is_some_and(|e| e.dst == [1, 0x80, 0xc2, 0, 0, 1]),
        true,
    ),
    (
        "all bth.psn > 5 && !(all bth.psn <= 5)",
        |p| bth(p).is_some_and(|b| b.psn.get() > 5),
        true,
    ),
];

#[test]
fn hand_written_filters_select_what_they_say() {
    assert!(CASES.len() >= 60, "{} cases", CASES.len());
    let mut wrong = Vec::new();
    for (text, want, mixed) in CASES {
        let f = Filter::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let (mut yes, mut no) = (0, 0);
        with_packets(&mut |p| {
            let got = f.matches(&crate::fields::Ctx::alone(p));
            if got != want(p) && !wrong.iter().any(|w: &String| w.starts_with(text)) {
                wrong.push(format!("{text}: frame {} gives {got}", p.number));
            }
            if got { yes += 1 } else { no += 1 }
        });
        if *mixed && (yes == 0 || no == 0) {
            wrong.push(format!("{text}: {yes} pass, {no} fail"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn bad_filters_say_what_and_where() {
    let cases = [
        (
            "bth.psn == == 3",
            "\"==\" was unexpected in this context (column 12): bth.psn == >>==<< 3",
        ),
        (
            "bth.nope == 3",
            "\"bth.nope\" is neither a field nor a protocol name (did you mean infiniband.bth.nope...?)",
        ),
        (
            "bth.psn == x",
            "\"x\" is not a valid integer (for infiniband.bth.psn) (column 12): bth.psn == >>x<<",
        ),
        (
            "(bth",
            "the filter ends too early (expected \")\") (column 5): (bth >><<",
        ),
        (
            "bth and",
            "the filter ends too early (column 8): bth and >><<",
        ),
        (
            "ip.src == 10.0.0.0/40",
            "\"10.0.0.0/40\" is not a valid IPv4 address (for ip.src) (column 11): ip.src == >>10.0.0.0/40<<",
        ),
        (
            "bth == 3",
            "infiniband.bth is a protocol or a flag: test it alone, it has no value to compare (column 8): bth == >>3<<",
        ),
        (
            "bth.psn $ 3",
            "\"$\" was unexpected in this context (column 9): bth.psn >>$<< 3",
        ),
        (
            "bth.psn 3",
            "\"3\" was unexpected in this context (column 9): bth.psn >>3<<",
        ),
        ("", "the filter is empty (column 1):  >><<"),
        (
            "eth.src[x] == 1",
            "\"x\" is not a slice ([i], [i:len], [i-j], [i:], [:len]) (column 9): eth.src[>>x<<] == 1",
        ),
        (
            "eth.src[-7028514242080800768-6148914691236517206] == 01",
            "\"-7028514242080800768-6148914691236517206\" is not a slice ([i], [i:len], [i-j], [i:], [:len]) (column 9): eth.src[>>-7028514242080800768-6148914691236517206<<] == 01",
        ),
        (
            "eth.src[3-2] == 01",
            "\"3-2\" is not a slice ([i], [i:len], [i-j], [i:], [:len]) (column 9): eth.src[>>3-2<<] == 01",
        ),
        (
            "bth.psn contains 3",
            "contains needs a string or bytes, and infiniband.bth.psn is integer (column 18): bth.psn contains >>3<<",
        ),
        (
            "ip.src == ipv6.src",
            "ip.src and ipv6.src cannot be compared (IPv4 address with IPv6 address) (column 11): ip.src == >>ipv6.src<<",
        ),
        (
            "bth.opcode in {}",
            "a set needs at least one member (column 12): bth.opcode >>in<< {}",
        ),
        (
            "bth.psn matches \"1\"",
            "matches needs a string or bytes field, and infiniband.bth.psn is integer (column 17): bth.psn matches >>\"1\"<<",
        ),
        (
            "bth.opcode_name ~ \"(\"",
            "the regular expression cannot be compiled: unclosed group (column 19): bth.opcode_name ~ >>\"(\"<<",
        ),
        (
            "bth.opcode_name ~ READ",
            "matches needs a regular expression in quotes, not READ (column 19): bth.opcode_name ~ >>READ<<",
        ),
        (
            "bth.opcode_name ~ \"x{1000}{1000}\"",
            "the regular expression cannot be compiled: it is too large (column 19): bth.opcode_name ~ >>\"x{1000}{1000}\"<<",
        ),
        (
            "ip.proto == \"XYZ\"",
            "\"XYZ\" is neither a valid integer nor the name of one of ip.proto's values (roce-dissect fields --values ip.proto lists them) (column 13): ip.proto == >>\"XYZ\"<<",
        ),
        (
            "bth.psn == \"5\"",
            "\"5\" is not a valid integer (for infiniband.bth.psn) (column 12): bth.psn == >>\"5\"<<",
        ),
        (
            "upper(bth.psn) == \"1\"",
            "upper() needs a string field, and infiniband.bth.psn is integer (column 7): upper(>>bth.psn<<) == \"1\"",
        ),
        (
            "string(bth) == \"1\"",
            "string() needs a field with a value, and infiniband.bth is protocol (column 8): string(>>bth<<) == \"1\"",
        ),
        (
            "frame.time > \"Jan 1, 2026\"",
            "\"Jan 1, 2026\" is not a valid time (for frame.time): write \"Nov 12, 2026 08:55:44.123\" or \"2026-11-12 08:55:44\" (local time; \" UTC\" after it for UTC), or seconds since the epoch (column 14): frame.time > >>\"Jan 1, 2026\"<<",
        ),
        (
            "all bth",
            "\"all\" needs a comparison after its field (all f > 1) (column 1): >>all<< bth",
        ),
        (
            "any bth.psn",
            "\"any\" needs a comparison after its field (all f > 1) (column 1): >>any<< bth.psn",
        ),
        (
            "bth.psn == \"open",
            "\"\"\" was unexpected in this context (column 12): bth.psn == >>\"<<open",
        ),
    ];
    for (text, want) in cases {
        let e = Filter::parse(text).expect_err(text).to_string();
        if want.contains("...") {
            assert!(
                e.starts_with(want.split("(did").next().unwrap()),
                "{text}: {e}"
            );
        } else {
            assert_eq!(e, want, "{text}");
        }
    }
}

#[test]
fn analysis_fields_make_the_filter_need_the_analysis() {
    assert!(
        Filter::parse("roce.analysis.retransmission")
            .unwrap()
            .uses_analysis()
    );
    assert!(
        Filter::parse("bth.psn == roce.analysis.missing")
            .unwrap()
            .uses_analysis()
    );
    assert!(!Filter::parse("bth.psn == 3").unwrap().uses_analysis());
}

/// `may_match` never turns away a frame `matches` takes, whatever the
/// analysis and the frame's place; it turns away what fails on the bytes
/// alone, and an unknown part decides nothing on its own.
#[test]
fn may_match_keeps_every_frame_that_can_match() {
    use crate::analysis::Analyzer;
    let filters = [
        "bth.opcode == 0x81",
        "roce.analysis.retransmission",
        "not roce.analysis.gap",
        "bth.psn > 3 && frame.number < 40",
        "frame.number == 2 || ip.src == 10.0.0.1",
        "!(frame.time_delta > 0) ^^ bth.opcode == 0x81",
        "macc || roce.analysis.flow in {1 2}",
        "frame.time_relative >= 0 and not bth",
        "bth.psn != roce.analysis.missing || eth.type == 0x8808",
        "_ws.col.Info contains \"[retransmit]\"",
        "_ws.col.No. == \"7\" || roce.analysis.flags",
        "tcp.seq == 1 && tcp.flags.ack == 1",
        "tcp.stream == 1 || tcp.window_size > 10000",
        "tcp.ack != tcp.ack_raw",
    ];
    for text in filters {
        let f = Filter::parse(text).unwrap();
        let (mut kept, mut matched, mut total) = (0, 0, 0);
        let mut an = Analyzer::new(Default::default());
        let mut tcp = crate::analysis::tcp::TcpTracker::new();
        let (mut first, mut prev) = (None, 0);
        with_packets(&mut |p| {
            let found = an.packet(p);
            let seen = tcp.see(p);
            let ctx = crate::fields::Ctx {
                pkt: p,
                analysis: Some(&found),
                tcp: seen.as_ref(),
                flow_number: found.flow().map(|n| u64::from(n) + 1),
                first_ts_ns: *first.get_or_insert(p.ts_ns),
                prev_ts_ns: if total == 0 { p.ts_ns } else { prev },
                link: Default::default(),
            };
            prev = p.ts_ns;
            total += 1;
            let may = f.may_match(p);
            let does = f.matches(&ctx);
            assert!(may || !does, "{text}: frame {} matches", p.number);
            kept += usize::from(may);
            matched += usize::from(does);
        });
        assert!(matched > 0, "{text}: no frame matches");
        match text {
            // Decided by the bytes: exactly the matching frames.
            "bth.opcode == 0x81" => assert_eq!(kept, matched, "{text}"),
            // Unknown without the analysis: every frame may match.
            "roce.analysis.retransmission" | "not roce.analysis.gap" => {
                assert_eq!(kept, total, "{text}")
            }
            // An unknown part and a known one: the known one decides.
            "bth.psn > 3 && frame.number < 40" | "frame.time_relative >= 0 and not bth" => {
                assert!(kept < total, "{text}: {kept} of {total}")
            }
            _ => {}
        }
    }
}
