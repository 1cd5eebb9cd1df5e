//! `flows[].timing` on hand-built captures, one definition per test, with
//! the figures worked out by hand from the frame times: coalesced ACKs,
//! NAK samples, Karn's rule on replays, a PSN wrap, a message split by a
//! replay, READs (latency, completion, a retried READ), incomplete
//! messages. Each capture is written as pcap (ns) and pcapng and must give
//! the same figures.

mod common;

use std::net::Ipv4Addr;

use roce_dissect::analysis::AnalysisOptions;
use roce_dissect::capture::CaptureFile;
use roce_dissect::synth::conn::{Conn, bytes};
use roce_dissect::synth::frame::NetSpec;
use roce_dissect::synth::{CaptureWriter, OutFormat};
use roce_dissect::wire::AckKind;
use serde_json::{Value, json};

const T0: u64 = 1_700_000_000_000_000_000;

fn conn(qp_a: u32, qp_b: u32) -> Conn {
    Conn {
        mac_a: [2, 0, 0, 0, 0, 0xa],
        mac_b: [2, 0, 0, 0, 0, 0xb],
        net: NetSpec::V2Ipv4 {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 26,
            ecn: 2,
            ttl: 64,
            sport: 0xc001,
        },
        qp_a,
        qp_b,
        vlan: None,
    }
}

/// Frames at nanosecond times.
#[derive(Default)]
struct Trace(Vec<(u64, Vec<u8>)>);

impl Trace {
    fn at(&mut self, ns: u64, frame: Vec<u8>) {
        self.0.push((T0 + ns, frame));
    }
}

/// The report's flows, the same from a ns pcap and a pcapng.
fn flows(t: &Trace) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let mut got = Vec::new();
    for (name, fmt) in [
        ("t.ns.pcap", OutFormat::PcapNanos),
        ("t.pcapng", OutFormat::PcapNg),
    ] {
        let p = dir.path().join(name);
        let mut w = CaptureWriter::new(std::fs::File::create(&p).unwrap(), fmt).unwrap();
        for (ts, f) in &t.0 {
            w.write(*ts, f).unwrap();
        }
        w.flush().unwrap();
        let file = CaptureFile::open(&p).unwrap();
        let r = roce_dissect::pipeline::analyze(
            &file,
            &Default::default(),
            AnalysisOptions::default(),
            None,
        )
        .unwrap();
        let v = serde_json::to_value(&r).unwrap();
        got.push(v["flows"].as_array().unwrap().clone());
    }
    assert_eq!(got[0], got[1], "ns pcap and pcapng differ");
    got.pop().unwrap()
}

/// The timing of the flow to QP `qp`.
fn timing(flows: &[Value], qp: u64) -> Value {
    flows
        .iter()
        .find(|f| f["destqp"] == qp)
        .unwrap_or_else(|| panic!("no flow to QP {qp}"))["timing"]
        .clone()
}

fn stats(count: u64, min: u64, p50: u64, p99: u64, max: u64, mean: u64) -> Value {
    json!({"count": count, "min_ns": min, "p50_ns": p50, "p99_ns": p99, "max_ns": max, "mean_ns": mean})
}

const WRITE_FIRST: u8 = 0x06;
const WRITE_MIDDLE: u8 = 0x07;
const WRITE_LAST: u8 = 0x08;
const SEND_ONLY: u8 = 0x04;
const READ_FIRST: u8 = 0x0d;
const READ_MIDDLE: u8 = 0x0e;
const READ_LAST: u8 = 0x0f;
const READ_ONLY: u8 = 0x10;

