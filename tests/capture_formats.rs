//! Containers and link types: pcap in both byte orders and resolutions,
//! pcapng with several sections and interfaces, binary and decimal
//! `if_tsresol`, `if_tsoffset`; Linux cooked SLL and SLL2, raw IPv4/IPv6.

use roce_dissect::capture::{CaptureFile, LinkType};
use roce_dissect::dissect::{DissectOptions, dissect};
use roce_dissect::synth::samples;

fn pcap(big_endian: bool, nanos: bool, linktype: u32, frames: &[(u64, Vec<u8>)]) -> Vec<u8> {
    let w32 = |v: &mut Vec<u8>, x: u32| {
        if big_endian {
            v.extend_from_slice(&x.to_be_bytes())
        } else {
            v.extend_from_slice(&x.to_le_bytes())
        }
    };
    let w16 = |v: &mut Vec<u8>, x: u16| {
        if big_endian {
            v.extend_from_slice(&x.to_be_bytes())
        } else {
            v.extend_from_slice(&x.to_le_bytes())
        }
    };
    let mut v = Vec::new();
    w32(&mut v, if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 });
    w16(&mut v, 2);
    w16(&mut v, 4);
    w32(&mut v, 0);
    w32(&mut v, 0);
    w32(&mut v, 65535);
    w32(&mut v, linktype);
    for (ts, f) in frames {
        w32(&mut v, (ts / 1_000_000_000) as u32);
        w32(
            &mut v,
            if nanos {
                (ts % 1_000_000_000) as u32
            } else {
                (ts % 1_000_000_000 / 1000) as u32
            },
        );
        w32(&mut v, f.len() as u32);
        w32(&mut v, f.len() as u32);
        v.extend_from_slice(f);
    }
    v
}

fn block(v: &mut Vec<u8>, kind: u32, body: &[u8]) {
    let len = (12 + body.len()).div_ceil(4) * 4;
    v.extend_from_slice(&kind.to_le_bytes());
    v.extend_from_slice(&(len as u32).to_le_bytes());
    v.extend_from_slice(body);
    v.resize(v.len() + (len - 12 - body.len()), 0);
    v.extend_from_slice(&(len as u32).to_le_bytes());
}

fn shb(v: &mut Vec<u8>) {
    let mut b = Vec::new();
    b.extend_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&0u16.to_le_bytes());
    b.extend_from_slice(&(-1i64).to_le_bytes());
    block(v, 0x0A0D_0D0A, &b);
}

/// IDB with optional if_tsresol and if_tsoffset.
fn idb(v: &mut Vec<u8>, linktype: u16, tsresol: Option<u8>, tsoffset: Option<i64>) {
    let mut b = Vec::new();
    b.extend_from_slice(&linktype.to_le_bytes());
    b.extend_from_slice(&0u16.to_le_bytes());
    b.extend_from_slice(&65535u32.to_le_bytes());
    if let Some(r) = tsresol {
        b.extend_from_slice(&9u16.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&[r, 0, 0, 0]);
    }
    if let Some(o) = tsoffset {
        b.extend_from_slice(&14u16.to_le_bytes());
        b.extend_from_slice(&8u16.to_le_bytes());
        b.extend_from_slice(&o.to_le_bytes());
    }
    b.extend_from_slice(&[0, 0, 0, 0]);
    block(v, 1, &b);
}

fn epb(v: &mut Vec<u8>, iface: u32, raw_ts: u64, f: &[u8]) {
    let mut b = Vec::new();
    b.extend_from_slice(&iface.to_le_bytes());
    b.extend_from_slice(&((raw_ts >> 32) as u32).to_le_bytes());
    b.extend_from_slice(&(raw_ts as u32).to_le_bytes());
    b.extend_from_slice(&(f.len() as u32).to_le_bytes());
    b.extend_from_slice(&(f.len() as u32).to_le_bytes());
    b.extend_from_slice(f);
    b.resize(b.len().div_ceil(4) * 4, 0);
    block(v, 6, &b);
}

fn frames_of(bytes: Vec<u8>) -> Vec<(u64, LinkType, Option<u32>, Option<bool>)> {
    let file = CaptureFile::from_bytes(bytes);
    file.frames()
        .unwrap()
        .map(|f| {
            let f = f.unwrap();
            let p = dissect(&f, &DissectOptions::default());
            (
                f.ts_ns,
                f.link,
                p.bth.map(|b| b.psn.get()),
                p.icrc.and_then(|i| i.valid),
            )
        })
        .collect()
}

