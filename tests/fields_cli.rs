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
    assert_eq!(
        &block[start..end],
        listed,
        "README.md's field list is stale: paste `roce-dissect fields` between the markers"
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
            "\"bth.pns\" is neither a field nor a protocol name",
        ),
        (vec!["-T", "fields"], "no fields with -e"),
        (
            vec!["-T", "fields", "-e", "bth.pns"],
            "-e bth.pns: no such field",
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
