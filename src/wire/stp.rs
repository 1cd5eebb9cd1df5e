//! Spanning tree BPDUs (IEEE 802.1D, 802.1w RSTP, 802.1s MSTP) behind an
//! 802.2 LLC header (DSAP and SSAP 0x42): what every switch port of a
//! mirror sends each couple of seconds. A view over the BPDU: enough for
//! tshark's summary line, fields and header tree.

use super::be16;

/// An 802.3 frame's LLC header for the spanning tree: DSAP, SSAP, UI.
pub const LLC_LEN: usize = 3;

pub const TYPE_CONFIG: u8 = 0x00;
pub const TYPE_RST: u8 = 0x02;
pub const TYPE_TCN: u8 = 0x80;

/// A BPDU whose fields are all there (a TCN has only its first four
/// bytes).
#[derive(Debug, Clone, Copy)]
pub struct Bpdu<'a> {
    bytes: &'a [u8],
}

/// A bridge identifier: priority (a multiple of 4096), the system ID
/// extension (the VLAN or instance) and the bridge's MAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BridgeId {
    pub priority: u16,
    pub ext: u16,
    pub mac: [u8; 6],
}

impl<'a> Bpdu<'a> {
    /// The BPDU in `bytes` (after the LLC header), if it is whole for its
    /// type: 4 bytes for a TCN, 35 for a configuration BPDU, 36 for RST
    /// and MST ones.
    pub fn new(bytes: &'a [u8]) -> Option<Self> {
        let need = match (bytes.get(3).copied()?, bytes.get(2).copied()?) {
            (TYPE_TCN, _) => 4,
            (_, 0) => 35,
            _ => 36,
        };
        (bytes.len() >= need).then_some(Self { bytes })
    }

    fn byte(&self, at: usize) -> u8 {
        self.bytes.get(at).copied().unwrap_or(0)
    }

    fn word(&self, at: usize) -> u16 {
        be16([self.byte(at), self.byte(at.saturating_add(1))])
    }

    pub fn protocol(&self) -> u16 {
        self.word(0)
    }

    pub fn version(&self) -> u8 {
        self.byte(2)
    }

    pub fn kind(&self) -> u8 {
        self.byte(3)
    }

    pub fn is_tcn(&self) -> bool {
        self.kind() == TYPE_TCN
    }

    /// Flags, root, cost, bridge, port: none for a TCN.
    pub fn flags(&self) -> Option<u8> {
        (!self.is_tcn()).then(|| self.byte(4))
    }

    fn bridge_id(&self, at: usize) -> Option<BridgeId> {
        if self.is_tcn() {
            return None;
        }
        let w = self.word(at);
        let mac: [u8; 6] = self
            .bytes
            .get(at.saturating_add(2)..at.saturating_add(8))?
            .try_into()
            .ok()?;
        Some(BridgeId {
            priority: w & 0xf000,
            ext: w & 0x0fff,
            mac,
        })
    }

    pub fn root(&self) -> Option<BridgeId> {
        self.bridge_id(5)
    }

    pub fn root_cost(&self) -> Option<u32> {
        (!self.is_tcn()).then(|| u32::from(self.word(13)) << 16 | u32::from(self.word(15)))
    }

    pub fn bridge(&self) -> Option<BridgeId> {
        self.bridge_id(17)
    }

    pub fn port(&self) -> Option<u16> {
        (!self.is_tcn()).then(|| self.word(25))
    }

    /// Message age, max age, hello time and forward delay, in 1/256 s.
    pub fn timers(&self) -> Option<[u16; 4]> {
        (!self.is_tcn()).then(|| [self.word(27), self.word(29), self.word(31), self.word(33)])
    }

    /// What tshark's summary line starts with: `Conf.`, `RST.`, `MST.`.
    pub fn kind_label(&self) -> &'static str {
        match (self.kind(), self.version()) {
            (TYPE_CONFIG, _) => "Conf.",
            (_, 3..) => "MST.",
            _ => "RST.",
        }
    }

    /// The BPDU type's name, as the tree has it.
    pub fn kind_name(&self) -> &'static str {
        match self.kind() {
            TYPE_CONFIG => "Configuration",
            TYPE_RST => "Rapid/Multiple Spanning Tree",
            TYPE_TCN => "Topology Change Notification",
            _ => "Unknown",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Vec<u8> {
        let mut b = vec![0, 0, 0, 0, 0x81];
        b.extend([0x90, 0x05, 0, 0x0e, 0x58, 0xc3, 0x34, 0x82]);
        b.extend(20000u32.to_be_bytes());
        b.extend([0x80, 0x01, 0, 0x11, 0x22, 0x33, 0x44, 0x66]);
        b.extend([0x80, 0x02, 1, 0, 20, 0, 2, 0, 15, 0]);
        b
    }

    #[test]
    fn a_configuration_bpdu() {
        let b = config();
        let bpdu = Bpdu::new(&b).unwrap();
        assert_eq!(bpdu.kind_label(), "Conf.");
        assert_eq!(bpdu.flags(), Some(0x81));
        let root = bpdu.root().unwrap();
        assert_eq!((root.priority, root.ext), (36864, 5));
        assert_eq!(root.mac, [0, 0x0e, 0x58, 0xc3, 0x34, 0x82]);
        assert_eq!(bpdu.root_cost(), Some(20000));
        assert_eq!(bpdu.bridge().unwrap().priority, 32768);
        assert_eq!(bpdu.port(), Some(0x8002));
        assert_eq!(bpdu.timers(), Some([256, 5120, 512, 3840]));
        assert!(Bpdu::new(&b[..34]).is_none());
    }

    #[test]
    fn tcn_rst_and_mst() {
        let tcn = [0, 0, 0, 0x80];
        let t = Bpdu::new(&tcn).unwrap();
        assert!(t.is_tcn());
        assert_eq!((t.flags(), t.root(), t.port()), (None, None, None));
        let mut rst = config();
        rst[2] = 2;
        rst[3] = 2;
        assert!(Bpdu::new(&rst).is_none(), "36 bytes for RST");
        rst.push(0);
        assert_eq!(Bpdu::new(&rst).unwrap().kind_label(), "RST.");
        rst[2] = 3;
        assert_eq!(Bpdu::new(&rst).unwrap().kind_label(), "MST.");
        assert!(Bpdu::new(&[0, 0, 0]).is_none());
    }
}
