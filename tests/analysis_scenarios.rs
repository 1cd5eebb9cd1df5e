//! Scenario captures built by hand with known answers: every figure of the
//! JSON report is checked, and each scenario is written as pcap (µs), pcap
//! (ns) and pcapng, which must give the same report.

mod common;

use common::hint_kinds;

use std::net::Ipv4Addr;

use roce_dissect::analysis::AnalysisOptions;
use roce_dissect::capture::CaptureFile;
use roce_dissect::synth::conn::{Conn, bytes};
use roce_dissect::synth::frame::{NetSpec, build_pause, build_pfc};
use roce_dissect::synth::{CaptureWriter, OutFormat};
use roce_dissect::wire::AckKind;
use serde_json::Value;

const T0: u64 = 1_700_000_000_000_000_000;
const MAC_SWITCH: [u8; 6] = [0x02, 0xee, 0, 0, 0, 1];

fn conn() -> Conn {
    Conn {
        mac_a: [2, 0, 0, 0, 0, 0xa],
        mac_b: MAC_SWITCH,
        net: NetSpec::V2Ipv4 {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 26,
            ecn: 2,
            ttl: 64,
            sport: 0xc001,
        },
        qp_a: 0x11,
        qp_b: 0x22,
        vlan: None,
    }
}

/// Frames at whole microseconds so that a µs pcap loses nothing.
struct Trace {
    frames: Vec<(u64, Vec<u8>)>,
}

impl Trace {
    fn new() -> Self {
        Trace { frames: Vec::new() }
    }
    fn at(&mut self, us: u64, frame: Vec<u8>) {
        self.frames.push((T0 + us * 1000, frame));
    }
}

fn analyze(path: &std::path::Path, opts: AnalysisOptions) -> Value {
    let file = CaptureFile::open(path).unwrap();
    let r = roce_dissect::pipeline::analyze(&file, &Default::default(), opts, None).unwrap();
    serde_json::to_value(&r).unwrap()
}

/// The report, identical for pcap µs, pcap ns and pcapng.
fn report_with(t: &Trace, opts: AnalysisOptions) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let mut reports = Vec::new();
    for (name, fmt) in [
        ("s.pcap", OutFormat::PcapMicros),
        ("s.ns.pcap", OutFormat::PcapNanos),
        ("s.pcapng", OutFormat::PcapNg),
    ] {
        let p = dir.path().join(name);
        let mut w = CaptureWriter::new(std::fs::File::create(&p).unwrap(), fmt).unwrap();
        for (ts, f) in &t.frames {
            w.write(*ts, f).unwrap();
        }
        w.flush().unwrap();
        let mut r = analyze(&p, opts.clone());
        let res = r["capture"]["ts_resolution_ns"].as_u64().unwrap();
        assert_eq!(
            res,
            if fmt == OutFormat::PcapMicros {
                1000
            } else {
                1
            }
        );
        for k in ["file", "format", "ts_resolution_ns"] {
            r["capture"].as_object_mut().unwrap().remove(k);
        }
        reports.push(r);
    }
    assert_eq!(reports[0], reports[1], "pcap µs and ns differ");
    assert_eq!(reports[1], reports[2], "pcap and pcapng differ");
    // The shapes the contract promises.
    let p = dir.path().join("report.json");
    std::fs::write(&p, serde_json::to_vec(&reports[0]).unwrap()).unwrap();
    let mut full = reports[0].clone();
    full["capture"]["file"] = "x".into();
    full["capture"]["ts_resolution_ns"] = 1.into();
    std::fs::write(&p, serde_json::to_vec(&full).unwrap()).unwrap();
    common::contract_check("report", &p);
    reports.pop().unwrap()
}

fn report(t: &Trace) -> Value {
    report_with(t, AnalysisOptions::default())
}

fn flow<'a>(r: &'a Value, src: &str, qp: u64) -> &'a Value {
    r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["src"] == src && f["destqp"] == qp)
        .unwrap_or_else(|| panic!("no flow from {src} to QP {qp}: {r:#}"))
}

fn counts(f: &Value) -> [u64; 6] {
    [
        "packets",
        "retransmits",
        "out_of_order",
        "missing",
        "ecn_ce",
        "cnps",
    ]
    .map(|k| f[k].as_u64().unwrap())
}

#[test]
fn sender_side_loss_nak_and_go_back_n() {
    // The capture is at the requester: it sees PSNs 1..=8 leave, PSN 4 dies
    // in the network, the responder NAKs PSN 4 and the requester replays 4..=8.
    let c = conn();
    let mut t = Trace::new();
    for psn in 1..=8 {
        t.at(psn as u64, bytes(&c.req(0x04, psn, 64)));
    }
    t.at(20, bytes(&c.ack(3, AckKind::Ack, 31, 3)));
    t.at(21, bytes(&c.ack(4, AckKind::Nak, 0, 3)));
    for (i, psn) in (4..=8).enumerate() {
        t.at(30 + i as u64, bytes(&c.req(0x04, psn, 64)));
    }
    t.at(40, bytes(&c.ack(8, AckKind::Ack, 31, 8)));
    let r = report(&t);
    let data = flow(&r, "10.0.0.1", 0x22);
    assert_eq!(counts(data), [13, 5, 0, 0, 0, 0]);
    assert_eq!(data["retransmit_episodes"], 1);
    let ep = &data["episodes"][0];
    assert_eq!(
        (
            ep["first_psn"].as_u64(),
            ep["last_psn"].as_u64(),
            ep["packets"].as_u64()
        ),
        (Some(4), Some(8), Some(5))
    );
    assert_eq!(ep["trigger"], "nak");
    assert_eq!(ep["nak_frame"], 10);
    assert_eq!(ep["latency_ns"], 9_000);
    let acks = flow(&r, "10.0.0.2", 0x11);
    assert_eq!(acks["naks"]["psn_seq_err"], 1);
    assert_eq!(acks["naks"]["rnr"], 0);
    assert_eq!(counts(acks), [3, 0, 0, 0, 0, 0]);
    // Paired by traffic: the ACK PSNs fall in the data flow's PSNs.
    assert_eq!(data["peer"]["destqp"], 0x11);
    assert_eq!(data["peer"]["paired_by"], "traffic");
    assert_eq!(r["connections"].as_array().unwrap().len(), 1);
    assert_eq!(r["capture"]["one_way_flows"], 0);
    let kinds = hint_kinds(&r);
    assert!(kinds.contains(&"psn_seq_err"), "{kinds:?}");
}

