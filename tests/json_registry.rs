//! The JSON Lines of `packets -T json` and the field registry say the same
//! of every frame. The JSON Lines keep the contract's shape (nested
//! objects, arrays, `null`s, and keys that Wireshark does not have, such as
//! `aeth.kind`), so the writer is not generated from the registry; this
//! test holds the two together both ways: each JSON key is either the
//! value of the registry fields named for it here, or listed as one
//! Wireshark has no field for; and each registry field a frame has is in
//! the JSON Lines or listed as one they leave out. A field added to one
//! and not the other fails here.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use roce_dissect::analysis::Analyzer;
use roce_dissect::capture::{CaptureFile, Frame, LinkType};
use roce_dissect::dissect::{DissectOptions, dissect};
use roce_dissect::fields::{self, Ctx, Value};
use roce_dissect::output::packets::write_json_line_analysed;
use serde_json::Value as J;

/// JSON key path: the registry fields whose values it holds (the first
/// one with values in the frame).
const SAME: &[(&str, &[&str])] = &[
    ("frame", &["frame.number"]),
    ("ts_ns", &["frame.time_epoch"]),
    ("len", &["frame.len"]),
    ("caplen", &["frame.cap_len"]),
    ("eth.src", &["eth.src"]),
    ("eth.dst", &["eth.dst"]),
    ("eth.type", &["eth.type", "eth.len"]),
    ("vlan.id", &["vlan.id"]),
    ("vlan.pcp", &["vlan.priority"]),
    ("vlan.dei", &["vlan.dei"]),
    ("ip.version", &["ip.version", "ipv6.version"]),
    ("ip.src", &["ip.src", "ipv6.src"]),
    ("ip.dst", &["ip.dst", "ipv6.dst"]),
    ("ip.dscp", &["ip.dsfield.dscp", "ipv6.tclass.dscp"]),
    ("ip.ecn", &["ip.dsfield.ecn", "ipv6.tclass.ecn"]),
    ("ip.ttl", &["ip.ttl", "ipv6.hlim"]),
    ("ip.proto", &["ip.proto", "ipv6.nxt"]),
    ("udp.sport", &["udp.srcport"]),
    ("udp.dport", &["udp.dstport"]),
    ("udp.length", &["udp.length"]),
    ("erf.type", &["erf.types.type"]),
    ("erf.flags", &["erf.flags"]),
    ("erf.port", &["erf.flags.cap"]),
    ("erf.rlen", &["erf.rlen"]),
    ("erf.lctr", &["erf.lctr"]),
    ("erf.wlen", &["erf.wlen"]),
    ("lrh.vl", &["infiniband.lrh.vl"]),
    ("lrh.lver", &["infiniband.lrh.lver"]),
    ("lrh.sl", &["infiniband.lrh.sl"]),
    ("lrh.lnh", &["infiniband.lrh.lnh"]),
    ("lrh.dlid", &["infiniband.lrh.dlid"]),
    ("lrh.slid", &["infiniband.lrh.slid"]),
    ("lrh.pktlen", &["infiniband.lrh.pktlen"]),
    ("roce", &["roce.version"]),
    ("grh.ipver", &["infiniband.grh.ipver"]),
    ("grh.tclass", &["infiniband.grh.tclass"]),
    ("grh.flowlabel", &["infiniband.grh.flowlabel"]),
    ("grh.paylen", &["infiniband.grh.paylen"]),
    ("grh.nxthdr", &["infiniband.grh.nxthdr"]),
    ("grh.hoplmt", &["infiniband.grh.hoplmt"]),
    ("grh.sgid", &["infiniband.grh.sgid"]),
    ("grh.dgid", &["infiniband.grh.dgid"]),
    ("bth.opcode", &["infiniband.bth.opcode"]),
    ("bth.opcode_name", &["infiniband.bth.opcode_name"]),
    ("bth.se", &["infiniband.bth.se"]),
    ("bth.m", &["infiniband.bth.m"]),
    ("bth.padcnt", &["infiniband.bth.padcnt"]),
    ("bth.tver", &["infiniband.bth.tver"]),
    ("bth.p_key", &["infiniband.bth.p_key"]),
    ("bth.fecn", &["infiniband.bth.fecn"]),
    ("bth.becn", &["infiniband.bth.becn"]),
    ("bth.destqp", &["infiniband.bth.destqp"]),
    ("bth.a", &["infiniband.bth.a"]),
    ("bth.psn", &["infiniband.bth.psn"]),
    ("rdeth.eecnxt", &["infiniband.rdeth.eecnxt"]),
    ("deth.q_key", &["infiniband.deth.q_key"]),
    ("deth.srcqp", &["infiniband.deth.srcqp"]),
    ("xrceth.xrcsrq", &["infiniband.xrceth.xrcsrq"]),
    ("reth.va", &["infiniband.reth.va"]),
    ("reth.r_key", &["infiniband.reth.r_key"]),
    ("reth.dmalen", &["infiniband.reth.dmalen"]),
    // Wireshark shows an AtomicETH's address and key as RETH fields.
    ("atomiceth.va", &["infiniband.reth.va"]),
    ("atomiceth.r_key", &["infiniband.reth.r_key"]),
    ("atomiceth.swapdt", &["infiniband.atomiceth.swapdt"]),
    ("atomiceth.cmpdt", &["infiniband.atomiceth.cmpdt"]),
    ("aeth.syndrome", &["infiniband.aeth.syndrome"]),
    ("aeth.msn", &["infiniband.aeth.msn"]),
    (
        "atomicacketh.origremdt",
        &["infiniband.atomicacketh.origremdt"],
    ),
    // Bytes in Wireshark, the 32-bit number in the JSON Lines.
    ("immdt.value", &["infiniband.immdt"]),
    ("ieth.r_key", &["infiniband.ieth"]),
    ("mad.mgmt_class", &["infiniband.mad.mgmtclass"]),
    ("mad.method", &["infiniband.mad.method"]),
    ("mad.attribute_id", &["infiniband.mad.attributeid"]),
    ("mad.transaction_id", &["infiniband.mad.transactionid"]),
    ("cm.local_comm_id", &["infiniband.cm.localcommid"]),
    ("cm.remote_comm_id", &["infiniband.cm.remotecommid"]),
    ("cm.service_id", &["infiniband.cm.req.serviceid"]),
    (
        "cm.local_qpn",
        &["infiniband.cm.req.localqpn", "infiniband.cm.rep.localqpn"],
    ),
    (
        "cm.starting_psn",
        &["infiniband.cm.req.startpsn", "infiniband.cm.rep.startpsn"],
    ),
    ("cm.mtu", &["infiniband.cm.req.pppmtu"]),
    ("cm.reason", &["infiniband.cm.rej.reason"]),
    ("payload_len", &["infiniband.payload_len"]),
    ("icrc.value", &["infiniband.invariant.crc"]),
    ("vcrc.value", &["infiniband.variant.crc"]),
    ("pause.opcode", &["macc.opcode"]),
    ("mac_control.opcode", &["macc.opcode"]),
    ("pause.enbv", &["macc.cbfc.enbv"]),
    (
        "pause.pause_time",
        &[
            "macc.pause_time",
            "macc.cbfc.pause_time.c0",
            "macc.cbfc.pause_time.c1",
            "macc.cbfc.pause_time.c2",
            "macc.cbfc.pause_time.c3",
            "macc.cbfc.pause_time.c4",
            "macc.cbfc.pause_time.c5",
            "macc.cbfc.pause_time.c6",
            "macc.cbfc.pause_time.c7",
        ],
    ),
    ("analysis.flow", &["roce.analysis.flow"]),
    ("analysis.retransmission", &["roce.analysis.retransmission"]),
    ("analysis.out_of_order", &["roce.analysis.out_of_order"]),
    ("analysis.gap", &["roce.analysis.gap"]),
    ("analysis.missing", &["roce.analysis.missing"]),
    ("analysis.duplicate", &["roce.analysis.duplicate"]),
    ("analysis.psn_reuse", &["roce.analysis.psn_reuse"]),
    ("analysis.nak", &["roce.analysis.nak"]),
    ("analysis.rnr_nak", &["roce.analysis.rnr_nak"]),
    ("analysis.bad_icrc", &["roce.analysis.bad_icrc"]),
    ("analysis.ce", &["roce.analysis.ce"]),
    ("analysis.cnp", &["roce.analysis.cnp"]),
    ("analysis.paused", &["roce.analysis.paused"]),
    ("analysis.episode", &["roce.analysis.episode"]),
    ("analysis.ack_rtt_ns", &["roce.analysis.ack_rtt"]),
    (
        "analysis.message_completion_ns",
        &["roce.analysis.message_completion"],
    ),
    ("nvme.cmd.opc", &["nvme.cmd.opc"]),
    ("nvme.cmd.cid", &["nvme.cmd.cid"]),
    ("nvme.cmd.nsid", &["nvme.cmd.nsid"]),
    ("nvme.cmd.slba", &["nvme.cmd.slba"]),
    ("nvme.cmd.nlb", &["nvme.cmd.nlb"]),
    ("nvme.fabrics.opc", &["nvme.fabrics.cmd.opc"]),
    ("nvme.fabrics.cid", &["nvme.fabrics.cmd.cid"]),
    ("nvme.fabrics.fctype", &["nvme.fabrics.cmd.fctype"]),
    ("nvme.cqe.cid", &["nvme.cqe.cid"]),
    ("nvme.cqe.sqhd", &["nvme.cqe.sqhd"]),
    ("nvme.cqe.sqid", &["nvme.cqe.sqid"]),
    ("nvme.cqe.status", &["nvme.cqe.status"]),
    (
        "nvme.latency_ns",
        &["nvme.cmd_latency", "nvme.fabrics.cmd_latency"],
    ),
    ("nvme.data.cid", &["nvme.data.cid"]),
    ("nvme.data.offset", &["nvme.data.offset"]),
];

