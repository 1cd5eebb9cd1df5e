use super::super::testfile::{Ng, build, damage_and_cut, item};
use super::pcapng::{BLOCK_IDB, Interface, epb_direct};
use super::*;
use pcap_file::Endianness;
use proptest::prelude::*;

/// An interface block of `link` with these options (code, value).
fn idb(link: u16, options: &[(u16, &[u8])], big: bool) -> Vec<u8> {
    let w16 = |v: u16| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let w32 = |v: u32| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let mut body = Vec::new();
    body.extend_from_slice(&w16(link));
    body.extend_from_slice(&[0, 0]);
    body.extend_from_slice(&w32(0));
    for (code, value) in options {
        body.extend_from_slice(&w16(*code));
        body.extend_from_slice(&w16(value.len() as u16));
        body.extend_from_slice(value);
        body.resize(body.len().div_ceil(4) * 4, 0);
    }
    body.extend_from_slice(&[0; 4]);
    let len = 12 + body.len() as u32;
    let mut b = w32(BLOCK_IDB).to_vec();
    b.extend_from_slice(&w32(len));
    b.extend_from_slice(&body);
    b.extend_from_slice(&w32(len));
    b
}

#[test]
fn the_leading_interfaces_say_the_resolution_before_a_frame() {
    let le = Endianness::Little;
    // No if_tsresol: microseconds.
    assert_eq!(leading_resolution_ns(&idb(1, &[], false), le), 1000);
    // if_name first, then if_tsresol 9.
    let ns = idb(1, &[(2, b"eth0!"), (9, &[9])], false);
    assert_eq!(leading_resolution_ns(&ns, le), 1);
    assert_eq!(
        leading_resolution_ns(&idb(1, &[(9, &[9])], true), Endianness::Big),
        1
    );
    // 2^-20 s, and the finest of two interfaces.
    assert_eq!(
        leading_resolution_ns(&idb(1, &[(9, &[0x80 | 20])], false), le),
        953
    );
    let both = [idb(1, &[], false), ns.clone()].concat();
    assert_eq!(leading_resolution_ns(&both, le), 1);
    // ERF records carry their own nanoseconds.
    assert_eq!(leading_resolution_ns(&idb(197, &[], false), le), 1);
    // Not a whole interface block first: not known yet.
    assert_eq!(leading_resolution_ns(&ns[..ns.len() - 1], le), 0);
    assert_eq!(leading_resolution_ns(&[6, 0, 0, 0, 32, 0, 0, 0], le), 0);
    assert_eq!(leading_resolution_ns(&[], le), 0);
}

/// Everything a reader says about `file`: each frame (or error) and the
/// warnings, read with or without the direct EPB path.
fn read_all(file: &[u8], direct: bool) -> (Vec<String>, Vec<String>, Vec<Section>) {
    let mut r = match FrameReader::new(file) {
        Ok(r) => r,
        Err(e) => return (vec![format!("open: {e}")], Vec::new(), Vec::new()),
    };
    r.records.direct_epb = direct;
    let mut out = Vec::new();
    for f in r.by_ref() {
        out.push(match f {
            Ok(f) => format!(
                "{} {} {} {} {:?} {:?} {}",
                f.number, f.ts_ns, f.len, f.caplen, f.link, f.data, f.offset
            ),
            Err(e) => format!("error: {e}"),
        });
    }
    let warnings = r.records.warnings.clone();
    (out, warnings, r.records.sections.clone())
}

#[test]
fn a_plain_epb_is_read_directly() {
    for big in [false, true] {
        let mut n = Ng {
            bytes: Vec::new(),
            big,
        };
        n.epb(1, 5 << 32 | 7, 70, &[9; 61], false);
        let ifaces = [
            Interface {
                link: Ok(LinkType::Ethernet),
                speed: None,
                ns_per_unit: Some(1000),
            },
            Interface {
                link: Ok(LinkType::RawIp),
                speed: None,
                ns_per_unit: Some(1),
            },
        ];
        let order = if big {
            Endianness::Big
        } else {
            Endianness::Little
        };
        let Some(Item::Frame {
            next,
            meta: FrameMeta {
                ts_ns, len, link, ..
            },
            data,
        }) = epb_direct(&n.bytes, order, &ifaces)
        else {
            panic!("not read directly");
        };
        assert_eq!(next, n.bytes.len());
        assert_eq!(
            (ts_ns, len, link, data),
            (5 << 32 | 7, 70, LinkType::RawIp, 28..89)
        );
        // With options, or an interface in binary units: the parser's.
        let mut m = Ng {
            bytes: Vec::new(),
            big,
        };
        m.epb(0, 1, 70, &[9; 61], true);
        assert!(epb_direct(&m.bytes, order, &ifaces).is_none());
        let binary = [Interface {
            link: Ok(LinkType::Ethernet),
            speed: None,
            ns_per_unit: None,
        }; 2];
        assert!(epb_direct(&n.bytes, order, &binary).is_none());
    }
}

#[test]
fn direct_epb_reads_the_sample_captures_like_the_parser() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).expect("captures/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "pcapng") {
            let bytes = std::fs::read(&path).expect("read");
            let (frames, warnings, sections) = read_all(&bytes, true);
            assert!(frames.len() > 100, "{}", path.display());
            assert_eq!((frames, warnings, sections), read_all(&bytes, false));
            checked += 1;
        }
    }
    assert!(checked >= 3, "pcapng samples: {checked}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Built files (both byte orders, several sections, resolutions and
    /// offsets, unknown interfaces and link types, lengths that do not
    /// agree, options), then damaged: the same frames, errors and
    /// warnings either way.
    #[test]
    fn direct_epb_agrees_with_the_parser(
        items in prop::collection::vec(item(), 1..40),
        damage in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cut in prop::option::of(any::<prop::sample::Index>()),
    ) {
        let mut bytes = build(&items);
        damage_and_cut(&mut bytes, &damage, cut);
        prop_assert_eq!(read_all(&bytes, true), read_all(&bytes, false));
    }
}
