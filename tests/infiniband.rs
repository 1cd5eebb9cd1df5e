//! Native InfiniBand: the RoCE scenarios carried natively (LRH, with or
//! without a GRH, in ERF records as ibdump writes them or as
//! DLT_INFINIBAND) give the same analysis, flow by flow, keyed by LIDs
//! (or GIDs); FECN is the CE mark and a BECN the notification; the ICRC
//! and VCRC verdicts follow every bit.

mod common;

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use roce_dissect::capture::{Frame, FrameSource, LinkType, open_stream};
use roce_dissect::dissect::{Addr, DissectOptions, dissect};
use roce_dissect::synth::ib::{IbPath, erf_record, lid_for, native};
use roce_dissect::synth::{CaptureWriter, OutFormat};
use serde_json::Value;

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("captures")
        .join(name)
}

/// The RoCE frames of `from`, carried natively: in ERF records (`erf`) or
/// as a DLT_INFINIBAND capture.
fn convert(from: &Path, to: &Path, grh: bool, erf: bool) -> usize {
    let mut src = open_stream(from).unwrap();
    let link = if erf { 197 } else { 247 };
    let fmt = if erf {
        OutFormat::PcapMicros
    } else {
        OutFormat::PcapNg
    };
    let mut w = CaptureWriter::with_link(std::fs::File::create(to).unwrap(), fmt, link).unwrap();
    let mut n = 0;
    while let Some(f) = src.next_frame() {
        let f = f.unwrap();
        let p = dissect(&f, &DissectOptions::default());
        let (Some(_), Some((Addr::Ip(s), Addr::Ip(d)))) = (p.bth, p.endpoints()) else {
            continue;
        };
        let path = IbPath {
            vl: p.pcp().unwrap_or(0),
            sl: p.pcp().unwrap_or(0),
            slid: lid_for(s),
            dlid: lid_for(d),
            grh,
            ecn_to_fecn: true,
        };
        let ib = native(f.data, path).unwrap();
        if erf {
            w.write(f.ts_ns, &erf_record(&ib, f.ts_ns, 0)).unwrap();
        } else {
            w.write(f.ts_ns, &ib).unwrap();
        }
        n += 1;
    }
    w.flush().unwrap();
    n
}

fn report(path: &Path) -> Value {
    let out = common::bin().arg(path).arg("--json").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Each flow's figures by (src, dst, destqp), addresses as `map` names
/// them.
fn flows(r: &Value, map: impl Fn(&str) -> String) -> HashMap<(String, String, u64), Value> {
    r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let key = (
                map(f["src"].as_str().unwrap()),
                map(f["dst"].as_str().unwrap()),
                f["destqp"].as_u64().unwrap(),
            );
            let mut v = serde_json::Map::new();
            for k in [
                "transport",
                "packets",
                "payload_bytes",
                "duplicates",
                "retransmits",
                "out_of_order",
                "missing",
                "psn_reuse",
                "ecn_ce",
                "cnps",
                "naks",
                "retransmit_episodes",
                "pmtu",
                "one_way",
                "bad_icrc",
                "unanswered_reads",
            ] {
                v.insert(k.into(), f[k].clone());
            }
            v.insert("paired".into(), Value::Bool(!f["peer"].is_null()));
            (key, Value::Object(v))
        })
        .collect()
}

#[test]
fn roce_scenarios_carried_natively_give_the_same_analysis() {
    let d = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for name in [
        "loss.pcap",
        "mixed.pcapng",
        "incast.pcapng",
        "clean.pcapng",
        "loss-receiver.ns.pcap",
    ] {
        let roce = report(&sample(name));
        let want = flows(&roce, |a| {
            let ip: IpAddr = a.parse().unwrap();
            format!("lid:{}", lid_for(ip))
        });
        for (grh, erf) in [(false, true), (true, true), (false, false)] {
            let to = d.path().join(format!("{name}.{grh}.{erf}.pcap"));
            let n = convert(&sample(name), &to, grh, erf);
            assert!(n > 100, "{name}: {n}");
            let ib = report(&to);
            assert_eq!(ib["capture"]["icrc_errors"], 0, "{name}");
            for f in ib["flows"].as_array().unwrap() {
                assert_eq!(f["version"], "ib");
            }
            let got = flows(&ib, |a| {
                if grh {
                    // GIDs: the frames' GIDs, or their IPs as GIDs.
                    let ip: IpAddr = a.parse().unwrap();
                    format!("lid:{}", lid_for(ip))
                } else {
                    a.to_string()
                }
            });
            assert_eq!(got.len(), want.len(), "{name} grh={grh} erf={erf}");
            for (k, v) in &want {
                assert_eq!(
                    got.get(k),
                    Some(v),
                    "{name} grh={grh} erf={erf}: flow {k:?}"
                );
                compared += 1;
            }
            // Connections pair as they did (CM pairs via the MADs, the
            // rest by traffic).
            assert_eq!(
                ib["connections"].as_array().unwrap().len(),
                roce["connections"].as_array().unwrap().len(),
                "{name}"
            );
        }
    }
    assert!(compared > 100, "{compared}");
}

