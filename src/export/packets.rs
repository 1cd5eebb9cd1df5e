//! The `packets` table: a row per frame, a column per field of the field
//! registry, named as the JSON Lines name it (`bth_psn`, `ip_src`,
//! `analysis_retransmission`), typed from the field's type.

use std::fmt::Write as _;

use std::fs::File;
use std::path::Path;

use arrow_schema::SchemaRef;
use parquet::arrow::arrow_writer::{
    ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory, compute_leaves,
};
use parquet::file::writer::SerializedFileWriter;

use super::column::{self, Builder, Columns, Kind};
use crate::analysis::FrameAnalysis;
use crate::capture::{Frame, LinkType};
use crate::dissect::{DissectOptions, Packet};
use crate::fields::{Ctx, FIELDS, Field, FieldType, Value};
use crate::pipeline::Seen;

/// Fields left out: each holds both ends' values, which have their own
/// columns (`ip_src`, `ip_dst`); `frame`, which every frame has; and
/// `frame.time`, the `ts` column in words.
const LEFT_OUT: &[&str] = &[
    "frame",
    "eth.addr",
    "ip.addr",
    "ipv6.addr",
    "udp.port",
    "tcp.port",
    // `ts` in words.
    "frame.time",
];

/// One column of the table.
#[derive(Debug, Clone)]
pub struct PacketColumn {
    pub name: String,
    pub kind: Kind,
    /// The field; the column holds its first value in the frame
    /// (stacked VLAN tags: the outer one). Every frame's getter is called:
    /// a field may have a value without its header's (`ip.version` in
    /// IPv6, `infiniband.reth.va` of an AtomicETH), so no header's absence
    /// stands for its fields'.
    pub field: &'static Field,
}

/// The column name of a registry field: its JSON Lines path joined by
/// `_` (`infiniband.bth.psn` → `bth_psn`, `roce.analysis.gap` →
/// `analysis_gap`, `nvme-rdma` → `nvme_rdma`), with `_ns` for spans of
/// time.
fn column_name(f: &Field) -> String {
    let base = match f.name {
        "frame.number" => "frame",
        "roce.analysis.flow" => "flow",
        "frame.time_epoch" => "ts",
        n => n
            .strip_prefix("infiniband.")
            .or_else(|| {
                n.strip_prefix("roce.")
                    .filter(|r| r.starts_with("analysis."))
            })
            .unwrap_or(n),
    };
    let mut name = base.replace(['.', '-'], "_");
    if matches!(f.ty, FieldType::RelTime | FieldType::Millis) {
        name.push_str("_ns");
    }
    name
}

fn kind_of(ty: FieldType) -> Kind {
    match ty {
        FieldType::Uint(bits) if bits <= 16 => Kind::I32,
        FieldType::Uint(bits) if bits <= 48 => Kind::I64,
        FieldType::Uint(_) => Kind::U64,
        FieldType::Bool => Kind::Bool,
        FieldType::Presence => Kind::Flag,
        FieldType::Ether
        | FieldType::Ipv4
        | FieldType::Ipv6
        | FieldType::Bytes
        | FieldType::Str => Kind::Str,
        FieldType::AbsTime | FieldType::RelTime | FieldType::Millis | FieldType::FrameNum => {
            Kind::I64
        }
    }
}

/// The table's columns, in registry order (`frame`, `ts`, `ts_ns` first).
pub fn columns() -> Vec<PacketColumn> {
    let mut cols = Vec::new();
    for f in FIELDS {
        // (The summary line's columns are texts made of the columns
        // here.)
        if LEFT_OUT.contains(&f.name) || f.name.starts_with("_ws.col.") {
            continue;
        }
        if f.name == "frame.time_epoch" {
            cols.push(PacketColumn {
                name: "ts".into(),
                kind: Kind::Time,
                field: f,
            });
            cols.push(PacketColumn {
                name: "ts_ns".into(),
                kind: Kind::I64,
                field: f,
            });
            continue;
        }
        let kind = match f.name {
            "frame.number" | "roce.analysis.flow" => Kind::I64,
            _ => kind_of(f.ty),
        };
        cols.push(PacketColumn {
            name: column_name(f),
            kind,
            field: f,
        });
    }
    // `frame`, `ts`, `ts_ns` lead.
    let lead = |c: &PacketColumn| match c.name.as_str() {
        "frame" => 0,
        "ts" => 1,
        "ts_ns" => 2,
        _ => 3,
    };
    cols.sort_by_key(lead);
    cols
}

/// Frames waiting to become a row group: their bytes and what the frame
/// loop knew of them (the analysis, the flow number, the previous
/// frame's time). The frame loop fills one while the last is encoded.
#[derive(Default)]
pub struct Batch {
    data: Vec<u8>,
    held: Vec<Held>,
    analysis: Vec<FrameAnalysis>,
    tcp: Vec<Option<crate::analysis::tcp::TcpSeen>>,
    flow: Vec<Option<u64>>,
    prev_ts: Vec<u64>,
    first_ts: u64,
}

