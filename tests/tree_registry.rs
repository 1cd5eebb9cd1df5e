//! The header tree (`packets -V`, the TUI's detail pane) and the field
//! registry: each registry field a frame has is a line of the tree,
//! titled as the registry titles it (Wireshark's titles), but for the
//! fields listed here, which the tree shows in another form (a combined
//! line, a summary in the header's own line) or not at all. A field added
//! to the registry and not to the tree, or retitled in one of them, fails
//! here.

use roce_dissect::capture::{Frame, LinkType};
use roce_dissect::dissect::{DissectOptions, dissect};
use roce_dissect::fields::{self, Ctx};
use roce_dissect::output::tree::header_tree;
use roce_dissect::synth::ib;

/// Registry fields the tree shows otherwise, and how.
const OTHERWISE: &[&str] = &[
    // The frame's header line says its lengths; the TUI's list its
    // number and times.
    "frame.number",
    "frame.len",
    "frame.cap_len",
    "frame.time_relative",
    "frame.time_delta",
    "frame.protocols",
    // The summary line's columns: the line above the tree.
    "_ws.col.No.",
    "_ws.col.Source",
    "_ws.col.Destination",
    "_ws.col.Protocol",
    "_ws.col.Length",
    "_ws.col.Info",
    // Either-side fields: the tree has the source and destination lines.
    "eth.addr",
    "ip.addr",
    "ipv6.addr",
    "udp.port",
    "tcp.port",
    // Generated, so bracketed as tshark has it: "[IGMP Version: 2]".
    "igmp.version",
    "tcp.stream",
    "tcp.time_relative",
    "tcp.time_delta",
    "tcp.len",
    "tcp.nxtseq",
    "tcp.window_size",
    "tcp.options.wscale.multiplier",
    // One line "Differentiated Services Field: DSCP 26 (AF31), ECN 2".
    "ip.dsfield.dscp",
    "ip.dsfield.ecn",
    "ipv6.tclass.dscp",
    "ipv6.tclass.ecn",
    // One line "Flags: 0x40, Don't fragment"; the version and header
    // length in the header's own line.
    "ip.flags.df",
    "ip.flags.mf",
    "ip.flags.rb",
    "ip.hdr_len",
    "ip.version",
    "ipv6.version",
    // "FECN: False", "BECN: False", as Wireshark's tree.
    "infiniband.bth.fecn",
    "infiniband.bth.becn",
    // In the Opcode line: "Opcode: RC RDMA WRITE First (6)".
    "infiniband.bth.opcode_name",
    // The AETH syndrome's parts: one "Syndrome:" line that names them.
    "infiniband.aeth.syndrome.opcode",
    "infiniband.aeth.syndrome.credit_count",
    "infiniband.aeth.syndrome.timer",
    "infiniband.aeth.syndrome.error_code",
    // In their header's line: "Immediate Data", "Invalidate Extended
    // Transport Header", "RDMA Extended ...", "Global Route Header", the
    // CNP's header line.
    "infiniband.ieth",
    "infiniband.grh",
    "infiniband.cnp",
    "infiniband.rdeth.eecnxt",
    // "Payload: N bytes"; the ICRC and VCRC lines' "[correct]" or
    // "[incorrect]".
    "infiniband.payload_len",
    "infiniband.icrc.status",
    "infiniband.vcrc.status",
    // "InfiniBand Local Route Header, SLID: 1, DLID: 257".
    "infiniband.lrh",
    "roce.version",
    "roce.malformed",
    // The PAUSE/PFC lines: "Class Enable Vector", "Quanta".
    "macc.cbfc.enbv",
    "macc.pause_time",
];

