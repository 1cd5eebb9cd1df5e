//! The fixed-offset fast path must decode exactly what the etherparse path
//! decodes, and the analysis facts computed straight from the bytes must be
//! those of the decoded packet: checked frame by frame on the external
//! captures, the sample captures, every opcode, and every truncation and
//! many mutations of them.

mod common;

use roce_dissect::analysis::{Body, Facts};
use roce_dissect::capture::{CaptureFile, Frame, LinkType};
use roce_dissect::dissect::{DissectOptions, dissect, dissect_reference};
use roce_dissect::synth::samples::{self, Rng};

/// Facts for a reused buffer to hold before a frame's are put over them.
const OTHER: Facts = Facts {
    number: 99,
    ts_ns: 7,
    len: 1,
    flags: 0xff,
    lost: 9,
    body: Body::Other { protocol: "LLDP" },
};

/// Returns whether the facts came the quick way, and whether they should
/// have (a whole, well-formed RoCE frame outside CM).
fn same(f: &Frame<'_>, what: &str) -> (bool, bool) {
    let mut quick = false;
    let mut expected = false;
    for check_icrc in [true, false] {
        let opts = DissectOptions {
            check_icrc,
            ..DissectOptions::default()
        };
        let a = dissect(f, &opts);
        let b = dissect_reference(f, &opts);
        assert_eq!(
            a, b,
            "{what}: frame {} differs between the fast path and etherparse",
            f.number
        );
        let want = Facts::of(&b);
        expected = matches!(&want.body, Body::Roce(r) if r.key.dest_qp != 1)
            && want.flags & (Facts::TRUNCATED | Facts::MALFORMED) == 0
            && f.link == LinkType::Ethernet;
        assert_eq!(
            Facts::from_frame(f, &opts),
            want,
            "{what}: frame {}: facts differ from the decoded packet's",
            f.number
        );
        if let Some(q) = Facts::quick(f, &opts) {
            assert_eq!(q, want);
            quick = true;
        }
        // Put in a new buffer (pushed) and over other facts in a reused one.
        let mut fresh = Vec::new();
        Facts::put_from_frame(&mut fresh, 0, f, &opts);
        assert_eq!(fresh, [want], "{what}: frame {}: pushed", f.number);
        let mut reused = vec![OTHER; 3];
        Facts::put_from_frame(&mut reused, 1, f, &opts);
        assert_eq!(
            reused,
            [OTHER, want, OTHER],
            "{what}: frame {}: overwritten",
            f.number
        );
    }
    (quick, expected)
}

fn frame(data: &[u8], len: u32) -> Frame<'_> {
    Frame {
        number: 1,
        ts_ns: 0,
        len,
        caplen: data.len() as u32,
        link: LinkType::Ethernet,
        if_speed: None,
        interface: 0,
        data,
        offset: 0,
    }
}

/// Checks every frame of `paths`; returns (frames, frames that took the
/// quick path).
fn decode_all(paths: &[std::path::PathBuf]) -> (usize, usize) {
    let (mut n, mut quick) = (0, 0);
    for p in paths {
        let file = CaptureFile::open(p).unwrap();
        for f in file.frames().unwrap() {
            let f = f.unwrap();
            let (q, e) = same(&f, &p.display().to_string());
            assert!(
                q == e,
                "{}: frame {}: quick path {q}, expected {e}",
                p.display(),
                f.number
            );
            quick += usize::from(q);
            n += 1;
        }
    }
    (n, quick)
}

#[test]
fn sample_captures_decode_identically() {
    let mut paths = Vec::new();
    for e in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/captures")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "pcap" || x == "pcapng") {
            paths.push(p);
        }
    }
    paths.sort();
    let (n, quick) = decode_all(&paths);
    assert_eq!(n, 2270, "the sample captures hold 2270 frames");
    // Every frame but the CM MADs (to QP 1) and the pause frames.
    assert_eq!(quick, 1473, "{quick} of {n} frames took the quick path");
}