/// JSON keys with no registry field of the same meaning, and why.
const JSON_ONLY: &[&str] = &[
    // Names and readings of numbers the registry has.
    "erf.type_name",
    "bth.transport",
    "aeth.kind",
    "aeth.value",
    "cm.msg",
    "cm.remote_qpn",
    "cm.attribute_id",
    // The ICRC/VCRC verdict as true/false/null, and what it should be.
    "icrc.valid",
    "icrc.expected",
    "vcrc.valid",
    "vcrc.expected",
    "vlan.tpid",
    "sll.pkttype",
    "sll.src",
    "sll.protocol",
    // The decoding error's text (the registry: roce.malformed).
    "error",
    // An NVMe-oF capsule's role, queue, command name, SGL and status
    // name.
    "nvme.role",
    "nvme.qid",
    "nvme.name",
    "nvme.sgl.type",
    "nvme.sgl.address",
    "nvme.sgl.length",
    "nvme.sgl.key",
    "nvme.cqe.status_name",
    "nvme.cqe.dnr",
];

/// Registry fields the JSON Lines leave out: the protocol markers (their
/// objects stand for them), Wireshark's combined and derived fields, and
/// header bits the JSON Lines do not carry.
fn left_out(name: &str) -> bool {
    fields::lookup(name)
        .is_some_and(|f| f.ty == fields::FieldType::Presence && !name.starts_with("roce.analysis."))
        // The summary line's columns (the text output's).
        || name.starts_with("_ws.col.")
        // Any of the analysis flags, each of which is in the JSON Lines.
        || name == "roce.analysis.flags"
        || matches!(
            name,
            "frame.time_relative"
                | "frame.time"
                | "frame.time_delta"
                | "frame.protocols"
                | "eth.addr"
                | "ip.addr"
                | "ipv6.addr"
                | "udp.port"
                | "vlan.etype"
                | "ip.hdr_len"
                | "ip.dsfield"
                | "ip.len"
                | "ip.id"
                | "ip.flags"
                | "ip.flags.rb"
                | "ip.flags.df"
                | "ip.flags.mf"
                | "ip.frag_offset"
                | "ip.checksum"
                | "ipv6.tclass"
                | "ipv6.flow"
                | "ipv6.plen"
                | "udp.checksum"
                | "macc.cbfc.enbv.c0"
                | "macc.cbfc.enbv.c1"
                | "macc.cbfc.enbv.c2"
                | "macc.cbfc.enbv.c3"
                | "macc.cbfc.enbv.c4"
                | "macc.cbfc.enbv.c5"
                | "macc.cbfc.enbv.c6"
                | "macc.cbfc.enbv.c7"
                | "infiniband.lrh.reserved2"
                | "infiniband.lrh.reserved5"
                | "infiniband.bth.reserved7"
                | "infiniband.aeth.syndrome.reserved"
                | "infiniband.aeth.syndrome.opcode"
                | "infiniband.aeth.syndrome.credit_count"
                | "infiniband.aeth.syndrome.timer"
                | "infiniband.aeth.syndrome.reserved_value"
                | "infiniband.aeth.syndrome.error_code"
                | "infiniband.icrc.status"
                | "infiniband.vcrc.status"
                | "infiniband.mad.baseversion"
                | "infiniband.mad.classversion"
                | "infiniband.mad.status"
                | "infiniband.mad.classspecific"
                | "infiniband.mad.attributemodifier"
                | "infiniband.cm.message"
                | "infiniband.cm.req"
                | "infiniband.cm.rep.remotecommid"
                | "roce.malformed"
        )
}