#[test]
fn the_tree_shows_every_registry_field() {
    let mut frames = Vec::new();
    for seed in 1..4 {
        for f in roce_dissect::synth::samples::every_opcode(seed) {
            if let Some(n) = ib::carry(&f, seed % 2 == 0) {
                frames.push((n, LinkType::InfiniBand));
            }
            frames.push((f, LinkType::Ethernet));
        }
    }
    // What a mirror carries beside RoCE.
    for f in roce_dissect::synth::samples::other_traffic() {
        frames.push((f, LinkType::Ethernet));
    }
    for f in roce_dissect::synth::samples::name_and_discovery() {
        frames.push((f, LinkType::Ethernet));
    }
    let mut wrong = std::collections::BTreeSet::new();
    let mut shown = std::collections::BTreeSet::new();
    for (data, link) in &frames {
        let p = dissect(&Frame::whole(data, *link), &DissectOptions::default());
        let lines: Vec<String> = header_tree(&p, 100_000_000_000, None)
            .into_iter()
            .map(|n| n.text)
            .collect();
        let ctx = Ctx::alone(&p);
        for f in fields::FIELDS {
            if f.values(&ctx).is_empty() || OTHERWISE.contains(&f.name) {
                continue;
            }
            // A bit field's line starts with its bits: "...1 .... = Syn: Set".
            let titled = |l: &String| {
                let l = match l.split_once(" = ") {
                    Some((bits, rest)) if bits.chars().all(|c| "01. ".contains(c)) => rest,
                    _ => l.as_str(),
                };
                // A header line is shown as it was sent: "HOST: ..." is
                // the line of `http.host` ("Host").
                let titled_as = |t: &str| {
                    if f.name.starts_with("http.") {
                        t.eq_ignore_ascii_case(f.title)
                    } else {
                        t == f.title
                    }
                };
                l.get(..f.title.len())
                    .filter(|t| titled_as(t))
                    .and_then(|_| l.get(f.title.len()..))
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with([':', ',', ' ']))
            };
            if lines.iter().any(titled) {
                shown.insert(f.name);
            } else {
                wrong.insert(format!("{} (\"{}\") is not in the tree", f.name, f.title));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{}",
        wrong.into_iter().collect::<Vec<_>>().join("\n")
    );
    assert!(shown.len() >= 80, "{} fields shown", shown.len());
    for f in [
        "tcp.dstport",
        "tcp.flags.syn",
        "tcp.seq",
        "icmp.code",
        "icmpv6.type",
        "igmp.maddr",
        "arp.dst.proto_ipv4",
        "nbns.flags.opcode",
        "dhcp.option.dhcp",
        "http.response.code",
    ] {
        assert!(shown.contains(f), "{f} not checked");
    }
}

#[test]
fn the_tree_shows_every_nvme_field_of_a_capsule() {
    use roce_dissect::analysis::Analyzer;
    use roce_dissect::output::tree::nvme_tree;
    use roce_dissect::synth::scenario::{GenOptions, Scenario, generate};
    let mut frames = Vec::new();
    let opts = GenOptions {
        scenario: Scenario::Nvme,
        qps: 2,
        messages: 12,
        pmtu: 1024,
        ..GenOptions::default()
    };
    generate(opts, &mut |ts, f| {
        frames.push((ts, f.to_vec()));
        Ok(())
    })
    .unwrap();
    let mut an = Analyzer::new(Default::default());
    let mut wrong = std::collections::BTreeSet::new();
    let mut shown = std::collections::BTreeSet::new();
    for (i, (ts, data)) in frames.iter().enumerate() {
        let frame = Frame {
            number: i as u64 + 1,
            ts_ns: *ts,
            ..Frame::whole(data, LinkType::Ethernet)
        };
        let p = dissect(&frame, &DissectOptions::default());
        let found = an.packet(&p);
        let Some(role) = found.nvme else { continue };
        let lines: Vec<String> = nvme_tree(&p, role).into_iter().map(|n| n.text).collect();
        let ctx = Ctx {
            pkt: &p,
            analysis: Some(&found),
            tcp: None,
            flow_number: None,
            first_ts_ns: *ts,
            prev_ts_ns: *ts,
            link: Default::default(),
        };
        for f in fields::FIELDS
            .iter()
            .filter(|f| f.name.starts_with("nvme."))
        {
            if f.values(&ctx).is_empty() {
                continue;
            }
            if lines
                .iter()
                .any(|l| l.starts_with(&format!("{}:", f.title)))
            {
                shown.insert(f.name);
            } else {
                wrong.insert(format!("{} (\"{}\") is not in the tree", f.name, f.title));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:?}");
    let all = fields::FIELDS
        .iter()
        .filter(|f| f.name.starts_with("nvme."))
        .count();
    assert_eq!(shown.len(), all, "{shown:?}");
}

/// The fields of TCP's conversation and sequence analysis (the relative
/// numbers, `[Timestamps]`, `[SEQ/ACK analysis]`: acknowledged frame and
/// its round trip, iRTT, bytes in flight, RTO, the notes) are lines of the
/// tree, bracketed as tshark's generated ones.
#[test]
fn the_tree_shows_every_tcp_analysis_field() {
    use roce_dissect::analysis::tcp::TcpTracker;
    let frames = [
        roce_dissect::synth::samples::tcp_conversations(),
        roce_dissect::synth::samples::tcp_analysis_cases(),
    ]
    .concat();
    let mut tracker = TcpTracker::new();
    let mut wrong = std::collections::BTreeSet::new();
    let mut shown = std::collections::BTreeSet::new();
    for (i, data) in frames.iter().enumerate() {
        let frame = Frame {
            number: i as u64 + 1,
            ts_ns: 1_000 * (i as u64 + 1),
            ..Frame::whole(data, LinkType::Ethernet)
        };
        let p = dissect(&frame, &DissectOptions::default());
        let seen = tracker.see(&p);
        let lines: Vec<String> = header_tree(&p, 100_000_000_000, seen.as_ref())
            .into_iter()
            .map(|n| n.text)
            .collect();
        let ctx = Ctx {
            pkt: &p,
            analysis: None,
            tcp: seen.as_ref(),
            flow_number: None,
            first_ts_ns: 1_000,
            prev_ts_ns: frame.ts_ns,
            link: Default::default(),
        };
        let generated = |f: &str| {
            f.starts_with("tcp.analysis") || f == "tcp.time_relative" || f == "tcp.time_delta"
        };
        for f in fields::FIELDS.iter().filter(|f| generated(f.name)) {
            if f.values(&ctx).is_empty() || f.name == "tcp.analysis.flags" {
                continue;
            }
            let titled = |l: &String| {
                l.strip_prefix('[')
                    .and_then(|l| l.strip_prefix(f.title))
                    .is_some_and(|rest| rest.starts_with([':', ']']))
            };
            // `tcp.analysis` is the subtree's own line.
            if lines.iter().any(titled) {
                shown.insert(f.name);
            } else {
                wrong.insert(format!("{} (\"{}\") is not in the tree", f.name, f.title));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{}",
        wrong.into_iter().collect::<Vec<_>>().join("\n")
    );
    for f in [
        "tcp.analysis",
        "tcp.analysis.acks_frame",
        "tcp.analysis.ack_rtt",
        "tcp.analysis.initial_rtt",
        "tcp.analysis.bytes_in_flight",
        "tcp.analysis.push_bytes_sent",
        "tcp.analysis.rto",
        "tcp.analysis.rto_frame",
        "tcp.analysis.duplicate_ack_frame",
        "tcp.analysis.retransmission",
        "tcp.time_relative",
        "tcp.time_delta",
    ] {
        assert!(shown.contains(f), "{f} not checked: {shown:?}");
    }
}