#[test]
fn external_captures_decode_identically() {
    let paths = common::external_captures();
    if paths.is_empty() {
        return;
    }
    let (n, quick) = decode_all(&paths);
    assert_eq!(n, 3852, "the external captures hold 3852 frames");
    // The 420 RoCE frames less the 68 CM MADs.
    assert_eq!(quick, 352, "{quick} of {n} frames took the quick path");
}

#[test]
fn truncations_and_mutations_decode_identically() {
    let mut rng = Rng::new(11);
    for f in samples::every_opcode(7) {
        for cut in 0..=f.len() {
            same(&frame(&f[..cut], f.len() as u32), "truncated");
        }
        for _ in 0..200 {
            let mut g = f.clone();
            // Mutate the header area (lengths, versions, types, flags).
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(64.min(g.len() as u64)) as usize;
                g[at] = rng.next_u32() as u8;
            }
            let cut = g.len() - rng.below(g.len() as u64 / 2) as usize;
            same(&frame(&g[..cut], g.len() as u32), "mutated");
        }
    }
}

#[test]
fn vlan_tagged_frames_decode_identically() {
    for f in samples::every_opcode(8).iter().take(90) {
        for tags in 1..=2 {
            let mut g = f[..12].to_vec();
            for t in 0..tags {
                g.extend_from_slice(&[0x81, 0x00, 0x60 | t, 0x64]);
            }
            g.extend_from_slice(&f[12..]);
            same(&frame(&g, g.len() as u32), "tagged");
            let p = dissect(&frame(&g, g.len() as u32), &DissectOptions::default());
            assert_eq!(p.pcp(), Some(3));
            assert_eq!(p.icrc.unwrap().valid, Some(true));
        }
    }
}

#[test]
fn stream_reader_matches_memory_reader_at_any_buffer_size() {
    use roce_dissect::capture::{FrameSource, StreamReader};
    for e in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/captures")).unwrap() {
        let p = e.unwrap().path();
        if !p.extension().is_some_and(|x| x == "pcap" || x == "pcapng") {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap();
        let file = CaptureFile::from_bytes(bytes.clone());
        let want: Vec<(u64, u64, usize, Vec<u8>)> = file
            .frames()
            .unwrap()
            .map(|f| f.unwrap())
            .map(|f| (f.number, f.ts_ns, f.offset, f.data.to_vec()))
            .collect();
        for chunk in [64, 100, 1500, 4096, 65536] {
            let mut r = StreamReader::with_buffer(
                Box::new(std::io::Cursor::new(bytes.clone())),
                None,
                chunk,
            )
            .unwrap();
            let mut got = Vec::new();
            while let Some(f) = r.next_frame() {
                let f = f.unwrap();
                got.push((f.number, f.ts_ns, f.offset, f.data.to_vec()));
            }
            assert_eq!(
                got.len(),
                want.len(),
                "{} with a {chunk}-byte buffer",
                p.display()
            );
            assert!(got == want, "{} with a {chunk}-byte buffer", p.display());
            assert!(r.warnings().is_empty());
        }
        // Mapped a 64 KiB window at a time (the smallest), as the CLI reads files.
        let mut r = StreamReader::mapped(std::fs::File::open(&p).unwrap(), 64 * 1024).unwrap();
        let mut got = Vec::new();
        while let Some(f) = r.next_frame() {
            let f = f.unwrap();
            got.push((f.number, f.ts_ns, f.offset, f.data.to_vec()));
        }
        assert!(got == want, "{} mapped in windows", p.display());
    }
}

#[test]
fn pipelined_analysis_equals_sequential() {
    use roce_dissect::pipeline::{analyze_sequential, analyze_source};
    for e in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/captures")).unwrap() {
        let p = e.unwrap().path();
        if !p.extension().is_some_and(|x| x == "pcap" || x == "pcapng") {
            continue;
        }
        let file = CaptureFile::open(&p).unwrap();
        let a = analyze_sequential(
            &mut file.frames().unwrap(),
            "x",
            &Default::default(),
            Default::default(),
            None,
        )
        .unwrap();
        let b = analyze_source(
            &mut file.frames().unwrap(),
            "x",
            &Default::default(),
            Default::default(),
            None,
        )
        .unwrap();
        assert_eq!(a, b, "{}", p.display());
    }
}