/// A registry value as the JSON Lines write it.
fn json_of(v: &Value<'_>) -> J {
    match v {
        Value::Uint(n) => J::from(*n),
        Value::Bool(b) => J::Bool(*b),
        Value::Present => J::Bool(true),
        Value::Ether(m) => J::String(roce_dissect::output::json::mac_string(m)),
        Value::Ipv4(a) => J::String(a.to_string()),
        Value::Ipv6(a) => J::String(a.to_string()),
        Value::Str(s) => J::String(s.to_string()),
        Value::Time(t) => J::from(*t as u64),
        Value::Bytes(b) => J::from(b.iter().fold(0u64, |a, x| a << 8 | u64::from(*x))),
    }
}

/// Every leaf of `v`: its key path and its values (array members in
/// order; a `null` is no value).
fn leaves(v: &J, path: &str, out: &mut BTreeMap<String, Vec<J>>) {
    match v {
        J::Object(m) => {
            for (k, x) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                leaves(x, &p, out);
            }
        }
        J::Array(a) => {
            if !a.iter().any(J::is_object) {
                out.entry(path.to_string()).or_default();
            }
            for x in a {
                leaves(x, path, out);
            }
        }
        J::Null => {
            out.entry(path.to_string()).or_default();
        }
        x => out.entry(path.to_string()).or_default().push(x.clone()),
    }
}

