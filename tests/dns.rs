//! DNS, mDNS and LLMNR beside RoCE: the summary lines, fields and filters
//! are tshark's (on the external captures' 479 such frames and on
//! generated messages of every common record type, compressed names,
//! loops, cut and malformed ones), and the report counts them by name.

mod common;

/// A name in wire form.
fn name(n: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for l in n.split('.').filter(|l| !l.is_empty()) {
        out.push(l.len() as u8);
        out.extend_from_slice(l.as_bytes());
    }
    out.push(0);
    out
}

fn question(n: &str, t: u16, class: u16) -> Vec<u8> {
    let mut q = name(n);
    q.extend(t.to_be_bytes());
    q.extend(class.to_be_bytes());
    q
}

fn record(n: &str, t: u16, class: u16, ttl: u32, rdata: &[u8]) -> Vec<u8> {
    let mut r = name(n);
    r.extend(t.to_be_bytes());
    r.extend(class.to_be_bytes());
    r.extend(ttl.to_be_bytes());
    r.extend((rdata.len() as u16).to_be_bytes());
    r.extend(rdata);
    r
}

/// A message of these sections.
fn message(id: u16, flags: u16, sections: [&[Vec<u8>]; 4]) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend(id.to_be_bytes());
    m.extend(flags.to_be_bytes());
    for s in sections {
        m.extend((s.len() as u16).to_be_bytes());
    }
    for s in sections {
        for r in s {
            m.extend(r);
        }
    }
    m
}

/// An Ethernet frame of a UDP datagram between these ports.
fn udp_frame(payload: &[u8], sport: u16, dport: u16, dst: [u8; 4]) -> Vec<u8> {
    let b = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4([10, 0, 0, 1], dst, 64)
        .udp(sport, dport);
    let mut f = Vec::new();
    b.write(&mut f, payload).unwrap();
    f
}