#[test]
fn lids_key_the_flows_and_the_report_says_ib() {
    let d = tempfile::tempdir().unwrap();
    let to = d.path().join("loss.erf.pcap");
    convert(&sample("loss.pcap"), &to, false, true);
    let text = String::from_utf8(common::bin().arg(&to).output().unwrap().stdout).unwrap();
    assert!(text.contains("lid:3 → lid:259"), "{text}");
    assert!(text.contains(" ib RC "), "{text}");
    // The report's suggested command selects the flow.
    let out = common::bin()
        .args(["packets", "--flow", "lid:3,lid:259,0x004005"])
        .arg(&to)
        .output()
        .unwrap();
    let lines = String::from_utf8(out.stdout).unwrap();
    assert_eq!(lines.lines().count(), 52, "{lines}");
    assert!(
        lines
            .lines()
            .all(|l| l.contains("lid:3 → lid:259 InfiniBand"))
    );
    // JSON Lines: roce "ib", an lrh object, an erf object, the vcrc.
    let first = &common::json_packets(&to)[0];
    assert_eq!(first["roce"], "ib");
    assert_eq!(first["lrh"]["slid"], 1);
    assert_eq!(first["lrh"]["dlid"], 257);
    assert_eq!(first["lrh"]["lnh"], 2);
    assert_eq!(first["erf"]["type"], 21);
    assert_eq!(first["vcrc"]["valid"], true);
    let f = d.path().join("p.jsonl");
    std::fs::write(
        &f,
        common::json_packets(&to)
            .iter()
            .map(|v| v.to_string() + "\n")
            .collect::<String>(),
    )
    .unwrap();
    common::contract_check("packets", &f);
}

fn decode(ib: &[u8]) -> roce_dissect::dissect::Packet<'_> {
    dissect(
        &Frame::whole(ib, LinkType::InfiniBand),
        &DissectOptions::default(),
    )
}

