use std::io::Write;
use std::ops::ControlFlow;

use proptest::prelude::*;

use super::*;
use crate::capture::CaptureFile;
use crate::capture::testfile::{Item, Ng, build_with, damage_and_cut, item};
use crate::pipeline::Seen;

/// The report (or the error) as JSON text.
fn outcome(r: Result<Report, CaptureError>) -> String {
    match r {
        Ok(report) => serde_json::to_string_pretty(&report).unwrap_or_default(),
        Err(e) => format!("error: {e}"),
    }
}

fn sequential(bytes: &[u8]) -> String {
    let file = CaptureFile::from_bytes(bytes.to_vec());
    let mut reader = match file.frames() {
        Ok(r) => r,
        Err(e) => return format!("error: {e}"),
    };
    outcome(super::super::analyze_sequential(
        &mut reader,
        "capture",
        &DissectOptions::default(),
        AnalysisOptions::default(),
        None,
    ))
}

/// `None` when the chunked reader does not take the file.
fn chunked(bytes: &[u8], plan: Plan) -> Option<String> {
    let mut tmp = tempfile::NamedTempFile::new().expect("temporary file");
    tmp.write_all(bytes).expect("write");
    let file = tmp.reopen().expect("reopen");
    let input = ChunkedFile::new(&file)?;
    Some(outcome(analyze_file(
        input,
        "capture",
        &DissectOptions::default(),
        AnalysisOptions::default(),
        plan,
        None,
    )))
}

/// Filters that read the bytes, the frame's place and the analysis.
const FILTERS: &[&str] = &[
    "bth.opcode == 0x81 || frame.number in {3 50 77}",
    "roce.analysis.flow == 1 && frame.time_delta > 0",
    "not roce.analysis.gap and frame.time_relative >= 0.00001",
    "eth",
];

/// One line per frame `filter` passes: what the frame loop said of it.
fn line(filter: &Filter, seen: &Seen<'_, '_>) -> Option<String> {
    let flow = seen.analysis.flow().map(|f| u64::from(f) + 1);
    filter.matches(&seen.ctx(flow)).then(|| {
        let p = seen.pkt;
        format!(
            "{} {} {} {} {} {:?} {:?}\n",
            p.number, p.ts_ns, seen.first_ts_ns, seen.prev_ts_ns, p.len, seen.analysis, p.bth
        )
    })
}

/// The frames `filter` passes, read by the sequential frame loop, then
/// its report.
fn visited_sequentially(bytes: &[u8], filter: &Filter) -> String {
    let file = CaptureFile::from_bytes(bytes.to_vec());
    let mut reader = match file.frames() {
        Ok(r) => r,
        Err(e) => return format!("error: {e}"),
    };
    let mut lines = String::new();
    let r = super::super::visit_source(
        &mut reader,
        "capture",
        &DissectOptions::default(),
        AnalysisOptions::default(),
        None,
        &mut |seen| {
            lines.extend(line(filter, seen));
            ControlFlow::Continue(())
        },
        None,
    );
    lines + &outcome(r)
}

/// The same from the chunked reader (`None` when it does not take
/// the file).
fn visited_chunked(bytes: &[u8], plan: Plan, filter: &Filter) -> Option<String> {
    let mut tmp = tempfile::NamedTempFile::new().expect("temporary file");
    tmp.write_all(bytes).expect("write");
    let file = tmp.reopen().expect("reopen");
    let input = ChunkedFile::new(&file)?;
    let mut lines = String::new();
    let mut visit = |seen: &Seen<'_, '_>| {
        lines.extend(line(filter, seen));
        ControlFlow::Continue(())
    };
    let r = visit_file(
        input,
        "capture",
        &DissectOptions::default(),
        AnalysisOptions::default(),
        plan,
        None,
        Some((filter, &mut visit)),
    );
    Some(lines + &outcome(r))
}

/// Packet `k`'s data: one of the sample RoCE frames, or `len` counting
/// bytes for even `len`.
fn frame(samples: &[Vec<u8>]) -> impl Fn(usize, usize) -> Vec<u8> + '_ {
    move |k, len| {
        if len % 2 == 0 {
            (0..len).map(|i| (i + k) as u8).collect()
        } else {
            samples[(k + len) % samples.len()].clone()
        }
    }
}