#[test]
fn coalesced_acks_give_one_sample_and_complete_every_message_they_cover() {
    let c = conn(0x11, 0x22);
    let mut t = Trace::default();
    // A WRITE of three packets (PSN 10-12) and two SENDs (13, 14).
    t.at(0, bytes(&c.req(WRITE_FIRST, 10, 1024)));
    t.at(1_000, bytes(&c.req(WRITE_MIDDLE, 11, 1024)));
    t.at(2_000, bytes(&c.req(WRITE_LAST, 12, 512)));
    t.at(3_000, bytes(&c.req(SEND_ONLY, 13, 100)));
    t.at(4_000, bytes(&c.req(SEND_ONLY, 14, 60)));
    // One ACK for 10-13: a sample for PSN 13 (sent at 3 µs), the WRITE
    // and the first SEND complete.
    t.at(10_000, bytes(&c.ack(13, AckKind::Ack, 31, 2)));
    // The second SEND's ACK.
    t.at(14_500, bytes(&c.ack(14, AckKind::Ack, 31, 3)));
    let f = flows(&t);
    let tm = timing(&f, 0x22);
    // RTT: 10 000 - 3 000 and 14 500 - 4 000.
    assert_eq!(tm["rtt"], stats(2, 7_000, 7_000, 10_500, 10_500, 8_750));
    // Messages: 2560, 100 and 60 bytes.
    assert_eq!(
        tm["messages"],
        json!({"count": 3, "bytes": 2720, "size": {"min": 60, "p50": 100, "p99": 2560, "max": 2560}})
    );
    // Completion: WRITE 0 → 10 000, SEND 3 000 → 10 000, SEND 4 000 → 14 500.
    assert_eq!(
        tm["completion"],
        stats(3, 7_000, 10_000, 10_500, 10_500, 9_166)
    );
    assert_eq!(tm["incomplete"], 0);
    assert_eq!(tm["acks"], json!({"count": 2, "per_request_packets": 2.5}));
    assert!(tm.get("read_latency").is_none(), "{tm}");
    // The ACK flow has no timing of its own.
    assert_eq!(timing(&f, 0x11), Value::Null);
}

#[test]
fn naks_sample_karn_skips_replays_and_a_replay_splits_nothing() {
    let c = conn(0x11, 0x22);
    let mut t = Trace::default();
    // A WRITE of PSN 1-3; PSN 2 is lost past the capture point.
    t.at(0, bytes(&c.req(WRITE_FIRST, 1, 1024)));
    t.at(1_000, bytes(&c.req(WRITE_MIDDLE, 2, 1024)));
    t.at(2_000, bytes(&c.req(WRITE_LAST, 3, 1024)));
    // NAK (PSN sequence error) for 2: acknowledges 1; a sample for PSN 2
    // (sent once so far): 9 000 - 1 000.
    t.at(9_000, bytes(&c.ack(2, AckKind::Nak, 0, 0)));
    // The replay of 2 and 3 (go-back-N).
    t.at(10_000, bytes(&c.req(WRITE_MIDDLE, 2, 1024)));
    t.at(11_000, bytes(&c.req(WRITE_LAST, 3, 1024)));
    // ACK of 3: PSN 3 went twice, no sample (Karn). The WRITE completes:
    // 0 → 15 000, one message of 3 072 bytes despite the replay.
    t.at(15_000, bytes(&c.ack(3, AckKind::Ack, 31, 1)));
    let tm = timing(&flows(&t), 0x22);
    assert_eq!(tm["rtt"], stats(1, 8_000, 8_000, 8_000, 8_000, 8_000));
    assert_eq!(tm["messages"]["count"], 1);
    assert_eq!(tm["messages"]["bytes"], 3072);
    assert_eq!(
        tm["completion"],
        stats(1, 15_000, 15_000, 15_000, 15_000, 15_000)
    );
    assert_eq!(tm["acks"], json!({"count": 2, "per_request_packets": 1.5}));
}

#[test]
fn psns_wrap() {
    let c = conn(0x11, 0x22);
    let mut t = Trace::default();
    t.at(0, bytes(&c.req(SEND_ONLY, 0xff_fffe, 10)));
    t.at(1_000, bytes(&c.req(SEND_ONLY, 0xff_ffff, 10)));
    t.at(2_000, bytes(&c.req(SEND_ONLY, 0, 10)));
    t.at(3_000, bytes(&c.req(SEND_ONLY, 1, 10)));
    // An ACK of 0 after the wrap acknowledges 0xfffffe..0.
    t.at(5_000, bytes(&c.ack(0, AckKind::Ack, 31, 3)));
    t.at(6_000, bytes(&c.ack(1, AckKind::Ack, 31, 4)));
    let tm = timing(&flows(&t), 0x22);
    assert_eq!(tm["rtt"], stats(2, 3_000, 3_000, 3_000, 3_000, 3_000));
    // 0 → 5 000, 1 000 → 5 000, 2 000 → 5 000, 3 000 → 6 000.
    assert_eq!(
        tm["completion"],
        stats(4, 3_000, 3_000, 5_000, 5_000, 3_750)
    );
    assert_eq!(tm["acks"], json!({"count": 2, "per_request_packets": 2.0}));
}

