//! Hostile captures, each built to stress one table or path of the
//! analysis (issue 28): `cargo run --release --example adversarial -- KIND N
//! OUT`. `bench/complexity.sh` runs each at n and 4n.
//!
//! Kinds:
//!   collide N       N IPv6 flows whose keys collide in an unseeded flow hash
//!   ordinary N      N IPv6 flows with ordinary keys (to compare with collide)
//!   pfc-macs N      PFC XOFF and XON from N source MACs
//!   pairs N         N data flows and N ACK flows between two hosts, every PSN alike
//!   distinct-qps N  N queue pairs, one frame each
//!   ud-sources N    one UD flow from N DETH source QPs, one frame each
//!   pause-flap N    N PFC frames flapping XOFF/XON
//!   pausing-macs N  N/8 MACs pausing priority 3 while N flows send to them
//!   cm-flood N      N CM REQ + REP for the same two QPs
//!   tiny N          N records of 16 bytes
//!   big-read N      a READ of 2^31 bytes at PMTU 256, then N requests in order
//!   iface-options N a pcapng file of N interface blocks with 1 MiB of options
//!                   each, then 100 000 frames (written as pcapng)
use std::io::Write;
use std::net::{Ipv4Addr, Ipv6Addr};

use roce_dissect::synth::conn::{Conn, bytes};
use roce_dissect::synth::frame::{NetSpec, build_pfc, cm_frame, cm_mad};
use roce_dissect::synth::{CaptureWriter, OutFormat};
use roce_dissect::wire::AckKind;
use roce_dissect::wire::mad::CmMessage;

const T0: u64 = 1_767_225_600_000_000_000;

fn v4(a: u32, b: u32, qp_a: u32, qp_b: u32) -> Conn {
    Conn {
        mac_a: [2, 0, 0, 0, 0, 1],
        mac_b: [2, 0, 0, 0, 0, 2],
        net: NetSpec::V2Ipv4 {
            src: Ipv4Addr::from(a),
            dst: Ipv4Addr::from(b),
            dscp: 26,
            ecn: 2,
            ttl: 64,
            sport: 0xc000,
        },
        qp_a,
        qp_b,
        vlan: None,
    }
}

