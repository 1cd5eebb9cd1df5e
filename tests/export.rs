//! `roce-dissect export`: the Parquet dataset says what the JSON report
//! says. Read back here with the parquet crate (always), and with DuckDB
//! and Spark when they are installed (`.ci/run` installs both), running
//! the README's recipes and comparing their answers.
#![cfg(feature = "parquet")]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use roce_dissect::export::Table;
use roce_dissect::export::column::Kind;
use serde_json::Value as J;

use common::{bin, skip};

fn samples() -> Vec<PathBuf> {
    common::captures_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("captures"))
}

/// Captures of the scenarios the samples lack (NVMe-oF, DCQCN), written to `dir`.
fn generated(dir: &Path) -> Vec<PathBuf> {
    ["nvme", "dcqcn", "pfc-headroom"]
        .iter()
        .map(|s| {
            let p = dir.join(format!("gen-{s}.pcapng"));
            bin()
                .args(["gen", "--scenario", s, "--seed", "3", "-o"])
                .arg(&p)
                .assert()
                .success();
            p
        })
        .collect()
}

fn report(p: &Path) -> J {
    let out = bin().arg(p).arg("--json").output().unwrap();
    assert!(out.status.success(), "{}", p.display());
    serde_json::from_slice(&out.stdout).unwrap()
}

fn export(dir: &Path, captures: &[PathBuf], extra: &[&str]) -> std::process::Output {
    bin()
        .arg("export")
        .args(captures)
        .arg("-o")
        .arg(dir)
        .args(extra)
        .output()
        .unwrap()
}

/// Every batch of one partition's file of `table`.
fn read(dataset: &Path, table: &str, capture: &str) -> Vec<RecordBatch> {
    let dir = dataset.join(table).join(format!("capture={capture}"));
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].ends_with("part-0.parquet"));
    ParquetRecordBatchReaderBuilder::try_new(File::open(&files[0]).unwrap())
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

fn rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(|b| b.num_rows()).sum()
}

/// A column's values as i64 (nulls as None), whatever its integer width.
fn ints(batches: &[RecordBatch], name: &str) -> Vec<Option<i64>> {
    let mut out = Vec::new();
    for b in batches {
        let col = b
            .column_by_name(name)
            .unwrap_or_else(|| panic!("no column {name}"));
        if let Some(a) = col.as_primitive_opt::<Int64Type>() {
            out.extend(a.iter());
        } else if let Some(a) = col.as_primitive_opt::<Int32Type>() {
            out.extend(a.iter().map(|v| v.map(i64::from)));
        } else {
            panic!("{name} is {:?}", col.data_type());
        }
    }
    out
}

fn flags(batches: &[RecordBatch], name: &str) -> usize {
    batches
        .iter()
        .map(|b| {
            let a = b.column_by_name(name).unwrap().as_boolean();
            assert_eq!(a.null_count(), 0, "{name} has nulls");
            a.true_count()
        })
        .sum()
}

fn sum(report: &J, key: &str) -> i64 {
    report["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f[key].as_i64().unwrap())
        .sum()
}

#[test]
fn packets_columns_are_the_registry_named_as_the_json_lines() {
    let schema = Table::Packets.schema();
    let names: BTreeSet<&str> = schema.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.len(), schema.len(), "column names are unique");
    let kind = |n: &str| schema.iter().find(|(c, _)| c == n).map(|(_, k)| *k);
    assert_eq!(&schema[0].0, "frame");
    assert_eq!(kind("ts"), Some(Kind::Time));
    assert_eq!(kind("ts_ns"), Some(Kind::I64));
    assert_eq!(kind("flow"), Some(Kind::I64));
    assert_eq!(kind("bth_psn"), Some(Kind::I64));
    assert_eq!(kind("bth_opcode"), Some(Kind::I32));
    assert_eq!(kind("ip_src"), Some(Kind::Str));
    assert_eq!(kind("eth_src"), Some(Kind::Str));
    assert_eq!(kind("reth_dmalen"), Some(Kind::I64));
    assert_eq!(kind("reth_va"), Some(Kind::U64));
    assert_eq!(kind("analysis_retransmission"), Some(Kind::Flag));
    assert_eq!(kind("analysis_bad_icrc"), Some(Kind::Flag));
    assert_eq!(kind("analysis_ack_rtt_ns"), Some(Kind::I64));
    assert_eq!(kind("nvme_cmd_latency_ns"), Some(Kind::I64));
    // Every registry field but the five both-ends ones, `frame`, `frame.time`
    // (`ts` in words) and the summary line's columns (and
    // `frame.time_epoch` twice: `ts` and `ts_ns`).
    let columns = roce_dissect::fields::FIELDS
        .iter()
        .filter(|f| f.name.starts_with("_ws.col."))
        .count();
    assert_eq!(columns, 6);
    assert_eq!(
        schema.len(),
        roce_dissect::fields::FIELDS.len() - 7 - columns + 1
    );
    for (name, _) in Table::ALL
        .iter()
        .flat_map(|t| t.schema())
        .collect::<Vec<_>>()
        .iter()
    {
        assert!(
            name.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "{name}"
        );
    }
}