fn frames() -> Vec<(String, Vec<u8>, LinkType, u64)> {
    let mut out = Vec::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    names.sort();
    for p in names {
        let Ok(bytes) = std::fs::read(&p) else {
            continue;
        };
        let file = CaptureFile::from_bytes(bytes);
        let Ok(reader) = file.frames() else { continue };
        for f in reader.flatten() {
            out.push((p.display().to_string(), f.data.to_vec(), f.link, f.ts_ns));
        }
    }
    // NVMe-oF queues the CM sets up, with commands in SEND First too.
    let mut nvme = Vec::new();
    let opts = roce_dissect::synth::scenario::GenOptions {
        scenario: roce_dissect::synth::scenario::Scenario::Nvme,
        qps: 2,
        messages: 12,
        pmtu: 1024,
        ..Default::default()
    };
    roce_dissect::synth::scenario::generate(opts, &mut |ts, f| {
        nvme.push((
            "nvme scenario".to_string(),
            f.to_vec(),
            LinkType::Ethernet,
            ts,
        ));
        Ok(())
    })
    .unwrap();
    out.extend(nvme);
    use roce_dissect::synth::ib;
    for seed in 1..4 {
        for (k, f) in roce_dissect::synth::samples::every_opcode(seed)
            .into_iter()
            .enumerate()
        {
            let what = format!("every_opcode({seed})[{k}]");
            // Tagged once and twice (QinQ), natively and in ERF records.
            let mut tagged = f[..12].to_vec();
            if k % 2 == 0 {
                tagged.extend_from_slice(&[0x88, 0xa8, 0x20, 0x07]);
            }
            tagged.extend_from_slice(&[0x81, 0x00, 0x70 | (k as u8 & 0x1f), 0x2a]);
            tagged.extend_from_slice(&f[12..]);
            out.push((format!("{what} tagged"), tagged, LinkType::Ethernet, 1_000));
            if let Some(n) = ib::carry(&f, k % 2 == 0) {
                out.push((
                    format!("{what} native"),
                    n.clone(),
                    LinkType::InfiniBand,
                    1_000,
                ));
                let erf = ib::erf_record(&n, 2_000, 1);
                out.push((format!("{what} ERF"), erf, LinkType::Erf, 2_000));
            }
            // A MAC control frame of another opcode (the last sample is
            // an 802.3x PAUSE).
            if f[12..14] == [0x88, 0x08] && f[14..16] == [0, 1] {
                let mut other = f.clone();
                other[15] = 3;
                out.push((format!("{what} opcode 3"), other, LinkType::Ethernet, 1_000));
            }
            if k % 7 == 3 {
                // The ICRC's last byte changed: a bad ICRC.
                let mut bad = f.clone();
                if let Some(b) = bad.last_mut() {
                    *b ^= 0x5a;
                }
                out.push((format!("{what} bad ICRC"), bad, LinkType::Ethernet, 1_000));
            }
            out.push((what, f, LinkType::Ethernet, 1_000));
        }
    }
    out
}

