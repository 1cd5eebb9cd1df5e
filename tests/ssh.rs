//! SSH beside RoCE: the sessions engineers hold open to the hosts they
//! capture on. A capture that starts inside a session (the external
//! captures' 413 SSH frames) reads as tshark reads it, line, fields and
//! `frame.protocols`; so does a whole session from its version exchange
//! through the key exchange (tests/data/ssh-loopback.pcap: OpenSSH 9.2 on
//! loopback, its port written as 22), up to each side's New Keys. After
//! New Keys tshark 4.0 tries to decrypt without the keys and shows
//! nothing (or misread messages); roce-dissect says how long the
//! encrypted packet is.

mod common;

use std::path::{Path, PathBuf};

fn loopback() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ssh-loopback.pcap")
}

const FIELDS: &[&str] = &[
    "frame.number",
    "_ws.col.Protocol",
    "_ws.col.Info",
    "frame.protocols",
    "ssh.protocol",
    "ssh.direction",
    "ssh.packet_length",
    "ssh.padding_length",
    "ssh.message_code",
    "ssh.packet_length_encrypted",
    "ssh.encrypted_packet",
];

/// `common::column_lines` as tshark prints them.
fn tsharks_lines(capture: &Path, filter: &str) -> String {
    let out = std::process::Command::new("tshark")
        .args(["-n", "-r"])
        .arg(capture)
        .args(["-Y", filter, "-T", "fields", "-e", "frame.number"])
        .args(["-e", "_ws.col.Protocol", "-e", "_ws.col.Info"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_session_reads_from_its_version_exchange_to_its_encrypted_packets() {
    let out = common::column_lines(&loopback(), Some("ssh"));
    let mut it = out.lines();
    for want in [
        "4\tSSH\tClient: Protocol (SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u10)",
        "6\tSSHv2\tServer: Protocol (SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u10)",
        "8\tSSHv2\tClient: Key Exchange Init",
        "9\tSSHv2\tServer: Key Exchange Init",
        "11\tSSHv2\tClient: Diffie-Hellman Key Exchange Init",
        "12\tSSHv2\tServer: Diffie-Hellman Key Exchange Reply, New Keys, Encrypted packet (len=316)",
        "14\tSSHv2\tClient: New Keys",
        "16\tSSHv2\tClient: Encrypted packet (len=44)",
        "18\tSSHv2\tServer: Encrypted packet (len=44)",
    ] {
        assert_eq!(it.next(), Some(want), "in\n{out}");
    }
    assert_eq!(out.lines().count(), 27);
    // The New Keys of both sides, by message code.
    assert_eq!(
        common::column_lines(&loopback(), Some("ssh.message_code == 21"))
            .lines()
            .map(|l| l.split('\t').next().unwrap())
            .collect::<Vec<_>>(),
        ["12", "14"]
    );
    // The header tree: the packets in the clear, then the encrypted rest.
    let tree = common::stdout_of(common::bin().arg("packets").arg(loopback()).args([
        "-V",
        "-Y",
        "frame.number == 12",
    ]));
    let ssh: Vec<&str> = tree
        .lines()
        .skip_while(|l| *l != "SSH Protocol")
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(
        ssh,
        [
            "SSH Protocol",
            "    SSH Version 2",
            "        Packet Length: 1228",
            "        Padding Length: 9",
            "        Message Code: Diffie-Hellman Key Exchange Reply (31)",
            "    SSH Version 2",
            "        Packet Length: 12",
            "        Padding Length: 10",
            "        Message Code: New Keys (21)",
            "    [Encrypted: 316 bytes]",
            "    Direction: server-to-client",
        ]
    );
}

#[test]
fn lines_and_fields_are_tsharks() {
    if !common::have_tshark() {
        return;
    }
    // Every SSH frame's fields; every line tshark has words for (after New
    // Keys it has none, or misread ones).
    let cols: Vec<&str> = FIELDS.iter().flat_map(|f| ["-e", *f]).collect();
    let mut caps = common::external_captures();
    caps.push(loopback());
    let (mut frames, mut same_lines) = (0, 0);
    for c in &caps {
        let theirs = std::process::Command::new("tshark")
            .args(["-n", "-r"])
            .arg(c)
            .args(["-Y", "ssh", "-T", "fields", "-E", "occurrence=a"])
            .args(&cols)
            .output()
            .unwrap();
        let ours = common::stdout_of(
            common::bin()
                .arg("packets")
                .arg(c)
                .args(["-Y", "ssh", "-T", "fields", "-E", "occurrence=a"])
                .args(&cols),
        );
        let theirs = String::from_utf8_lossy(&theirs.stdout).into_owned();
        assert_eq!(
            ours.lines().count(),
            theirs.lines().count(),
            "{}: the frames -Y ssh selects",
            c.display()
        );
        for (o, t) in ours.lines().zip(theirs.lines()) {
            let (o, t): (Vec<&str>, Vec<&str>) = (o.split('\t').collect(), t.split('\t').collect());
            assert_eq!(o[..2], t[..2], "{} frame {}", c.display(), t[0]);
            assert_eq!(o[3..], t[3..], "{} frame {}: {FIELDS:?}", c.display(), t[0]);
            frames += 1;
            let after_new_keys = t[2].ends_with(": ") || t[2].contains("plaintext_len");
            if !after_new_keys {
                assert!(o[2].starts_with(t[2]), "{} frame {}", c.display(), t[0]);
                same_lines += usize::from(o[2] == t[2]);
            }
        }
    }
    eprintln!("{frames} SSH frames' fields, {same_lines} lines equal tshark's");
    let external = if caps.len() > 1 { 413 } else { 0 };
    // The loopback session's 27 SSH frames; the 7 before the client's New
    // Keys have tshark's very lines (the server's ends with the encrypted
    // rest tshark leaves unsaid).
    assert_eq!(frames, external + 27);
    assert_eq!(same_lines, external + 6);
}

/// A session's segments with TCP trouble: a segment not captured, three
/// duplicate ACKs and the fast retransmission.
fn troubled_session() -> Vec<Vec<u8>> {
    use roce_dissect::synth::samples::{Segment, tcp_frame};
    let client = |seq: u32| Segment::new((1, 40000), (2, 22), (seq, 501), 0x018, &[0xc7; 36]);
    let dup = Segment {
        from: (2, 22),
        to: (1, 40000),
        seq: 501,
        ack: 37,
        flags: 0x010,
        window: 2000,
        urgent: 0,
        options: &[],
        payload: &[],
    };
    vec![
        tcp_frame(&client(1)),
        tcp_frame(&client(73)),
        tcp_frame(&dup),
        tcp_frame(&dup),
        tcp_frame(&dup),
        tcp_frame(&client(37)),
    ]
}

#[test]
fn the_tcp_notes_come_before_the_ssh_message() {
    let tmp = tempfile::tempdir().unwrap();
    let path = common::write_pcap(tmp.path(), "troubled.pcap", &troubled_session());
    let out = common::column_lines(&path, Some("ssh"));
    assert_eq!(
        out,
        "1\tSSH\tClient: Encrypted packet (len=36)\n\
         2\tSSH\tClient: [TCP Previous segment not captured] , Encrypted packet (len=36)\n\
         6\tSSH\tClient: [TCP Fast Retransmission] , Encrypted packet (len=36)\n"
    );
    if common::have_tshark() {
        assert_eq!(
            common::column_lines(&path, Some("frame")),
            tsharks_lines(&path, "frame")
        );
    }
}