#[test]
fn readme_schema_is_the_generated_one() {
    let out = bin().args(["export", "--schema"]).output().unwrap();
    assert!(out.status.success());
    let schema = String::from_utf8(out.stdout).unwrap();
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let (_, rest) = readme.split_once("<!-- export-schema:begin -->\n").unwrap();
    let (block, _) = rest.split_once("<!-- export-schema:end -->").unwrap();
    assert_eq!(
        block, schema,
        "README's schema is stale: paste `roce-dissect export --schema` between the markers"
    );
    for t in Table::ALL {
        assert!(schema.contains(&format!("#### `{}`", t.name())));
    }
}

/// Every figure of every report has its column: a figure added to the
/// report and not to the tables fails here.
#[test]
fn every_report_figure_has_a_column() {
    let tmp = tempfile::tempdir().unwrap();
    let mut captures = samples();
    captures.extend(generated(tmp.path()));
    let cols = |t: Table| -> BTreeSet<String> { t.sources().into_iter().collect() };
    let (flows, events, episodes, pfc, conns) = (
        cols(Table::Flows),
        cols(Table::Events),
        cols(Table::Episodes),
        cols(Table::PfcIntervals),
        cols(Table::Connections),
    );
    fn leaves(v: &J, path: String, out: &mut BTreeSet<String>, skip: &[&str]) {
        match v {
            J::Object(m) => {
                for (k, x) in m {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    if !skip.contains(&p.as_str()) {
                        leaves(x, p, out, skip);
                    }
                }
            }
            J::Null if path.is_empty() => {}
            _ => {
                out.insert(path);
            }
        }
    }
    let mut seen = 0;
    for c in &captures {
        let r = report(c);
        for f in r["flows"].as_array().unwrap() {
            let mut found = BTreeSet::new();
            leaves(f, String::new(), &mut found, &["events", "episodes"]);
            for p in found {
                // A null object (`ce_to_cnp`, `peer`, `timing.timeout`) has its
                // figures' columns.
                let covered =
                    flows.contains(&p) || flows.iter().any(|c| c.starts_with(&format!("{p}.")));
                assert!(covered, "flows[].{p} has no column in the flows table");
                seen += 1;
            }
            for (key, table) in [("events", &events), ("episodes", &episodes)] {
                for e in f[key].as_array().unwrap() {
                    let mut found = BTreeSet::new();
                    leaves(e, String::new(), &mut found, &[]);
                    for p in found {
                        assert!(table.contains(&p), "flows[].{key}[].{p} has no column");
                    }
                }
            }
        }
        for i in r["pfc"]["intervals"].as_array().unwrap() {
            let mut found = BTreeSet::new();
            leaves(i, String::new(), &mut found, &[]);
            for p in found {
                assert!(pfc.contains(&p), "pfc.intervals[].{p} has no column");
            }
        }
        for i in r["connections"].as_array().unwrap() {
            let mut found = BTreeSet::new();
            leaves(i, String::new(), &mut found, &[]);
            for p in found {
                assert!(conns.contains(&p), "connections[].{p} has no column");
            }
        }
    }
    assert!(seen > 1000);
}