#[test]
fn a_pcapng_file_is_read_like_the_sequential_reader() {
    let samples = crate::synth::samples::every_opcode(7);
    // Two interfaces first, one more and a second section (big
    // endian) later, with skipped blocks and an unknown interface.
    let mut items = vec![Item::Idb(1, Some(9), None), Item::Idb(1, None, None)];
    for i in 0..120u64 {
        items.push(Item::Epb {
            iface: (i % 3) as u32,
            ts: 1_700_000_000_000_000 + i * 1000,
            extra: 0,
            short: false,
            len: 1,
            flags: i % 10 == 0,
        });
        match i {
            30 => items.push(Item::Idb(1, Some(6), None)),
            50 => items.push(Item::Other { kind: 5, len: 12 }),
            70 => items.push(Item::Section(true)),
            71 => items.push(Item::Idb(1, Some(9), None)),
            90 => items.push(Item::Other {
                kind: 0x1234,
                len: 3,
            }),
            _ => {}
        }
    }
    let bytes = build_with(&items, frame(&samples));
    let want = sequential(&bytes);
    assert!(want.contains("\"frames\": 77"), "{want}");
    assert!(want.contains("24 more warnings not shown"), "{want}");
    for chunk in [64, 333, 4096, 1 << 20] {
        for threads in [2, 3] {
            let got = chunked(
                &bytes,
                Plan {
                    threads,
                    chunk,
                    parts: threads - 1,
                },
            );
            assert_eq!(got.as_ref(), Some(&want), "chunk {chunk}");
        }
    }
    // The frame loop with a filter: the same frames, with the same
    // analysis and times, and the same report.
    for text in FILTERS {
        let filter = Filter::parse(text).unwrap();
        let want = visited_sequentially(&bytes, &filter);
        assert!(want.lines().count() > 2, "{text}: {want}");
        for chunk in [64, 333, 4096] {
            let got = visited_chunked(
                &bytes,
                Plan {
                    threads: 2,
                    chunk,
                    parts: 2,
                },
                &filter,
            );
            assert_eq!(got.as_ref(), Some(&want), "{text}, chunk {chunk}");
        }
    }
}

/// A visitor that stops the loop: frames up to there, none after.
#[test]
fn a_visitor_stops_the_chunked_loop() {
    let samples = crate::synth::samples::every_opcode(4);
    let mut items = vec![Item::Idb(1, Some(9), None)];
    for i in 0..400u64 {
        items.push(Item::Epb {
            iface: 0,
            ts: 1_700_000_000_000_000 + i * 1000,
            extra: 0,
            short: false,
            len: 1,
            flags: false,
        });
    }
    let bytes = build_with(&items, frame(&samples));
    let mut tmp = tempfile::NamedTempFile::new().expect("temporary file");
    tmp.write_all(&bytes).expect("write");
    let file = tmp.reopen().expect("reopen");
    let input = ChunkedFile::new(&file).unwrap();
    let filter = Filter::parse("frame").unwrap();
    let mut seen = Vec::new();
    let mut visit = |s: &Seen<'_, '_>| {
        seen.push(s.pkt.number);
        if seen.len() == 150 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let plan = Plan {
        threads: 3,
        chunk: 1000,
        parts: 2,
    };
    let opts = DissectOptions::default();
    let select = Some((&filter, &mut visit as Visit<'_>));
    let r = visit_file(input, "c", &opts, Default::default(), plan, None, select);
    assert!(r.is_ok());
    assert_eq!(seen, (1..=150).collect::<Vec<u64>>());
}

/// Interface blocks among the packets and then sections one after
/// another, thousands of each: the same report, in about the time the
/// calling thread alone takes.
#[test]
fn files_that_keep_changing_state() {
    let samples = crate::synth::samples::every_opcode(5);
    let mut n = Ng {
        bytes: Vec::new(),
        big: false,
    };
    n.shb(false);
    for i in 0..20_000usize {
        n.idb(1, None, None);
        if i % 3 == 0 {
            n.epb(0, i as u64, 2000, &samples[i % samples.len()], false);
        }
    }
    for i in 0..5_000usize {
        n.shb(i % 2 == 1);
        n.idb(1, Some(9), None);
        n.epb(0, i as u64, 2000, &samples[i % samples.len()], false);
    }
    let want = sequential(&n.bytes);
    assert!(want.contains("\"frames\": 11667"), "{want}");
    for chunk in [4096, 65_536] {
        for threads in [2, 4] {
            let got = chunked(
                &n.bytes,
                Plan {
                    threads,
                    chunk,
                    parts: threads - 1,
                },
            );
            assert_eq!(
                got.as_ref(),
                Some(&want),
                "chunk {chunk}, {threads} threads"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    /// Built pcapng files (sections in both byte orders, interfaces
    /// appearing mid-file, options, skipped and unknown blocks), then
    /// damaged and cut: the chunked reader's report is the sequential
    /// one, with any chunk size and thread count.
    #[test]
    fn chunked_pcapng_agrees_with_the_sequential_reader(
        items in prop::collection::vec(item(), 1..120),
        damage in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..3),
        cut in prop::option::of(any::<prop::sample::Index>()),
        chunk in 16u64..3000,
        threads in 2usize..4,
    ) {
        let samples = crate::synth::samples::every_opcode(3);
        let mut items = items;
        items.insert(0, Item::Idb(1, None, None));
        let mut bytes = build_with(&items, frame(&samples));
        damage_and_cut(&mut bytes, &damage, cut);
        let want = sequential(&bytes);
        let filter = Filter::parse(FILTERS[chunk as usize % FILTERS.len()]).unwrap();
        let visited = visited_sequentially(&bytes, &filter);
        if let Some(got) = visited_chunked(&bytes, Plan { threads, chunk, parts: threads }, &filter) {
            prop_assert_eq!(got, visited);
        }
        if let Some(got) = chunked(&bytes, Plan { threads, chunk, parts: threads - 1 }) {
            prop_assert_eq!(got, want);
        }
    }
}