#[test]
fn receiver_side_gap_filled_late_and_replay() {
    // At the responder: PSN 3 never arrives first time; 4, 5 do; NAK 3;
    // the replay brings 3 (late, never seen) then 4, 5 (seen: retransmits).
    let c = conn();
    let mut t = Trace::new();
    for (us, psn) in [(1, 1), (2, 2), (3, 4), (4, 5)] {
        t.at(us, bytes(&c.req(0x0a, psn, 100)));
    }
    t.at(5, bytes(&c.ack(3, AckKind::Nak, 0, 2)));
    for (us, psn) in [(15, 3), (16, 4), (17, 5), (18, 6)] {
        t.at(us, bytes(&c.req(0x0a, psn, 100)));
    }
    // And a plain late arrival: 8 before 7.
    t.at(19, bytes(&c.req(0x0a, 8, 100)));
    t.at(20, bytes(&c.req(0x0a, 7, 100)));
    let r = report(&t);
    let data = flow(&r, "10.0.0.1", 0x22);
    assert_eq!(counts(data), [10, 2, 2, 0, 0, 0]);
    let ep = &data["episodes"][0];
    assert_eq!(
        (
            ep["first_psn"].as_u64(),
            ep["last_psn"].as_u64(),
            ep["packets"].as_u64()
        ),
        (Some(3), Some(5), Some(3))
    );
    assert_eq!(ep["trigger"], "nak");
    assert_eq!(ep["latency_ns"], 10_000);
    let kinds: Vec<(&str, u64)> = data["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["kind"].as_str().unwrap(), e["psn"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("gap", 3),
            ("out_of_order", 3),
            ("retransmit", 4),
            ("retransmit", 5),
            ("gap", 7),
            ("out_of_order", 7)
        ]
    );
    assert_eq!(data["events"][0]["count"], 1);
}

#[test]
fn permanent_hole_and_psn_wrap() {
    let c = conn();
    let mut t = Trace::new();
    // 0xfffffe, 0xffffff, 0, 1 in order across the wrap, then 3 (2 lost).
    for (us, psn) in [(1, 0xfffffe), (2, 0xffffff), (3, 0), (4, 1), (5, 3), (6, 4)] {
        t.at(us, bytes(&c.req(0x04, psn, 32)));
    }
    let r = report(&t);
    let data = flow(&r, "10.0.0.1", 0x22);
    assert_eq!(counts(data), [6, 0, 0, 1, 0, 0]);
    assert_eq!(data["events"][0]["kind"], "gap");
    assert_eq!(data["events"][0]["psn"], 2);
    // One direction only: an RC flow without its ACKs.
    assert_eq!(data["one_way"], true);
    assert_eq!(r["capture"]["one_way_flows"], 1);

    // A hole right at the wrap: 0xffffff then 1.
    let mut t = Trace::new();
    for (us, psn) in [(1, 0xfffffe), (2, 0xffffff), (3, 1)] {
        t.at(us, bytes(&c.req(0x04, psn, 32)));
    }
    let r = report(&t);
    let data = flow(&r, "10.0.0.1", 0x22);
    assert_eq!(data["missing"], 1);
    assert_eq!(data["events"][0]["psn"], 0);
}

#[test]
fn reads_with_1k_pmtu() {
    let c = conn();
    let mut t = Trace::new();
    // A 3 KiB WRITE teaches the PMTU (FIRST/MIDDLE payloads are one PMTU).
    t.at(1, bytes(&c.req(0x06, 100, 1024)));
    t.at(2, bytes(&c.req(0x07, 101, 1024)));
    t.at(3, bytes(&c.req(0x08, 102, 1000)));
    // READ of 3000 bytes: PSNs 103..=105; the next SEND is 106, no gap.
    t.at(4, bytes(&c.read(103, 3000)));
    t.at(5, bytes(&c.req(0x04, 106, 8)));
    // Responses: FIRST 103, MIDDLE 104, LAST 105, then a READ Only at 110
    // (ahead: a new response message, not a gap).
    t.at(6, bytes(&c.read_resp(0x0d, 103, 1024, 1)));
    t.at(7, bytes(&c.read_resp(0x0e, 104, 1024, 1)));
    t.at(8, bytes(&c.read_resp(0x0f, 105, 952, 2)));
    t.at(9, bytes(&c.read(107, 1024)));
    t.at(10, bytes(&c.req(0x04, 108, 8)));
    t.at(11, bytes(&c.read_resp(0x10, 107, 1024, 3)));
    // A MIDDLE response missing: FIRST 120 then LAST 122.
    t.at(12, bytes(&c.read(120, 2500)));
    t.at(13, bytes(&c.read_resp(0x0d, 120, 1024, 4)));
    t.at(14, bytes(&c.read_resp(0x0f, 122, 452, 4)));
    let r = report(&t);
    let req = flow(&r, "10.0.0.1", 0x22);
    // 109..=119 were skipped by the requester: a real gap of 11 PSNs.
    assert_eq!(counts(req), [8, 0, 0, 11, 0, 0]);
    assert_eq!(req["pmtu"], 1024);
    let resp = flow(&r, "10.0.0.2", 0x11);
    assert_eq!(counts(resp), [6, 0, 0, 1, 0, 0]);
    assert_eq!(resp["payload_bytes"], 1024 + 1024 + 952 + 1024 + 1024 + 452);
    assert_eq!(req["peer"]["destqp"], 0x11);
}