/// The dataset read back with the parquet crate: counts and sums equal the
/// JSON report's, capture by capture.
#[test]
fn dataset_equals_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let mut captures = samples();
    captures.extend(generated(tmp.path()));
    let out_dir = tmp.path().join("dataset");
    let out = export(&out_dir, &captures, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut nvme_seen = false;
    for c in &captures {
        let name = c.file_name().unwrap().to_str().unwrap();
        let r = report(c);
        let frames = r["capture"]["frames"].as_u64().unwrap() as usize;
        let packets = read(&out_dir, "packets", name);
        assert_eq!(rows(&packets), frames, "{name}: packets rows");
        assert_eq!(
            ints(&packets, "frame"),
            (1..=frames as i64).map(Some).collect::<Vec<_>>(),
            "{name}: frame numbers"
        );
        assert_eq!(
            flags(&packets, "analysis_retransmission") as i64,
            sum(&r, "retransmits"),
            "{name}: retransmissions"
        );
        assert_eq!(
            flags(&packets, "analysis_ce") as i64,
            sum(&r, "ecn_ce"),
            "{name}: CE"
        );
        assert_eq!(
            flags(&packets, "analysis_cnp") as i64,
            sum(&r, "cnps"),
            "{name}: CNPs"
        );
        // Per flow: its frames and bytes.
        let flow = ints(&packets, "flow");
        let len = ints(&packets, "frame_len");
        let mut per: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
        for (f, l) in flow.iter().zip(&len) {
            if let Some(f) = f {
                let e = per.entry(*f).or_default();
                e.0 += 1;
                e.1 += l.unwrap();
            }
        }
        let rflows = r["flows"].as_array().unwrap();
        for (i, f) in rflows.iter().enumerate() {
            let n = i as i64 + 1;
            assert_eq!(
                per.get(&n).copied().unwrap_or_default(),
                (f["packets"].as_i64().unwrap(), f["bytes"].as_i64().unwrap()),
                "{name}: flow {n}'s frames and bytes"
            );
        }
        // The flows table: a row per flow, in the report's order.
        let flows = read(&out_dir, "flows", name);
        assert_eq!(rows(&flows), rflows.len());
        assert_eq!(
            ints(&flows, "flow"),
            (1..=rflows.len() as i64).map(Some).collect::<Vec<_>>()
        );
        for key in ["retransmits", "packets", "bytes", "destqp", "out_of_order"] {
            let want: Vec<Option<i64>> = rflows.iter().map(|f| f[key].as_i64()).collect();
            assert_eq!(ints(&flows, key), want, "{name}: flows.{key}");
        }
        let want: Vec<Option<i64>> = rflows
            .iter()
            .map(|f| f["naks"]["psn_seq_err"].as_i64())
            .collect();
        assert_eq!(ints(&flows, "naks_psn_seq_err"), want);
        let want: Vec<Option<i64>> = rflows
            .iter()
            .map(|f| f["timing"]["rtt"]["p99_ns"].as_i64())
            .collect();
        assert_eq!(ints(&flows, "timing_rtt_p99_ns"), want);
        let want: Vec<Option<i64>> = rflows.iter().map(|f| f["cc"]["cnps"].as_i64()).collect();
        assert_eq!(ints(&flows, "cc_cnps"), want);
        let n_events: usize = rflows
            .iter()
            .map(|f| f["events"].as_array().unwrap().len())
            .sum();
        assert_eq!(rows(&read(&out_dir, "events", name)), n_events);
        let n_episodes: usize = rflows
            .iter()
            .map(|f| f["episodes"].as_array().unwrap().len())
            .sum();
        assert_eq!(rows(&read(&out_dir, "episodes", name)), n_episodes);
        let intervals = r["pfc"]["intervals"].as_array().unwrap();
        let pfc = read(&out_dir, "pfc_intervals", name);
        assert_eq!(rows(&pfc), intervals.len());
        let want: Vec<Option<i64>> = intervals
            .iter()
            .map(|i| i["duration_ns"].as_i64())
            .collect();
        assert_eq!(ints(&pfc, "duration_ns"), want, "{name}: pause durations");
        // Connections: flows as numbers (the report's indexes + 1).
        let conns = read(&out_dir, "connections", name);
        let rconns = r["connections"].as_array().unwrap();
        assert_eq!(rows(&conns), rconns.len());
        let mut got = Vec::new();
        for b in &conns {
            let l = b.column_by_name("flows").unwrap().as_list::<i32>();
            for i in 0..l.len() {
                let v = l.value(i);
                got.push(
                    v.as_primitive::<Int64Type>()
                        .iter()
                        .map(|x| x.unwrap())
                        .collect::<Vec<_>>(),
                );
            }
        }
        let want: Vec<Vec<i64>> = rconns
            .iter()
            .map(|c| {
                c["flows"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| i.as_i64().unwrap() + 1)
                    .collect()
            })
            .collect();
        assert_eq!(got, want, "{name}: connections' flows");
        let ios = read(&out_dir, "nvme_ios", name);
        let completed = r["nvme"]["completed"].as_u64().unwrap_or(0) as usize;
        assert_eq!(rows(&ios), completed, "{name}: NVMe I/Os");
        if completed > 0 {
            nvme_seen = true;
            // The slowest the report lists are among them, with their latency.
            let lat = ints(&ios, "latency_ns");
            let cqe = ints(&ios, "cqe_frame");
            for s in r["nvme"]["slowest"].as_array().unwrap() {
                let at = cqe
                    .iter()
                    .position(|f| *f == s["cqe_frame"].as_i64())
                    .expect("slowest I/O exported");
                assert_eq!(lat[at], s["latency_ns"].as_i64());
            }
        }
    }
    assert!(nvme_seen);
}