/// A frame of a batch, but for its bytes.
struct Held {
    number: u64,
    ts_ns: u64,
    len: u32,
    caplen: u32,
    link: LinkType,
    if_speed: Option<std::num::NonZeroU64>,
    start: usize,
    end: usize,
}

/// Frames per batch (a row group), and bytes: whichever comes first.
pub const BATCH_FRAMES: usize = 16 * 1024;
pub const BATCH_BYTES: usize = 8 << 20;

impl Batch {
    /// Keeps the frame of `seen`, whose flow number is `flow`.
    pub fn push(&mut self, seen: &Seen<'_, '_>, flow: Option<u64>) {
        let p = seen.pkt;
        if self.data.capacity() == 0 {
            // Room for a full batch and one frame more: grown by
            // doubling, the bytes took up to twice that.
            self.data.reserve_exact(BATCH_BYTES + (1 << 18));
            self.held.reserve_exact(BATCH_FRAMES);
        }
        let start = self.data.len();
        self.data.extend_from_slice(p.data);
        self.held.push(Held {
            number: p.number,
            ts_ns: p.ts_ns,
            len: p.len,
            caplen: p.caplen,
            link: p.link,
            if_speed: p.if_speed,
            start,
            end: self.data.len(),
        });
        self.analysis.push(*seen.analysis);
        self.tcp.push(seen.tcp.clone());
        self.flow.push(flow);
        self.prev_ts.push(seen.prev_ts_ns);
        self.first_ts = seen.first_ts_ns;
    }

    pub fn len(&self) -> usize {
        self.held.len()
    }

    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// Whether it is time to encode it.
    pub fn full(&self) -> bool {
        self.held.len() >= BATCH_FRAMES || self.data.len() >= BATCH_BYTES
    }

    pub fn clear(&mut self) {
        self.data.clear();
        self.held.clear();
        self.analysis.clear();
        self.tcp.clear();
        self.flow.clear();
        self.prev_ts.clear();
    }

    /// The frames decoded again (as the frame loop decoded them).
    fn dissect(&self, opts: &DissectOptions) -> Vec<Packet<'_>> {
        self.held
            .iter()
            .map(|h| {
                let frame = Frame {
                    number: h.number,
                    ts_ns: h.ts_ns,
                    len: h.len,
                    caplen: h.caplen,
                    link: h.link,
                    if_speed: h.if_speed,
                    interface: 0,
                    data: &self.data[h.start..h.end],
                    offset: 0,
                };
                crate::dissect::dissect(&frame, opts)
            })
            .collect()
    }

    fn ctx<'p, 'a>(&'p self, i: usize, pkt: &'p Packet<'a>) -> Ctx<'p, 'a> {
        Ctx {
            pkt,
            analysis: Some(&self.analysis[i]),
            tcp: self.tcp.get(i).and_then(Option::as_ref),
            flow_number: self.flow[i],
            first_ts_ns: self.first_ts,
            prev_ts_ns: self.prev_ts[i],
            // Only the columns' texts read it, which are left out.
            link: crate::analysis::LinkSpeed::default(),
        }
    }
}

/// Frames a thread takes through all of its columns before the next ones:
/// their decoded headers stay in the core's cache (a column at a time
/// down a whole batch read every frame's 700 bytes again per column).
const TILE: usize = 128;

