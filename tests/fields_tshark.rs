//! The field registry against tshark 4.0: the same names have the same
//! types and bases; `packets -T fields` prints tshark's bytes for every
//! field both know, frame by frame; and for every such field a presence
//! filter and `==` filters on the values seen select exactly the frames
//! tshark's `-Y` selects.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use roce_dissect::fields::{FIELDS, Field, FieldType};

/// Fields left out of the byte-for-byte comparison, and why.
fn skipped(name: &str) -> Option<&'static str> {
    match name {
        // tshark lists what follows the layers roce-dissect decodes (TCP,
        // TLS, mDNS, ...): compared on RoCE and PFC frames only, below.
        "frame.protocols" => Some("compared on RoCE and MAC Control frames only"),
        _ => None,
    }
}

/// Whether `field` is compared on a frame whose layers tshark lists as
/// `proto`: `frame.protocols` (see [`skipped`]) on RoCE and MAC Control
/// frames only.
fn compared_on(field: &str, proto: &str) -> bool {
    let known = proto.contains("infiniband") || proto.ends_with(":macc");
    match field {
        "frame.protocols" => known,
        _ => true,
    }
}

fn tshark_fields() -> Vec<&'static Field> {
    FIELDS.iter().filter(|f| f.in_tshark).collect()
}

fn tshark_cmd(path: &Path) -> Command {
    let mut cmd = Command::new("tshark");
    // RPC-over-RDMA's heuristic takes some SEND payloads for its own.
    cmd.args(["--disable-protocol", "rpcordma", "-n", "-r"]);
    cmd.arg(path);
    // tshark picks the dissector of the lower UDP port: RoCE v2 whose
    // entropy source port is below 4791 is decoded as RoCE when asked.
    let out = Command::new(env!("CARGO_BIN_EXE_roce-dissect"))
        .arg("packets")
        .arg(path)
        .args([
            "-Y",
            "udp.dstport == 4791 && udp.srcport < 4791",
            "-T",
            "fields",
            "-e",
            "udp.srcport",
        ])
        .output()
        .unwrap();
    let ports: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    for p in ports {
        cmd.arg("-d").arg(format!("udp.port=={p},infiniband"));
    }
    cmd
}

/// Where tshark 4.0 is wrong, so that the field is not compared on the
/// frame (the right answers are checked in tshark_diff.rs): it reads the
/// RD opcodes (0x40-0x5f) as Mellanox's DC transport, with another
/// header layout, stops at the XRCETH of XRC (0xa0-0xbf), which it does
/// not know, and shows no ICRC for CNPs (it calls 0x81 "Unknown").
fn tshark_wrong(field: &str, opcode: Option<u8>) -> bool {
    match opcode {
        Some(0x40..=0x5f | 0xa0..=0xbf) => {
            field.starts_with("infiniband.") && !field.starts_with("infiniband.bth.")
                || field == "frame.protocols"
        }
        Some(0x81) => matches!(field, "infiniband.invariant.crc" | "infiniband.variant.crc"),
        _ => false,
    }
}

/// `-T fields` lines of tshark and of roce-dissect for `fields`.
fn both(path: &Path, fields: &[&Field], filter: Option<&str>) -> (Vec<String>, Vec<String>) {
    let mut t = tshark_cmd(path);
    let mut ours = Command::new(env!("CARGO_BIN_EXE_roce-dissect"));
    ours.arg("packets").arg(path);
    if let Some(f) = filter {
        t.args(["-Y", f]);
        ours.args(["-Y", f]);
    }
    for c in [&mut t, &mut ours] {
        c.args(["-T", "fields", "-E", "occurrence=a"]);
        for f in fields {
            c.arg("-e").arg(f.name);
        }
    }
    let t = t.output().expect("run tshark");
    assert!(
        t.status.success(),
        "tshark {}: {}",
        path.display(),
        String::from_utf8_lossy(&t.stderr)
    );
    let o = ours.output().unwrap();
    assert!(
        o.status.success() || o.status.code() == Some(1),
        "roce-dissect {}: {}",
        path.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    let lines = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .lines()
            .map(str::to_string)
            .collect()
    };
    (lines(&t.stdout), lines(&o.stdout))
}