#[test]
fn read_pmtu_learnt_after_the_request() {
    // The READ comes first; its responses show the 1 KiB PMTU before the
    // next request, so the READ's 3 PSNs are known in time.
    let c = conn();
    let mut t = Trace::new();
    t.at(1, bytes(&c.read(10, 3072)));
    t.at(2, bytes(&c.read_resp(0x0d, 10, 1024, 1)));
    t.at(3, bytes(&c.read_resp(0x0e, 11, 1024, 1)));
    t.at(4, bytes(&c.read_resp(0x0f, 12, 1024, 1)));
    t.at(5, bytes(&c.req(0x04, 13, 16)));
    let r = report(&t);
    assert_eq!(counts(flow(&r, "10.0.0.1", 0x22)), [2, 0, 0, 0, 0, 0]);
    // With --pmtu 4096 and nothing to infer, a 8 KiB READ takes 2 PSNs.
    let mut t = Trace::new();
    t.at(1, bytes(&c.read(10, 8192)));
    t.at(2, bytes(&c.req(0x04, 12, 16)));
    let r = report_with(
        &t,
        AnalysisOptions {
            pmtu: Some(4096),
            ..Default::default()
        },
    );
    assert_eq!(flow(&r, "10.0.0.1", 0x22)["missing"], 0);
    // Without it the default is 4096 too.
    assert_eq!(
        counts(flow(&report(&t), "10.0.0.1", 0x22)),
        [2, 0, 0, 0, 0, 0]
    );
    // With --pmtu 2048 the READ takes PSNs 10..=13, so a SEND at 12 takes
    // a PSN the READ consumed: not a replay (a replay repeats the same
    // kind of request) but a PSN reuse, the requester breaking the rules.
    let r = report_with(
        &t,
        AnalysisOptions {
            pmtu: Some(2048),
            ..Default::default()
        },
    );
    let data = flow(&r, "10.0.0.1", 0x22);
    assert_eq!(counts(data), [2, 0, 0, 0, 0, 0]);
    assert_eq!(data["psn_reuse"], 1);
    assert_eq!(data["events"][0]["kind"], "psn_reuse");
    assert_eq!(data["retransmit_episodes"], 0);
}

#[test]
fn rnr_retry() {
    let c = conn();
    let mut t = Trace::new();
    t.at(1, bytes(&c.req(0x04, 50, 64)));
    t.at(2, bytes(&c.ack(50, AckKind::RnrNak, 14, 0)));
    t.at(1_300, bytes(&c.req(0x04, 50, 64)));
    t.at(1_301, bytes(&c.ack(50, AckKind::Ack, 31, 1)));
    let r = report(&t);
    let data = flow(&r, "10.0.0.1", 0x22);
    assert_eq!(counts(data), [2, 1, 0, 0, 0, 0]);
    assert_eq!(data["episodes"][0]["trigger"], "rnr");
    assert_eq!(data["episodes"][0]["latency_ns"], 1_298_000);
    let acks = flow(&r, "10.0.0.2", 0x11);
    assert_eq!(acks["naks"]["rnr"], 1);
    assert_eq!(acks["naks"]["psn_seq_err"], 0);
    assert_eq!(acks["events"][0]["kind"], "rnr_nak");
    assert_eq!(acks["events"][0]["code"], 14);
}

#[test]
fn timeout_retry_without_nak() {
    let c = conn();
    let mut t = Trace::new();
    t.at(1, bytes(&c.req(0x04, 7, 64)));
    t.at(8_001, bytes(&c.req(0x04, 7, 64)));
    let r = report(&t);
    let data = flow(&r, "10.0.0.1", 0x22);
    assert_eq!(data["retransmits"], 1);
    assert_eq!(data["episodes"][0]["trigger"], "timeout");
    assert_eq!(data["episodes"][0]["latency_ns"], 8_000_000);
}

#[test]
fn ce_marks_and_cnps() {
    let c = conn();
    let mut t = Trace::new();
    let ce = |psn| {
        let mut f = c.req(0x04, psn, 64);
        f.net = f.net.with_ecn(3);
        bytes(&f)
    };
    t.at(1, bytes(&c.req(0x04, 1, 64)));
    t.at(2, ce(2));
    t.at(3, ce(3));
    t.at(7, bytes(&c.cnp()));
    t.at(8, ce(4));
    t.at(20, bytes(&c.cnp()));
    t.at(21, bytes(&c.ack(4, AckKind::Ack, 31, 4)));
    let r = report(&t);
    let data = flow(&r, "10.0.0.1", 0x22);
    assert_eq!(counts(data), [4, 0, 0, 0, 3, 0]);
    assert_eq!(data["ce_to_cnp"]["count"], 2);
    assert_eq!(data["ce_to_cnp"]["min_ns"], 5_000);
    assert_eq!(data["ce_to_cnp"]["max_ns"], 12_000);
    assert_eq!(data["ce_to_cnp"]["mean_ns"], 8_500);
    let back = flow(&r, "10.0.0.2", 0x11);
    assert_eq!(counts(back), [3, 0, 0, 0, 0, 2]);
    // DSCP 26 → priority 3 under the default map; the CNPs' DSCP 48
    // (priority 6) does not change the flow's priority.
    assert_eq!(back["priority"], 3);
    assert_eq!(data["priority"], 3);
    // Per connection: CE marks against the CNPs returned.
    let conn = &r["connections"][0];
    assert_eq!(
        (conn["ecn_ce"].as_u64(), conn["cnps"].as_u64()),
        (Some(3), Some(2))
    );
}

