//! HTTP over TCP beside RoCE: the management and discovery traffic of the
//! hosts a capture is taken on (UPnP device descriptions, REST APIs).
//! tshark reads a conversation as HTTP on HTTP's ports, or from a segment
//! whose first line its heuristic takes on a port no protocol has, and
//! shows a message whose body spans segments on the segment that ends it
//! (the ones before are `[TCP segment of a reassembled PDU]`). Generated
//! conversations (`synth::samples::http_conversations`) and the external
//! capture with UPnP's descriptions (67 frames) read as tshark reads
//! them: lines, `frame.protocols`, HTTP's fields, and `-Y http`.

mod common;

use std::path::Path;

const FIELDS: &[&str] = &[
    "frame.number",
    "_ws.col.Protocol",
    "_ws.col.Info",
    "frame.protocols",
    "http.request",
    "http.response",
    "http.request.method",
    "http.request.uri",
    "http.request.version",
    "http.response.version",
    "http.response.code",
    "http.response.phrase",
    "http.host",
    "http.user_agent",
    "http.server",
    "http.content_type",
    "http.content_length",
];

fn generated(dir: &Path) -> std::path::PathBuf {
    common::write_pcap(
        dir,
        "http.pcap",
        &roce_dissect::synth::samples::http_conversations(),
    )
}

/// Without tshark too: each segment's line, as tshark 4.0 shows it.
#[test]
fn messages_are_shown_on_the_segment_that_ends_them() {
    let tmp = tempfile::tempdir().unwrap();
    let cap = generated(tmp.path());
    let out = common::column_lines(&cap, None);
    let want = [
        "1\tTCP\t50000 → 80 [SYN] Seq=0 Win=502 Len=0",
        "2\tTCP\t80 → 50000 [SYN, ACK] Seq=0 Ack=1 Win=502 Len=0",
        "3\tTCP\t50000 → 80 [ACK] Seq=1 Ack=1 Win=502 Len=0",
        "4\tHTTP\tGET /index.json HTTP/1.1 ",
        // A body by its length over three segments, one sent again.
        "5\tTCP\tHTTP/1.1 200 OK  [TCP segment of a reassembled PDU]",
        "6\tTCP\t80 → 50000 [PSH, ACK] Seq=97 Ack=80 Win=502 Len=11 [TCP segment of a reassembled PDU]",
        "7\tTCP\t[TCP Retransmission] 80 → 50000 [PSH, ACK] Seq=97 Ack=80 Win=502 Len=11",
        "8\tHTTP/JSON\tHTTP/1.1 200 OK , JavaScript Object Notation (application/json)",
        "9\tHTTP\tPOST /up HTTP/1.1 ",
        "10\tHTTP\tHTTP/1.1 304 Not Modified ",
        // Chunks up to the last.
        "11\tTCP\tHTTP/1.1 200 OK  [TCP segment of a reassembled PDU]",
        // HTTP reads the chunks so far again: the first line again.
        "12\tTCP\tHTTP/1.1 200 OK  [TCP segment of a reassembled PDU]",
        "13\tHTTP\tHTTP/1.1 200 OK ",
        "14\tHTTP\tHTTP/1.1 200 OK  (text/plain)",
        "15\tHTTP\tHTTP/1.1 200 OK ",
        "16\tHTTP\tHTTP/1.1 200 OK  (application/x-roce-test)",
        // The last chunk over two segments.
        "17\tTCP\tHTTP/1.1 200 OK  [TCP segment of a reassembled PDU]",
        "18\tTCP\tHTTP/1.1 200 OK  [TCP segment of a reassembled PDU]",
        "19\tHTTP\tHTTP/1.1 200 OK ",
        // Cut after the \r of its last line end: tshark ends the message
        // there, malformed, and the \n is a continuation.
        "20\tTCP\tHTTP/1.1 200 OK  [TCP segment of a reassembled PDU]",
        "21\tTCP\tHTTP/1.1 200 OK [Malformed Packet]",
        "22\tHTTP\tContinuation",
        // "1", "0\r\n\r\n": a chunk of 16 bytes, not the last.
        "23\tTCP\tHTTP/1.1 200 OK  [TCP segment of a reassembled PDU]",
        "24\tTCP\tHTTP/1.1 200 OK  [TCP segment of a reassembled PDU]",
        "25\tTCP\tHTTP/1.1 200 OK  [TCP segment of a reassembled PDU]",
        "26\tTCP\tHTTP/1.1 200 OK  [TCP segment of a reassembled PDU]",
        "27\tHTTP\tHTTP/1.1 200 OK ",
        // No line end yet: tshark waits for one.
        "28\tTCP\t80 → 50000 [PSH, ACK] Seq=680 Ack=145 Win=502 Len=11 [TCP segment of a reassembled PDU]",
        // Binary bytes after a request.
        "29\tHTTP\tContinuation",
        "30\tHTTP\tGET /desc.xml HTTP/1.1 ",
        "31\tHTTP/XML\tHTTP/1.1 200 OK ",
        "32\tHTTP\tGET / HTTP/1.0 ",
        "33\tTCP\t46002 → 40543 [PSH, ACK] Seq=1 Ack=1 Win=502 Len=18",
        // Binary bytes (after a line end) with no request before them.
        "34\tTCP\t80 → 46003 [PSH, ACK] Seq=1 Ack=1 Win=502 Len=4",
    ];
    assert_eq!(out.lines().collect::<Vec<_>>(), want, "in\n{out}");
}

/// The generated conversations, and the external capture's HTTP and the
/// TCP segments of its messages, field by field as tshark's.
#[test]
fn lines_and_fields_are_tsharks() {
    if !common::have_tshark() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cap = generated(tmp.path());
    let n = common::rows_equal_tsharks(std::slice::from_ref(&cap), FIELDS, &["TCP", "HTTP"]);
    assert_eq!(n, roce_dissect::synth::samples::http_conversations().len());
    for f in [
        "http",
        "http.request",
        "http.response.code == 200",
        "frame.protocols contains \"json\"",
        "http.content_length > 10",
    ] {
        common::filter_selects_tsharks(&cap, f);
    }
    let Some(upnp) = common::external_captures()
        .into_iter()
        .find(|c| c.ends_with("sanderw71-SoftRoce__FirstSuccesfullRping.pcapng"))
    else {
        common::skip("the external capture", "../shared is absent");
        return;
    };
    let n = common::rows_equal_tsharks(std::slice::from_ref(&upnp), FIELDS, &["HTTP"]);
    // 22 GETs and their responses, and one response more.
    assert_eq!(n, 45);
    for f in ["http", "http.request", "http.content_type contains \"xml\""] {
        common::filter_selects_tsharks(&upnp, f);
    }
}