fn frames() -> Vec<Vec<u8>> {
    let a = |s: [u8; 4]| s.to_vec();
    let srv = |p: u16, w: u16, port: u16, target: &str| {
        let mut v = Vec::new();
        for x in [p, w, port] {
            v.extend(x.to_be_bytes());
        }
        v.extend(name(target));
        v
    };
    let aaaa: Vec<u8> = "2001:db8::1"
        .parse::<std::net::Ipv6Addr>()
        .unwrap()
        .octets()
        .to_vec();
    let mut soa = name("ns1.example");
    soa.extend(name("admin.example"));
    for x in 1u32..=5 {
        soa.extend(x.to_be_bytes());
    }
    let mut mx = 10u16.to_be_bytes().to_vec();
    mx.extend(name("mail.example.com"));
    let mut nsec = name("host.local");
    nsec.extend([0, 4, 0x40, 0, 0, 8]);
    let dns = |m: Vec<u8>, to_server: bool| {
        if to_server {
            udp_frame(&m, 40000, 53, [10, 0, 0, 2])
        } else {
            udp_frame(&m, 53, 40000, [10, 0, 0, 2])
        }
    };
    let mdns = |m: Vec<u8>| udp_frame(&m, 5353, 5353, [224, 0, 0, 251]);
    let mut out = vec![
        dns(
            message(
                0x1234,
                0x0100,
                [&[question("example.com", 1, 1)], &[], &[], &[]],
            ),
            true,
        ),
        dns(
            message(
                0x1234,
                0x8180,
                [
                    &[question("example.com", 1, 1)],
                    &[
                        record("example.com", 1, 1, 120, &a([93, 184, 216, 34])),
                        record("example.com", 5, 1, 120, &name("alias.example.net")),
                    ],
                    &[],
                    &[],
                ],
            ),
            false,
        ),
        dns(
            message(
                0x2222,
                0x8183,
                [
                    &[question("nope.example", 28, 1)],
                    &[],
                    &[record("example", 6, 1, 120, &soa)],
                    &[],
                ],
            ),
            false,
        ),
        dns(
            message(
                0x3333,
                0x8180,
                [
                    &[question("example.com", 15, 1)],
                    &[
                        record("example.com", 15, 1, 120, &mx),
                        record("example.com", 2, 1, 120, &name("ns.example.com")),
                        record("example.com", 16, 1, 120, b"\x05hello\x05world"),
                        record("example.com", 13, 1, 120, b"\x03CPU\x02OS"),
                    ],
                    &[],
                    &[],
                ],
            ),
            false,
        ),
        dns(
            message(
                0x4444,
                0x8180,
                [
                    &[question("_x._tcp.example.com", 33, 1)],
                    &[
                        record(
                            "_x._tcp.example.com",
                            33,
                            1,
                            120,
                            &srv(1, 2, 443, "host.example.com"),
                        ),
                        record("example.com", 28, 1, 120, &aaaa),
                        record(
                            "1.0.0.10.in-addr.arpa",
                            12,
                            1,
                            120,
                            &name("host.example.com"),
                        ),
                        record("example.com", 39, 1, 120, &name("other.example")),
                        record("example.com", 257, 1, 120, b"\x00\x05issueca.example"),
                        record("example.com", 1234, 1, 120, b"abc"),
                    ],
                    &[],
                    &[record("", 41, 1232, 0, &[])],
                ],
            ),
            false,
        ),
        // A dynamic update, failures, other operations, the root.
        dns(
            message(
                0x5555,
                0x2800,
                [
                    &[question("example.com", 6, 1)],
                    &[],
                    &[record("a.example.com", 255, 255, 0, &[])],
                    &[],
                ],
            ),
            true,
        ),
        dns(
            message(
                0x6666,
                0x8182,
                [&[question("example.com", 255, 1)], &[], &[], &[]],
            ),
            false,
        ),
        dns(
            message(0x6667, 0x8185, [&[question("", 2, 1)], &[], &[], &[]]),
            false,
        ),
        dns(
            message(
                0x6668,
                0x9000,
                [&[question("example.com", 1, 1)], &[], &[], &[]],
            ),
            false,
        ),
        dns(
            message(
                0x6669,
                0x818c,
                [&[question("example.com", 1, 1)], &[], &[], &[]],
            ),
            false,
        ),
        // mDNS: "QM" and "QU" questions, cache flush, SRV, TXT, NSEC.
        mdns(message(
            0,
            0,
            [
                &[
                    question("host.local", 1, 1),
                    question("_http._tcp.local", 12, 0x8001),
                ],
                &[],
                &[],
                &[],
            ],
        )),
        mdns(message(
            0,
            0x8400,
            [
                &[],
                &[
                    record("host.local", 1, 0x8001, 120, &a([10, 0, 0, 9])),
                    record(
                        "_http._tcp.local",
                        12,
                        1,
                        4500,
                        &name("My Printer._http._tcp.local"),
                    ),
                    record("My Printer._http._tcp.local", 16, 0x8001, 4500, b"\x04a=bc"),
                    record(
                        "My Printer._http._tcp.local",
                        33,
                        0x8001,
                        120,
                        &srv(0, 0, 80, "host.local"),
                    ),
                ],
                &[],
                &[record("host.local", 47, 0x8001, 120, &nsec)],
            ],
        )),
        // LLMNR, a question and its answer.
        udp_frame(
            &message(0xbf26, 0, [&[question("WPAD", 1, 1)], &[], &[], &[]]),
            50000,
            5355,
            [224, 0, 0, 252],
        ),
        udp_frame(
            &message(
                0xbf26,
                0x8000,
                [
                    &[question("WPAD", 1, 1)],
                    &[record("WPAD", 1, 1, 30, &a([10, 0, 0, 5]))],
                    &[],
                    &[],
                ],
            ),
            5355,
            50000,
            [10, 0, 0, 2],
        ),
    ];
    // A compressed answer, a pointer that loops, a question cut short, a
    // datagram too short for a header, a label that is not text.
    let mut compressed = message(
        9,
        0x8180,
        [&[question("foo.example.com", 1, 1)], &[], &[], &[]],
    );
    compressed[7] = 1;
    compressed.extend([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 1, 2, 3, 4]);
    out.push(dns(compressed, false));
    let mut looping = message(9, 0x8180, [&[], &[], &[], &[]]);
    looping[5] = 1;
    looping.extend([0xc0, 12, 0, 1, 0, 1]);
    out.push(dns(looping, false));
    let mut cut = message(1, 0x0100, [&[question("example.com", 1, 1)], &[], &[], &[]]);
    cut.truncate(20);
    out.push(dns(cut, true));
    out.push(dns(vec![0, 1, 1], true));
    out.push(dns(
        message(
            1,
            0x0100,
            [&[question("we ird.ex\u{1}ample", 1, 1)], &[], &[], &[]],
        ),
        true,
    ));
    out
}

const FIELDS: [&str; 25] = [
    "frame.protocols",
    "dns.id",
    "dns.flags",
    "dns.flags.response",
    "dns.flags.opcode",
    "dns.flags.rcode",
    "dns.count.queries",
    "dns.count.answers",
    "dns.count.auth_rr",
    "dns.count.add_rr",
    "dns.qry.name",
    "dns.qry.type",
    "dns.qry.class",
    "dns.resp.name",
    "dns.resp.type",
    "dns.resp.class",
    "dns.resp.ttl",
    "dns.a",
    "dns.aaaa",
    "dns.cname",
    "dns.ptr.domain_name",
    "dns.ns",
    "dns.srv.port",
    "dns.srv.target",
    "_ws.col.Info",
];