#[test]
fn pfc_xoff_refresh_xon_expiry() {
    let c = conn();
    let mut t = Trace::new();
    let pfc = |enbv: u16, times: [u16; 8]| {
        let mut v = Vec::new();
        build_pfc(MAC_SWITCH, enbv, times, &mut v);
        v
    };
    // Priority 3 XOFF (65535 quanta = 335.539 µs at 100G), refreshed at
    // 100 µs, XON at 200 µs. Priority 4 has a time but is not enabled.
    t.at(0, pfc(0x08, [0, 0, 0, 65535, 9999, 0, 0, 0]));
    t.at(50, bytes(&c.req(0x04, 1, 64))); // DSCP 26 → priority 3, to the pauser
    t.at(100, pfc(0x08, [0, 0, 0, 65535, 0, 0, 0, 0]));
    t.at(200, pfc(0x08, [0; 8]));
    // Priority 3 again for 1000 quanta (5.12 µs): expires before the next frame.
    t.at(300, pfc(0x18, [0, 0, 0, 1000, 2000, 0, 0, 0]));
    t.at(400, pfc(0x08, [0, 0, 0, 500, 0, 0, 0, 0]));
    // 802.3x PAUSE from another MAC, left to expire at the end.
    let mut p = Vec::new();
    build_pause([2, 0xee, 0, 0, 0, 2], 65535, &mut p);
    t.at(500, p);
    let r = report(&t);
    let iv: Vec<(Option<u64>, u64, u64, &str)> = r["pfc"]["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["priority"].as_u64(),
                i["start_ns"].as_u64().unwrap() - T0,
                i["end_ns"].as_u64().unwrap() - T0,
                i["ended_by"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        iv,
        [
            (Some(3), 0, 200_000, "xon"),
            (Some(3), 300_000, 305_120, "expiry"),
            (Some(4), 300_000, 310_240, "expiry"),
            (Some(3), 400_000, 402_560, "expiry"),
            (None, 500_000, 835_539, "expiry"),
        ]
    );
    assert_eq!(r["pfc"]["frames"], 6);
    assert_eq!(r["pfc"]["link_speed_bps"], 100_000_000_000u64);
    // The SEND on priority 3 towards the paused port is named.
    assert_eq!(r["pfc"]["intervals"][0]["flows_total"], 1);
    let sum3 = r["pfc"]["summary"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["priority"] == 3)
        .unwrap();
    assert_eq!(sum3["paused_ns"], 200_000 + 5_120 + 2_560);
    assert_eq!(sum3["intervals"], 3);
    assert_eq!(r["pfc"]["storms"], 0);
    // At 25G a quantum is 20.48 ns.
    let r = report_with(
        &t,
        AnalysisOptions {
            link_speed: roce_dissect::analysis::LinkSpeed::fixed(25_000_000_000),
            ..Default::default()
        },
    );
    assert_eq!(
        r["pfc"]["intervals"][1]["end_ns"].as_u64().unwrap() - T0,
        300_000 + 20_480
    );
}

#[test]
fn pause_storm() {
    let mut t = Trace::new();
    // Refreshed every 300 µs for 150 ms.
    for i in 0..500u64 {
        let mut p = Vec::new();
        build_pfc(MAC_SWITCH, 0x08, [0, 0, 0, 65535, 0, 0, 0, 0], &mut p);
        t.at(i * 300, p);
    }
    let r = report(&t);
    assert_eq!(r["pfc"]["intervals"].as_array().unwrap().len(), 1);
    assert_eq!(r["pfc"]["storms"], 1);
    assert_eq!(
        r["pfc"]["intervals"][0]["end_ns"].as_u64().unwrap() - T0,
        499 * 300_000 + 335_539
    );
    assert!(
        r["hints"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["kind"] == "pause_storm")
    );
}

#[test]
fn capture_duplicates_are_not_retransmits() {
    let c = conn();
    let mut t = Trace::new();
    let f = bytes(&c.req(0x04, 1, 64));
    t.at(1, f.clone());
    t.at(2, f.clone()); // 1 µs later: mirror artifact
    t.at(3, bytes(&c.req(0x04, 2, 64)));
    t.at(500, f); // much later: a real retransmission
    let r = report(&t);
    let data = flow(&r, "10.0.0.1", 0x22);
    assert_eq!(counts(data), [4, 1, 0, 0, 0, 0]);
    assert_eq!(data["duplicates"], 1);
    assert_eq!(r["capture"]["duplicate_frames"], 1);
    assert_eq!(
        data["bytes"],
        4 * 122,
        "14 + 20 + 8 + 12 (BTH) + 64 + 4 (ICRC)"
    );
}

#[test]
fn cm_pairs_connections() {
    use roce_dissect::synth::frame::{cm_frame, cm_mad};
    use roce_dissect::wire::mad::CmMessage;
    let c = conn();
    let mut t = Trace::new();
    let req = cm_mad(
        1,
        &CmMessage::Req {
            local_comm_id: 7,
            service_id: 1,
            local_qpn: 0x11,
            starting_psn: 100,
            mtu: 3,
            nvme: None,
        },
    );
    let rep = cm_mad(
        1,
        &CmMessage::Rep {
            local_comm_id: 9,
            remote_comm_id: 7,
            local_qpn: 0x22,
            starting_psn: 500,
        },
    );
    t.at(1, bytes(&cm_frame(c.mac_a, c.mac_b, c.net, 1, &req)));
    t.at(
        2,
        bytes(&cm_frame(c.mac_b, c.mac_a, c.net.reversed(), 1, &rep)),
    );
    t.at(3, bytes(&c.req(0x04, 100, 8)));
    t.at(4, bytes(&c.cnp())); // no ACK: only CM can pair the CNP flow
    let r = report(&t);
    let data = flow(&r, "10.0.0.1", 0x22);
    assert_eq!(data["peer"]["paired_by"], "cm");
    assert_eq!(data["peer"]["destqp"], 0x11);
    assert_eq!(r["capture"]["cm_messages"], 2);
    // PMTU from the REQ's path MTU code 3 (1024).
    assert_eq!(data["pmtu"], 1024);
}

#[test]
fn cm_service_ids_name_the_upper_layer_protocol() {
    use roce_dissect::synth::frame::{cm_frame, cm_mad};
    use roce_dissect::wire::mad::CmMessage;
    use roce_dissect::wire::nvme::{CmReqData, service_id};
    let c = conn();
    for (sid, nvme, ulp, by, qid) in [
        (
            service_id(4420),
            Some(2u16),
            "nvme",
            Value::from("cm"),
            Value::from(2),
        ),
        (service_id(20049), None, "nfs", "cm".into(), Value::Null),
        (service_id(2050), None, "nfs", "cm".into(), Value::Null),
        (
            service_id(445),
            None,
            "smb-direct",
            "cm".into(),
            Value::Null,
        ),
        (service_id(3260), None, "iser", "cm".into(), Value::Null),
        (service_id(9999), None, "unknown", Value::Null, Value::Null),
        // Not the TCP port space.
        (0x4420, None, "unknown", Value::Null, Value::Null),
    ] {
        let mut t = Trace::new();
        let req = cm_mad(
            1,
            &CmMessage::Req {
                local_comm_id: 7,
                service_id: sid,
                local_qpn: 0x11,
                starting_psn: 100,
                mtu: 5,
                nvme: nvme.map(|qid| CmReqData {
                    qid,
                    hrqsize: 32,
                    hsqsize: 31,
                    ..CmReqData::default()
                }),
            },
        );
        let rep = cm_mad(
            1,
            &CmMessage::Rep {
                local_comm_id: 9,
                remote_comm_id: 7,
                local_qpn: 0x22,
                starting_psn: 500,
            },
        );
        t.at(1, bytes(&cm_frame(c.mac_a, c.mac_b, c.net, 1, &req)));
        t.at(
            2,
            bytes(&cm_frame(c.mac_b, c.mac_a, c.net.reversed(), 1, &rep)),
        );
        t.at(3, bytes(&c.req(0x04, 100, 64)));
        t.at(4, bytes(&c.ack(100, AckKind::Ack, 31, 1)));
        let r = report(&t);
        let conns = r["connections"].as_array().unwrap();
        let cm = conns
            .iter()
            .find(|x| x["paired_by"] == "cm")
            .unwrap_or_else(|| panic!("{sid:#x}: no CM connection in {conns:?}"));
        assert_eq!(cm["ulp"], ulp, "{sid:#x}");
        assert_eq!(cm["ulp_by"], by, "{sid:#x}");
        assert_eq!(
            cm.get("qid").cloned().unwrap_or(Value::Null),
            qid,
            "{sid:#x}"
        );
    }
}

#[test]
fn ud_flows_track_each_source_qp() {
    use roce_dissect::synth::frame::{ExtHeaders, Payload, RoceFrame};
    use roce_dissect::wire::{BthRepr, DethRepr, Opcode};
    let c = conn();
    let mut t = Trace::new();
    let ud = |src_qp, psn: u32| {
        bytes(&RoceFrame {
            src_mac: c.mac_a,
            dst_mac: c.mac_b,
            vlan: None,
            net: c.net,
            bth: BthRepr {
                opcode: Opcode(0x64),
                dest_qp: 0x99,
                psn: roce_dissect::wire::Psn::new(psn),
                ..Default::default()
            },
            ext: ExtHeaders {
                deth: Some(DethRepr {
                    q_key: 0x1111,
                    src_qp,
                }),
                ..Default::default()
            },
            payload: Payload::Pattern(16),
            bad_icrc: false,
        })
    };
    // Two senders to one UD QP, interleaved: no gaps. Sender 2 loses PSN 3.
    for (us, (q, p)) in [(1, 10), (2, 1), (1, 11), (2, 2), (1, 12), (2, 4)]
        .into_iter()
        .enumerate()
    {
        t.at(us as u64 + 1, ud(q, p));
    }
    let r = report(&t);
    let f = flow(&r, "10.0.0.1", 0x99);
    assert_eq!(counts(f), [6, 0, 0, 1, 0, 0]);
    assert_eq!(f["transport"], "UD");
    assert_eq!(f["one_way"], false);
}

#[test]
fn bad_icrc_is_counted() {
    let c = conn();
    let mut t = Trace::new();
    let mut f = c.req(0x04, 1, 64);
    f.bad_icrc = true;
    t.at(1, bytes(&f));
    let r = report(&t);
    assert_eq!(r["capture"]["icrc_errors"], 1);
    assert_eq!(flow(&r, "10.0.0.1", 0x22)["bad_icrc"], 1);
}

#[test]
fn a_new_cm_connection_on_reused_qps_restarts_the_psn_sequence() {
    use roce_dissect::synth::frame::{cm_frame, cm_mad};
    use roce_dissect::wire::mad::CmMessage;
    let c = conn();
    let mut t = Trace::new();
    let handshake = |t: &mut Trace, at: u64, comm: u32, psn: u32| {
        let req = cm_mad(
            1,
            &CmMessage::Req {
                local_comm_id: comm,
                service_id: 1,
                local_qpn: 0x11,
                starting_psn: psn,
                mtu: 5,
                nvme: None,
            },
        );
        let rep = cm_mad(
            1,
            &CmMessage::Rep {
                local_comm_id: comm + 1,
                remote_comm_id: comm,
                local_qpn: 0x22,
                starting_psn: psn,
            },
        );
        t.at(at, bytes(&cm_frame(c.mac_a, c.mac_b, c.net, comm, &req)));
        t.at(
            at + 1,
            bytes(&cm_frame(c.mac_b, c.mac_a, c.net.reversed(), comm, &rep)),
        );
    };
    handshake(&mut t, 1, 10, 100);
    t.at(5, bytes(&c.req(0x04, 100, 8)));
    t.at(6, bytes(&c.req(0x04, 101, 8)));
    t.at(7, bytes(&c.ack(101, AckKind::Ack, 31, 2)));
    // rping reconnects with the same QP numbers and a new starting PSN that
    // is "behind" the old one modulo 2^24.
    handshake(&mut t, 100, 20, 100 + (1 << 23) + 5);
    t.at(105, bytes(&c.req(0x04, 100 + (1 << 23) + 5, 8)));
    t.at(106, bytes(&c.ack(100 + (1 << 23) + 5, AckKind::Ack, 31, 1)));
    let r = report(&t);
    let data = flow(&r, "10.0.0.1", 0x22);
    assert_eq!(counts(data), [3, 0, 0, 0, 0, 0]);
    assert_eq!(data["peer"]["paired_by"], "cm");
}

#[test]
fn traffic_pairing_many_qps_between_two_hosts_and_across_the_psn_wrap() {
    // Three connections between the same two hosts, each data flow paired
    // with the ACK flow whose PSNs fall in its own: one wraps past 2^24 - 1,
    // two have close PSNs (the nearer next PSN is another flow's, whose
    // first PSN is after the ACK).
    let with = |qp_a, qp_b| Conn {
        qp_a,
        qp_b,
        ..conn()
    };
    let (x, y, z) = (with(0x31, 0x41), with(0x32, 0x42), with(0x33, 0x43));
    let mut t = Trace::new();
    let mut us = 0;
    let mut at = |t: &mut Trace, f: Vec<u8>| {
        us += 1;
        t.at(us, f);
    };
    for psn in [0xff_fffe, 0xff_ffff, 0, 1] {
        at(&mut t, bytes(&x.req(0x04, psn, 64)));
    }
    for psn in 100..=104 {
        at(&mut t, bytes(&y.req(0x04, psn, 64)));
    }
    for psn in 110..=112 {
        at(&mut t, bytes(&z.req(0x04, psn, 64)));
    }
    // ACKs in the order z, y, x: later responders must not take the
    // earlier ones' partners.
    at(&mut t, bytes(&z.ack(111, AckKind::Ack, 31, 1)));
    at(&mut t, bytes(&y.ack(102, AckKind::Ack, 31, 1)));
    at(&mut t, bytes(&x.ack(0xff_ffff, AckKind::Ack, 31, 1)));
    let r = report(&t);
    for (data_qp, ack_qp) in [(0x41, 0x31), (0x42, 0x32), (0x43, 0x33)] {
        let data = flow(&r, "10.0.0.1", data_qp);
        assert_eq!(data["peer"]["destqp"], ack_qp, "{data:#}");
        assert_eq!(data["peer"]["paired_by"], "traffic");
        let ack = flow(&r, "10.0.0.2", ack_qp);
        assert_eq!(ack["peer"]["destqp"], data_qp, "{ack:#}");
    }
    assert_eq!(r["connections"].as_array().unwrap().len(), 3);
    assert_eq!(r["capture"]["one_way_flows"], 0);
}

#[test]
fn pause_interval_counts_each_flow_once_beyond_the_named_ones() {
    // 20 flows send 3 frames each towards a port paused on priority 3: the
    // interval names 16 of them and counts 20, not one per frame past 16.
    let mut t = Trace::new();
    let mut pfc = Vec::new();
    build_pfc(MAC_SWITCH, 0x08, [0, 0, 0, 65535, 0, 0, 0, 0], &mut pfc);
    t.at(0, pfc);
    for round in 0..3u32 {
        for i in 0..20u32 {
            let c = Conn {
                qp_b: 0x100 + i,
                ..conn()
            };
            t.at(
                1 + u64::from(round * 20 + i),
                bytes(&c.req(0x04, 1 + round, 64)),
            );
        }
    }
    let mut xon = Vec::new();
    build_pfc(MAC_SWITCH, 0x08, [0; 8], &mut xon);
    t.at(100, xon);
    let r = report(&t);
    let iv = &r["pfc"]["intervals"][0];
    assert_eq!(iv["ended_by"], "xon");
    assert_eq!(iv["flows"].as_array().unwrap().len(), 16);
    assert_eq!(iv["flows_total"], 20, "{iv:#}");
}

#[test]
fn nak_caused_by_reordering_is_not_called_a_drop() {
    // At the responder: 4 arrives before 3 (swapped on the way); the
    // responder NAKs 3, which then arrives, late; the requester replays
    // 3 and 4 anyway. Nothing was lost.
    let c = conn();
    let mut t = Trace::new();
    for (us, psn) in [(1, 1), (2, 2), (3, 4), (4, 3)] {
        t.at(us, bytes(&c.req(0x0a, psn, 100)));
    }
    t.at(5, bytes(&c.ack(3, AckKind::Nak, 0, 2)));
    for (us, psn) in [(15, 3), (16, 4), (17, 5)] {
        t.at(us, bytes(&c.req(0x0a, psn, 100)));
    }
    t.at(18, bytes(&c.ack(5, AckKind::Ack, 31, 5)));
    let r = report(&t);
    let data = flow(&r, "10.0.0.1", 0x22);
    assert_eq!(counts(data), [7, 2, 1, 0, 0, 0]);
    let ep = &data["episodes"][0];
    assert_eq!(
        (ep["trigger"].as_str(), ep["reordered"].as_bool()),
        (Some("nak"), Some(true))
    );
    let kinds = hint_kinds(&r);
    assert!(kinds.contains(&"psn_seq_err_reorder"), "{kinds:?}");
    assert!(
        !kinds.contains(&"psn_seq_err"),
        "no drop is claimed: {kinds:?}"
    );
}

#[test]
fn nak_with_a_loss_before_the_capture_names_drops() {
    // At the responder: 3 is lost; 4 arrives, NAK 3, the replay brings 3
    // (never seen: out of order) and 4 again.
    let c = conn();
    let mut t = Trace::new();
    for (us, psn) in [(1, 1), (2, 2), (3, 4)] {
        t.at(us, bytes(&c.req(0x0a, psn, 100)));
    }
    t.at(4, bytes(&c.ack(3, AckKind::Nak, 0, 2)));
    for (us, psn) in [(15, 3), (16, 4), (17, 5)] {
        t.at(us, bytes(&c.req(0x0a, psn, 100)));
    }
    let r = report(&t);
    let data = flow(&r, "10.0.0.1", 0x22);
    assert_eq!(data["episodes"][0]["reordered"], false);
    let kinds = hint_kinds(&r);
    assert!(kinds.contains(&"psn_seq_err"), "{kinds:?}");
    assert!(!kinds.contains(&"psn_seq_err_reorder"), "{kinds:?}");
}

#[test]
fn nak_with_nothing_missing_or_replayed_says_the_capture_does_not_show_it() {
    let c = conn();
    let mut t = Trace::new();
    for (us, psn) in [(1, 1), (2, 2), (3, 3)] {
        t.at(us, bytes(&c.req(0x0a, psn, 100)));
    }
    t.at(4, bytes(&c.ack(3, AckKind::Nak, 0, 2)));
    let r = report(&t);
    let kinds = hint_kinds(&r);
    assert_eq!(kinds, ["psn_seq_err_unseen"], "{kinds:?}");
}

#[test]
fn read_replayed_and_never_answered() {
    // A SEND is ACKed (so both directions are known), then a READ is
    // retried three times with no response before the capture ends.
    let c = conn();
    let mut t = Trace::new();
    t.at(1, bytes(&c.req(0x04, 9, 64)));
    t.at(2, bytes(&c.ack(9, AckKind::Ack, 31, 1)));
    for us in [10, 20_000, 40_000, 60_000] {
        t.at(us, bytes(&c.read(10, 1024)));
    }
    let r = report(&t);
    let data = flow(&r, "10.0.0.1", 0x22);
    assert_eq!(data["retransmits"], 3);
    assert_eq!(data["unanswered_reads"], 1);
    assert_eq!(data["episodes"][0]["trigger"], "timeout");
    let kinds = hint_kinds(&r);
    assert!(kinds.contains(&"unanswered_read"), "{kinds:?}");
    assert!(
        !kinds.contains(&"timeout"),
        "not blamed on lost ACKs: {kinds:?}"
    );
    // Once answered, it is an ordinary timeout.
    t.at(60_010, bytes(&c.read_resp(0x10, 10, 1024, 2)));
    let r = report(&t);
    assert_eq!(flow(&r, "10.0.0.1", 0x22)["unanswered_reads"], 0);
    let kinds = hint_kinds(&r);
    assert!(kinds.contains(&"timeout"), "{kinds:?}");
    assert!(!kinds.contains(&"unanswered_read"), "{kinds:?}");
}

#[test]
fn a_capture_whose_icrcs_all_fail_is_summarised() {
    let c = conn();
    let mut t = Trace::new();
    for i in 0..300u32 {
        let mut f = c.req(0x04, i, 64);
        f.bad_icrc = true;
        t.at(u64::from(i) + 1, bytes(&f));
    }
    let r = report(&t);
    assert_eq!(r["capture"]["icrc_errors"], 300);
    let data = flow(&r, "10.0.0.1", 0x22);
    assert_eq!(data["bad_icrc"], 300);
    assert!(data["events"].as_array().unwrap().is_empty(), "{data}");
    assert_eq!(hint_kinds(&r), ["icrc_not_preserved", "one_way"]);
    let text = serde_json::to_string(&r).unwrap();
    assert!(text.len() < 8_000, "{} bytes", text.len());
    // A few bad ones among good ones are listed, with the usual hint.
    let mut t = Trace::new();
    for i in 0..300u32 {
        let mut f = c.req(0x04, i, 64);
        f.bad_icrc = i % 100 == 7;
        t.at(u64::from(i) + 1, bytes(&f));
    }
    let r = report(&t);
    let data = flow(&r, "10.0.0.1", 0x22);
    assert_eq!(data["events"].as_array().unwrap().len(), 3);
    assert!(hint_kinds(&r).contains(&"bad_icrc"));
}

#[test]
fn events_are_capped_in_total_and_every_cap_is_counted() {
    // Two flows with 10 CE marks each, interleaved.
    let c = conn();
    let mut d = conn();
    d.qp_b = 0x33;
    let mut t = Trace::new();
    for i in 0..10u32 {
        for (k, cc) in [&c, &d].into_iter().enumerate() {
            let mut f = cc.req(0x04, i, 64);
            f.net = f.net.with_ecn(3);
            t.at(u64::from(i * 2 + k as u32) + 1, bytes(&f));
        }
    }
    let caps = |per_flow: usize, total: u64| {
        let r = report_with(
            &t,
            AnalysisOptions {
                limits: roce_dissect::analysis::Limits {
                    events_per_flow: per_flow,
                    events_total: total,
                    ..Default::default()
                },
                ..Default::default()
            },
        );
        let flows = r["flows"].as_array().unwrap();
        let kept: Vec<usize> = flows
            .iter()
            .map(|f| f["events"].as_array().unwrap().len())
            .collect();
        let dropped: Vec<u64> = flows
            .iter()
            .map(|f| f["events_dropped"].as_u64().unwrap())
            .collect();
        let warned = r["capture"]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("--max-events-total"));
        (
            kept,
            dropped,
            r["capture"]["events_dropped"].as_u64().unwrap(),
            warned,
        )
    };
    // 6 in all: 3 on each flow; the other 14 counted, per flow and in all.
    assert_eq!(caps(4, 6), (vec![3, 3], vec![7, 7], 14, true));
    // 2 per flow: the total never runs out, no warning.
    assert_eq!(caps(2, 100), (vec![2, 2], vec![8, 8], 0, false));
}

