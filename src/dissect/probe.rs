//! Where RoCE v2 went when none came to its port: a capture of RoCE on a
//! UDP port other than 4791 (a lab setup, a tunnel, a vendor's choice)
//! shows no RoCE frame at all. Its frames are decoded again as RoCE v2 at
//! their own destination port; those whose ICRC then checks are RoCE.

use super::{DissectOptions, dissect};
use crate::capture::FrameSource;

/// Distinct ports followed: past them, other ports are not counted.
const MAX_PORTS: usize = 64;

/// The UDP destination port, other than `opts.roce_port`, with most frames
/// that decode as RoCE v2 with a good ICRC, and how many, among the first
/// `limit` frames of `source`; `None` when no frame does.
pub fn other_roce_port(
    source: &mut dyn FrameSource,
    opts: &DissectOptions,
    limit: u64,
) -> Option<(u16, u64)> {
    let mut ports: Vec<(u16, u64)> = Vec::new();
    let mut read = 0u64;
    while read < limit {
        let Some(Ok(frame)) = source.next_frame() else {
            break;
        };
        read = read.saturating_add(1);
        let Some(udp) = dissect(&frame, opts).udp else {
            continue;
        };
        if udp.dport == opts.roce_port {
            continue;
        }
        let at_port = DissectOptions {
            roce_port: udp.dport,
            ..*opts
        };
        let p = dissect(&frame, &at_port);
        if p.bth.is_none() || p.icrc.and_then(|i| i.valid) != Some(true) {
            continue;
        }
        if let Some((_, n)) = ports.iter_mut().find(|(port, _)| *port == udp.dport) {
            *n = n.saturating_add(1);
        } else if ports.len() < MAX_PORTS {
            ports.push((udp.dport, 1));
        }
    }
    ports
        .into_iter()
        .max_by_key(|&(port, n)| (n, std::cmp::Reverse(port)))
}