#[test]
fn reads_latency_completion_and_a_retried_read() {
    let c = conn(0x11, 0x22);
    let mut t = Trace::default();
    // READ of 3 packets (PSN 100-102), answered FIRST/MIDDLE/LAST.
    t.at(0, bytes(&c.read(100, 3000)));
    t.at(6_000, bytes(&c.read_resp(READ_FIRST, 100, 1024, 0)));
    t.at(7_000, bytes(&c.read_resp(READ_MIDDLE, 101, 1024, 0)));
    t.at(8_000, bytes(&c.read_resp(READ_LAST, 102, 952, 1)));
    // A READ (PSN 103) whose response never comes; asked again at 50 µs,
    // answered ONLY at 53 µs: no latency or RTT sample (sent twice), but
    // its completion counts from the first request.
    t.at(10_000, bytes(&c.read(103, 500)));
    t.at(50_000, bytes(&c.read(103, 500)));
    t.at(53_000, bytes(&c.read_resp(READ_ONLY, 103, 500, 2)));
    let tm = timing(&flows(&t), 0x22);
    assert_eq!(
        tm["read_latency"],
        stats(1, 6_000, 6_000, 6_000, 6_000, 6_000)
    );
    assert_eq!(tm["rtt"], stats(1, 6_000, 6_000, 6_000, 6_000, 6_000));
    assert_eq!(
        tm["completion"],
        stats(2, 8_000, 8_000, 43_000, 43_000, 25_500)
    );
    assert_eq!(
        tm["messages"],
        json!({"count": 2, "bytes": 3500, "size": {"min": 500, "p50": 500, "p99": 3000, "max": 3000}})
    );
    assert_eq!(tm["incomplete"], 0);
    assert!(tm.get("acks").is_none(), "{tm}");
}

#[test]
fn messages_never_answered_are_incomplete() {
    let c = conn(0x11, 0x22);
    let mut t = Trace::default();
    t.at(0, bytes(&c.req(SEND_ONLY, 5, 64)));
    t.at(1_000, bytes(&c.req(SEND_ONLY, 6, 64)));
    t.at(2_000, bytes(&c.read(7, 4096)));
    t.at(3_000, bytes(&c.req(WRITE_FIRST, 8, 1024)));
    t.at(4_000, bytes(&c.ack(5, AckKind::Ack, 31, 1)));
    let tm = timing(&flows(&t), 0x22);
    // SEND 6, the READ and the unfinished WRITE.
    assert_eq!(tm["incomplete"], 3);
    assert_eq!(tm["completion"]["count"], 1);
    assert_eq!(tm["messages"]["count"], 3);
}

#[test]
fn two_qps_between_the_same_hosts_answer_their_own_requests() {
    // No CM: each ACK flow finds its request flow by the PSN it answers.
    let c1 = conn(0x11, 0x22);
    let c2 = conn(0x33, 0x44);
    let mut t = Trace::default();
    t.at(0, bytes(&c1.req(SEND_ONLY, 1000, 64)));
    t.at(500, bytes(&c2.req(SEND_ONLY, 5000, 64)));
    t.at(3_000, bytes(&c2.ack(5000, AckKind::Ack, 31, 1)));
    t.at(9_000, bytes(&c1.ack(1000, AckKind::Ack, 31, 1)));
    let f = flows(&t);
    assert_eq!(
        timing(&f, 0x22)["rtt"],
        stats(1, 9_000, 9_000, 9_000, 9_000, 9_000)
    );
    assert_eq!(
        timing(&f, 0x44)["rtt"],
        stats(1, 2_500, 2_500, 2_500, 2_500, 2_500)
    );
}

