//! NVMe over Fabrics on RDMA: what the RDMA CM says of a connection, held
//! against tshark where it decodes the same bytes.

mod common;

use std::process::Command;

use roce_dissect::synth::frame::{cm_frame, cm_mad};
use roce_dissect::synth::samples::{MAC_A, MAC_B, networks};
use roce_dissect::wire::mad::{self, CmMessage};
use roce_dissect::wire::nvme::{CmReqData, service_id};

fn nvme_req(qid: u16) -> CmMessage {
    CmMessage::Req {
        local_comm_id: 0x2000 + u32::from(qid),
        service_id: service_id(4420),
        local_qpn: 0x40 + u32::from(qid),
        starting_psn: 1000,
        mtu: 5,
        nvme: Some(CmReqData {
            recfmt: 0,
            qid,
            hrqsize: 128,
            hsqsize: 127,
            cntlid: if qid == 0 { 0xffff } else { 1 },
        }),
    }
}

#[test]
fn a_cm_req_to_port_4420_carries_the_queue_it_opens() {
    // Its MAD parses back with the private data.
    for qid in [0u16, 1, 7] {
        let m = cm_mad(9, &nvme_req(qid));
        let (_, msg) = mad::parse(&m).unwrap();
        assert_eq!(msg, Some(nvme_req(qid)));
    }
    // tshark reads the same port and the same private data bytes (its
    // "IP CM" header then "Consumer PrivateData").
    if !common::have_tshark() {
        common::skip(
            "the CM REQ private data against tshark",
            "tshark is not installed",
        );
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let keep = std::env::var_os("NVME_KEEP");
    let frames: Vec<Vec<u8>> = [0u16, 3]
        .iter()
        .map(|&qid| {
            let m = cm_mad(9, &nvme_req(qid));
            roce_dissect::synth::conn::bytes(&cm_frame(MAC_A, MAC_B, networks(0xc000)[0], 3, &m))
        })
        .collect();
    let p = common::write_pcap(d.path(), "cm.pcap", &frames);
    if let Some(k) = keep {
        std::fs::copy(&p, k).unwrap();
    }
    let out = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(&p)
        .args([
            "-T",
            "fields",
            "-e",
            "infiniband.cm.req.serviceid.dport",
            "-e",
            "infiniband.cm.req.ip_cm.sport",
            "-e",
            "infiniband.cm.req.ip_cm",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    for (line, qid) in lines.iter().zip([0u16, 3]) {
        let f: Vec<&str> = line.split('\t').collect();
        let [port, ip_port, private] = f[..] else {
            panic!("{line}")
        };
        // The ServiceID's port, and the IP CM header's.
        assert_eq!((port, ip_port), ("0x1144", "0x1144"), "{line}");
        let bytes: Vec<u8> = (0..private.len() / 2)
            .map(|i| u8::from_str_radix(&private[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        assert_eq!(bytes.len(), 92, "{line}");
        let d = CmReqData::parse(&bytes[36..]).unwrap();
        assert_eq!(d.qid, qid);
        assert_eq!((d.hrqsize, d.hsqsize), (128, 127));
        // The RDMA CM IP header names the port too (big-endian).
        assert_eq!(&bytes[2..4], &4420u16.to_be_bytes());
    }
}