fn v6(src: u128, dst: u128, qp: u32) -> Conn {
    Conn {
        mac_a: [2, 0, 0, 0, 0, 1],
        mac_b: [2, 0, 0, 0, 0, 2],
        net: NetSpec::V2Ipv6 {
            src: Ipv6Addr::from(src),
            dst: Ipv6Addr::from(dst),
            dscp: 26,
            ecn: 2,
            hop_limit: 64,
            flow_label: 0,
            sport: 0xc000,
        },
        qp_a: 0x100,
        qp_b: qp,
        vlan: None,
    }
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(kind), Some(n), Some(out)) = (args.get(1), args.get(2), args.get(3)) else {
        eprintln!("usage: adversarial KIND N OUT (see the source for the kinds)");
        std::process::exit(2);
    };
    let n: u64 = n.parse().expect("N is a number");
    if kind == "iface-options" {
        return iface_options(n, out);
    }
    let file = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(out)?);
    let mut w = CaptureWriter::new(file, OutFormat::PcapNanos)?;
    let mut t = T0;
    let mut put = |w: &mut CaptureWriter<_>, f: &[u8]| {
        t += 100;
        w.write(t, f)
    };
    match kind.as_str() {
        "collide" | "ordinary" => {
            // The unseeded hash mixed an IPv6 address as lo ^ rotl(hi, 23):
            // keys with equal mixes collided, whatever the rest.
            for i in 0..n {
                let hi = u64::from(0xfd00u16) << 48 | i;
                let lo = if kind == "collide" {
                    0x1234_5678_9abc_def0 ^ hi.rotate_left(23)
                } else {
                    i.wrapping_mul(0x9e37_79b9_7f4a_7c15)
                };
                let c = v6(u128::from(hi) << 64 | u128::from(lo), 1, 0x11);
                put(&mut w, &bytes(&c.req(0x04, 0, 64)))?;
            }
        }
        "pfc-macs" => {
            for i in 0..n {
                let mac = [
                    2,
                    0x5e,
                    (i >> 24) as u8,
                    (i >> 16) as u8,
                    (i >> 8) as u8,
                    i as u8,
                ];
                let mut v = Vec::new();
                let mut times = [0; 8];
                times[3] = 1000;
                build_pfc(mac, 1 << 3, times, &mut v);
                put(&mut w, &v)?;
                v.clear();
                build_pfc(mac, 1 << 3, [0; 8], &mut v);
                put(&mut w, &v)?;
            }
        }
        "pairs" => {
            // Every data flow sends PSN 100 and every ACK flow acknowledges
            // PSN 100: each ACK flow could pair with any data flow.
            for i in 0..n as u32 {
                let c = v4(0x0a00_0001, 0x0a00_0002, 0x1000 + i, 0x80_0000 + i);
                put(&mut w, &bytes(&c.req(0x04, 100, 64)))?;
            }
            for i in 0..n as u32 {
                let c = v4(0x0a00_0001, 0x0a00_0002, 0x1000 + i, 0x80_0000 + i);
                put(&mut w, &bytes(&c.ack(100, AckKind::Ack, 31, 1)))?;
            }
        }
        "distinct-qps" => {
            for i in 0..n as u32 {
                let c = v4(0x0a00_0001 + (i >> 24), 0x0a00_0002, 0x11, i & 0xff_ffff);
                put(&mut w, &bytes(&c.req(0x04, i & 0xff_ffff, 64)))?;
            }
        }
        "ud-sources" => {
            let c = v4(0x0a00_0001, 0x0a00_0002, 0x11, 0x22);
            for i in 0..n as u32 {
                let mut f = c.req(0x64, 7, 64);
                f.ext.reth = None;
                f.ext.deth = Some(roce_dissect::wire::DethRepr {
                    q_key: 0x8001_0000,
                    src_qp: i & 0xff_ffff,
                });
                put(&mut w, &bytes(&f))?;
            }
        }
        "pause-flap" => {
            for i in 0..n {
                let mut v = Vec::new();
                let mut times = [0; 8];
                times[3] = if i % 2 == 0 { 65535 } else { 0 };
                build_pfc([2, 0x5e, 0, 0, 0, 1], 1 << 3, times, &mut v);
                put(&mut w, &v)?;
            }
        }
        "pausing-macs" => {
            let macs = (n / 8).max(1);
            for m in 0..macs {
                let mac = [2, 0x5e, 0, (m >> 16) as u8, (m >> 8) as u8, m as u8];
                let mut v = Vec::new();
                let mut times = [0; 8];
                times[3] = 65535;
                build_pfc(mac, 1 << 3, times, &mut v);
                put(&mut w, &v)?;
            }
            for i in 0..n as u32 {
                let m = u64::from(i) % macs;
                let mut c = v4(0x0a00_0000 + i, 0x0b00_0001, 0x11, 0x22);
                c.mac_b = [2, 0x5e, 0, (m >> 16) as u8, (m >> 8) as u8, m as u8];
                c.vlan = Some((10, 3));
                put(&mut w, &bytes(&c.req(0x04, 0, 64)))?;
            }
        }
        "cm-flood" => {
            let c = v4(0x0a00_0001, 0x0a00_0002, 0x11, 0x22);
            for i in 0..n as u32 {
                let req = cm_mad(
                    u64::from(i),
                    &CmMessage::Req {
                        local_comm_id: i,
                        service_id: 0x0106_0000_0000_1234,
                        local_qpn: 0x11,
                        starting_psn: 0,
                        mtu: 5,
                        nvme: None,
                    },
                );
                put(&mut w, &bytes(&cm_frame(c.mac_a, c.mac_b, c.net, i, &req)))?;
                let rep = cm_mad(
                    u64::from(i),
                    &CmMessage::Rep {
                        local_comm_id: !i,
                        remote_comm_id: i,
                        local_qpn: 0x22,
                        starting_psn: 0,
                    },
                );
                put(
                    &mut w,
                    &bytes(&cm_frame(c.mac_b, c.mac_a, c.net.reversed(), i, &rep)),
                )?;
            }
        }
        "tiny" => {
            let c = v4(0x0a00_0001, 0x0a00_0002, 0x11, 0x22);
            let f = bytes(&c.req(0x04, 0, 64));
            for _ in 0..n {
                put(&mut w, &f[..16])?;
            }
        }
        "big-read" => {
            // The CM REQ sets the PMTU to 256 (code 1); a READ of 2^31
            // bytes then spans 2^23 PSNs, and the next request follows it.
            let c = v4(0x0a00_0001, 0x0a00_0002, 0x11, 0x22);
            let req = cm_mad(
                1,
                &CmMessage::Req {
                    local_comm_id: 1,
                    service_id: 0x0106_0000_0000_1234,
                    local_qpn: 0x11,
                    starting_psn: 0,
                    mtu: 1,
                    nvme: None,
                },
            );
            put(&mut w, &bytes(&cm_frame(c.mac_a, c.mac_b, c.net, 1, &req)))?;
            put(&mut w, &bytes(&c.read(10, 1 << 31)))?;
            let next = 10 + (1u32 << 23);
            for k in 0..n as u32 {
                put(&mut w, &bytes(&c.req(0x04, (next + k) & 0xff_ffff, 64)))?;
            }
        }
        other => {
            eprintln!("unknown kind {other}");
            std::process::exit(2);
        }
    }
    w.flush()?;
    let mut inner = w.into_inner();
    inner.flush()?;
    Ok(())
}