#[test]
fn a_qp_that_asks_and_answers_keeps_its_responses_out_of_its_requests() {
    // One QP pair used both ways (NVMe-oF does this: the host SENDs
    // commands and answers the target's READs on the same QP). A's READ
    // responses carry B's READ PSNs: they wait for no ACK, and an ACK of
    // A's requests acknowledges A's requests only.
    let c = conn(0x11, 0x22);
    let rev = Conn {
        mac_a: c.mac_b,
        mac_b: c.mac_a,
        net: c.net.reversed(),
        qp_a: c.qp_b,
        qp_b: c.qp_a,
        vlan: None,
    };
    let mut t = Trace::default();
    t.at(0, bytes(&c.req(SEND_ONLY, 1000, 16)));
    t.at(2_000, bytes(&c.ack(1000, AckKind::Ack, 31, 1)));
    // B reads 2 KiB from A: A answers on the flow of its own requests.
    t.at(3_000, bytes(&rev.read(5000, 2048)));
    t.at(4_000, bytes(&rev.read_resp(READ_FIRST, 5000, 1024, 1)));
    t.at(4_500, bytes(&rev.read_resp(READ_LAST, 5001, 1024, 1)));
    t.at(6_000, bytes(&c.req(SEND_ONLY, 1001, 16)));
    t.at(9_000, bytes(&c.ack(1001, AckKind::Ack, 31, 2)));
    let f = flows(&t);
    let a = timing(&f, 0x22);
    assert_eq!(a["rtt"], stats(2, 2_000, 2_000, 3_000, 3_000, 2_500));
    assert_eq!(a["completion"], stats(2, 2_000, 2_000, 3_000, 3_000, 2_500));
    assert_eq!(a["acks"], json!({"count": 2, "per_request_packets": 1.0}));
    assert_eq!(a["incomplete"], 0);
    let b = timing(&f, 0x11);
    assert_eq!(
        b["read_latency"],
        stats(1, 1_000, 1_000, 1_000, 1_000, 1_000)
    );
    assert_eq!(b["completion"], stats(1, 1_500, 1_500, 1_500, 1_500, 1_500));
    assert_eq!(b["incomplete"], 0);
}

#[test]
fn a_reconnect_on_a_reused_qp_answers_the_new_connection() {
    // rping reconnects with A's QP number again and a new QP on B: A's
    // requests go to a new flow, B's ACKs come on the old ACK flow. The CM
    // names the new pair, and the ACKs answer it from then on.
    use roce_dissect::synth::frame::{cm_frame, cm_mad};
    use roce_dissect::wire::mad::CmMessage;
    let handshake = |t: &mut Trace, at: u64, c: &Conn, comm: u32, psn: u32| {
        let req = cm_mad(
            u64::from(comm),
            &CmMessage::Req {
                local_comm_id: comm,
                service_id: 1,
                local_qpn: c.qp_a,
                starting_psn: psn,
                mtu: 5,
                nvme: None,
            },
        );
        let rep = cm_mad(
            u64::from(comm),
            &CmMessage::Rep {
                local_comm_id: comm + 1,
                remote_comm_id: comm,
                local_qpn: c.qp_b,
                starting_psn: psn,
            },
        );
        t.at(at, bytes(&cm_frame(c.mac_a, c.mac_b, c.net, comm, &req)));
        t.at(
            at + 1_000,
            bytes(&cm_frame(c.mac_b, c.mac_a, c.net.reversed(), comm, &rep)),
        );
    };
    let (first, second) = (conn(0x11, 0x22), conn(0x11, 0x23));
    let mut t = Trace::default();
    handshake(&mut t, 0, &first, 10, 100);
    t.at(10_000, bytes(&first.req(SEND_ONLY, 100, 8)));
    t.at(12_000, bytes(&first.ack(100, AckKind::Ack, 31, 1)));
    handshake(&mut t, 100_000, &second, 20, 500);
    t.at(110_000, bytes(&second.req(SEND_ONLY, 500, 8)));
    t.at(115_000, bytes(&second.ack(500, AckKind::Ack, 31, 1)));
    let f = flows(&t);
    let old = timing(&f, 0x22);
    assert_eq!(old["rtt"], stats(1, 2_000, 2_000, 2_000, 2_000, 2_000));
    assert_eq!(old["acks"], json!({"count": 1, "per_request_packets": 1.0}));
    let new = timing(&f, 0x23);
    assert_eq!(new["rtt"], stats(1, 5_000, 5_000, 5_000, 5_000, 5_000));
    assert_eq!(new["acks"], json!({"count": 1, "per_request_packets": 1.0}));
    assert_eq!(new["incomplete"], 0);
}

