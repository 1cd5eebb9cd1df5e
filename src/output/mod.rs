//! Packets and reports to text, JSON and JSON Lines. No analysis logic here.

pub mod fields;
pub mod fit;
pub mod html;
pub mod json;
pub mod names;
pub mod packets;
pub mod report;
pub mod report_json;
pub mod text;
pub mod tree;