fn captures(dir: &Path) -> Vec<PathBuf> {
    let mut v = vec![
        Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/mixed.pcapng"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/pfc-storm.pcapng"),
    ];
    for seed in 1..=2u64 {
        let frames = roce_dissect::synth::samples::every_opcode(seed);
        v.push(common::write_pcap(dir, &format!("ops{seed}.pcap"), &frames));
    }
    // Native InfiniBand in ERF records, as ibdump writes them.
    let erf = dir.join("native.erf.pcap");
    let ok = Command::new(env!("CARGO_BIN_EXE_roce-dissect"))
        .args([
            "gen",
            "--scenario",
            "mixed",
            "--qps",
            "8",
            "--messages",
            "6",
            "--link",
            "erf",
            "-o",
        ])
        .arg(&erf)
        .output()
        .unwrap();
    assert!(ok.status.success());
    v.push(erf);
    v.extend(common::external_captures());
    v
}

#[test]
fn registry_types_and_bases_are_wiresharks() {
    if !common::have_tshark() {
        return;
    }
    let out = Command::new("tshark")
        .args(["-G", "fields"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut ws: HashMap<&str, (&str, &str)> = HashMap::new();
    for line in text.lines() {
        let c: Vec<&str> = line.split('\t').collect();
        if c.len() >= 6 && c[0] == "F" {
            ws.insert(c[2], (c[3], c[5]));
        }
    }
    let mut wrong = Vec::new();
    for f in FIELDS {
        match ws.get(f.name) {
            None if f.in_tshark && f.ty != FieldType::Presence => {
                wrong.push(format!("{}: tshark has no such field", f.name))
            }
            Some(_) if !f.in_tshark => {
                wrong.push(format!("{}: tshark has it, so in_tshark", f.name))
            }
            Some((ty, base)) if f.ty != FieldType::Presence => {
                let our_ty = f.ty.wireshark_name();
                // Time fields: tshark 4.0 says FT_RELATIVE_TIME for the epoch too.
                if *ty != our_ty && !ty.contains("TIME") {
                    wrong.push(format!("{}: type {our_ty}, tshark {ty}", f.name));
                }
                let our_base = f.base.wireshark_name();
                let theirs = match *base {
                    "BASE_PT_UDP" | "BASE_PT_TCP" => "BASE_DEC",
                    b if b.starts_with("BASE_") => b,
                    _ => "",
                };
                if our_base != theirs {
                    wrong.push(format!("{}: base {our_base:?}, tshark {base:?}", f.name));
                }
            }
            _ => {}
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn fields_print_as_tshark_prints_them() {
    if !common::have_tshark() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fields: Vec<&Field> = tshark_fields()
        .into_iter()
        .filter(|f| f.ty != FieldType::Presence)
        .collect();
    let proto_at = fields
        .iter()
        .position(|f| f.name == "frame.protocols")
        .unwrap();
    let opcode_at = fields
        .iter()
        .position(|f| f.name == "infiniband.bth.opcode")
        .unwrap();
    let mut compared = 0usize;
    let mut wrong = Vec::new();
    for path in captures(dir.path()) {
        let (t, o) = both(&path, &fields, None);
        assert_eq!(t.len(), o.len(), "{}: frame count", path.display());
        for (n, (tl, ol)) in t.iter().zip(&o).enumerate() {
            let tc: Vec<&str> = tl.split('\t').collect();
            let oc: Vec<&str> = ol.split('\t').collect();
            let proto = tc.get(proto_at).copied().unwrap_or("");
            let opcode = oc.get(opcode_at).and_then(|o| o.parse::<u8>().ok());
            for (i, f) in fields.iter().enumerate() {
                let (mut a, b) = (
                    tc.get(i).copied().unwrap_or(""),
                    oc.get(i).copied().unwrap_or(""),
                );
                if !compared_on(f.name, proto) || tshark_wrong(f.name, opcode) {
                    continue;
                }
                // tshark 4.0 adds ImmDt and IETH twice to the tree.
                if matches!(f.name, "infiniband.immdt" | "infiniband.ieth")
                    && let Some((x, y)) = a.split_once(',')
                    && x == y
                {
                    a = x;
                }
                compared += usize::from(!a.is_empty());
                if a != b
                    && !wrong
                        .iter()
                        .any(|w: &String| w.contains(&format!(": {}: ", f.name)))
                {
                    wrong.push(format!(
                        "{} frame {}: {}: tshark {a:?}, roce-dissect {b:?}",
                        path.file_name().unwrap().to_string_lossy(),
                        n + 1,
                        f.name
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(compared > 10_000, "{compared} values compared");
    eprintln!("{compared} non-empty values equal to tshark's");
}

/// Regular expressions for `matches` that a value as -T fields prints it
/// meets: for a string, its start in capitals (matches is
/// case-insensitive) and the same said case-sensitive (`(?-i)`, which
/// selects only values in capitals); for bytes and MAC addresses, the
/// first byte at the start and the last two at the end, as `\xNN`
/// escapes (bytes over 0x7f included).
fn patterns(f: &Field, v: &str) -> Vec<String> {
    let hex = |v: &str| -> Vec<String> {
        v.split(':')
            .flat_map(|p| {
                (0..p.len())
                    .step_by(2)
                    .map(move |i| p[i..(i + 2).min(p.len())].to_string())
            })
            .collect()
    };
    match f.ty {
        FieldType::Str => {
            let start: String = v
                .chars()
                .take(6)
                .filter(|c| c.is_ascii_alphanumeric() || *c == ':')
                .collect::<String>()
                .to_uppercase();
            vec![format!("\"^{start}\""), format!("\"(?-i)^{start}\"")]
        }
        FieldType::Bytes | FieldType::Ether => {
            let b = hex(v);
            let (Some(first), n) = (b.first(), b.len()) else {
                return Vec::new();
            };
            // Raw strings: the regular expression reads `\xNN` itself
            // (a plain string would turn 0x5e into `^`, an anchor).
            let mut out = vec![format!("r\"^\\x{first}\"")];
            if n >= 2 {
                out.push(format!("r\"\\x{}\\x{}$\"", b[n - 2], b[n - 1]));
            }
            out
        }
        _ => Vec::new(),
    }
}

/// The filter literal for a value as -T fields prints it.
fn literal(f: &Field, v: &str) -> Option<String> {
    match f.ty {
        FieldType::Str => Some(format!("\"{v}\"")),
        FieldType::Bytes => Some(
            (0..v.len())
                .step_by(2)
                .map(|i| &v[i..(i + 2).min(v.len())])
                .collect::<Vec<_>>()
                .join(":"),
        ),
        FieldType::AbsTime | FieldType::RelTime | FieldType::Presence => None,
        _ => Some(v.to_string()),
    }
}

/// tshark's name for a value as -T fields prints it, where the field's
/// values have names (the first of a value's names is tshark's).
fn value_name(f: &Field, v: &str) -> Option<&'static str> {
    let n = match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok()?,
        None if f.ty == FieldType::Bool => u64::from(v == "1"),
        None => v.parse().ok()?,
    };
    // RoCE's CNP opcode has no name in tshark's table (its "CNP" is 0x80).
    if f.name == "infiniband.bth.opcode" && n == 0x81 {
        return None;
    }
    let names = f.names?;
    names().iter().find(|(x, _)| *x == n).map(|(_, name)| *name)
}

/// Every value name tshark 4.0 gives a field whose values have names
/// here reads as the same value here (`tshark -G values`), and each
/// named value's first name is tshark's.
#[test]
fn value_names_are_tsharks() {
    if !common::have_tshark() {
        return;
    }
    let out = Command::new("tshark")
        .args(["-G", "values"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // (field, value) -> tshark's names; fields whose table holds more
    // than one name for a value (several dissectors' tables) are left out.
    let mut theirs: HashMap<(&str, u64), Vec<&str>> = HashMap::new();
    for line in text.lines() {
        let c: Vec<&str> = line.split('\t').collect();
        match c.as_slice() {
            ["V", field, value, name] => {
                let n = match value.strip_prefix("0x") {
                    Some(h) => u64::from_str_radix(h, 16),
                    None => value.parse(),
                };
                if let Ok(n) = n {
                    theirs.entry((field, n)).or_default().push(name);
                }
            }
            ["T", field, yes, no] => {
                theirs.entry((field, 1)).or_default().push(yes);
                theirs.entry((field, 0)).or_default().push(no);
            }
            _ => {}
        }
    }
    // The tables that hold every value tshark names, not the values a
    // RoCE fabric's captures carry.
    let whole = |name: &str| !matches!(name, "eth.type" | "vlan.etype" | "ip.proto" | "ipv6.nxt");
    let mut wrong = Vec::new();
    let mut checked = 0;
    for f in FIELDS.iter().filter(|f| f.names.is_some()) {
        assert!(f.in_tshark, "{}", f.name);
        let ours = (f.names.unwrap())();
        let mut named_by_tshark = 0;
        for (&(field, value), names) in theirs.iter().filter(|((n, _), _)| *n == f.name) {
            named_by_tshark += 1;
            let name = names[0];
            let cnp = f.name == "infiniband.bth.opcode" && name == "CNP";
            match f.value_named(name) {
                Some(v) if v == value || cnp => checked += 1,
                Some(v) => wrong.push(format!(
                    "{field}: \"{name}\" is {v} here, {value} in tshark"
                )),
                None if whole(field) => wrong.push(format!(
                    "{field}: tshark names {value} \"{name}\", not known here"
                )),
                None => {}
            }
            let first = ours.iter().find(|(v, _)| *v == value).map(|(_, n)| *n);
            if first.is_some_and(|n| !n.eq_ignore_ascii_case(name)) && !cnp {
                wrong.push(format!(
                    "{field}: {value} is first named {first:?} here, \"{name}\" in tshark"
                ));
            }
        }
        if named_by_tshark == 0 {
            wrong.push(format!("{}: tshark names none of its values", f.name));
        }
    }
    assert!(checked > 150, "{checked} names checked");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    eprintln!("{checked} of tshark's value names read as tshark reads them");
}

/// Names of values, the `any` / `all` quantifiers and `string()`,
/// hand-written, on
/// the samples and the external captures: the frames tshark selects.
/// (Not `all f in {...}`: tshark 4.0 reads it as `all f == a || all f ==
/// b`, so that no frame whose source and destination differ passes;
/// here every occurrence must be in the set, as the words say.)
#[test]
fn names_quantifiers_and_string_select_what_tshark_selects() {
    if !common::have_tshark() {
        return;
    }
    let filters = [
        "ip.proto == \"UDP\"",
        "ip.proto == UDP",
        "ip.proto != \"tcp\"",
        "ip.proto > \"TCP\"",
        "eth.type == \"IPv4\"",
        "eth.type == \"ipv6\"",
        "eth.type == \"MAC Control\"",
        "vlan.etype == \"IPv4\"",
        "infiniband.bth.opcode == \"Reliable Connection (RC) - Acknowledge\"",
        "infiniband.bth.opcode == \"reliable connection (rc) - rdma write first\"",
        "infiniband.bth.opcode <= \"Reliable Connection (RC) - SEND Only with Immediate\"",
        "infiniband.aeth.syndrome.opcode == \"Nak\"",
        "infiniband.aeth.syndrome.error_code == \"PSN Sequence Error\"",
        "ip.flags.df == \"Set\" && ip.flags.mf == \"Not set\"",
        "ip.dsfield.ecn == \"Congestion Experienced\"",
        "ip.dsfield.dscp == \"Assured Forwarding 31\"",
        "macc.opcode == \"Class Based Flow Control [CBFC] Pause\"",
        "all ip.addr != 10.0.0.1",
        "any ip.addr != 10.0.0.1",
        "all ip.addr == 10.0.0.1",
        "all ip.addr > 10.0.0.1",
        "any ip.addr > 10.0.1.0",
        "all ip.addr == 10.0.0.0/16",
        "any ip.addr in {10.0.0.1, 10.0.1.1}",
        "all eth.addr matches \"^\\\\x02\"",
        "any ipv6.addr == fd00::/8",
        "all infiniband.bth.psn >= 100",
        "string(infiniband.bth.destqp) == \"256\"",
        "string(frame.number) matches \"^1.$\"",
        "string(ip.src) == \"10.0.0.1\"",
        "string(eth.src) contains \"01:01\"",
        "string(ipv6.src) contains \"fd00\"",
        "string(ip.proto) == \"17\"",
        "string(infiniband.bth.psn) matches \"0$\"",
        "frame.time >= \"2026-01-01 00:00:00.0005 UTC\"",
        "frame.time < \"2026-01-01T00:00:00.0005Z\"",
        "frame.time >= \"Jan  1, 2026 00:00:00.000627 UTC\"",
        "frame.time > \"2025-12-31\"",
    ];
    let number = roce_dissect::fields::lookup("frame.number").unwrap();
    // The samples with CM, IPv6, retransmissions, NAKs and PFC, and a
    // real capture with ECN marks (when ../shared is beside the repo).
    let mut files = vec![
        Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/mixed.pcapng"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/pfc-storm.pcapng"),
    ];
    files.extend(
        common::external_captures()
            .into_iter()
            .filter(|p| p.to_string_lossy().contains("read-write-ecn")),
    );
    let jobs: Vec<(&PathBuf, &str)> = files
        .iter()
        .flat_map(|p| filters.iter().map(move |f| (p, *f)))
        .collect();
    let results: Vec<(usize, Option<String>)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|k| {
                let jobs = &jobs;
                s.spawn(move || {
                    jobs.iter()
                        .skip(k)
                        .step_by(2)
                        .map(|(path, filter)| {
                            let (t, o) = both(path, &[number], Some(filter));
                            let differs = (t != o).then(|| {
                                format!(
                                    "{} -Y '{filter}': tshark {} frames, roce-dissect {}",
                                    path.file_name().unwrap().to_string_lossy(),
                                    t.len(),
                                    o.len()
                                )
                            });
                            (o.len(), differs)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let selected: usize = results.iter().map(|(n, _)| n).sum();
    let wrong: Vec<String> = results.into_iter().filter_map(|(_, w)| w).collect();
    assert!(selected > 1000, "{selected} frames selected in all");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn generated_filters_select_what_tshark_selects() {
    if !common::have_tshark() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let files = captures(dir.path());
    // Filters run on four captures: every opcode over every network
    // layer, the samples with CM, retransmissions and IPv6, and with PFC,
    // and native InfiniBand in ERF; values seen there, at most 2 per field.
    let chosen: Vec<&PathBuf> = files
        .iter()
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n == "ops1.pcap"
                || n == "mixed.pcapng"
                || n == "pfc-storm.pcapng"
                || n == "native.erf.pcap"
        })
        .collect();
    let number = roce_dissect::fields::lookup("frame.number").unwrap();
    let mut jobs: Vec<(PathBuf, String)> = Vec::new();
    for path in &chosen {
        let fields = tshark_fields();
        let (_, o) = both(path, &fields, None);
        for (i, f) in fields.iter().enumerate() {
            if skipped(f.name).is_some() {
                continue;
            }
            jobs.push(((*path).clone(), f.name.to_string()));
            let values: BTreeSet<&str> = o
                .iter()
                .filter_map(|l| l.split('\t').nth(i))
                .flat_map(|c| c.split(','))
                .filter(|v| !v.is_empty())
                .collect();
            for v in values.into_iter().take(2) {
                if let Some(l) = literal(f, v) {
                    jobs.push(((*path).clone(), format!("{} == {l}", f.name)));
                }
                if let Some(name) = value_name(f, v) {
                    jobs.push(((*path).clone(), format!("{} == \"{name}\"", f.name)));
                }
                for re in patterns(f, v) {
                    jobs.push(((*path).clone(), format!("{} matches {re}", f.name)));
                }
            }
        }
    }
    // Frames where tshark 4.0 is wrong (tshark_wrong) are left out.
    for (_, filter) in &mut jobs {
        let name = filter.split(' ').next().unwrap_or("").to_string();
        let name = name.as_str();
        if tshark_wrong(name, Some(0x40)) {
            *filter = format!("({filter}) && !(infiniband.bth.opcode in {{64..95, 160..191}})");
        }
        if tshark_wrong(name, Some(0x81)) {
            *filter = format!("({filter}) && !(infiniband.bth.opcode == 129)");
        }
    }
    assert!(jobs.len() > 300, "{} filters", jobs.len());
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(4);
    let chunks: Vec<Vec<(PathBuf, String)>> = (0..threads)
        .map(|k| jobs.iter().skip(k).step_by(threads).cloned().collect())
        .collect();
    let wrong: Vec<String> = std::thread::scope(|s| {
        let hs: Vec<_> = chunks
            .iter()
            .map(|c| {
                s.spawn(move || {
                    let mut wrong = Vec::new();
                    for (path, filter) in c {
                        let (t, o) = both(path, &[number], Some(filter));
                        if t != o {
                            wrong.push(format!(
                                "{} -Y '{filter}': tshark {} frames {:?}..., roce-dissect {} frames {:?}...",
                                path.file_name().unwrap().to_string_lossy(),
                                t.len(),
                                t.iter().take(5).collect::<Vec<_>>(),
                                o.len(),
                                o.iter().take(5).collect::<Vec<_>>()
                            ));
                        }
                    }
                    wrong
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(
        wrong.is_empty(),
        "{} of {} filters differ:\n{}",
        wrong.len(),
        jobs.len(),
        wrong.join("\n")
    );
    eprintln!("{} filters select what tshark selects", jobs.len());
}