#[test]
fn timeouts_imply_the_local_ack_timeout() {
    let c = conn(0x11, 0x22);
    let mut t = Trace::default();
    // PSN 7 goes unanswered; resent after 600 µs of silence, twice.
    t.at(0, bytes(&c.req(SEND_ONLY, 7, 64)));
    t.at(600_000, bytes(&c.req(SEND_ONLY, 7, 64)));
    t.at(1_200_000, bytes(&c.req(SEND_ONLY, 7, 64)));
    t.at(1_203_000, bytes(&c.ack(7, AckKind::Ack, 31, 1)));
    let f = flows(&t);
    let tm = timing(&f, 0x22);
    // 4.096 µs × 2^7 = 524 µs ≤ 600 µs < 2^8 × 4.096 µs.
    assert_eq!(
        tm["timeout"],
        json!({"resends": 2, "silence_min_ns": 600_000, "silence_mean_ns": 600_000,
               "silence_max_ns": 600_000, "t": 7, "implied_ns": 524_288, "retries": 2})
    );
    // Karn: no RTT sample; the message took 1.203 ms.
    assert!(tm.get("rtt").is_none(), "{tm}");
    assert_eq!(
        tm["completion"],
        stats(1, 1_203_000, 1_203_000, 1_203_000, 1_203_000, 1_203_000)
    );
    // A flow without timeouts says null.
    t.0.clear();
    t.at(0, bytes(&c.req(SEND_ONLY, 7, 64)));
    t.at(3_000, bytes(&c.ack(7, AckKind::Ack, 31, 1)));
    assert_eq!(timing(&flows(&t), 0x22)["timeout"], Value::Null);
}

/// Two real captures (soft-RoCE WRITE + READ on one connection), their
/// figures worked out from tshark's `frame.time_epoch` of the frames named.
#[test]
fn external_captures_by_hand() {
    let Some(dir) = common::external_dir() else {
        return;
    };
    // (file, request QP, [RTT min, max], completion [min, max], READ latency)
    let cases = [
        // Frame 4 RC WRITE Only PSN 9209053 at .558857, frame 5 its ACK at
        // .558877: RTT and completion 20 µs. Frame 6 READ request PSN
        // 9209054 at .559491, frame 7 READ Response First at .559510: RTT
        // and READ latency 19 µs; frame 10 READ Response Last at .559540:
        // completion 49 µs.
        (
            "montybeatnik-rdma-roce-lab__roce_capture_read-write-ecn.pcap",
            17,
            [19_000, 20_000],
            [20_000, 49_000],
            19_000,
        ),
        // Frame 4 WRITE Only PSN 12726936 at .518062, frame 5 ACK at
        // .518079: 17 µs. Frame 6 READ request at .518778, frame 7 First
        // at .518792: 14 µs; frame 10 Last at .518814: 36 µs.
        (
            "montybeatnik-rdma-roce-lab__test.pcap",
            17,
            [14_000, 17_000],
            [17_000, 36_000],
            14_000,
        ),
    ];
    for (name, qp, rtt, done, read) in cases {
        let path = dir.join(name);
        if !path.exists() {
            common::skip(name, "absent from ../shared/captures-external");
            continue;
        }
        let out = common::bin().arg(&path).arg("--json").output().unwrap();
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        // The requester's flow (the answers go to a QP of the same number).
        let tm = r["flows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["destqp"] == qp && f["timing"].is_object())
            .unwrap_or_else(|| panic!("{name}: no timing"))["timing"]
            .clone();
        assert_eq!(
            [tm["rtt"]["min_ns"].clone(), tm["rtt"]["max_ns"].clone()],
            rtt.map(Value::from),
            "{name}"
        );
        assert_eq!(
            [
                tm["completion"]["min_ns"].clone(),
                tm["completion"]["max_ns"].clone()
            ],
            done.map(Value::from),
            "{name}"
        );
        assert_eq!(tm["read_latency"]["p50_ns"], read, "{name}");
        assert_eq!(
            tm["messages"]["bytes"], 4114,
            "{name}: 18 written, 4096 read"
        );
    }
}