/// A pcapng file: a section header, `n` interface blocks carrying 1 MiB of
/// comment options each, then 100 000 frames on the last interface.
fn iface_options(n: u64, out: &str) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(out)?);
    let block = |f: &mut dyn Write, kind: u32, body: &[u8]| -> std::io::Result<()> {
        let len = (12 + body.len()) as u32;
        f.write_all(&kind.to_le_bytes())?;
        f.write_all(&len.to_le_bytes())?;
        f.write_all(body)?;
        f.write_all(&len.to_le_bytes())
    };
    let mut shb = Vec::new();
    shb.extend_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&u64::MAX.to_le_bytes());
    block(&mut f, 0x0A0D_0D0A, &shb)?;
    // 16 comments of 65 532 bytes: 1 MiB of options.
    let mut idb = Vec::new();
    idb.extend_from_slice(&1u16.to_le_bytes());
    idb.extend_from_slice(&0u16.to_le_bytes());
    idb.extend_from_slice(&65535u32.to_le_bytes());
    for _ in 0..16 {
        idb.extend_from_slice(&1u16.to_le_bytes());
        idb.extend_from_slice(&65532u16.to_le_bytes());
        idb.extend(std::iter::repeat_n(b'x', 65532));
    }
    idb.extend_from_slice(&[9, 0, 1, 0, 9, 0, 0, 0]); // if_tsresol: ns
    idb.extend_from_slice(&[0; 4]);
    for _ in 0..n {
        block(&mut f, 1, &idb)?;
    }
    let c = v4(0x0a00_0001, 0x0a00_0002, 0x11, 0x22);
    for k in 0..100_000u32 {
        let frame = bytes(&c.req(0x04, k, 512));
        let ts = T0 + u64::from(k) * 1000;
        let mut epb = Vec::new();
        epb.extend_from_slice(&(n as u32 - 1).to_le_bytes());
        epb.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(ts as u32).to_le_bytes());
        epb.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        epb.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        epb.extend_from_slice(&frame);
        while epb.len() % 4 != 0 {
            epb.push(0);
        }
        block(&mut f, 6, &epb)?;
    }
    f.flush()
}
