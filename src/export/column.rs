//! Typed columns and the Parquet files they are written to: the few
//! column types every table uses, each one of the types DuckDB and Spark
//! read without casts (no unsigned 64-bit integers: `u64` figures go as
//! `int64`, saturated, or as `decimal(20,0)` when they use all 64 bits).

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Decimal128Builder, Float64Builder, Int32Builder, Int64Builder, ListBuilder,
    StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

/// A column's type, in the words of the README's schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `int32`: integers of up to 16 bits.
    I32,
    /// `int64`: integers of up to 48 bits, counts, nanoseconds.
    I64,
    /// `decimal(20,0)`: 64-bit unsigned integers (addresses, keys).
    U64,
    /// `boolean`, null when the frame has no such field.
    Bool,
    /// `boolean`, never null: a header or an analysis mark there or not.
    Flag,
    /// `double`.
    F64,
    /// `string`: names, addresses, MACs, hex bytes.
    Str,
    /// `timestamp` in microseconds, UTC (from nanoseconds).
    Time,
    /// `list<int64>`: flow numbers.
    List,
}

impl Kind {
    pub fn data_type(self) -> DataType {
        match self {
            Kind::I32 => DataType::Int32,
            Kind::I64 => DataType::Int64,
            Kind::U64 => DataType::Decimal128(20, 0),
            Kind::Bool | Kind::Flag => DataType::Boolean,
            Kind::F64 => DataType::Float64,
            Kind::Str => DataType::Utf8,
            Kind::Time => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            Kind::List => DataType::List(Arc::new(Field::new_list_field(DataType::Int64, true))),
        }
    }

    /// The type as SQL engines name it (the README's schema).
    pub fn sql(self) -> &'static str {
        match self {
            Kind::I32 => "int32",
            Kind::I64 => "int64",
            Kind::U64 => "decimal(20,0)",
            Kind::Bool | Kind::Flag => "boolean",
            Kind::F64 => "double",
            Kind::Str => "string",
            Kind::Time => "timestamp (µs, UTC)",
            Kind::List => "list<int64>",
        }
    }
}

/// One column being filled. Nulls (and a flag's `false`s) are counted
/// and added in one go before the next value: most columns of a frame
/// are empty, and most stay so for runs of frames.
pub struct Builder {
    inner: Inner,
    /// Nulls (flags: `false`s) not added yet.
    pending: usize,
}

enum Inner {
    I32(Int32Builder),
    I64(Int64Builder),
    U64(Decimal128Builder),
    Bool(BooleanBuilder),
    /// A flag: never null, `false` when absent.
    Flag(BooleanBuilder),
    F64(Float64Builder),
    Str(StringBuilder),
    Time(TimestampMicrosecondBuilder),
    List(ListBuilder<Int64Builder>),
}

impl Builder {
    pub fn new(kind: Kind) -> Builder {
        let inner = match kind {
            Kind::I32 => Inner::I32(Int32Builder::new()),
            Kind::I64 => Inner::I64(Int64Builder::new()),
            Kind::U64 => Inner::U64(Decimal128Builder::new().with_data_type(kind.data_type())),
            Kind::Bool => Inner::Bool(BooleanBuilder::new()),
            Kind::Flag => Inner::Flag(BooleanBuilder::new()),
            Kind::F64 => Inner::F64(Float64Builder::new()),
            Kind::Str => Inner::Str(StringBuilder::new()),
            Kind::Time => Inner::Time(TimestampMicrosecondBuilder::new().with_timezone("UTC")),
            Kind::List => Inner::List(ListBuilder::new(Int64Builder::new())),
        };
        Builder { inner, pending: 0 }
    }

    /// No value in this row (a flag: `false`).
    #[inline]
    pub fn null(&mut self) {
        self.pending += 1;
    }

    /// `n` rows without a value.
    pub fn nulls(&mut self, n: usize) {
        self.pending += n;
    }

    /// The counted nulls, added.
    fn settle(&mut self) -> &mut Inner {
        let n = std::mem::take(&mut self.pending);
        if n > 0 {
            match &mut self.inner {
                Inner::I32(b) => b.append_nulls(n),
                Inner::I64(b) => b.append_nulls(n),
                Inner::U64(b) => b.append_nulls(n),
                Inner::Bool(b) => b.append_nulls(n),
                Inner::Flag(b) => b.append_n(n, false),
                Inner::F64(b) => b.append_nulls(n),
                Inner::Str(b) => b.append_nulls(n),
                Inner::Time(b) => b.append_nulls(n),
                Inner::List(b) => (0..n).for_each(|_| b.append(false)),
            }
        }
        &mut self.inner
    }

