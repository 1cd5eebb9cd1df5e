//! SSH (RFC 4253, TCP port 22): the sessions engineers hold open to the
//! hosts of a fabric while they capture, so every capture taken from a
//! host has them. What can be read without keys: the version exchange
//! (`SSH-2.0-OpenSSH_9.2p1`), the binary packets of the key exchange
//! before they are encrypted (length, padding, message code), and how long
//! an encrypted one is.

use super::be32;

/// The port SSH is known by.
pub const PORT: u16 = 22;

/// The message that ends the key exchange: what its sender sends after it
/// is encrypted.
pub const NEWKEYS: u8 = 21;

/// The SSH version a version line announces: `SSH-2.0-..` and
/// `SSH-1.99-..` (a server that speaks both) are 2, older ones 1. `None`
/// for a payload that does not start with `SSH-`.
pub fn version(payload: &[u8]) -> Option<u8> {
    let rest = payload.strip_prefix(b"SSH-")?;
    Some(if rest.starts_with(b"2.") || rest.starts_with(b"1.99") {
        2
    } else {
        1
    })
}

/// The Protocol column of an SSH connection's segment, after a version
/// line announced `version` (tshark's `SSHv2`; `SSH` before any).
pub fn protocol(version: Option<u8>) -> &'static str {
    match version {
        Some(2) => "SSHv2",
        Some(_) => "SSHv1",
        None => "SSH",
    }
}

/// The version line at the start of `payload`, without its line end (to
/// the end of the payload when it has none).
pub fn version_line(payload: &[u8]) -> Option<&[u8]> {
    version(payload)?;
    let end = payload
        .iter()
        .position(|&b| b == b'\r' || b == b'\n')
        .unwrap_or(payload.len());
    payload.get(..end)
}

/// Where the version line and its line end stop.
pub fn version_line_end(payload: &[u8]) -> usize {
    match payload.iter().position(|&b| b == b'\n') {
        Some(i) => i.saturating_add(1),
        None => payload.len(),
    }
}

/// A binary packet in the clear (before the key exchange ends): where it
/// starts in the payload, its packet and padding lengths, and its message
/// code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plain {
    pub at: usize,
    pub packet_length: u32,
    pub padding_length: u8,
    pub code: u8,
}

impl Plain {
    /// The bytes it takes: its length field and the packet.
    pub fn size(&self) -> usize {
        usize::try_from(self.packet_length)
            .unwrap_or(usize::MAX)
            .saturating_add(4)
    }
}

/// The binary packets in the clear at the start of `payload` (from `at`),
/// as long as each one is whole and reads as one (a padding of 4 bytes at
/// least, shorter than the packet); and where the rest starts: what is
/// left is encrypted.
pub fn plain_packets(payload: &[u8], mut at: usize) -> (Vec<Plain>, usize) {
    let mut out = Vec::new();
    // An encrypted packet read as a length is almost never whole.
    while let Some(head) = payload.get(at..at.saturating_add(6)) {
        let [a, b, c, d, padding_length, code] = *head else {
            break;
        };
        let packet_length = be32([a, b, c, d]);
        let p = Plain {
            at,
            packet_length,
            padding_length,
            code,
        };
        let fits = at
            .checked_add(p.size())
            .is_some_and(|end| end <= payload.len());
        if !fits || padding_length < 4 || u32::from(padding_length) >= packet_length {
            break;
        }
        at = at.saturating_add(p.size());
        out.push(p);
    }
    (out, at)
}

/// What an SSH segment's payload holds, as tshark reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading<'a> {
    /// A version line first (without its line end).
    pub version_line: Option<&'a [u8]>,
    /// The binary packets in the clear after it.
    pub plain: Vec<Plain>,
    /// The encrypted rest, and where it starts in the payload.
    pub encrypted: &'a [u8],
    pub encrypted_at: usize,
}

/// Reads `payload`, sent after a version line announced `version` (none
/// seen: a capture that starts inside a session, where all is encrypted)
/// and, when `encrypted`, after its sender's New Keys. The key exchange's
/// packets are read in the clear up to New Keys.
pub fn read(payload: &[u8], version: Option<u8>, encrypted: bool) -> Reading<'_> {
    let mut version = version;
    let mut at = 0;
    let line = version_line(payload);
    if line.is_some() {
        version = self::version(payload);
        at = version_line_end(payload);
    }
    let mut plain = Vec::new();
    if version == Some(2) && !encrypted {
        for p in plain_packets(payload, at).0 {
            at = p.at.saturating_add(p.size());
            plain.push(p);
            if p.code == NEWKEYS {
                break;
            }
        }
    }
    Reading {
        version_line: line,
        plain,
        encrypted: payload.get(at..).unwrap_or_default(),
        encrypted_at: at,
    }
}

/// A message code's name as tshark's summary line gives it (the key
/// exchange's as for Diffie-Hellman and curve25519).
pub fn message_name(code: u8) -> Option<&'static str> {
    Some(match code {
        1 => "Disconnect",
        2 => "Ignore",
        3 => "Unimplemented",
        4 => "Debug",
        5 => "Service Request",
        6 => "Service Accept",
        20 => "Key Exchange Init",
        21 => "New Keys",
        30 => "Diffie-Hellman Key Exchange Init",
        31 => "Diffie-Hellman Key Exchange Reply",
        50 => "User Authentication Request",
        51 => "User Authentication Failure",
        52 => "User Authentication Success",
        53 => "User Authentication Banner",
        80 => "Global Request",
        81 => "Request Success",
        82 => "Request Failure",
        90 => "Channel Open",
        91 => "Channel Open Confirmation",
        92 => "Channel Open Failure",
        93 => "Window Adjust",
        94 => "Channel Data",
        95 => "Channel Extended Data",
        96 => "Channel EOF",
        97 => "Channel Close",
        98 => "Channel Request",
        99 => "Channel Success",
        100 => "Channel Failure",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_lines_are_read() {
        let p = b"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u10\r\n";
        assert_eq!(version(p), Some(2));
        assert_eq!(version(b"SSH-1.99-x\r\n"), Some(2));
        assert_eq!(version(b"SSH-1.5-x\r\n"), Some(1));
        assert_eq!(version(b"\x00\x00\x00\x10"), None);
        assert_eq!(
            version_line(p),
            Some(&b"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u10"[..])
        );
        assert_eq!(version_line_end(p), p.len());
        assert_eq!(version_line(b"SSH-2.0-x"), Some(&b"SSH-2.0-x"[..]));
    }

    #[test]
    fn plain_packets_end_where_the_encrypted_ones_start() {
        // New Keys: length 12, padding 10, code 21, 10 bytes of padding.
        let mut p = vec![0, 0, 0, 12, 10, 21];
        p.extend([0; 10]);
        let whole = p.len();
        p.extend([0xc7, 0x70, 0x87, 0x9a, 1, 2, 3]);
        let (packets, rest) = plain_packets(&p, 0);
        assert_eq!(
            packets,
            [Plain {
                at: 0,
                packet_length: 12,
                padding_length: 10,
                code: 21
            }]
        );
        assert_eq!(rest, whole);
        // Too little padding, a length past the end: none.
        assert_eq!(plain_packets(&[0, 0, 0, 12, 3, 21], 0).0, []);
        assert_eq!(plain_packets(&[0xff, 0, 0, 12, 4, 21], 0).0, []);
        assert_eq!(message_name(31), Some("Diffie-Hellman Key Exchange Reply"));
        assert_eq!(message_name(228), None);
    }
}