#[test]
fn pcap_byte_orders_and_resolutions() {
    let ops = samples::every_opcode(3);
    let frames: Vec<(u64, Vec<u8>)> = ops
        .iter()
        .take(5)
        .enumerate()
        .map(|(i, f)| (1_700_000_000_123_456_789 + i as u64 * 1_001, f.clone()))
        .collect();
    for be in [false, true] {
        let ns = frames_of(pcap(be, true, 1, &frames));
        assert_eq!(ns.len(), 5);
        assert_eq!(
            ns[1].0, 1_700_000_000_123_457_790,
            "ns resolution, big endian {be}"
        );
        assert!(ns.iter().all(|x| x.3 == Some(true)));
        let us = frames_of(pcap(be, false, 1, &frames));
        assert_eq!(
            us[1].0, 1_700_000_000_123_457_000,
            "µs resolution, big endian {be}"
        );
        assert_eq!(
            ns.iter().map(|x| x.2).collect::<Vec<_>>(),
            us.iter().map(|x| x.2).collect::<Vec<_>>()
        );
    }
}

#[test]
fn pcapng_sections_interfaces_tsresol_tsoffset() {
    let ops = samples::every_opcode(4);
    let mut v = Vec::new();
    shb(&mut v);
    idb(&mut v, 1, None, None); // µs (default)
    idb(&mut v, 1, Some(9), Some(100)); // ns, +100 s
    idb(&mut v, 1, Some(0x80 | 20), None); // 2^-20 s
    epb(&mut v, 0, 1_000_000, &ops[0]); // 1 s
    epb(&mut v, 1, 5, &ops[1]); // 100 s + 5 ns
    epb(&mut v, 2, 3 << 20, &ops[2]); // 3 s
    // A second section: interfaces start again.
    shb(&mut v);
    idb(&mut v, 113, Some(6), None); // SLL, µs
    let mut sll = vec![0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 0xa, 0, 0];
    sll.extend_from_slice(&0x0800u16.to_be_bytes());
    sll.extend_from_slice(&ops[3][14..]);
    epb(&mut v, 0, 7, &sll);
    let got = frames_of(v);
    assert_eq!(got.len(), 4);
    assert_eq!(got[0].0, 1_000_000_000);
    assert_eq!(got[1].0, 100_000_000_005);
    assert_eq!(got[2].0, 3_000_000_000);
    assert_eq!(got[3].0, 7_000);
    assert_eq!(got[3].1, LinkType::LinuxSll);
    assert!(got.iter().all(|x| x.3 == Some(true)), "{got:?}");
}

#[test]
fn cooked_and_raw_ip_link_types() {
    let ops = samples::every_opcode(5);
    // ops[0] is v2/IPv4, ops[83] v2/IPv6, ops[166] v1 (Ethernet only).
    let (v4, v6) = (&ops[0], &ops[83]);
    let want = |f: &Vec<u8>| {
        let file = CaptureFile::from_bytes(pcap(false, true, 1, &[(1, f.clone())]));
        let fr = file.frames().unwrap().next().unwrap().unwrap();
        let p = dissect(&fr, &DissectOptions::default());
        (p.bth, p.reth, p.payload_len, p.icrc.unwrap().valid)
    };
    let sll = |f: &Vec<u8>| {
        let mut h = vec![0, 0, 0, 1, 0, 6];
        h.extend_from_slice(&f[6..12]);
        h.extend_from_slice(&[0, 0]);
        h.extend_from_slice(&f[12..]);
        h
    };
    let sll2 = |f: &Vec<u8>| {
        let mut h = f[12..14].to_vec();
        h.extend_from_slice(&[0, 0, 0, 0, 0, 2, 0, 1, 0, 6]);
        h.extend_from_slice(&f[6..12]);
        h.extend_from_slice(&[0, 0]);
        h.extend_from_slice(&f[14..]);
        h
    };
    for f in [v4, v6] {
        let reference = want(f);
        assert_eq!(reference.3, Some(true));
        for (linktype, bytes) in [
            (113u32, sll(f)),
            (276, sll2(f)),
            (101, f[14..].to_vec()),
            (
                if f[12..14] == [0x08, 0x00] { 228 } else { 229 },
                f[14..].to_vec(),
            ),
        ] {
            let file = CaptureFile::from_bytes(pcap(false, true, linktype, &[(1, bytes)]));
            let fr = file.frames().unwrap().next().unwrap().unwrap();
            let p = dissect(&fr, &DissectOptions::default());
            assert_eq!(
                (p.bth, p.reth, p.payload_len, p.icrc.unwrap().valid),
                reference,
                "link type {linktype}"
            );
            assert!(p.eth.is_none());
            if linktype == 113 || linktype == 276 {
                assert_eq!(p.src_mac(), Some(samples::MAC_A), "link type {linktype}");
            }
        }
    }
}
