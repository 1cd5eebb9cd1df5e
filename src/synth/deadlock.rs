//! `gen --scenario deadlock -o DIR`: three switches A, B and C in a ring,
//! one capture per link and the topology naming their MACs. RDMA WRITEs
//! cross each link both ways; then B pauses A, C pauses B and A pauses C
//! on priority 3, each refreshing its XOFF until a watchdog sends XON. On
//! even seeds the three pauses overlap for longer than 100 ms (a
//! deadlock); on odd seeds one link's pause is cut short (none).

use serde::Serialize;

use super::conn::Conn;
use super::frame::{NetSpec, build_pfc};
use super::samples::Rng;
use super::{CaptureWriter, OutFormat};
use crate::fabric::{Deadlock, Spread};
use crate::wire::AckKind;

const MS: u64 = 1_000_000;
const T0: u64 = 1_767_225_600_000_000_000;

/// The link captures, the topology and what `fabric` must report.
pub struct DeadlockRun {
    /// (file name, capture bytes).
    pub captures: Vec<(String, Vec<u8>)>,
    pub topology: String,
    pub truth: DeadlockTruth,
}

/// The figures of `fabric --json` the captures must produce.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DeadlockTruth {
    pub scenario: &'static str,
    pub seed: u64,
    pub deadlocks: Vec<Deadlock>,
    pub propagation: Vec<Spread>,
    /// Per edge: (paused, by, paused_ns).
    pub edges: Vec<(String, String, u64)>,
}

fn mac(dev: u8, port: u8) -> [u8; 6] {
    [0x02, 0x5e, 0x10, 0x00, dev, port]
}

/// Generates the three links for `seed` in `format`.
pub fn generate(seed: u64, format: OutFormat) -> std::io::Result<DeadlockRun> {
    let mut rng = Rng::new(seed);
    let res = format.ts_resolution_ns().max(1);
    let shown = |t: u64| t - t % res;
    let names = ["A", "B", "C"];
    // Link k joins device k (port 1) and device k+1 (port 2); device k+1
    // pauses device k on it.
    let deadlock = seed.is_multiple_of(2);
    let mut captures = Vec::new();
    let mut pauses = Vec::new();
    for k in 0..3u8 {
        let (a, b) = (k, (k + 1) % 3);
        let (mac_a, mac_b) = (mac(a + 1, 1), mac(b + 1, 2));
        let conn = Conn {
            mac_a,
            mac_b,
            net: NetSpec::V2Ipv4 {
                src: std::net::Ipv4Addr::new(10, 1, k, 1),
                dst: std::net::Ipv4Addr::new(10, 1, k, 2),
                dscp: 26,
                ecn: 2,
                ttl: 64,
                sport: 0xc000 | u16::from(k),
            },
            qp_a: 0x100 + u32::from(k),
            qp_b: 0x200 + u32::from(k),
            vlan: None,
        };
        let start = T0 + 5 * MS + u64::from(k) * (200_000 + rng.below(300_000));
        let long = 150 * MS + rng.below(100 * MS);
        let len = if !deadlock && k == 2 { 40 * MS } else { long };
        let end = start + len;
        let mut frames: Vec<(u64, Vec<u8>)> = Vec::new();
        // Traffic both ways before the pause, then the pause train.
        let mut t = T0 + u64::from(k) * 100;
        let mut psn = 0;
        while t < start - 100_000 {
            frames.push((t, super::conn::bytes(&conn.req(0x0a, psn, 1024))));
            frames.push((
                t + 2_000,
                super::conn::bytes(&conn.ack(psn, AckKind::Ack, 31, psn + 1)),
            ));
            psn += 1;
            t += 50_000 + rng.below(50_000);
        }
        let mut times = [0u16; 8];
        times[3] = 65535;
        let mut pt = start;
        while pt < end {
            let mut v = Vec::new();
            build_pfc(mac_b, 1 << 3, times, &mut v);
            frames.push((pt, v));
            pt += 200_000;
        }
        let mut v = Vec::new();
        build_pfc(mac_b, 1 << 3, [0; 8], &mut v);
        frames.push((end, v));
        frames.sort_by_key(|f| f.0);
        let mut w = CaptureWriter::new(Vec::new(), format)?;
        for (ts, f) in &frames {
            w.write(*ts, f)?;
        }
        let ext = match format {
            OutFormat::PcapNg | OutFormat::PcapNgMicros => "pcapng",
            OutFormat::PcapNanos => "ns.pcap",
            OutFormat::PcapMicros => "pcap",
        };
        captures.push((
            format!(
                "link-{}{}.{ext}",
                names[usize::from(a)].to_lowercase(),
                names[usize::from(b)].to_lowercase()
            ),
            w.into_inner(),
        ));
        // Shown times; the interval ends at the XON.
        pauses.push((
            names[usize::from(a)].to_string(),
            names[usize::from(b)].to_string(),
            shown(start),
            shown(end),
        ));
    }
    let threshold = 100 * MS;
    let deadlocks = {
        let s = pauses.iter().map(|p| p.2).max().unwrap_or(0);
        let e = pauses.iter().map(|p| p.3).min().unwrap_or(0);
        if e > s && e - s > threshold {
            vec![Deadlock {
                devices: names.iter().map(|n| n.to_string()).collect(),
                priority: Some(3),
                start_ns: s,
                end_ns: e,
            }]
        } else {
            Vec::new()
        }
    };
    let mut by_time = pauses.clone();
    by_time.sort_by_key(|p| p.2);
    let mut propagation = Vec::new();
    for (i, f) in by_time.iter().enumerate() {
        for g in &by_time[i + 1..] {
            if g.2 - f.2 <= threshold && g.1 == f.0 && g.0 != f.1 {
                let r = |p: &(String, String, u64, u64)| crate::fabric::PauseRef {
                    paused: p.0.clone(),
                    by: p.1.clone(),
                    priority: Some(3),
                    start_ns: p.2,
                };
                propagation.push(Spread {
                    first: r(f),
                    then: r(g),
                    delay_ns: g.2 - f.2,
                });
            }
        }
    }
    let topology = serde_json::json!({
        "devices": {
            "A": [crate::output::json::mac_string(&mac(1, 1)), crate::output::json::mac_string(&mac(1, 2))],
            "B": [crate::output::json::mac_string(&mac(2, 1)), crate::output::json::mac_string(&mac(2, 2))],
            "C": [crate::output::json::mac_string(&mac(3, 1)), crate::output::json::mac_string(&mac(3, 2))],
        }
    })
    .to_string();
    let mut edges: Vec<(String, String, u64)> = pauses
        .iter()
        .map(|p| (p.0.clone(), p.1.clone(), p.3 - p.2))
        .collect();
    edges.sort();
    Ok(DeadlockRun {
        captures,
        topology,
        truth: DeadlockTruth {
            scenario: "deadlock",
            seed,
            deadlocks,
            propagation,
            edges,
        },
    })
}