fn limits(f: impl FnOnce(&mut roce_dissect::analysis::Limits)) -> AnalysisOptions {
    let mut opts = AnalysisOptions::default();
    f(&mut opts.limits);
    opts
}

fn warned(r: &Value, needle: &str) -> bool {
    r["capture"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains(needle))
}

#[test]
fn flows_beyond_the_budget_are_counted_not_analysed() {
    // 10 flows of 3 frames each; 4 are analysed.
    let mut t = Trace::new();
    for round in 0..3u32 {
        for q in 0..10u32 {
            let mut c = conn();
            c.qp_b = 0x100 + q;
            t.at(
                u64::from(round * 10 + q) + 1,
                bytes(&c.req(0x04, round, 64)),
            );
        }
    }
    let r = report_with(&t, limits(|l| l.flows = 4));
    assert_eq!(r["flows"].as_array().unwrap().len(), 4);
    assert_eq!(r["capture"]["flows_dropped"], 6);
    assert_eq!(r["capture"]["untracked_frames"], 18);
    assert_eq!(r["capture"]["frames"], 30, "every frame is counted");
    assert!(warned(&r, "6 flows beyond --max-flows 4"));
    // Within the budget: nothing dropped, no warning.
    let r = report(&t);
    assert_eq!(r["capture"]["flows_dropped"], 0);
    assert!(!warned(&r, "--max-flows"));
}

