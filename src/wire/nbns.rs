//! NetBIOS Name Service (RFC 1002, UDP port 137): the name queries and
//! registrations Windows hosts broadcast on a fabric's management network.
//! Its messages are laid out as DNS's (a 12-byte header, then questions
//! and records), so [`super::dns::Message`] reads them; this module adds
//! what differs: the first-level encoded NetBIOS names (`INDEL1RES01<00>`)
//! and the names of its operations, record types and errors, as tshark's.

use super::dns::{Message, Short};

/// The port NBNS is known by.
pub const PORT: u16 = 137;

/// Record types: an address record and a node status one.
pub const T_NB: u16 = 32;
pub const T_NBSTAT: u16 = 33;

/// The operation that is a "wait for acknowledgement" response (its NB
/// records carry flags rather than addresses).
pub const OPCODE_WACK: u8 = 7;

/// The bytes a node status record's data takes with `names` names: their
/// count, 18 bytes a name (its 16 bytes and flags), the unit ID (6) and
/// the statistics (36).
pub fn status_len(names: u8) -> usize {
    usize::from(names)
        .saturating_mul(18)
        .saturating_add(1 + 6 + 36)
}

/// The bytes of a NetBIOS name: 15 characters and a type byte.
const NAME_LEN: usize = 16;

/// The operation's name as tshark's summary line gives it.
pub fn opcode_name(op: u8) -> Option<&'static str> {
    Some(match op {
        0 => "Name query",
        5 => "Registration",
        6 => "Release",
        7 => "Wait for acknowledgment",
        8 => "Refresh",
        9 => "Refresh (alternate opcode)",
        15 => "Multi-homed registration",
        _ => return None,
    })
}

/// A response's error, as tshark words it (after the operation).
pub fn rcode_name(rc: u8) -> &'static str {
    match rc {
        0 => "No error",
        1 => "Request was invalidly formatted",
        2 => "Server failure",
        3 => "Requested name does not exist",
        4 => "Request is not implemented",
        5 => "Request was refused",
        6 => "Name is owned by another node",
        7 => "Name is in conflict",
        _ => "Unknown error",
    }
}

/// A record type's name (NBNS knows two).
pub fn type_name(t: u16) -> &'static str {
    match t {
        T_NB => "NB",
        T_NBSTAT => "NBSTAT",
        _ => "Unknown",
    }
}

/// The NetBIOS name at `at` in the message, as tshark shows it: the 15
/// characters without their padding spaces, unprintable ones as `<xx>`,
/// then the type byte as `<xx>` and any scope (`HOST<20>.corp.example`).
/// A name that is not a first-level encoding of 16 bytes reads as tshark's
/// `Illegal NetBIOS name (..)`. The error is the message's end.
pub fn name(m: &Message<'_>, at: usize) -> Result<String, Short> {
    let text = m.name(at)?.text;
    let (label, scope) = match text.split_once('.') {
        Some((l, s)) => (l, Some(s)),
        None => (text.as_str(), None),
    };
    let mut raw = [0u8; NAME_LEN];
    let mut n = 0usize;
    let mut pairs = label.as_bytes().chunks(2);
    let bad = loop {
        let Some(pair) = pairs.next() else {
            break None;
        };
        let hi = pair.first().copied().unwrap_or(0);
        let Some(lo) = pair.get(1).copied() else {
            break Some("Illegal NetBIOS name (odd number of bytes)".to_string());
        };
        if !hi.is_ascii_uppercase() {
            break Some(
                "Illegal NetBIOS name (1st character not between A and Z in first-level encoding)"
                    .to_string(),
            );
        }
        if !lo.is_ascii_uppercase() {
            break Some(
                "Illegal NetBIOS name (2nd character not between A and Z in first-level encoding)"
                    .to_string(),
            );
        }
        if let Some(slot) = raw.get_mut(n) {
            *slot = (hi.wrapping_sub(b'A') << 4) | lo.wrapping_sub(b'A');
            n = n.saturating_add(1);
        }
    };
    if let Some(bad) = bad {
        return Ok(bad);
    }
    if n != NAME_LEN {
        return Ok(format!("Illegal NetBIOS name ({n} bytes long)"));
    }
    let (chars, kind) = raw.split_at(NAME_LEN - 1);
    let mut out = String::with_capacity(24);
    let end = chars
        .iter()
        .rposition(|&c| c != b' ')
        .map_or(0, |i| i.saturating_add(1));
    for &c in chars.get(..end).unwrap_or_default() {
        if (0x20..0x7f).contains(&c) {
            out.push(char::from(c));
        } else {
            out.push_str(&format!("<{c:02x}>"));
        }
    }
    out.push_str(&format!("<{:02x}>", kind.first().copied().unwrap_or(0)));
    if let Some(scope) = scope {
        out.push('.');
        out.push_str(scope);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message with one question for `label` (already encoded).
    fn question(label: &[u8]) -> Vec<u8> {
        let mut m = vec![0x12, 0x34, 0x01, 0x10, 0, 1, 0, 0, 0, 0, 0, 0];
        m.push(label.len() as u8);
        m.extend_from_slice(label);
        m.extend_from_slice(&[0, 0, 32, 0, 1]);
        m
    }

    fn encode(name: &[u8; 16]) -> Vec<u8> {
        name.iter()
            .flat_map(|c| [b'A' + (c >> 4), b'A' + (c & 15)])
            .collect()
    }

    #[test]
    fn names_are_decoded_as_tshark_shows_them() {
        let m = question(&encode(b"INDEL1RES01    \x00"));
        let msg = Message::new(&m).unwrap();
        assert_eq!(name(&msg, 12).unwrap(), "INDEL1RES01<00>");
        let m = question(&encode(b"h\x01st           \x03"));
        assert_eq!(name(&Message::new(&m).unwrap(), 12).unwrap(), "h<01>st<03>");
        let m = question(b"ABCD");
        assert_eq!(
            name(&Message::new(&m).unwrap(), 12).unwrap(),
            "Illegal NetBIOS name (2 bytes long)"
        );
        let m = question(b"ABC");
        assert_eq!(
            name(&Message::new(&m).unwrap(), 12).unwrap(),
            "Illegal NetBIOS name (odd number of bytes)"
        );
        let m = question(b"aB");
        assert!(
            name(&Message::new(&m).unwrap(), 12)
                .unwrap()
                .contains("1st character")
        );
        // Cut inside the name.
        let m = question(&encode(b"HOST           \x20"));
        assert_eq!(name(&Message::new(&m[..20]).unwrap(), 12), Err(Short));
    }

    #[test]
    fn operations_and_errors_have_tsharks_names() {
        assert_eq!(opcode_name(0), Some("Name query"));
        assert_eq!(opcode_name(11), None);
        assert_eq!(rcode_name(3), "Requested name does not exist");
        assert_eq!(rcode_name(12), "Unknown error");
        assert_eq!(type_name(33), "NBSTAT");
        assert_eq!(type_name(12), "Unknown");
    }
}
