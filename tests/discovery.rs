//! NetBIOS name service, BOOTP/DHCP and SSDP beside RoCE: what a mirror
//! of a fabric's management network carries. Their summary lines, fields,
//! filters and `frame.protocols` are tshark's, on the external captures'
//! 97 such frames and on generated ones of every operation and message
//! type, illegal names, unknown methods and messages cut short; the -V
//! tree shows their headers.

mod common;

use roce_dissect::synth::samples::{name_and_discovery, udp_frame};

const FIELDS: &[&str] = &[
    "frame.number",
    "_ws.col.Protocol",
    "_ws.col.Info",
    "frame.protocols",
    "nbns.id",
    "nbns.flags",
    "nbns.flags.response",
    "nbns.flags.opcode",
    "nbns.flags.rcode",
    "nbns.count.queries",
    "nbns.count.answers",
    "nbns.count.auth_rr",
    "nbns.count.add_rr",
    "dhcp.type",
    "dhcp.hw.type",
    "dhcp.hw.len",
    "dhcp.id",
    "dhcp.flags",
    "dhcp.ip.client",
    "dhcp.ip.your",
    "dhcp.hw.mac_addr",
    "dhcp.option.dhcp",
    "http.request",
    "http.response",
    "http.notification",
    "http.request.method",
    "http.response.code",
];

const PROTOCOLS: &[&str] = &["NBNS", "DHCP", "BOOTP", "SSDP", "UDP", "DNS", "MDNS"];

#[test]
fn lines_fields_and_filters_are_tsharks() {
    if !common::have_tshark() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let generated = name_and_discovery();
    let path = common::write_pcap(tmp.path(), "discovery.pcap", &generated);
    let n = common::rows_equal_tsharks(std::slice::from_ref(&path), FIELDS, PROTOCOLS);
    assert_eq!(n, generated.len(), "every generated frame compared");
    for filter in [
        "nbns",
        "dhcp",
        "ssdp",
        "http.request",
        "http.response",
        "http.notification",
        "nbns.flags.opcode == 5",
        "nbns.flags.response == 1 && nbns.flags.rcode != 0",
        "dhcp.option.dhcp == 3",
        "dhcp.type == 2",
        "dhcp.hw.mac_addr == 02:00:5e:10:00:01",
        "http.request.method == \"M-SEARCH\"",
        "http.response.code == 200",
        "udp && !dns && !mdns && !nbns && !dhcp && !ssdp",
    ] {
        common::filter_selects_tsharks(&path, filter);
    }
    let ext = common::external_captures();
    if ext.is_empty() {
        return;
    }
    // The external captures' 80 SSDP, 12 NBNS and 5 DHCP frames.
    let n = common::rows_equal_tsharks(&ext, FIELDS, &["NBNS", "DHCP", "SSDP"]);
    assert_eq!(n, 97);
}

#[test]
fn the_lines_say_what_each_message_is() {
    let tmp = tempfile::tempdir().unwrap();
    let frames = vec![
        udp_frame(137, 137, &name_and_discovery_frame(0)),
        udp_frame(68, 67, &dhcp_request()),
        udp_frame(
            50000,
            1900,
            b"M-SEARCH * HTTP/1.1\r\nHOST: 239.255.255.250:1900\r\n\r\n",
        ),
    ];
    let path = common::write_pcap(tmp.path(), "three.pcap", &frames);
    let out = common::stdout_of(common::bin().arg("packets").arg(&path).args([
        "-T",
        "fields",
        "-e",
        "_ws.col.Protocol",
        "-e",
        "_ws.col.Info",
    ]));
    assert_eq!(
        out,
        "NBNS\tName query NB INDEL1RES01<00>\n\
         DHCP\tDHCP Request  - Transaction ID 0x2a\n\
         SSDP\tM-SEARCH * HTTP/1.1 \n"
    );
    // The tree shows each header's fields.
    let tree = common::stdout_of(common::bin().arg("packets").arg(&path).arg("-V"));
    for line in [
        "NetBIOS Name Service",
        "    Transaction ID: 0x1234",
        "        INDEL1RES01<00>: type NB, class IN",
        "Dynamic Host Configuration Protocol (Request)",
        "    Transaction ID: 0x0000002a",
        "    Client MAC address: 02:00:5e:10:00:01",
        "    Option: (53) DHCP Message Type (Request)",
        "Simple Service Discovery Protocol",
        "    M-SEARCH * HTTP/1.1\\r\\n",
        "        Request Method: M-SEARCH",
        "    HOST: 239.255.255.250:1900\\r\\n",
    ] {
        assert!(tree.lines().any(|l| l == line), "{line:?} not in\n{tree}");
    }
}

/// The first generated NBNS message (a query for INDEL1RES01<00>).
fn name_and_discovery_frame(i: usize) -> Vec<u8> {
    name_and_discovery()[i][42..].to_vec()
}

/// A DHCP request with transaction ID 42 from 02:00:5e:10:00:01.
fn dhcp_request() -> Vec<u8> {
    let mut m = vec![1, 1, 6, 0, 0, 0, 0, 42, 0, 0, 0, 0];
    m.extend([0; 16]);
    m.extend([2, 0, 0x5e, 0x10, 0, 1]);
    m.resize(236, 0);
    m.extend([99, 130, 83, 99, 53, 1, 3, 255]);
    m
}
