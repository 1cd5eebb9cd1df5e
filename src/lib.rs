//! roce-dissect: decode and analyse RoCE (RDMA over Converged Ethernet)
//! captures.
//!
//! Data flows one way: [`capture`] turns a file into frames, [`dissect`]
//! turns a frame into a [`dissect::Packet`] using the header views in
//! [`wire`], and [`output`] renders packets.
#![forbid(unsafe_code)]

pub mod analysis;
pub mod capture;
pub mod cli;
pub mod dissect;
#[cfg(feature = "parquet")]
pub mod export;
pub mod fabric;
pub mod fields;
pub mod filter;
pub mod fuzzing;
pub mod output;
pub mod pipeline;
pub mod plan;
pub mod signals;
pub mod synth;
pub mod tui;
pub mod units;
pub mod wire;
