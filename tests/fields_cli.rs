//! `fields`, `packets -Y` and `packets -T fields` as a user meets them:
//! the README's field list is the command's output, bad filters and
//! fields are one-line errors, -E options work, standard input works.

mod common;

use std::path::Path;

fn sample(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("captures")
        .join(name)
}

#[test]
fn the_readme_lists_every_field() {
    let out = common::bin().arg("fields").output().unwrap();
    assert!(out.status.success());
    let listed = String::from_utf8(out.stdout).unwrap();
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let a = readme.find("<!-- fields:begin -->").unwrap();
    let b = readme.find("<!-- fields:end -->").unwrap();
    let block = &readme[a..b];
    let start = block.find("```\n").unwrap() + 4;
    let end = block[start..].find("```").unwrap() + start;
    let stale = block[start..end]
        .lines()
        .zip(listed.lines())
        .find(|(a, b)| a != b)
        .map(|(a, b)| format!("README has {a:?}, `roce-dissect fields` {b:?}"));
    assert!(
        stale.is_none() && block[start..end] == listed,
        "README.md's field list is stale ({}): paste `roce-dissect fields` between the markers",
        stale.unwrap_or_else(|| "lines added or removed".into())
    );
    assert_eq!(
        listed.lines().count(),
        roce_dissect::fields::FIELDS.len() + 1
    );
}