    /// An integer, into whichever integer column this is (saturated to
    /// its range; nanoseconds into a timestamp column as microseconds).
    pub fn int(&mut self, v: i128) {
        match self.settle() {
            Inner::I32(b) => b.append_value(v.clamp(i32::MIN.into(), i32::MAX.into()) as i32),
            Inner::I64(b) => b.append_value(sat64(v)),
            Inner::U64(b) => b.append_value(v),
            Inner::Time(b) => b.append_value(sat64(v.div_euclid(1000))),
            Inner::F64(b) => b.append_value(v as f64),
            Inner::Bool(b) | Inner::Flag(b) => b.append_value(v != 0),
            Inner::Str(b) => b.append_value(v.to_string()),
            Inner::List(b) => {
                b.values().append_value(sat64(v));
                b.append(true);
            }
        }
    }

    pub fn bool(&mut self, v: bool) {
        match self.settle() {
            Inner::Bool(b) | Inner::Flag(b) => b.append_value(v),
            _ => self.int(i128::from(v)),
        }
    }

    pub fn float(&mut self, v: f64) {
        match self.settle() {
            Inner::F64(b) => b.append_value(v),
            _ => self.int(v as i128),
        }
    }

    pub fn str(&mut self, v: &str) {
        match self.settle() {
            Inner::Str(b) => b.append_value(v),
            _ => self.null(),
        }
    }

    /// A list of integers (a list column; others take nulls).
    pub fn list(&mut self, v: impl IntoIterator<Item = i128>) {
        match self.settle() {
            Inner::List(b) => {
                for x in v {
                    b.values().append_value(sat64(x));
                }
                b.append(true);
            }
            _ => self.null(),
        }
    }

    pub fn finish(&mut self) -> ArrayRef {
        match self.settle() {
            Inner::I32(b) => Arc::new(b.finish()),
            Inner::I64(b) => Arc::new(b.finish()),
            Inner::U64(b) => Arc::new(b.finish()),
            Inner::Bool(b) | Inner::Flag(b) => Arc::new(b.finish()),
            Inner::F64(b) => Arc::new(b.finish()),
            Inner::Str(b) => Arc::new(b.finish()),
            Inner::Time(b) => Arc::new(b.finish()),
            Inner::List(b) => Arc::new(b.finish()),
        }
    }
}

fn sat64(v: i128) -> i64 {
    v.clamp(i64::MIN.into(), i64::MAX.into()) as i64
}

/// A table's columns: names and kinds, and their builders.
pub struct Columns {
    pub schema: SchemaRef,
    pub builders: Vec<Builder>,
    pub rows: usize,
}

impl Columns {
    pub fn new<'a>(cols: impl IntoIterator<Item = (&'a str, Kind)>) -> Columns {
        let (fields, builders): (Vec<Field>, Vec<Builder>) = cols
            .into_iter()
            .map(|(name, kind)| {
                (
                    Field::new(name, kind.data_type(), kind != Kind::Flag),
                    Builder::new(kind),
                )
            })
            .unzip();
        Columns {
            schema: Arc::new(Schema::new(fields)),
            builders,
            rows: 0,
        }
    }

    /// The rows added since the last batch, as a batch.
    pub fn batch(&mut self) -> Result<RecordBatch, String> {
        let arrays: Vec<ArrayRef> = self.builders.iter_mut().map(Builder::finish).collect();
        self.rows = 0;
        RecordBatch::try_new(self.schema.clone(), arrays).map_err(|e| e.to_string())
    }
}

/// Rows per row group: a few MB of a wide table, so memory stays flat and
/// engines can split a file across workers.
pub const ROW_GROUP_ROWS: usize = 128 * 1024;

/// A Parquet error in words: the system's own for a failed write (a full
/// disk), without the "External:" the Parquet crate puts before it.
pub fn parquet_error(e: parquet::errors::ParquetError) -> String {
    match e {
        parquet::errors::ParquetError::External(inner) => inner.to_string(),
        other => other.to_string(),
    }
}

/// A Parquet file being written: snappy (Spark's default; zstd keeps a
/// context per column writer, 40 MiB for the packets table's 200
/// columns, and made files a third smaller but not faster), statistics per column
/// chunk, the row groups above.
pub fn open(path: &Path, schema: SchemaRef) -> Result<ArrowWriter<File>, String> {
    let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_statistics_enabled(EnabledStatistics::Chunk)
        // Pages of 128 KiB: each of a wide table's columns holds one
        // while it fills (1 MiB each made 200 columns hold 200 MiB).
        .set_data_page_size_limit(128 << 10)
        .set_dictionary_page_size_limit(256 << 10)
        .set_created_by(format!("roce-dissect {}", env!("CARGO_PKG_VERSION")));
    // Dictionaries for names, addresses and small numbers; counters,
    // times and 64-bit values rarely repeat enough to pay for one.
    for f in schema.fields() {
        if matches!(
            f.data_type(),
            DataType::Int64
                | DataType::Decimal128(..)
                | DataType::Timestamp(..)
                | DataType::Float64
        ) {
            props = props.set_column_dictionary_enabled(ColumnPath::from(f.name().as_str()), false);
        }
    }
    let props = props.build();
    ArrowWriter::try_new(file, schema, Some(props))
        .map_err(|e| format!("{}: {}", path.display(), parquet_error(e)))
}
