//! An Ethernet MAC address, written as tshark writes one
//! (`02:00:00:00:00:01`).

use std::fmt;

/// The six bytes of a MAC address.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MacAddr(pub [u8; 6]);

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut b = [b':'; 17];
        for (slot, x) in b.chunks_mut(3).zip(self.0) {
            for (d, nibble) in slot.iter_mut().zip([x >> 4, x & 0xf]) {
                *d = HEX.get(usize::from(nibble)).copied().unwrap_or(b'?');
            }
        }
        // Hex digits and colons: always UTF-8.
        f.write_str(std::str::from_utf8(&b).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::MacAddr;

    #[test]
    fn written_as_tshark_writes_it() {
        let m = MacAddr([0x02, 0, 0xab, 0x0c, 0xff, 1]);
        assert_eq!(m.to_string(), "02:00:ab:0c:ff:01");
        assert_eq!(MacAddr::default().to_string(), "00:00:00:00:00:00");
    }
}