#[test]
fn ud_sources_pause_sources_intervals_and_cm_requests_have_budgets() {
    use roce_dissect::synth::frame::{ExtHeaders, Payload, RoceFrame, cm_frame, cm_mad};
    use roce_dissect::wire::mad::CmMessage;
    use roce_dissect::wire::{BthRepr, DethRepr, Opcode};
    let c = conn();
    let mut t = Trace::new();
    // 5 UD source QPs, 2 frames each (2 followed).
    for k in 0..10u32 {
        t.at(
            u64::from(k) + 1,
            bytes(&RoceFrame {
                src_mac: c.mac_a,
                dst_mac: c.mac_b,
                vlan: None,
                net: c.net,
                bth: BthRepr {
                    opcode: Opcode(0x64),
                    dest_qp: 0x99,
                    psn: roce_dissect::wire::Psn::new(k / 5),
                    ..Default::default()
                },
                ext: ExtHeaders {
                    deth: Some(DethRepr {
                        q_key: 1,
                        src_qp: 0x500 + k % 5,
                    }),
                    ..Default::default()
                },
                payload: Payload::Pattern(16),
                bad_icrc: false,
            }),
        );
    }
    // 3 MACs pause (2 tracked); the first flaps XOFF/XON 5 times (3 listed).
    let pfc = |mac: [u8; 6], q: u16| {
        let mut v = Vec::new();
        let mut times = [0; 8];
        times[3] = q;
        build_pfc(mac, 0x08, times, &mut v);
        v
    };
    for k in 0..5u64 {
        t.at(100 + 10 * k, pfc([2, 0xee, 0, 0, 0, 1], 65535));
        t.at(105 + 10 * k, pfc([2, 0xee, 0, 0, 0, 1], 0));
    }
    t.at(200, pfc([2, 0xee, 0, 0, 0, 2], 100));
    t.at(201, pfc([2, 0xee, 0, 0, 0, 3], 100));
    // 4 CM requests with no reply (2 remembered).
    for k in 0..4u32 {
        let mad = cm_mad(
            u64::from(k),
            &CmMessage::Req {
                local_comm_id: 0x100 + k,
                service_id: 0x0106_0000_0000_1234,
                local_qpn: 0x11,
                starting_psn: 0,
                mtu: 5,
                nvme: None,
            },
        );
        t.at(
            300 + u64::from(k),
            bytes(&cm_frame(c.mac_a, c.mac_b, c.net, k, &mad)),
        );
    }
    let r = report_with(
        &t,
        limits(|l| {
            l.ud_sources = 2;
            l.pause_sources = 2;
            l.intervals = 3;
            l.cm_pending = 2;
        }),
    );
    let cap = &r["capture"];
    // Three of the five data senders (the CM requests to QP 1 are
    // management datagrams, whose PSNs are not followed).
    assert_eq!(cap["ud_sources_dropped"], 3);
    assert_eq!(cap["pause_sources_dropped"], 1);
    assert_eq!(cap["intervals_dropped"], 3, "5 + 1 intervals, 3 listed");
    assert_eq!(cap["cm_dropped"], 2);
    assert_eq!(r["pfc"]["intervals"].as_array().unwrap().len(), 3);
    // The summary counts every interval of the flapping MAC.
    let s = &r["pfc"]["summary"].as_array().unwrap();
    let flapping = s
        .iter()
        .find(|s| s["src_mac"] == "02:ee:00:00:00:01")
        .unwrap();
    assert_eq!(flapping["intervals"], 5);
    assert_eq!(flapping["paused_ns"], 5 * 5_000);
    // The UD flow still counts every packet.
    assert_eq!(flow(&r, "10.0.0.1", 0x99)["packets"], 10);
    for w in [
        "--max-ud-sources 2",
        "--max-pause-sources 2",
        "--max-intervals 3",
        "--max-cm-pending 2",
    ] {
        assert!(warned(&r, w), "no warning naming {w}");
    }
}