#[test]
fn reexport_replaces_and_options_select() {
    let tmp = tempfile::tempdir().unwrap();
    let loss = samples()
        .into_iter()
        .find(|p| p.ends_with("loss.pcap"))
        .unwrap();
    let ds = tmp.path().join("ds");
    assert!(
        export(&ds, std::slice::from_ref(&loss), &[])
            .status
            .success()
    );
    // A stale file in the partition goes with the old export.
    let part = ds.join("packets/capture=loss.pcap");
    std::fs::write(part.join("part-9.parquet"), b"stale").unwrap();
    let out = export(
        &ds,
        std::slice::from_ref(&loss),
        &[
            "--where",
            "roce.analysis.retransmission",
            "--tables",
            "packets,flows",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!part.join("part-9.parquet").exists());
    let packets = read(&ds, "packets", "loss.pcap");
    let r = report(&loss);
    assert_eq!(rows(&packets) as i64, sum(&r, "retransmits"));
    assert_eq!(
        flags(&packets, "analysis_retransmission"),
        rows(&packets),
        "only matching frames"
    );
    // `packets -Y` picks the same frames.
    let listed = bin()
        .args([
            "packets",
            "-Y",
            "roce.analysis.retransmission",
            "-T",
            "fields",
            "-e",
            "frame.number",
        ])
        .arg(&loss)
        .output()
        .unwrap();
    let want: Vec<Option<i64>> = String::from_utf8(listed.stdout)
        .unwrap()
        .lines()
        .map(|l| Some(l.trim().parse().unwrap()))
        .collect();
    assert_eq!(ints(&packets, "frame"), want);
    // Tables not asked for keep their earlier partition.
    assert!(ds.join("events/capture=loss.pcap/part-0.parquet").exists());
    // Nothing is left beside the dataset.
    let names: Vec<String> = std::fs::read_dir(&ds)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");
}

#[test]
fn bad_uses_are_one_line_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = tmp.path().join("ds");
    let one = |args: &[&str]| {
        let out = bin().arg("export").args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), err)
    };
    let ds_s = ds.to_str().unwrap();
    let (code, err) = one(&["/nonexistent.pcap", "-o", ds_s]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("nonexistent.pcap"), "{err}");
    let (code, err) = one(&["-", "-o", ds_s]);
    assert_eq!(code, Some(2));
    assert!(err.contains("standard input"), "{err}");
    // A named pipe: read once, it would be waited on forever the second
    // time (it was, before this was refused).
    #[cfg(unix)]
    {
        let fifo = tmp.path().join("live.pcap");
        let made = Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let mut child = Command::new(env!("CARGO_BIN_EXE_roce-dissect"))
            .arg("export")
            .arg(&fifo)
            .args(["-o", ds_s])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let t = std::time::Instant::now();
        let code = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status.code();
            }
            if t.elapsed() > std::time::Duration::from_secs(30) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("export of a named pipe waited for a writer");
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert_eq!(code, Some(2), "{err}");
        assert_eq!(
            err,
            format!(
                "roce-dissect: export reads each capture twice, so not from a pipe or device ({}): save it to a file first\n",
                fifo.display()
            )
        );
    }
    let (code, _) = one(&["captures/loss.pcap"]);
    assert_eq!(code, Some(2), "needs -o");
    let loss = samples()
        .into_iter()
        .find(|p| p.ends_with("loss.pcap"))
        .unwrap();
    let (code, err) = one(&[loss.to_str().unwrap(), "-o", ds_s, "--where", "bth.psn =="]);
    assert_eq!(code, Some(2));
    assert!(err.starts_with("roce-dissect: --where"), "{err}");
    // Two captures of one name.
    let other = tmp.path().join("loss.pcap");
    std::fs::copy(&loss, &other).unwrap();
    let (code, err) = one(&[loss.to_str().unwrap(), other.to_str().unwrap(), "-o", ds_s]);
    assert_eq!(code, Some(2));
    assert!(err.contains("both named loss.pcap"), "{err}");
    // A truncated capture: exported as far as it reads, with its warning.
    let bytes = std::fs::read(&loss).unwrap();
    let cut = tmp.path().join("cut.pcap");
    std::fs::write(&cut, &bytes[..bytes.len() - 100]).unwrap();
    let out = export(&ds, &[cut], &["--tables", "packets"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning"));
}

/// Ctrl-C during an export stops it at once, removes what it had written
/// (the hidden folder beside the dataset) and ends with exit status 130;
/// a folder that a killed export left behind is removed by the next
/// export into the dataset, and only such a folder.
#[test]
#[cfg(target_os = "linux")]
fn an_interrupted_export_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let big = tmp.path().join("big.pcap");
    bin()
        .args(["gen", "--scenario", "mixed", "--seed", "1", "--qps", "64"])
        .args(["--messages", "400", "-o"])
        .arg(&big)
        .assert()
        .success();
    let ds = tmp.path().join("ds");
    let hidden = common::names_in;
    let child = Command::new(env!("CARGO_BIN_EXE_roce-dissect"))
        .arg("export")
        .arg(&big)
        .arg("-o")
        .arg(&ds)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Its folder beside the dataset is there once it has begun (and
    // catches the signal by then).
    common::until("the export began", || {
        hidden(&ds).iter().any(|n| n.starts_with(".roce-dissect-"))
    });
    common::sigint(child.id());
    let (code, err) = common::ended(child);
    assert_eq!(code, Some(130), "{err}");
    assert!(
        err.ends_with(&format!(
            "roce-dissect: interrupted (Ctrl-C): {} was not exported ({} is as it was)\n",
            big.display(),
            ds.display()
        )),
        "{err}"
    );
    assert_eq!(hidden(&ds), Vec::<String>::new(), "{err}");
    // The folder was made for this export: as it was is not there.
    assert!(!ds.exists());

    // What a killed export leaves (its process gone) is removed; an export
    // that still runs (this process) keeps its folder, and a file of such
    // a name is no folder of ours.
    let dead = ".roce-dissect-4294967294-big.pcap";
    std::fs::create_dir_all(ds.join(dead).join("flows")).unwrap();
    std::fs::write(ds.join(dead).join("flows/part-0.parquet"), b"PAR1").unwrap();
    let alive = format!(".roce-dissect-{}-big.pcap", std::process::id());
    std::fs::create_dir_all(ds.join(&alive)).unwrap();
    std::fs::write(ds.join(".roce-dissect-1-note"), b"").unwrap();
    let loss = samples()
        .into_iter()
        .find(|p| p.ends_with("loss.pcap"))
        .unwrap();
    let out = export(&ds, &[loss], &["--tables", "flows"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.starts_with(&format!(
            "roce-dissect: removed {dead}, left in {} by a run that was stopped\n",
            ds.display()
        )),
        "{err}"
    );
    assert_eq!(
        hidden(&ds),
        [".roce-dissect-1-note".to_string(), alive, "flows".into()]
    );
}

/// The README's recipes, extracted.
fn recipe(name: &str) -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let marker = format!("```python\n# recipe: {name}\n");
    let (_, rest) = readme.split_once(&marker).expect("recipe in README");
    let (code, _) = rest.split_once("```").unwrap();
    format!("# recipe: {name}\n{code}")
}

fn python_has(module: &str) -> bool {
    Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn run_python(code: &str, dataset: &Path) -> String {
    let out = Command::new("python3")
        .args(["-c", code])
        .env("DATASET", dataset)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The samples (and the external captures, when present) as one dataset.
fn shared_dataset(dir: &Path) -> (PathBuf, Vec<PathBuf>) {
    let mut captures = samples();
    captures.extend(common::external_captures());
    let ds = dir.join("dataset");
    let out = export(&ds, &captures, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (ds, captures)
}

/// The answers the recipes must give, from the JSON reports.
fn expected_sections(captures: &[PathBuf]) -> BTreeMap<String, Vec<String>> {
    let mut worst = Vec::new();
    let mut pauses: BTreeMap<(String, String, String), (i64, i64, i64)> = BTreeMap::new();
    for c in captures {
        let name = c.file_name().unwrap().to_str().unwrap().to_string();
        let r = report(c);
        for (i, f) in r["flows"].as_array().unwrap().iter().enumerate() {
            let (re, mi) = (
                f["retransmits"].as_i64().unwrap(),
                f["missing"].as_i64().unwrap(),
            );
            if re > 0 || mi > 0 {
                worst.push((-re, -mi, name.clone(), i as i64 + 1, f.clone()));
            }
        }
        for iv in r["pfc"]["intervals"].as_array().unwrap() {
            let e = pauses
                .entry((
                    name.clone(),
                    iv["src_mac"].as_str().unwrap().to_string(),
                    // 802.3x pauses have none: Python prints None.
                    iv["priority"]
                        .as_i64()
                        .map_or("None".to_string(), |p| p.to_string()),
                ))
                .or_default();
            let d = iv["duration_ns"].as_i64().unwrap();
            e.0 += 1;
            e.1 += d;
            e.2 = e.2.max(d);
        }
    }
    worst.sort_by(|a, b| (a.0, a.1, &a.2, a.3).cmp(&(b.0, b.1, &b.2, b.3)));
    let worst: Vec<String> = worst
        .into_iter()
        .take(10)
        .map(|(_, _, c, n, f)| {
            format!(
                "{c}\t{n}\t{}\t{}\t{}\t{}\t{}\t{}",
                f["src"].as_str().unwrap(),
                f["dst"].as_str().unwrap(),
                f["destqp"],
                f["retransmits"],
                f["missing"],
                f["naks"]["psn_seq_err"]
            )
        })
        .collect();
    let mut pauses: Vec<_> = pauses.into_iter().collect();
    pauses.sort_by(|a, b| (-a.1.1, &a.0).cmp(&(-b.1.1, &b.0)));
    let pauses = pauses
        .into_iter()
        .map(|((c, m, p), (n, t, l))| format!("{c}\t{m}\t{p}\t{n}\t{t}\t{l}"))
        .collect();
    BTreeMap::from([
        ("worst flows".to_string(), worst),
        ("pause time per port".to_string(), pauses),
    ])
}

fn sections(out: &str) -> BTreeMap<String, Vec<String>> {
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut cur = String::new();
    for l in out.lines() {
        if let Some(name) = l.strip_prefix("== ") {
            cur = name.to_string();
            m.entry(cur.clone()).or_default();
        } else {
            m.get_mut(&cur).unwrap().push(l.to_string());
        }
    }
    m
}

/// Per capture, from DuckDB: frames, retransmissions, CE, CNPs, the flows'
/// sums, and the flows whose frames and bytes disagree with the packets.
const DUCKDB_SUMS: &str = r#"
import os, duckdb
D = os.environ["DATASET"]
con = duckdb.connect()
for t in ["packets", "flows"]:
    con.sql(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{D}/{t}/**/*.parquet', hive_partitioning = true)")
rows = con.sql("""
WITH p AS (SELECT capture, count(*) AS frames,
                  count(*) FILTER (WHERE analysis_retransmission) AS re,
                  count(*) FILTER (WHERE analysis_ce) AS ce,
                  count(*) FILTER (WHERE analysis_cnp) AS cnp
           FROM packets GROUP BY capture),
     f AS (SELECT capture, count(*) AS flows, sum(retransmits) AS re, sum(ecn_ce) AS ce,
                  sum(cnps) AS cnp FROM flows GROUP BY capture),
     pf AS (SELECT capture, flow, count(*) AS n, sum(frame_len) AS bytes FROM packets
            WHERE flow IS NOT NULL GROUP BY capture, flow),
     bad AS (SELECT f.capture, count(*) AS n FROM flows f LEFT JOIN pf USING (capture, flow)
             WHERE pf.n IS DISTINCT FROM f.packets OR pf.bytes IS DISTINCT FROM f.bytes
             GROUP BY f.capture)
SELECT p.capture, p.frames, p.re, p.ce, p.cnp, coalesce(f.flows, 0), coalesce(f.re, 0),
       coalesce(f.ce, 0), coalesce(f.cnp, 0), coalesce(bad.n, 0)
FROM p LEFT JOIN f USING (capture) LEFT JOIN bad USING (capture) ORDER BY p.capture
""").fetchall()
for r in rows:
    print("\t".join(str(v) for v in r))
"#;

#[test]
fn duckdb_answers_equal_the_report() {
    if !python_has("duckdb") {
        skip(
            "DuckDB",
            "python3 -c 'import duckdb' fails (pip install duckdb)",
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (ds, captures) = shared_dataset(tmp.path());
    // Sums and counts, capture by capture.
    let out = run_python(DUCKDB_SUMS, &ds);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines.len(),
        captures.len(),
        "a partition per capture:\n{out}"
    );
    for c in &captures {
        let name = c.file_name().unwrap().to_str().unwrap();
        let line = lines
            .iter()
            .find(|l| l.split('\t').next() == Some(name))
            .unwrap_or_else(|| panic!("{name} missing:\n{out}"));
        let v: Vec<i64> = line
            .split('\t')
            .skip(1)
            .map(|x| x.parse().unwrap())
            .collect();
        let r = report(c);
        let flows = r["flows"].as_array().unwrap().len() as i64;
        let (re, ce, cnp) = (sum(&r, "retransmits"), sum(&r, "ecn_ce"), sum(&r, "cnps"));
        assert_eq!(
            v,
            vec![
                r["capture"]["frames"].as_i64().unwrap(),
                re,
                ce,
                cnp,
                flows,
                re,
                ce,
                cnp,
                0
            ],
            "{name}: frames, retransmits, CE, CNPs (packets, then flows), flows, mismatched flows"
        );
    }
    // The README's recipe.
    let got = sections(&run_python(&recipe("duckdb"), &ds));
    let want = expected_sections(&captures);
    for (name, rows) in &want {
        assert_eq!(&got[name], rows, "recipe section {name}");
    }
    assert!(!got["retransmits per host"].is_empty());
    assert!(!want["worst flows"].is_empty() && !want["pause time per port"].is_empty());
}

#[test]
fn spark_answers_equal_duckdb() {
    if !python_has("pyspark") || !python_has("duckdb") {
        skip(
            "Spark",
            "python3 -c 'import pyspark, duckdb' fails (pip install pyspark duckdb)",
        );
        return;
    }
    if Command::new("java").arg("-version").output().is_err() {
        skip("Spark", "no Java runtime (java -version fails)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (ds, _) = shared_dataset(tmp.path());
    let duck = run_python(&recipe("duckdb"), &ds);
    let spark = run_python(&recipe("spark"), &ds);
    assert_eq!(spark, duck, "Spark and DuckDB disagree");
    assert!(duck.lines().count() > 10);
}

/// The packets table holds what `packets -T fields` prints, column by column.
#[test]
fn packets_table_matches_fields_output() {
    let tmp = tempfile::tempdir().unwrap();
    let mixed = samples()
        .into_iter()
        .find(|p| p.ends_with("mixed.pcapng"))
        .unwrap();
    let ds = tmp.path().join("ds");
    assert!(
        export(&ds, std::slice::from_ref(&mixed), &["--tables", "packets"])
            .status
            .success()
    );
    let batches = read(&ds, "packets", "mixed.pcapng");
    let fields = [
        ("frame.number", "frame"),
        ("ip.version", "ip_version"),
        ("infiniband.bth.psn", "bth_psn"),
        ("infiniband.bth.opcode", "bth_opcode"),
        ("ip.src", "ip_src"),
        ("ipv6.dst", "ipv6_dst"),
        ("eth.src", "eth_src"),
        ("infiniband.reth.va", "reth_va"),
        ("infiniband.grh.sgid", "grh_sgid"),
        ("frame.protocols", "frame_protocols"),
        ("infiniband.icrc.status", "icrc_status"),
        ("roce.analysis.flow", "flow"),
        ("macc.cbfc.pause_time.c3", "macc_cbfc_pause_time_c3"),
    ];
    let mut cmd = bin();
    cmd.args(["packets", "-T", "fields", "-E", "separator=|"]);
    for (f, _) in &fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.arg(&mixed).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let want: Vec<Vec<String>> = text
        .lines()
        .map(|l| l.split('|').map(str::to_string).collect())
        .collect();
    assert_eq!(want.len(), rows(&batches));
    for (k, (field, col)) in fields.iter().enumerate() {
        let mut got: Vec<String> = Vec::new();
        for b in &batches {
            let a = b.column_by_name(col).unwrap();
            let shown = arrow_cast_display(a.as_ref());
            got.extend(shown);
        }
        for (row, g) in got.iter().enumerate() {
            let w = &want[row][k];
            // tshark prints hex fields as 0x..; the table holds numbers.
            let w = match w.strip_prefix("0x") {
                Some(h) if !field.ends_with("protocols") => {
                    u128::from_str_radix(h, 16).unwrap().to_string()
                }
                _ => w.clone(),
            };
            assert_eq!(g, &w, "{field} of frame {}", row + 1);
        }
    }
}

/// Array values as text (nulls empty), for the types the packets table has.
fn arrow_cast_display(a: &dyn Array) -> Vec<String> {
    use arrow_array::types::Decimal128Type;
    use arrow_schema::DataType;
    (0..a.len())
        .map(|i| {
            if a.is_null(i) {
                return String::new();
            }
            match a.data_type() {
                DataType::Int32 => a.as_primitive::<Int32Type>().value(i).to_string(),
                DataType::Int64 => a.as_primitive::<Int64Type>().value(i).to_string(),
                DataType::Decimal128(..) => a.as_primitive::<Decimal128Type>().value(i).to_string(),
                DataType::Utf8 => a.as_string::<i32>().value(i).to_string(),
                DataType::Boolean => (a.as_boolean().value(i) as u8).to_string(),
                t => panic!("{t:?}"),
            }
        })
        .collect()
}

/// A dataset that cannot be written is a failed output (exit 1, the folder
/// named), not an unreadable capture (exit 2, the capture named).
#[test]
fn unwritable_dataset_and_unreadable_capture_are_told_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ds");
    std::fs::create_dir_all(&dir).unwrap();
    // Where the flows table's folder goes, a file.
    std::fs::write(dir.join("flows"), b"in the way").unwrap();
    let loss = samples()
        .into_iter()
        .find(|p| p.ends_with("loss.pcap"))
        .unwrap();
    let out = export(&dir, std::slice::from_ref(&loss), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("roce-dissect: cannot write {}", dir.display())),
        "{stderr}"
    );
    // The staging folder is gone, the file in the way untouched.
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(std::fs::read(dir.join("flows")).unwrap(), b"in the way");

    // A capture that is garbage: named, exit 2.
    let bad = tmp.path().join("bad.pcap");
    std::fs::write(&bad, b"garbage, not a capture").unwrap();
    let out = export(&tmp.path().join("ok/ds"), std::slice::from_ref(&bad), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(&format!("roce-dissect: {}: ", bad.display())),
        "{stderr}"
    );
    // Nothing exported: the folders the export made for it are gone.
    assert!(!tmp.path().join("ok").exists());
}

/// The TCP conversations beside the RoCE: a row each, every figure of
/// `other.tcp_conversations[]` a column, each value the report's.
#[test]
fn tcp_conversations_table_equals_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let frames = [
        roce_dissect::synth::samples::tcp_conversations(),
        roce_dissect::synth::samples::tcp_analysis_cases(),
    ]
    .concat();
    let capture = common::write_pcap(tmp.path(), "tcp.pcap", &frames);
    let out_dir = tmp.path().join("dataset");
    let out = export(
        &out_dir,
        std::slice::from_ref(&capture),
        &["--tables", "tcp_conversations"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = report(&capture);
    let convs = r["other"]["tcp_conversations"].as_array().unwrap();
    assert!(convs.len() >= 5, "{}", convs.len());
    let batches = read(&out_dir, "tcp_conversations", "tcp.pcap");
    assert_eq!(rows(&batches), convs.len());
    let table = Table::TcpConversations;
    let sources: BTreeSet<String> = table.sources().into_iter().collect();
    let mut checked = 0;
    for ((name, kind), path) in table.schema().iter().zip(table.sources()) {
        if !matches!(kind, roce_dissect::export::column::Kind::I64) {
            continue;
        }
        let at = |c: &J| {
            path.split('.')
                .try_fold(c, |v, k| v.get(k))
                .and_then(J::as_i64)
        };
        let want: Vec<Option<i64>> = convs.iter().map(at).collect();
        assert_eq!(ints(&batches, name), want, "{name}");
        checked += 1;
    }
    assert!(checked >= 30, "{checked}");
    // Every figure of a conversation has its column.
    for c in convs {
        let mut stack = vec![(String::new(), c)];
        while let Some((path, v)) = stack.pop() {
            match v {
                J::Object(m) => {
                    for (k, x) in m {
                        let p = if path.is_empty() {
                            k.clone()
                        } else {
                            format!("{path}.{k}")
                        };
                        stack.push((p, x));
                    }
                }
                J::Null => {}
                _ => assert!(sources.contains(&path), "{path} has no column"),
            }
        }
    }
}
