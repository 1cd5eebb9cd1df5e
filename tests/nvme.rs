//! NVMe over Fabrics on RDMA: what the RDMA CM says of a connection, held
//! against tshark where it decodes the same bytes.

mod common;

use std::process::Command;

use roce_dissect::synth::frame::{cm_frame, cm_mad};
use roce_dissect::synth::samples::{MAC_A, MAC_B, networks};
use roce_dissect::wire::mad::{self, CmMessage};
use roce_dissect::wire::nvme::{CmReqData, service_id};

fn nvme_req(qid: u16) -> CmMessage {
    CmMessage::Req {
        local_comm_id: 0x2000 + u32::from(qid),
        service_id: service_id(4420),
        local_qpn: 0x40 + u32::from(qid),
        starting_psn: 1000,
        mtu: 5,
        nvme: Some(CmReqData {
            recfmt: 0,
            qid,
            hrqsize: 128,
            hsqsize: 127,
            cntlid: if qid == 0 { 0xffff } else { 1 },
        }),
    }
}

#[test]
fn a_cm_req_to_port_4420_carries_the_queue_it_opens() {
    // Its MAD parses back with the private data.
    for qid in [0u16, 1, 7] {
        let m = cm_mad(9, &nvme_req(qid));
        let (_, msg) = mad::parse(&m).unwrap();
        assert_eq!(msg, Some(nvme_req(qid)));
    }
    // tshark reads the same port and the same private data bytes (its
    // "IP CM" header then "Consumer PrivateData").
    if !common::have_tshark() {
        common::skip(
            "the CM REQ private data against tshark",
            "tshark is not installed",
        );
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let keep = std::env::var_os("NVME_KEEP");
    let frames: Vec<Vec<u8>> = [0u16, 3]
        .iter()
        .map(|&qid| {
            let m = cm_mad(9, &nvme_req(qid));
            roce_dissect::synth::conn::bytes(&cm_frame(MAC_A, MAC_B, networks(0xc000)[0], 3, &m))
        })
        .collect();
    let p = common::write_pcap(d.path(), "cm.pcap", &frames);
    if let Some(k) = keep {
        std::fs::copy(&p, k).unwrap();
    }
    let out = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(&p)
        .args([
            "-T",
            "fields",
            "-e",
            "infiniband.cm.req.serviceid.dport",
            "-e",
            "infiniband.cm.req.ip_cm.sport",
            "-e",
            "infiniband.cm.req.ip_cm",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    for (line, qid) in lines.iter().zip([0u16, 3]) {
        let f: Vec<&str> = line.split('\t').collect();
        let [port, ip_port, private] = f[..] else {
            panic!("{line}")
        };
        // The ServiceID's port, and the IP CM header's.
        assert_eq!((port, ip_port), ("0x1144", "0x1144"), "{line}");
        let bytes: Vec<u8> = (0..private.len() / 2)
            .map(|i| u8::from_str_radix(&private[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        assert_eq!(bytes.len(), 92, "{line}");
        let d = CmReqData::parse(&bytes[36..]).unwrap();
        assert_eq!(d.qid, qid);
        assert_eq!((d.hrqsize, d.hsqsize), (128, 127));
        // The RDMA CM IP header names the port too (big-endian).
        assert_eq!(&bytes[2..4], &4420u16.to_be_bytes());
    }
}

/// An NVMe-oF I/O queue set up by the CM (queue 1), a Read of 8 blocks
/// answered after 30 µs, a Write answered with an error, and a Read on
/// a connection the CM never announced (not decoded).
fn io_queue_capture(dir: &std::path::Path) -> std::path::PathBuf {
    use roce_dissect::synth::conn::{Conn, bytes};
    use roce_dissect::synth::frame::NetSpec;
    use roce_dissect::wire::nvme::{CqeRepr, SglRepr, SqeRepr};
    use std::net::Ipv4Addr;
    let conn = |host: u8, qp_a: u32, qp_b: u32| Conn {
        mac_a: [2, 0, 0, 0, 0, host],
        mac_b: [2, 0, 0, 0, 1, 1],
        net: NetSpec::V2Ipv4 {
            src: Ipv4Addr::new(10, 0, 0, host),
            dst: Ipv4Addr::new(10, 0, 1, 1),
            dscp: 26,
            ecn: 2,
            ttl: 64,
            sport: 0xc000,
        },
        qp_a,
        qp_b,
        vlan: None,
    };
    let c = conn(1, 0x40 + 1, 0x80);
    let mut req = nvme_req(1);
    if let CmMessage::Req { local_qpn, .. } = &mut req {
        *local_qpn = c.qp_a;
    }
    let rep = CmMessage::Rep {
        local_comm_id: 0x77,
        remote_comm_id: 0x2001,
        local_qpn: c.qp_b,
        starting_psn: 1000,
    };
    let sqe = |opcode: u8, cid: u16, slba: u64, nlb: u16| {
        let s = SqeRepr {
            opcode,
            flags: 0x40,
            cid,
            nsid: 1,
            sgl: SglRepr {
                address: 0x7f00_0000_1000,
                length: (u32::from(nlb) + 1) * 512,
                key: 0x1234,
                sgl_type: 4,
                subtype: 0,
            },
            cdw10_15: [slba as u32, (slba >> 32) as u32, u32::from(nlb), 0, 0, 0],
            ..SqeRepr::default()
        };
        let mut b = vec![0u8; 64];
        s.emit(&mut b).unwrap();
        b
    };
    let cqe = |cid: u16, sqhd: u16, status: u16| {
        let mut b = vec![0u8; 16];
        CqeRepr {
            result: 0,
            sqhd,
            sqid: 1,
            cid,
            status,
        }
        .emit(&mut b)
        .unwrap();
        b
    };
    let read = sqe(0x02, 17, 2048, 7);
    let write = sqe(0x01, 18, 4096, 0);
    let ok = cqe(17, 1, 0);
    // Unrecovered Read Error with DNR: media errors (type 2), code 0x81.
    let bad = cqe(18, 2, 0x8000 | 2 << 9 | 0x81 << 1);
    let other = conn(9, 0x300, 0x301);
    let stray = sqe(0x02, 5, 0, 0);
    let mut req_mad = cm_mad(1, &req);
    roce_dissect::synth::frame::fill_req_primary_path(&mut req_mad, &c.net);
    let mut frames = vec![
        bytes(&cm_frame(c.mac_a, c.mac_b, c.net, 1, &req_mad)),
        bytes(&cm_frame(
            c.mac_b,
            c.mac_a,
            c.net.reversed(),
            1,
            &cm_mad(1, &rep),
        )),
        bytes(&c.send(true, 1000, &read)),
        bytes(&c.send(false, 1000, &ok)),
        bytes(&c.send(true, 1001, &write)),
        bytes(&c.send(false, 1001, &bad)),
        bytes(&other.send(true, 7, &stray)),
    ];
    // Frame times: 0, 10 µs, 20 µs, 50 µs (the Read's answer), 60, 90.
    let times = [0u64, 10_000, 20_000, 50_000, 60_000, 90_000, 95_000];
    let mut w = roce_dissect::synth::CaptureWriter::new(
        Vec::new(),
        roce_dissect::synth::OutFormat::PcapNanos,
    )
    .unwrap();
    for (f, t) in frames.drain(..).zip(times) {
        w.write(1_700_000_000_000_000_000 + t, &f).unwrap();
    }
    let p = dir.join("nvme.pcap");
    std::fs::write(&p, w.into_inner()).unwrap();
    p
}

#[test]
fn packets_show_the_capsules_of_a_queue_the_cm_set_up() {
    let d = tempfile::tempdir().unwrap();
    let p = io_queue_capture(d.path());
    if let Some(k) = std::env::var_os("NVME_KEEP") {
        std::fs::copy(&p, k).unwrap();
    }
    let out = common::bin().arg("packets").arg(&p).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 7, "{text}");
    assert!(
        lines[2].ends_with("NVMe Read CID=17 NSID=1 LBA=2048 len=8"),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].ends_with("NVMe CQE CID=17 SQHD=1 Successful Completion"),
        "{}",
        lines[3]
    );
    assert!(
        lines[4].ends_with("NVMe Write CID=18 NSID=1 LBA=4096 len=1"),
        "{}",
        lines[4]
    );
    assert!(
        lines[5].ends_with("NVMe CQE CID=18 SQHD=2 Unrecovered Read Error DNR"),
        "{}",
        lines[5]
    );
    // No CM for that connection: not known to be NVMe-oF (yet).
    assert!(!lines[6].contains("NVMe"), "{}", lines[6]);
    // The report names the connection.
    let out = common::bin().arg(&p).arg("--json").output().unwrap();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &r["connections"][0];
    assert_eq!(
        (c["ulp"].as_str(), c["ulp_by"].as_str()),
        (Some("nvme"), Some("cm"))
    );
    assert_eq!(c["qid"], 1);
}

#[test]
fn capsules_decode_as_tshark_decodes_them() {
    use roce_dissect::capture::CaptureFile;
    use roce_dissect::dissect::{DissectOptions, dissect};
    use roce_dissect::wire::nvme::{CqeRepr, SqeRepr};
    if !common::have_tshark() {
        common::skip("NVMe-oF capsules against tshark", "tshark is not installed");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let p = io_queue_capture(d.path());
    let out = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(&p)
        .args(["-T", "fields"])
        .args(
            [
                "nvme.cmd.opc",
                "nvme.cmd.cid",
                "nvme.cmd.nsid",
                "nvme.cmd.slba",
                "nvme.cmd.nlb",
                "nvme.cqe.cid",
                "nvme.cqe.sqhd",
                "nvme.cqe.status",
                "nvme.cmd_latency",
            ]
            .iter()
            .flat_map(|f| ["-e", f]),
        )
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let theirs: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    // Ours, from the same frames' payloads, in tshark's notation.
    let file = CaptureFile::open(&p).unwrap();
    let mut ours = Vec::new();
    let mut command_ts = std::collections::HashMap::new();
    for f in file.frames().unwrap() {
        let f = f.unwrap();
        let pkt = dissect(&f, &DissectOptions::default());
        let payload = pkt
            .offsets
            .payload
            .map(|at| {
                &pkt.data[usize::from(at)..usize::from(at) + pkt.payload_len.unwrap() as usize]
            })
            .unwrap_or_default();
        let n = f.number;
        let mut row = vec![String::new(); 9];
        // Frames 3 and 5 are commands, 4 and 6 their answers; 7 is on a
        // connection the CM never set up (neither of us decodes it).
        match n {
            3 | 5 => {
                let s = SqeRepr::parse(payload).unwrap();
                row[0] = format!("0x{:02x}", s.opcode);
                row[1] = format!("0x{:04x}", s.cid);
                row[2] = format!("0x{:08x}", s.nsid);
                row[3] = format!("0x{:016x}", s.slba());
                row[4] = (u32::from(s.nlb()) + 1).to_string();
                command_ts.insert(s.cid, f.ts_ns);
            }
            4 | 6 => {
                let c = CqeRepr::parse(payload).unwrap();
                row[5] = format!("0x{:04x}", c.cid);
                row[6] = format!("0x{:04x}", c.sqhd);
                row[7] = format!("0x{:04x}", c.status);
                let ms = (f.ts_ns - command_ts[&c.cid]) as f64 / 1e6;
                row[8] = format!("{ms}");
            }
            _ => {}
        }
        ours.push(row);
    }
    assert_eq!(theirs.len(), ours.len(), "{text}");
    for (i, (t, o)) in theirs.iter().zip(&ours).enumerate() {
        assert_eq!(t, o, "frame {}", i + 1);
    }
    // And `packets -T fields` with the same fields (all but the latency,
    // still to come) prints what tshark prints, byte for byte.
    let fields = [
        "nvme.cmd.opc",
        "nvme.cmd.cid",
        "nvme.cmd.nsid",
        "nvme.cmd.slba",
        "nvme.cmd.nlb",
        "nvme.cqe.cid",
        "nvme.cqe.sqhd",
        "nvme.cqe.status",
    ];
    let tshark_fields = |args: &[&str]| {
        let out = Command::new("tshark")
            .args(["-n", "-r"])
            .arg(&p)
            .args(["-T", "fields"])
            .args(fields.iter().flat_map(|f| ["-e", f]))
            .args(args)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let ours = |args: &[&str]| {
        let out = common::bin()
            .arg("packets")
            .arg(&p)
            .args(["-T", "fields"])
            .args(fields.iter().flat_map(|f| ["-e", f]))
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(ours(&[]), tshark_fields(&[]));
    // A filter on them too: the failed command's answer.
    let failed = ["-Y", "nvme.cqe.status != 0"];
    assert_eq!(ours(&failed), tshark_fields(&failed));
    assert_eq!(ours(&failed).lines().count(), 1);
}

#[test]
fn the_tui_shows_and_filters_the_capsules() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let d = tempfile::tempdir().unwrap();
    let p = io_queue_capture(d.path());
    let mut app =
        roce_dissect::tui::load(&p, &Default::default(), Default::default(), &mut |_, _| {})
            .unwrap();
    for ch in "/nvme.cqe.status != 0".chars() {
        app.handle_key(KeyEvent::new(KeyCode::Char(ch), KeyModifiers::NONE));
    }
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let found = app.display.as_ref().expect("a display filter");
    assert_eq!(found.matched, 1);
    assert!(found.frames[5], "frame 6, the failed command's answer");
    // Its packet list line names the capsule.
    app.handle_key(KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE));
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(160, 30)).unwrap();
    app.prepare(t.get_frame().area());
    assert!(
        app.packet_rows.iter().any(|r| r
            .text
            .ends_with("NVMe CQE CID=18 SQHD=2 Unrecovered Read Error DNR")),
        "{:?}",
        app.packet_rows.iter().map(|r| &r.text).collect::<Vec<_>>()
    );
}

/// The NVMe-oF fields tshark 4.0 and `packets -T fields` both print.
const NVME_FIELDS: [&str; 15] = [
    "frame.number",
    "nvme.cmd.opc",
    "nvme.cmd.cid",
    "nvme.cmd.nsid",
    "nvme.cmd.slba",
    "nvme.cmd.nlb",
    "nvme.cqe.cid",
    "nvme.cqe.sqhd",
    "nvme.cqe.sqid",
    "nvme.cqe.status",
    "nvme.cmd_latency",
    "nvme.fabrics.cmd.opc",
    "nvme.fabrics.cmd.cid",
    "nvme.fabrics.cmd.fctype",
    "nvme.fabrics.cmd_latency",
];

#[test]
fn generated_nvme_queues_decode_as_tshark_decodes_them() {
    if !common::have_tshark() {
        common::skip(
            "the nvme scenario's capsules and latencies against tshark",
            "tshark is not installed",
        );
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let (mut lines, mut beyond) = (0, 0);
    for seed in 1..=4u64 {
        let p = d.path().join(format!("nvme{seed}.pcapng"));
        let gen_out = common::bin()
            .args(["gen", "--scenario", "nvme", "--pmtu", "4096", "--qps", "2"])
            .args(["--seed", &seed.to_string(), "-o"])
            .arg(&p)
            .output()
            .unwrap();
        assert!(gen_out.status.success());
        let run = |tshark: bool| {
            let mut c = if tshark {
                let mut c = Command::new("tshark");
                c.args(["-n", "-r"]).arg(&p);
                c
            } else {
                let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_roce-dissect"));
                c.arg("packets").arg(&p);
                c
            };
            let out = c
                .args(["-T", "fields"])
                .args(NVME_FIELDS.iter().flat_map(|f| ["-e", f]))
                .output()
                .unwrap();
            String::from_utf8(out.stdout).unwrap()
        };
        let (theirs, ours) = (run(true), run(false));
        let summary = common::bin().arg("packets").arg(&p).output().unwrap();
        let summary = String::from_utf8(summary.stdout).unwrap();
        let summary: Vec<&str> = summary.lines().collect();
        assert_eq!(theirs.lines().count(), ours.lines().count());
        // Byte for byte, but where tshark decodes nothing: a command in a
        // SEND First (in-capsule data past one PMTU), and its response
        // (tshark lost the command), which we decode.
        let mut first_cids = Vec::new();
        for (n, (t, o)) in theirs.lines().zip(ours.lines()).enumerate() {
            lines += 1;
            if t == o {
                continue;
            }
            beyond += 1;
            assert!(
                t.split('\t').skip(1).all(str::is_empty),
                "frame {}: {t} / {o}",
                n + 1
            );
            let f: Vec<&str> = o.split('\t').collect();
            if summary[n].contains("SEND First") {
                first_cids.push(f[2].to_string());
            } else {
                assert!(
                    first_cids.contains(&f[6].to_string()),
                    "frame {}: {o}",
                    n + 1
                );
            }
        }
        assert!(!first_cids.is_empty() || seed > 1);
        // The failed read's answer, and the slow ones, found alike.
        for filter in ["nvme.cqe.status != 0", "nvme.cmd_latency > 1"] {
            let frames = |tshark: bool| {
                let mut c = if tshark {
                    let mut c = Command::new("tshark");
                    c.args(["-n", "-r"]).arg(&p);
                    c
                } else {
                    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_roce-dissect"));
                    c.arg("packets").arg(&p);
                    c
                };
                let out = c
                    .args(["-Y", filter, "-T", "fields", "-e", "frame.number"])
                    .output()
                    .unwrap();
                String::from_utf8(out.stdout).unwrap()
            };
            let ours = frames(false);
            assert_eq!(ours, frames(true), "seed {seed}: -Y {filter}");
            assert!(!ours.is_empty(), "seed {seed}: -Y {filter}");
        }
    }
    assert!(lines > 1000 && beyond > 0, "{lines} {beyond}");
}

#[test]
fn the_tui_lists_a_queues_ios_slowest_first_and_opens_their_frames() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use roce_dissect::tui::app::View;
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("nvme.pcap");
    let out = common::bin()
        .args(["gen", "--scenario", "nvme", "--seed", "5", "-o"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut app =
        roce_dissect::tui::load(&p, &Default::default(), Default::default(), &mut |_, _| {})
            .unwrap();
    let key = |app: &mut roce_dissect::tui::app::App, c: KeyCode| {
        app.handle_key(KeyEvent::new(c, KeyModifiers::NONE));
    };
    key(&mut app, KeyCode::Char('n'));
    let View::Ios(q) = app.view() else {
        panic!("{:?}", app.view())
    };
    let queue = app.report.nvme.as_ref().unwrap().queues[q].clone();
    let list = app.ios.clone().unwrap();
    assert_eq!(list.rows.len() as u64, queue.commands);
    // Slowest first, and the slowest is the queue's maximum latency.
    assert_eq!(list.rows[0].latency_ns, queue.latency.map(|l| l.max_ns));
    assert!(
        list.rows
            .windows(2)
            .all(|w| w[0].latency_ns >= w[1].latency_ns)
    );
    // In command order after `s`.
    key(&mut app, KeyCode::Char('s'));
    let rows = &app.ios.as_ref().unwrap().rows;
    assert!(rows.windows(2).all(|w| w[0].command < w[1].command));
    assert_eq!(rows[0].name, "Connect");
    // Enter: the I/O's frames, from its command to its response.
    key(&mut app, KeyCode::Char('s'));
    key(&mut app, KeyCode::Enter);
    let first = app.ios.as_ref().unwrap().rows[0].clone();
    assert!(matches!(app.view(), View::Packets(_)));
    assert_eq!(app.packet_list.first(), Some(&first.command));
    assert_eq!(app.packet_list.last().copied(), first.response);
    // Drawn at 80×24, the header and the slowest row are on screen.
    key(&mut app, KeyCode::Esc);
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).unwrap();
    t.draw(|f| roce_dissect::tui::render::render(&app, f))
        .unwrap();
    let screen: String = t
        .backend()
        .buffer()
        .content
        .iter()
        .map(|c| c.symbol())
        .collect::<Vec<_>>()
        .chunks(80)
        .map(|l| l.concat() + "\n")
        .collect();
    assert!(screen.contains("slowest first"), "{screen}");
    assert!(
        screen.contains(&format!("{:>5} {:<12}", first.cid, first.name)),
        "{screen}"
    );
}

/// `gen`'s nvme scenario with 16 KiB I/Os over a 4 KiB PMTU: each read's
/// data is four RDMA WRITEs, each write's four READ responses.
fn sixteen_k_ios(dir: &std::path::Path, seed: u64) -> std::path::PathBuf {
    let p = dir.join(format!("nvme16k-{seed}.pcapng"));
    let out = common::bin()
        .args([
            "gen",
            "--scenario",
            "nvme",
            "--pmtu",
            "4096",
            "--size",
            "16384",
        ])
        .args(["--seed", &seed.to_string(), "-o"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(out.status.success());
    p
}

/// `packets -T fields` of `p` (with `-Y filter` when not empty), one
/// vector of values per frame.
fn field_rows(p: &std::path::Path, filter: &str, fields: &[&str]) -> Vec<Vec<String>> {
    let mut c = common::bin();
    c.arg("packets").arg(p).args(["-T", "fields"]);
    if !filter.is_empty() {
        c.args(["-Y", filter]);
    }
    let out = c
        .args(fields.iter().flat_map(|f| ["-e", f]))
        .output()
        .unwrap();
    assert!(out.status.success() || out.status.code() == Some(1));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

#[test]
fn an_ios_data_packets_name_their_command_and_offset() {
    let d = tempfile::tempdir().unwrap();
    let p = sixteen_k_ios(d.path(), 2);
    let out = common::bin().arg("packets").arg(&p).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    // Every WRITE to the host and every READ response is an I/O's data,
    // its offsets 0, 4 KiB, ... in the order of its packets; every READ
    // request asks for a write's data.
    let (mut reads, mut writes, mut asks) = (0, 0, 0);
    let mut next: std::collections::HashMap<(String, String), u64> = Default::default();
    for l in text.lines() {
        let data = l.split_once(" NVMe Data for ");
        if l.contains("RDMA WRITE") || l.contains("READ Response") {
            let (head, tail) = data.unwrap_or_else(|| panic!("no I/O: {l}"));
            let (name, rest) = tail.split_once(" CID=").unwrap();
            let (cid, offset) = rest.split_once(" offset=").unwrap();
            let qp = head.split(" QP=").nth(1).unwrap()[..8].to_string();
            let at = next.entry((qp, cid.to_string())).or_insert(0);
            // (A replay is marked after it: `[retransmit]`.)
            let offset: u64 = offset.split(' ').next().unwrap().parse().unwrap();
            // A later I/O may reuse the CID on the queue, a replay goes
            // back: both start at 0.
            assert!(offset == *at || offset == 0, "{l}");
            *at = offset + 4096;
            if l.contains("RDMA WRITE") {
                assert!(matches!(name, "Read" | "Identify"), "{l}");
                reads += 1;
            } else {
                assert_eq!(name, "Write", "{l}");
                writes += 1;
            }
        } else if l.contains("READ Request") {
            assert!(l.contains(" NVMe Data Request for Write CID="), "{l}");
            asks += 1;
        } else {
            assert!(data.is_none(), "{l}");
        }
    }
    assert!(
        reads > 100 && writes > 100 && asks > 20,
        "{reads} {writes} {asks}"
    );
    assert_eq!(writes, 4 * asks, "four READ responses to each request");

    // The protocols: `nvme` is every command, matched response and data
    // packet; `nvme-rdma` adds the Fabrics capsules, the READ requests,
    // the SEND LASTs of long capsules and the CM replies.
    let nvme = field_rows(&p, "nvme", &["frame.number"]).len();
    let rdma = field_rows(
        &p,
        "nvme-rdma",
        &["frame.protocols", "infiniband.bth.opcode"],
    );
    let capsules = field_rows(
        &p,
        "nvme.cmd.opc || nvme.cqe.cid && nvme.cmd_latency",
        &["frame.number"],
    );
    assert_eq!(nvme, capsules.len() + reads + writes);
    assert!(
        rdma.iter()
            .all(|r| r[0].ends_with(":infiniband:nvme-rdma") && r[1] != "17"),
        "no ACK"
    );
    let only_rdma = field_rows(&p, "nvme-rdma && !nvme", &["infiniband.bth.opcode"]);
    let count = |op: &str| only_rdma.iter().filter(|r| r[0] == op).count();
    assert_eq!(count("12"), asks);
    assert!(count("100") >= 2, "CM replies");
    assert_eq!(rdma.len(), nvme + only_rdma.len());
    let fabrics = field_rows(&p, "nvme.fabrics.cmd.opc", &["frame.number"]).len();
    assert!(fabrics > 0 && only_rdma.len() > asks + fabrics);

    // JSON Lines say the same.
    let out = common::bin()
        .args([
            "packets",
            "--json",
            "-Y",
            "nvme-rdma && !nvme.cmd.opc && !nvme.cqe.cid",
        ])
        .arg(&p)
        .output()
        .unwrap();
    let mut roles: std::collections::BTreeMap<String, usize> = Default::default();
    for l in String::from_utf8(out.stdout).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let n = &v["nvme"];
        *roles
            .entry(n["role"].as_str().unwrap().to_string())
            .or_default() += 1;
        if n["role"] == "data" {
            assert!(
                n["data"]["offset"].as_u64().unwrap().is_multiple_of(4096),
                "{l}"
            );
            assert!(n["data"]["cid"].is_u64() && n["name"].is_string(), "{l}");
        }
    }
    assert_eq!(roles.get("data"), Some(&(reads + writes)), "{roles:?}");
    assert_eq!(roles.get("data_request"), Some(&asks), "{roles:?}");
    assert!(roles.get("queue").is_some_and(|&n| n >= 2), "{roles:?}");

    // The tree of one data packet.
    let out = common::bin()
        .args(["packets", "-V", "-Y", "nvme && infiniband.bth.opcode == 7"])
        .arg(&p)
        .output()
        .unwrap();
    let tree = String::from_utf8(out.stdout).unwrap();
    assert!(
        tree.contains("NVM Express Fabrics RDMA, Data (queue ")
            && tree.contains("Data Offset: 4096")
            && tree.contains("Data Length: 4096"),
        "{tree}"
    );
}

#[test]
fn the_nvme_protocols_select_the_frames_tshark_selects() {
    if !common::have_tshark() {
        common::skip(
            "-Y nvme, -Y nvme-rdma and frame.protocols against tshark",
            "tshark is not installed",
        );
        return;
    }
    let d = tempfile::tempdir().unwrap();
    for seed in 1..=3u64 {
        let p = sixteen_k_ios(d.path(), seed);
        let tshark = |filter: &str, field: &str| {
            let mut c = Command::new("tshark");
            c.args(["-n", "-r"]).arg(&p);
            if !filter.is_empty() {
                c.args(["-Y", filter]);
            }
            let out = c.args(["-T", "fields", "-e", field]).output().unwrap();
            String::from_utf8(out.stdout).unwrap()
        };
        let ours = |filter: &str, field: &str| {
            field_rows(&p, filter, &[field])
                .into_iter()
                .map(|r| r.join("\t") + "\n")
                .collect::<String>()
        };
        let protocols = ours("", "frame.protocols");
        assert_eq!(protocols, tshark("", "frame.protocols"), "seed {seed}");
        assert!(protocols.contains(":nvme-rdma\n"));
        assert_eq!(
            ours("nvme-rdma", "frame.number"),
            tshark("nvme-rdma", "frame.number"),
            "seed {seed}"
        );
        // `nvme`: tshark's frames and more: a command in a SEND FIRST (its
        // data past one PMTU), which tshark does not decode, and the
        // response to it, which tshark then cannot match.
        let theirs: Vec<String> = tshark("nvme", "frame.number")
            .lines()
            .map(String::from)
            .collect();
        let mine = field_rows(
            &p,
            "nvme",
            &[
                "frame.number",
                "infiniband.bth.opcode",
                "nvme.cmd.cid",
                "nvme.cqe.cid",
            ],
        );
        let mut firsts = Vec::new();
        let mut extra = 0;
        let mut at = theirs.iter().peekable();
        for r in &mine {
            if at.peek() == Some(&&r[0]) {
                at.next();
                continue;
            }
            extra += 1;
            if r[1] == "0" {
                firsts.push(r[2].clone());
            } else {
                assert!(firsts.contains(&r[3]), "seed {seed}: frame {r:?}");
            }
        }
        assert_eq!(at.next(), None, "seed {seed}: a frame of tshark's missing");
        assert_eq!(extra, 2 * firsts.len(), "seed {seed}");
    }
}