#[test]
fn a_read_of_2_to_the_23_psns_leaves_nothing_missing() {
    // PMTU 256 (from the CM REQ), a READ of 2^31 bytes: 2^23 PSNs, then the
    // next requests in order.
    use roce_dissect::synth::frame::{cm_frame, cm_mad};
    use roce_dissect::wire::mad::CmMessage;
    let c = conn();
    let mut t = Trace::new();
    let mad = cm_mad(
        1,
        &CmMessage::Req {
            local_comm_id: 1,
            service_id: 0x0106_0000_0000_1234,
            local_qpn: 0x11,
            starting_psn: 10,
            mtu: 1,
            nvme: None,
        },
    );
    t.at(1, bytes(&cm_frame(c.mac_a, c.mac_b, c.net, 1, &mad)));
    t.at(2, bytes(&c.read(10, 1 << 31)));
    let next = 10 + (1u32 << 23);
    for k in 0..3 {
        t.at(3 + u64::from(k), bytes(&c.req(0x04, next + k, 64)));
    }
    let r = report(&t);
    let f = flow(&r, "10.0.0.1", 0x22);
    assert_eq!(counts(f), [4, 0, 0, 0, 0, 0], "{f}");
    assert_eq!(f["pmtu"], 256);
}

#[test]
fn timestamps_going_back_give_the_real_span_and_a_warning() {
    let c = conn();
    let mut t = Trace::new();
    t.at(50, bytes(&c.req(0x04, 1, 64)));
    t.at(10, bytes(&c.req(0x04, 2, 64)));
    t.at(90, bytes(&c.req(0x04, 3, 64)));
    let r = report(&t);
    assert_eq!(r["capture"]["first_ts_ns"], T0 + 10_000);
    assert_eq!(r["capture"]["duration_ns"], 80_000);
    assert!(warned(
        &r,
        "1 frame is stamped earlier than the frame before it"
    ));
}

