//! `gen --scenario nvme` against its truth: every NVMe-oF figure of the
//! report (queues, latencies by command, time to first data, the slowest
//! I/Os, errors) for 20 seeds and three capture formats; and the same I/Os
//! found by the payload heuristic once the CM frames are cut out.

mod common;

use roce_dissect::analysis::AnalysisOptions;
use roce_dissect::analysis::nvme::UlpRule;
use roce_dissect::capture::CaptureFile;
use roce_dissect::synth::scenario::{GenOptions, LossSide, Scenario, Truth, generate};
use roce_dissect::synth::{CaptureWriter, OutFormat};
use serde_json::Value;

fn options(seed: u64) -> GenOptions {
    GenOptions {
        scenario: Scenario::Nvme,
        seed,
        qps: 1 + (seed as u32 % 4),
        messages: 30,
        size: [8192, 4096, 20_000, 512][seed as usize % 4],
        pmtu: [4096, 1024, 2048, 1024, 256][seed as usize % 5],
        loss_side: LossSide::Sender,
        read_delay_ns: [2_000, 15_000, 500][seed as usize % 3],
        ..GenOptions::default()
    }
}

fn generated(seed: u64, fmt: OutFormat) -> (Vec<u8>, Truth) {
    let mut w = CaptureWriter::new(Vec::new(), fmt).unwrap();
    let opts = GenOptions {
        ts_resolution_ns: fmt.ts_resolution_ns(),
        ..options(seed)
    };
    let truth = generate(opts, &mut |ts, f| w.write(ts, f)).unwrap();
    (w.into_inner(), truth)
}

fn report(bytes: Vec<u8>, ulp: UlpRule) -> Value {
    let file = CaptureFile::from_bytes(bytes);
    let opts = AnalysisOptions {
        ulp,
        ..AnalysisOptions::default()
    };
    let r = roce_dissect::pipeline::analyze(&file, &Default::default(), opts, None).unwrap();
    serde_json::to_value(&r).unwrap()
}

/// `v` without its `connection` indexes (they follow the flows' order by
/// trouble, which the truth does not know).
fn without_connections(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| *k != "connection")
                .map(|(k, v)| (k.clone(), without_connections(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_connections).collect()),
        v => v.clone(),
    }
}

#[test]
fn the_nvme_scenario_agrees_with_its_truth_for_20_seeds() {
    // What the seeds exercised, summed: errors, replayed data, slow I/Os
    // among the slowest, in-capsule writes, multi-packet capsules,
    // host writes (RDMA READ) and reads (RDMA WRITE).
    let mut seen = [0u64; 6];
    for seed in 1..=20u64 {
        let fmt = [
            OutFormat::PcapMicros,
            OutFormat::PcapNanos,
            OutFormat::PcapNg,
        ][seed as usize % 3];
        let (bytes, truth) = generated(seed, fmt);
        let what = format!("seed {seed} ({fmt:?})");
        let r = report(bytes, UlpRule::default());
        assert_eq!(r["capture"]["frames"], truth.frames, "{what}: frames");
        let want =
            without_connections(&serde_json::to_value(truth.nvme.as_ref().unwrap()).unwrap());
        let got = without_connections(&r["nvme"]);
        for k in want.as_object().unwrap().keys() {
            assert_eq!(got[k], want[k], "{what}: nvme.{k}");
        }
        // Each queue names its connection, which says the same.
        for q in r["nvme"]["queues"].as_array().unwrap() {
            let c = &r["connections"][q["connection"].as_u64().unwrap() as usize];
            assert_eq!(c["ulp"], "nvme", "{what}");
            assert_eq!(c["ulp_by"], "cm", "{what}");
            assert_eq!(c["qid"], q["qid"], "{what}");
        }
        let flows = r["flows"].as_array().unwrap();
        assert_eq!(flows.len(), truth.flows.len(), "{what}: flows");
        for t in &truth.flows {
            let f = flows
                .iter()
                .find(|f| {
                    f["src"] == t.src.as_str()
                        && f["dst"] == t.dst.as_str()
                        && f["destqp"] == t.destqp
                })
                .unwrap();
            let tv = serde_json::to_value(t).unwrap();
            for k in [
                "packets",
                "retransmits",
                "out_of_order",
                "missing",
                "ecn_ce",
                "cnps",
                "naks",
            ] {
                assert_eq!(f[k], tv[k], "{what}: flow {} → {}: {k}", t.src, t.dst);
            }
        }
        let n = truth.nvme.unwrap();
        seen[0] += n.errors.len() as u64;
        seen[1] += truth.flows.iter().map(|f| f.retransmits).sum::<u64>();
        seen[2] += u64::from(n.slowest[0].latency_ns.unwrap() >= 2_000_000);
        seen[3] += n
            .slowest
            .iter()
            .filter(|io| io.opcode == "write" && io.first_data_ns.is_none())
            .count() as u64
            + n.queues
                .iter()
                .filter(|q| q.by_opcode.contains_key("write"))
                .count() as u64;
        seen[4] += u64::from(n.queues.iter().any(|q| q.bytes_written > 0));
        seen[5] += u64::from(n.queues.iter().any(|q| q.bytes_read > 0));
    }
    assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
}