#[test]
fn fields_filters_and_options() {
    // A pattern; nothing found is exit 1.
    let out = common::bin()
        .args(["fields", "cbfc.pause"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 9, "{text}");
    common::bin()
        .args(["fields", "nothing-like-this"])
        .assert()
        .code(1);
    let tsv = common::bin()
        .args(["fields", "--tsv", "bth.psn"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(tsv.stdout).unwrap(),
        "F\tPacket Sequence Number\tinfiniband.bth.psn\tFT_UINT24\tinfiniband\tBASE_DEC\tbth.psn\ttshark\n"
    );
    // The names of values: a table, or tshark -G values' lines.
    let out = common::bin()
        .args(["fields", "--values", "aeth.syndrome.opcode"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "field                            value   name\n\
         infiniband.aeth.syndrome.opcode  0       Ack\n\
         infiniband.aeth.syndrome.opcode  1       RNR Nak\n\
         infiniband.aeth.syndrome.opcode  2       Reserved\n\
         infiniband.aeth.syndrome.opcode  3       Nak\n"
    );
    let out = common::bin()
        .args(["fields", "--values", "--tsv", "eth.type"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("V\teth.type\t0x8915\tRDMA over Converged Ethernet\n"),
        "{text}"
    );
    assert!(text.lines().all(|l| l.starts_with("V\t")), "{text}");
    let out = common::bin()
        .args(["fields", "--values", "bth.psn"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("no field with named values matches 'bth.psn'"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let cap = sample("mixed.pcapng");
    // -T fields with -E header, separator, occurrence and quote.
    let out = common::bin()
        .arg("packets")
        .arg(&cap)
        .args([
            "-Y",
            "ip && bth.opcode == 17",
            "-T",
            "fields",
            "-E",
            "header=y",
            "-E",
            "separator=,",
        ])
        .args([
            "-E",
            "quote=d",
            "-E",
            "occurrence=f",
            "-e",
            "frame.number",
            "-e",
            "ip.addr",
            "-e",
            "aeth.msn",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("\"frame.number\",\"ip.addr\",\"aeth.msn\"")
    );
    let first = lines.next().unwrap();
    let cells: Vec<&str> = first.split(',').collect();
    assert_eq!(cells.len(), 3, "{first}");
    assert!(
        cells[1].starts_with("\"10.0.1."),
        "{first}: the source only"
    );

    // Errors: one line, exit 2.
    for (args, want) in [
        (
            vec!["-Y", "bth.psn == == 3"],
            "-Y: \"==\" was unexpected in this context (column 12)",
        ),
        (
            vec!["-Y", "bth.pns == 3"],
            "\"bth.pns\" is neither a field nor a protocol name (did you mean bth.psn?)",
        ),
        (vec!["-T", "fields"], "no fields with -e"),
        (
            vec!["-T", "fields", "-e", "bth.pns"],
            "-e bth.pns: no such field; did you mean bth.psn?",
        ),
        (vec!["-e", "bth.psn"], "-e needs -T fields"),
        (
            vec!["-T", "fields", "-e", "bth.psn", "-E", "occurrence=x"],
            "-E occurrence=x",
        ),
        (
            vec!["-T", "json", "-V"],
            "-V and -x go with the text output",
        ),
    ] {
        let out = common::bin()
            .arg("packets")
            .arg(&cap)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }

    // Standard input, a display filter and -T json.
    let bytes = std::fs::read(&cap).unwrap();
    let out = common::bin()
        .args(["packets", "-", "-Y", "infiniband.cnp", "-T", "json"])
        .write_stdin(bytes)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.is_empty());
    for l in text.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["bth"]["opcode"], 129);
        assert_eq!(v["analysis"]["cnp"], true);
    }
}

fn report(args: &[&str]) -> serde_json::Value {
    let out = common::bin().args(args).arg("--json").output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_report_lists_what_the_filter_matched() {
    let cap = sample("mixed.pcapng");
    let cap = cap.to_str().unwrap();
    let whole = report(&[cap]);
    for filter in [
        "roce.analysis.nak",
        "ip.addr == 10.0.0.7",
        "bth.opcode in {16..19}",
        "grh",
        "roce.analysis.retransmission || infiniband.cnp",
    ] {
        let r = report(&[cap, "-Y", filter]);
        assert_eq!(r["capture"]["display_filter"], filter);
        // The capture's figures are the whole capture's.
        assert_eq!(r["capture"]["frames"], whole["capture"]["frames"]);
        assert_eq!(r["capture"]["flows"], whole["capture"]["flows"]);
        // The flows listed are those of the matching frames.
        let lines = common::bin()
            .args(["packets", cap, "-Y", filter, "--json"])
            .output()
            .unwrap()
            .stdout;
        let text = String::from_utf8(lines).unwrap();
        assert_eq!(
            r["capture"]["matching_frames"],
            text.lines().count() as u64,
            "{filter}"
        );
        let mut want = std::collections::BTreeSet::new();
        for l in text.lines() {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let Some(n) = v["analysis"]["flow"].as_u64() else {
                continue;
            };
            want.insert(n);
        }
        let flows = r["flows"].as_array().unwrap();
        assert_eq!(flows.len(), want.len(), "{filter}");
        for f in flows {
            let w = whole["flows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|g| {
                    g["src"] == f["src"] && g["dst"] == f["dst"] && g["destqp"] == f["destqp"]
                })
                .unwrap();
            assert_eq!(
                f, w,
                "{filter}: a listed flow is as the whole report has it"
            );
        }
        for c in r["connections"].as_array().unwrap() {
            for i in c["flows"].as_array().unwrap() {
                assert!(i.as_u64().unwrap() < flows.len() as u64);
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        std::fs::write(&p, serde_json::to_vec(&r).unwrap()).unwrap();
        common::contract_check("report", &p);
    }
    // Pause intervals: kept by a filter on their frames, not by others.
    let pfc = sample("pfc-storm.pcapng");
    let pfc = pfc.to_str().unwrap();
    let all = report(&[pfc]);
    // (their `flows` name listed flows only: none when no RoCE frame matched)
    let strip = |v: &serde_json::Value| {
        let mut v = v.clone();
        for i in v.as_array_mut().unwrap() {
            i.as_object_mut().unwrap().remove("flows");
        }
        v
    };
    let kept = report(&[pfc, "-Y", "macc"]);
    assert_eq!(
        strip(&kept["pfc"]["intervals"]),
        strip(&all["pfc"]["intervals"])
    );
    let c3 = report(&[pfc, "-Y", "macc.cbfc.enbv.c3 == 1"]);
    let c3 = c3["pfc"]["intervals"].as_array().unwrap();
    assert!(!c3.is_empty() && c3.iter().all(|i| i["priority"] == 3));
    let both = report(&[pfc, "-Y", "macc.cbfc.enbv.c3 == 1 || bth"]);
    assert_eq!(
        both["pfc"]["intervals"][0]["flows"],
        all["pfc"]["intervals"][0]["flows"]
    );
    let none = report(&[pfc, "-Y", "bth"]);
    assert_eq!(none["pfc"]["intervals"], serde_json::json!([]));
    assert_eq!(none["pfc"]["summary"], serde_json::json!([]));
    // Several captures, and --merge.
    let out = common::bin()
        .args([cap, pfc, "-Y", "macc", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let docs: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0]["flows"], serde_json::json!([]));
    assert_eq!(
        docs[1]["capture"]["matching_frames"],
        kept["capture"]["matching_frames"]
    );
    let merged = report(&["--merge", cap, pfc, "-Y", "infiniband.cnp"]);
    assert_eq!(merged["capture"]["display_filter"], "infiniband.cnp");
    // A bad filter: one line, exit 2, before any reading.
    let out = common::bin()
        .args([cap, "-Y", "bth.psn =="])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
}

/// `-e _ws.col.*` (tshark's column fields) are the summary line's columns:
/// number, source, destination, protocol, length and Info (its tags and
/// the pause times at `--link-speed` included), on every sample.
#[test]
fn column_fields_are_the_summary_line() {
    let columns = ["No.", "Source", "Destination", "Protocol", "Length", "Info"];
    let mut compared = 0;
    for (name, extra) in [
        ("loss.pcap", &[][..]),
        ("mixed.pcapng", &[][..]),
        ("incast.pcapng", &[][..]),
        ("pfc-storm.pcapng", &["--link-speed", "25G"][..]),
    ] {
        let run = |args: &[&str]| {
            let out = common::bin()
                .arg("packets")
                .arg(sample(name))
                .args(extra)
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "{name} {args:?}");
            String::from_utf8(out.stdout).unwrap()
        };
        let lines = run(&[]);
        let mut args = vec!["-T", "fields", "-E", "separator=/t"];
        let names: Vec<String> = columns.iter().map(|c| format!("_ws.col.{c}")).collect();
        for n in &names {
            args.extend(["-e", n.as_str()]);
        }
        let rows = run(&args);
        assert_eq!(lines.lines().count(), rows.lines().count(), "{name}");
        for (line, row) in lines.lines().zip(rows.lines()) {
            let c: Vec<&str> = row.split('\t').collect();
            assert_eq!(c.len(), 6, "{row}");
            let (number, rest) = line.trim_start().split_once(' ').unwrap();
            assert_eq!(number, c[0], "{name}: {line}");
            // The time column is the line's own (tshark's -e frame.time_relative).
            let (_, rest) = rest.trim_start().split_once(' ').unwrap();
            assert_eq!(
                rest,
                format!("{} → {} {} {} {}", c[1], c[2], c[3], c[4], c[5]),
                "{name}"
            );
            compared += 1;
        }
    }
    assert!(compared > 1000, "{compared} lines");
    // As strings, they filter too.
    let out = common::bin()
        .args(["packets", "-Y", "_ws.col.Info contains \"[retransmit]\""])
        .arg(sample("loss.pcap"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 5);
}