/// QPs between the same two hosts with no CM: each ACK flow is matched to
/// the one request flow waiting for its PSN, by looking at all of them.
/// Tens of QPs are matched exactly; thousands would make the analysis
/// quadratic in flows, so the looks are budgeted (1 << 24, and 256 a
/// frame): the answers past it go unmatched, are counted, and a warning
/// says so.
#[test]
fn acks_are_matched_to_requests_within_a_budget_of_looks() {
    let run = |qps: u32| {
        let mut t = Trace::new();
        let conns: Vec<Conn> = (0..qps)
            .map(|q| Conn {
                qp_a: 0x100 + q,
                qp_b: 0x10_0000 + q,
                ..conn()
            })
            .collect();
        // Every QP's one WRITE (each at its own PSN), then every ACK.
        for (q, c) in conns.iter().enumerate() {
            t.at(1 + q as u64, bytes(&c.req(0x0a, 16 * q as u32, 64)));
        }
        for (q, c) in conns.iter().enumerate() {
            let psn = 16 * q as u32;
            t.at(100_000 + q as u64, bytes(&c.ack(psn, AckKind::Ack, 31, 1)));
        }
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("qps.pcap");
        let mut w =
            CaptureWriter::new(std::fs::File::create(&p).unwrap(), OutFormat::PcapMicros).unwrap();
        for (ts, f) in &t.frames {
            w.write(*ts, f).unwrap();
        }
        w.flush().unwrap();
        let r = analyze(&p, AnalysisOptions::default());
        let flows = r["flows"].as_array().unwrap();
        assert_eq!(flows.len(), 2 * qps as usize);
        let timed = flows
            .iter()
            .filter(|f| f["timing"]["rtt"]["count"] == 1)
            .count() as u64;
        let warning = r["capture"]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .find(|w| w.contains("were not matched to the request flow"))
            .map(str::to_owned);
        (timed, warning)
    };
    // 64 QPs: every round trip, no warning.
    assert_eq!(run(64), (64, None));
    // 8 192 QPs: matching them all takes 8 192 looks each (67 M), past
    // the budget of 16.8 M and 256 for each of the 16 384 frames.
    let (timed, warning) = run(8192);
    let warning = warning.expect("a warning for the unmatched answers");
    let unmatched: u64 = warning.split(' ').next().unwrap().parse().unwrap();
    assert_eq!(timed + unmatched, 8192, "{warning}");
    assert!((1000..8192).contains(&timed), "{timed} matched");
}