/// The capture without its CM frames (UD to QP 1), and how many there were.
fn cut_cm(bytes: &[u8]) -> (Vec<u8>, u64) {
    let file = CaptureFile::from_bytes(bytes.to_vec());
    let mut w = CaptureWriter::new(Vec::new(), OutFormat::PcapNanos).unwrap();
    let mut cut = 0;
    for f in file.frames().unwrap() {
        let f = f.unwrap();
        let p = roce_dissect::dissect::dissect(&f, &Default::default());
        if p.bth.is_some_and(|b| b.dest_qp == 1) {
            cut += 1;
            continue;
        }
        w.write(f.ts_ns, f.data).unwrap();
    }
    (w.into_inner(), cut)
}

/// The I/Os of a report's `nvme`, frames shifted back by `shift`, without
/// what depends on how the queues were known.
fn ios(n: &Value, shift: u64) -> Value {
    let mut v = without_connections(n);
    for q in v["queues"].as_array_mut().unwrap() {
        q.as_object_mut().unwrap().remove("ulp_by");
    }
    for list in ["slowest", "unanswered"] {
        for io in v[list].as_array_mut().unwrap() {
            for k in ["command_frame", "cqe_frame"] {
                if let Some(x) = io[k].as_u64() {
                    io[k] = (x + shift).into();
                }
            }
        }
    }
    v
}

#[test]
fn without_the_cm_the_heuristic_finds_the_same_ios() {
    for seed in 1..=20u64 {
        let (bytes, _) = generated(seed, OutFormat::PcapNanos);
        let with_cm = report(bytes.clone(), UlpRule::default());
        let (cut, n) = cut_cm(&bytes);
        assert_eq!(n, 3 * (1 + u64::from(options(seed).qps)), "seed {seed}");
        let guessed = report(cut.clone(), UlpRule::default());
        assert_eq!(
            ios(&guessed["nvme"], n),
            ios(&with_cm["nvme"], 0),
            "seed {seed}"
        );
        for q in guessed["nvme"]["queues"].as_array().unwrap() {
            assert_eq!(q["ulp_by"], "heuristic");
            let c = &guessed["connections"][q["connection"].as_u64().unwrap() as usize];
            assert_eq!(
                (&c["ulp"], &c["ulp_by"]),
                (&"nvme".into(), &"heuristic".into())
            );
            assert_eq!(c["qid"], q["qid"], "the Connect says the queue");
        }
        // --ulp nvme: the same, said by the option.
        let mut rule = UlpRule::default();
        rule.add("nvme").unwrap();
        let forced = report(cut.clone(), rule);
        assert_eq!(ios(&forced["nvme"], n), ios(&with_cm["nvme"], 0));
        assert!(
            forced["nvme"]["queues"]
                .as_array()
                .unwrap()
                .iter()
                .all(|q| q["ulp_by"] == "option")
        );
        // --ulp none: the CM only, so nothing.
        let mut none = UlpRule::default();
        none.add("none").unwrap();
        let off = report(cut, none);
        assert!(off.get("nvme").is_none(), "seed {seed}");
    }
}

#[test]
fn the_report_command_shows_the_nvme_section() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("nvme.pcap");
    let out = common::bin()
        .args(["gen", "--scenario", "nvme", "--seed", "5", "-o"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = common::bin().arg(&p).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("NVMe-oF"), "{text}");
    // Every queue's Connect, with its NQNs in -V (the capsule fits a
    // 4096-byte PMTU).
    let out = common::bin()
        .arg("packets")
        .arg(&p)
        .args(["-V", "-Y", "nvme.fabrics.cmd.fctype == 1"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.matches("Host NQN: nqn.2014-08.org.nvmexpress:uuid:roce-dissect-host")
            .count(),
        5,
        "{text}"
    );
    let bad = common::bin()
        .arg(&p)
        .args(["--ulp", "iser"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8(bad.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("only NVMe-oF"), "{err}");
}