#[test]
fn json_lines_and_the_registry_agree() {
    let same: BTreeMap<&str, &[&str]> = SAME.iter().copied().collect();
    for (_, names) in SAME {
        for n in *names {
            assert!(fields::lookup(n).is_some(), "{n} is not a registry field");
        }
    }
    let mapped: BTreeSet<&str> = SAME.iter().flat_map(|(_, n)| n.iter().copied()).collect();
    let mut wrong = BTreeSet::new();
    let mut keys_seen = BTreeSet::new();
    let mut an = Analyzer::new(Default::default());
    let all = frames();
    assert!(all.len() > 500, "{} frames", all.len());
    for (i, (from, data, link, ts)) in all.iter().enumerate() {
        let frame = Frame {
            number: i as u64 + 1,
            ts_ns: *ts,
            ..Frame::whole(data, *link)
        };
        let pkt = dissect(&frame, &DissectOptions::default());
        let found = an.packet(&pkt);
        let flow = found.flow().map(|f| u64::from(f) + 1);
        let ctx = Ctx {
            pkt: &pkt,
            analysis: Some(&found),
            tcp: None,
            flow_number: flow,
            first_ts_ns: *ts,
            prev_ts_ns: *ts,
            link: Default::default(),
        };
        let mut line = Vec::new();
        write_json_line_analysed(&mut line, &pkt, &found, flow);
        let json: J = serde_json::from_slice(&line).unwrap();
        let mut got = BTreeMap::new();
        leaves(&json, "", &mut got);
        for (key, vals) in &got {
            keys_seen.insert(key.clone());
            if JSON_ONLY.contains(&key.as_str()) {
                continue;
            }
            let Some(names) = same.get(key.as_str()) else {
                wrong.insert(format!(
                    "JSON key {key} has no registry field here ({from})"
                ));
                continue;
            };
            let mut want: Vec<J> = Vec::new();
            for n in *names {
                let f = fields::lookup(n).unwrap();
                want.extend(f.values(&ctx).iter().map(json_of));
                if !want.is_empty() && !n.starts_with("macc.cbfc.pause_time.") {
                    break;
                }
            }
            if &want != vals {
                wrong.insert(format!(
                    "{key} ({from}, frame {}): JSON {vals:?}, registry {want:?}",
                    i + 1
                ));
            }
        }
        for f in fields::FIELDS {
            if f.values(&ctx).is_empty() || left_out(f.name) {
                continue;
            }
            if !mapped.contains(f.name) {
                wrong.insert(format!(
                    "registry field {} is not in the JSON Lines ({from})",
                    f.name
                ));
            } else if !SAME
                .iter()
                .any(|(k, n)| n.contains(&f.name) && got.contains_key(*k))
            {
                wrong.insert(format!(
                    "{} has a value, its JSON key is absent ({from}, frame {})",
                    f.name,
                    i + 1
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{}",
        wrong.into_iter().take(40).collect::<Vec<_>>().join("\n")
    );
    // The keys this test stands on were all met (but a CM REJ's reason:
    // no sample has one; tests/analysis_fields.rs covers the analysis).
    for (k, _) in SAME {
        if *k != "cm.reason" && !k.starts_with("analysis.") {
            assert!(keys_seen.contains(*k), "no sample frame has {k}");
        }
    }
}
