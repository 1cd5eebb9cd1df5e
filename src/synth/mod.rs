//! Synthesis: frame builders (the emit side of `wire`), capture writers and
//! scenarios with known ground truth.

pub mod conn;
pub mod deadlock;
pub mod frame;
pub mod ib;
pub mod pcap;
pub mod samples;
pub mod scenario;
pub mod timing;

pub use frame::{ExtHeaders, NetSpec, Payload, RoceFrame, build_pause, build_pfc, build_roce};
pub use pcap::{BackgroundWriter, CaptureWriter, OutFormat};