#[test]
fn icrc_and_vcrc_verdicts_follow_every_bit() {
    let frames = roce_dissect::synth::samples::every_opcode(5);
    let mut checked = 0;
    for (i, roce) in frames.iter().enumerate().step_by(7) {
        for grh in [false, true] {
            let path = IbPath {
                vl: 1,
                sl: 2,
                slid: 7,
                dlid: 9,
                grh,
                ecn_to_fecn: false,
            };
            let Some(ib) = native(roce, path) else {
                continue;
            };
            let good = decode(&ib);
            assert_eq!(good.icrc.unwrap().valid, Some(true));
            assert_eq!(good.vcrc.unwrap().valid, Some(true));
            let icrc_at = usize::from(good.offsets.icrc.unwrap());
            let vcrc_at = usize::from(good.offsets.vcrc.unwrap());
            let bth_at = usize::from(good.offsets.bth);
            // Every bit of the packet, one at a time.
            for bit in 0..ib.len() * 8 {
                let mut b = ib.clone();
                b[bit / 8] ^= 1 << (bit % 8);
                let at = bit / 8;
                let p = decode(&b);
                // Flipping length or next-header bits changes the layout
                // itself: only bits that keep it are judged.
                if p.lrh.map(|l| (l.pkt_len, l.lnh)) != good.lrh.map(|l| (l.pkt_len, l.lnh))
                    || p.bth.map(|x| (x.opcode, x.padcnt)) != good.bth.map(|x| (x.opcode, x.padcnt))
                    || p.grh.map(|g| (g.pay_len, g.nxt_hdr))
                        != good.grh.map(|g| (g.pay_len, g.nxt_hdr))
                {
                    continue;
                }
                let icrc = p.icrc.unwrap().valid.unwrap();
                let vcrc = p.vcrc.unwrap().valid.unwrap();
                // The VCRC covers every bit, its own included.
                assert!(!vcrc, "frame {i} grh {grh} bit {bit}");
                // The ICRC leaves out the variant fields: the VL, with a GRH
                // the whole LRH and the GRH's class, flow label and hop
                // limit, and BTH byte 4; the VCRC is not covered either.
                let variant = at >= vcrc_at
                    || (at == 0 && bit % 8 >= 4)
                    || (grh && at < 8)
                    || (grh && (at == 8 && bit % 8 < 4 || (9..12).contains(&at) || at == 15))
                    || at == bth_at + 4;
                assert_eq!(
                    icrc,
                    variant,
                    "frame {i} grh {grh} byte {at} bit {}: ICRC verdict",
                    bit % 8
                );
                if (icrc_at..icrc_at + 4).contains(&at) {
                    assert!(!icrc);
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 10_000, "{checked}");
}

#[test]
fn fecn_is_ce_and_becn_the_notification() {
    use roce_dissect::synth::samples::{MAC_A, MAC_B, networks};
    use roce_dissect::synth::{ExtHeaders, Payload, RoceFrame, build_roce};
    use roce_dissect::wire::{AethRepr, BthRepr, Opcode};
    let net = networks(0xc000)[0];
    let frame = |opcode: u8, dir: bool, psn: u32, fecn: bool, becn: bool| {
        let f = RoceFrame {
            src_mac: MAC_A,
            dst_mac: MAC_B,
            vlan: None,
            net: if dir { net } else { net.reversed() },
            bth: BthRepr {
                opcode: Opcode(opcode),
                p_key: 0xffff,
                dest_qp: if dir { 0x11 } else { 0x22 },
                psn: roce_dissect::wire::Psn::new(psn),
                fecn,
                becn,
                ..Default::default()
            },
            ext: ExtHeaders {
                aeth: Some(AethRepr {
                    syndrome: 0x1f,
                    msn: psn,
                }),
                ..Default::default()
            },
            payload: Payload::Pattern(64),
            bad_icrc: false,
        };
        let mut out = Vec::new();
        build_roce(&f, &mut out);
        let path = IbPath {
            vl: 0,
            sl: 0,
            slid: if dir { 1 } else { 2 },
            dlid: if dir { 2 } else { 1 },
            grh: false,
            ecn_to_fecn: false,
        };
        native(&out, path).unwrap()
    };
    // Two SENDs, the second FECN-marked; the ACK back carries a BECN.
    let packets = [
        frame(0x04, true, 10, false, false),
        frame(0x04, true, 11, true, false),
        frame(0x11, false, 11, false, true),
    ];
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("cc.pcap");
    let mut w = CaptureWriter::with_link(
        std::fs::File::create(&p).unwrap(),
        OutFormat::PcapNanos,
        247,
    )
    .unwrap();
    for (i, b) in packets.iter().enumerate() {
        w.write(1_000 + i as u64 * 1_000, b).unwrap();
    }
    w.flush().unwrap();
    let r = report(&p);
    let by_src: HashMap<&str, &Value> = r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["src"].as_str().unwrap(), f))
        .collect();
    assert_eq!(by_src["lid:1"]["ecn_ce"], 1);
    assert_eq!(by_src["lid:2"]["cnps"], 1);
    let ce = &by_src["lid:1"]["ce_to_cnp"];
    assert_eq!(ce["count"], 1, "{ce}");
    assert_eq!(ce["min_ns"], 1_000, "{ce}");
    let lines = String::from_utf8(
        common::bin()
            .arg("packets")
            .arg(&p)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let l: Vec<&str> = lines.lines().collect();
    assert!(l[1].ends_with("[CE]"), "{}", l[1]);
    assert!(l[2].ends_with("[CNP]"), "{}", l[2]);
}

#[test]
fn the_capture_devices_own_losses_are_reported() {
    // Three ERF records of one RC flow, PSNs 1, 2, 5; the third says the
    // device lost 2 records before it (the loss counter).
    use roce_dissect::synth::samples::{MAC_A, MAC_B, networks};
    use roce_dissect::synth::{ExtHeaders, Payload, RoceFrame, build_roce};
    use roce_dissect::wire::{BthRepr, Opcode};
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("lossy.pcap");
    let mut w = CaptureWriter::with_link(
        std::fs::File::create(&p).unwrap(),
        OutFormat::PcapMicros,
        197,
    )
    .unwrap();
    for (i, psn) in [1u32, 2, 5].into_iter().enumerate() {
        let f = RoceFrame {
            src_mac: MAC_A,
            dst_mac: MAC_B,
            vlan: None,
            net: networks(0xc000)[0],
            bth: BthRepr {
                opcode: Opcode(0x04),
                p_key: 0xffff,
                dest_qp: 0x11,
                psn: roce_dissect::wire::Psn::new(psn),
                ..Default::default()
            },
            ext: ExtHeaders::default(),
            payload: Payload::Pattern(32),
            bad_icrc: false,
        };
        let mut out = Vec::new();
        build_roce(&f, &mut out);
        let path = IbPath {
            vl: 0,
            sl: 0,
            slid: 1,
            dlid: 2,
            grh: false,
            ecn_to_fecn: false,
        };
        let mut rec = erf_record(&native(&out, path).unwrap(), 1_000 * i as u64, 0);
        if i == 2 {
            rec[12..14].copy_from_slice(&2u16.to_be_bytes());
        }
        w.write(1_000 * i as u64, &rec).unwrap();
    }
    w.flush().unwrap();
    let out = common::bin().arg(&p).arg("--json").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the capture device reports 2 records lost (ERF loss counters)"),
        "{err}"
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["capture"]["device_lost"], 2);
    assert_eq!(r["flows"][0]["missing"], 2);
    let text = String::from_utf8(common::bin().arg(&p).output().unwrap().stdout).unwrap();
    assert!(
        text.contains("2 records lost by the capture device"),
        "{text}"
    );
}

/// `gen --link infiniband|erf` writes the scenarios natively, and its
/// truth (flows by LID or GID, no PFC) is what the report finds.
#[test]
fn gen_writes_native_captures_whose_reports_match_the_truth() {
    let dir = tempfile::tempdir().unwrap();
    for scenario in ["mixed", "incast", "loss"] {
        for (link, grh, want_erf) in [
            ("infiniband", false, false),
            ("erf", false, true),
            ("erf", true, true),
        ] {
            let what = format!("{scenario} --link {link} grh {grh}");
            let out = dir.path().join(format!("{scenario}-{link}-{grh}.pcap"));
            let truth = dir.path().join("t.json");
            let mut cmd = common::bin();
            cmd.args([
                "gen",
                "--scenario",
                scenario,
                "--qps",
                "12",
                "--messages",
                "8",
            ])
            .args(["--link", link, "-o"])
            .arg(&out)
            .arg("--truth")
            .arg(&truth);
            if grh {
                cmd.arg("--grh");
            }
            cmd.assert().success();
            let t: Value = serde_json::from_slice(&std::fs::read(&truth).unwrap()).unwrap();
            let r = report(&out);
            let first = common::bin()
                .args(["packets", "--json", "-c", "1"])
                .arg(&out)
                .output()
                .unwrap();
            let first: Value = serde_json::from_slice(&first.stdout).unwrap();
            assert_eq!(first["roce"], "ib", "{what}");
            assert_eq!(first["erf"].is_object(), want_erf, "{what}");
            assert_eq!(first["grh"].is_object(), grh, "{what}");
            assert_eq!(r["capture"]["frames"], t["frames"], "{what}");
            assert_eq!(r["pfc"]["intervals"], serde_json::json!([]), "{what}");
            let flows = r["flows"].as_array().unwrap();
            let tf = t["flows"].as_array().unwrap();
            assert_eq!(flows.len(), tf.len(), "{what}");
            for f in tf {
                let got = flows
                    .iter()
                    .find(|g| {
                        g["src"] == f["src"] && g["dst"] == f["dst"] && g["destqp"] == f["destqp"]
                    })
                    .unwrap_or_else(|| panic!("{what}: no flow {}", f));
                if !grh {
                    assert!(f["src"].as_str().unwrap().starts_with("lid:"), "{what}");
                }
                for k in [
                    "packets",
                    "retransmits",
                    "out_of_order",
                    "missing",
                    "ecn_ce",
                    "cnps",
                    "naks",
                ] {
                    assert_eq!(got[k], f[k], "{what}: {k} of {}", f);
                }
            }
        }
    }
    // No PFC storm on a credit-based fabric; --grh only with a native link.
    common::bin()
        .args(["gen", "--scenario", "pfc-storm", "--link", "erf", "-o"])
        .arg(dir.path().join("x.pcap"))
        .assert()
        .code(2);
    common::bin()
        .args(["gen", "--scenario", "clean", "--grh", "-o"])
        .arg(dir.path().join("x.pcap"))
        .assert()
        .code(2);
}