/// Every DNS, mDNS and LLMNR frame's Protocol column, summary line and
/// `dns.*` fields equal tshark's, and `-Y dns`, `mdns` and `llmnr`
/// select the frames tshark's do.
#[test]
fn dns_lines_fields_and_filters_are_tsharks() {
    if !common::have_tshark() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut caps = common::external_captures();
    let generated = frames();
    caps.push(common::write_pcap(tmp.path(), "dns.pcap", &generated));
    let fields: Vec<&str> = ["frame.number", "_ws.col.Protocol"]
        .into_iter()
        .chain(FIELDS)
        .collect();
    let compared = common::rows_equal_tsharks(&caps, &fields, &["DNS\t", "MDNS\t", "LLMNR\t"]);
    for c in &caps {
        for filter in [
            "dns",
            "mdns",
            "llmnr",
            "dns.a == 10.0.0.5",
            "dns.flags.rcode == 3",
        ] {
            common::filter_selects_tsharks(c, filter);
        }
    }
    eprintln!("{compared} DNS, mDNS and LLMNR frames equal tshark's");
    // The external captures' 479 and every generated frame.
    let external = if caps.len() > 1 { 479 } else { 0 };
    assert_eq!(compared, external + generated.len());
}

/// Without tshark: the lines of the generated messages, and the report's
/// count of them by name.
#[test]
fn the_summary_lines_and_the_report_name_them() {
    let tmp = tempfile::tempdir().unwrap();
    let cap = common::write_pcap(tmp.path(), "dns.pcap", &frames());
    let out = common::stdout_of(common::bin().arg("packets").arg(&cap).args([
        "-T",
        "fields",
        "-e",
        "_ws.col.Protocol",
        "-e",
        "_ws.col.Info",
    ]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), frames().len());
    for (i, want) in [
        (0, "DNS\tStandard query 0x1234 A example.com"),
        (
            1,
            "DNS\tStandard query response 0x1234 A example.com A 93.184.216.34 CNAME alias.example.net",
        ),
        (
            2,
            "DNS\tStandard query response 0x2222 No such name AAAA nope.example SOA ns1.example",
        ),
        (
            3,
            "DNS\tStandard query response 0x3333 MX example.com MX 10 mail.example.com NS ns.example.com TXT HINFO CPU OS",
        ),
        (5, "DNS\tDynamic update 0x5555 SOA example.com ANY"),
        (7, "DNS\tStandard query response 0x6667 Refused NS <Root>"),
        (
            9,
            "DNS\tStandard query response 0x6669 Unknown error (12) A example.com",
        ),
        (
            10,
            "MDNS\tStandard query 0x0000 A host.local, \"QM\" question PTR _http._tcp.local, \"QU\" question",
        ),
        (
            11,
            "MDNS\tStandard query response 0x0000 A, cache flush 10.0.0.9 PTR My Printer._http._tcp.local TXT, cache flush SRV, cache flush 0 0 80 host.local NSEC, cache flush host.local",
        ),
        (12, "LLMNR\tStandard query 0xbf26 A WPAD"),
        (
            14,
            "DNS\tStandard query response 0x0009 A foo.example.com A 1.2.3.4",
        ),
        (
            15,
            "DNS\tStandard query response 0x0009 A <Name contains a pointer that loops>",
        ),
        (16, "DNS\tStandard query 0x0001[Malformed Packet]"),
        (17, "DNS\t[Malformed Packet]"),
        (18, "DNS\tStandard query 0x0001 A we ird.ex\\001ample"),
    ] {
        assert_eq!(lines[i], want, "frame {}", i + 1);
    }
    // The report's other traffic, by the names the Protocol column gives.
    let json = common::stdout_of(common::bin().arg(&cap).arg("--json"));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let protocols = &v["other"]["protocols"];
    let count = |name: &str| {
        protocols
            .as_array()
            .and_then(|a| a.iter().find(|p| p["protocol"] == name))
            .map_or(0, |p| p["frames"].as_u64().unwrap_or(0))
    };
    assert_eq!(
        (count("DNS"), count("MDNS"), count("LLMNR")),
        (15, 2, 2),
        "{protocols}"
    );
    assert_eq!(count("UDP"), 0, "{protocols}");
}