/// Adds frames `from..` (a tile) of a batch to a column, field getter by
/// field getter.
fn build<'a>(
    b: &mut Builder,
    col: &PacketColumn,
    batch: &Batch,
    (pkts, from): (&[Packet<'a>], usize),
    vals: &mut Vec<Value<'a>>,
    text: &mut String,
) {
    for (i, pkt) in pkts.iter().enumerate().map(|(k, p)| (from + k, p)) {
        (col.field.get)(&batch.ctx(i, pkt), vals);
        match vals.first() {
            None => b.null(),
            Some(v) => put(b, v, text),
        }
        vals.clear();
    }
}

/// The `packets` file: its columns built and encoded by every core, a
/// batch at a time, in row groups of [`column::ROW_GROUP_ROWS`].
pub struct Encoder {
    writer: SerializedFileWriter<File>,
    factory: ArrowRowGroupWriterFactory,
    cols: Vec<PacketColumn>,
    schema: SchemaRef,
    /// The open row group's column writers, dealt round to the threads.
    shares: Vec<Vec<(usize, ArrowColumnWriter)>>,
    /// Rows in the open row group.
    open_rows: usize,
    row_groups: usize,
    threads: usize,
    dissect: DissectOptions,
    pub rows: u64,
}

/// A thread's columns: built from a batch and written, or closed.
type Share = Vec<(usize, ArrowColumnWriter)>;

impl Encoder {
    pub fn create(path: &Path, threads: usize, dissect: DissectOptions) -> Result<Encoder, String> {
        let cols = columns();
        let table = Columns::new(cols.iter().map(|c| (c.name.as_str(), c.kind)));
        let schema = table.schema.clone();
        let (writer, factory) = column::open(path, schema.clone())?
            .into_serialized_writer()
            .map_err(column::parquet_error)?;
        Ok(Encoder {
            writer,
            factory,
            cols,
            schema,
            shares: Vec::new(),
            open_rows: 0,
            row_groups: 0,
            threads: threads.max(1),
            dissect,
            rows: 0,
        })
    }

    /// Runs `work` on every thread's share of the columns, in parallel.
    fn on_shares<T: Send>(
        shares: Vec<Share>,
        work: impl Fn(Share) -> Result<T, String> + Sync,
    ) -> Result<Vec<T>, String> {
        let work = &work;
        std::thread::scope(|s| {
            let handles: Vec<_> = shares
                .into_iter()
                .map(|share| s.spawn(move || work(share)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err("a column encoder failed".into()))
                })
                .collect()
        })
    }

    /// Adds `batch`'s frames as rows.
    pub fn write(&mut self, batch: &Batch) -> Result<(), String> {
        if batch.is_empty() {
            return Ok(());
        }
        if self.shares.is_empty() {
            let writers = self
                .factory
                .create_column_writers(self.row_groups)
                .map_err(column::parquet_error)?;
            self.shares = (0..self.threads).map(|_| Vec::new()).collect();
            for (i, w) in writers.into_iter().enumerate() {
                self.shares[i % self.threads].push((i, w));
            }
        }
        let pkts = batch.dissect(&self.dissect);
        let (cols, schema, pkts) = (&self.cols, &self.schema, &pkts);
        self.shares = Self::on_shares(std::mem::take(&mut self.shares), |mut share| {
            let mut builders: Vec<Builder> = share
                .iter()
                .map(|(i, _)| Builder::new(cols[*i].kind))
                .collect();
            let (mut vals, mut text) = (Vec::new(), String::new());
            for (t, tile) in pkts.chunks(TILE).enumerate() {
                for ((i, _), b) in share.iter().zip(builders.iter_mut()) {
                    build(b, &cols[*i], batch, (tile, t * TILE), &mut vals, &mut text);
                }
            }
            for ((i, w), b) in share.iter_mut().zip(builders.iter_mut()) {
                let array = b.finish();
                for leaf in
                    compute_leaves(schema.field(*i), &array).map_err(column::parquet_error)?
                {
                    w.write(&leaf).map_err(column::parquet_error)?;
                }
            }
            Ok(share)
        })?;
        self.open_rows += batch.len();
        self.rows += batch.len() as u64;
        if self.open_rows >= column::ROW_GROUP_ROWS {
            self.close_row_group()?;
        }
        Ok(())
    }

    /// Closes the open row group's columns (in parallel) and writes them.
    fn close_row_group(&mut self) -> Result<(), String> {
        if self.shares.is_empty() {
            return Ok(());
        }
        let closed = Self::on_shares(std::mem::take(&mut self.shares), |share| {
            share
                .into_iter()
                .map(|(i, w)| w.close().map(|c| (i, c)).map_err(column::parquet_error))
                .collect::<Result<Vec<_>, String>>()
        })?;
        let mut chunks: Vec<(usize, ArrowColumnChunk)> = closed.into_iter().flatten().collect();
        chunks.sort_by_key(|(i, _)| *i);
        let mut rg = self
            .writer
            .next_row_group()
            .map_err(column::parquet_error)?;
        for (_, chunk) in chunks {
            chunk
                .append_to_row_group(&mut rg)
                .map_err(column::parquet_error)?;
        }
        rg.close().map_err(column::parquet_error)?;
        self.row_groups += 1;
        self.open_rows = 0;
        Ok(())
    }

    pub fn close(mut self) -> Result<u64, String> {
        self.close_row_group()?;
        self.writer.close().map_err(column::parquet_error)?;
        Ok(self.rows)
    }
}

/// One value into its column. Addresses are written by hand: through
/// `fmt` they were a tenth of the table's time.
fn put(b: &mut Builder, v: &Value<'_>, text: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match v {
        Value::Uint(n) => b.int(i128::from(*n)),
        Value::Bool(x) => b.bool(*x),
        Value::Present => b.bool(true),
        // Nanoseconds; a timestamp column takes them as microseconds.
        Value::Time(ns) => b.int(*ns),
        Value::Ether(m) => {
            text.clear();
            for (i, x) in m.iter().enumerate() {
                if i > 0 {
                    text.push(':');
                }
                text.push(HEX[usize::from(x >> 4)] as char);
                text.push(HEX[usize::from(x & 15)] as char);
            }
            b.str(text);
        }
        Value::Ipv4(a) => {
            text.clear();
            let mut digits = itoa::Buffer::new();
            for (i, x) in a.octets().iter().enumerate() {
                if i > 0 {
                    text.push('.');
                }
                text.push_str(digits.format(*x));
            }
            b.str(text);
        }
        Value::Ipv6(a) => {
            text.clear();
            let _ = write!(text, "{a}");
            b.str(text);
        }
        Value::Bytes(bytes) => {
            text.clear();
            for x in bytes.iter() {
                text.push(HEX[usize::from(x >> 4)] as char);
                text.push(HEX[usize::from(x & 15)] as char);
            }
            b.str(text);
        }
        Value::Str(s) => b.str(s),
    }
}
