//! The command line: every option of every command, and the parsers of
//! their values. Each command lists only the options it uses.

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};

use crate::analysis::{AnalysisOptions, Limits, budget, parse_dscp_map};
use crate::dissect::DissectOptions;

use super::RunError;

const AFTER_HELP: &str = "\
Examples:
  roce-dissect capture.pcap                 analysis report (flows, retransmits, NAKs, CNPs, pauses)
  roce-dissect capture.pcap --json          the same report as JSON
  roce-dissect -V capture.pcap              the report with every flow's events
  roce-dissect packets capture.pcap         one line per frame, like tshark
  roce-dissect packets -V -x capture.pcap   full header tree and hex dump
  roce-dissect packets --json capture.pcap  JSON Lines, one object per frame
  roce-dissect tui capture.pcap             browse flows, packets and pauses
  roce-dissect host1.pcap host2.pcapng.gz   a report for each capture (in parallel)
  roce-dissect --merge tx.pcap rx.pcap      both sides of a link as one capture
  roce-dissect captures/ --json             JSON Lines, one report per capture in the folder
  roce-dissect completions bash             shell completions (bash, zsh, fish, ...)
  roce-dissect man > roce-dissect.1         the manual page

Exit status: 0 on success, 2 when the capture cannot be read or the command line is wrong, 1 on other errors (e.g. writing the output).";

/// `--version`: the package version and, when built from a git checkout,
/// the commit and its date (`build.rs`).
pub const VERSION: &str = env!("ROCE_DISSECT_VERSION");

#[derive(Debug, Parser)]
#[command(
    name = "roce-dissect",
    version = VERSION,
    disable_version_flag = true,
    about = "Decode and analyse RoCE (RDMA over Converged Ethernet) captures",
    long_about = "Decode and analyse RoCE v1/v2 captures (pcap, pcapng): per-QP PSN tracking, \
                  retransmissions, out-of-order and missing packets, NAKs, ECN/CNP, PFC pauses.",
    after_help = AFTER_HELP,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Capture files (pcap or pcapng, plain or gzip/zstd/xz; `-` reads
    /// standard input, to its end or a first Ctrl-C) or folders of them: a
    /// report for each, or one for all with --merge
    #[arg(value_name = "CAPTURE", required_unless_present = "read_file")]
    pub captures: Vec<PathBuf>,

    #[command(flatten)]
    pub read: ReadFile,

    /// Analyse several captures as one, frames in timestamp order (like
    /// mergecap): the two sides of a link, the ports of a switch
    #[arg(long)]
    pub merge: bool,

    #[command(flatten)]
    pub decode: DecodeArgs,

    #[command(flatten)]
    pub analysis: AnalysisArgs,

    #[command(flatten)]
    pub report: ReportArgs,

    /// Threads for reading and analysing (default: one per core, or
    /// ROCE_DISSECT_THREADS; 1 reads sequentially)
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,

    /// Print the version (and the commit it was built from)
    #[arg(short = 'v', long = "version", action = ArgAction::Version)]
    pub version: Option<bool>,
}

/// How the report is written (the default command).
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Print the report as one JSON document
    #[arg(long)]
    pub json: bool,

    /// Write the report as one self-contained HTML page with charts (PSN sequence, throughput, PFC and CE/CNP timelines, latencies) to FILE (`-`: standard output)
    #[arg(long, value_name = "FILE", conflicts_with = "json")]
    pub html: Option<PathBuf>,

    /// List every flow's events (gaps, retransmits, NAKs, CE, CNPs) in the text report
    #[arg(long, short = 'V', visible_alias = "verbose")]
    pub events: bool,

    /// Never colour the text report (NO_COLOR is honoured too)
    #[arg(long)]
    pub no_color: bool,

    /// List every flow in the text report (by default the 50 with most
    /// trouble, connections together)
    #[arg(long)]
    pub all: bool,

    #[command(flatten)]
    pub layout: LayoutArgs,

    /// Display filter (Wireshark's language): the analysis reads every
    /// frame, the report lists the flows and pause intervals with a frame
    /// it matches (e.g. -Y roce.analysis.nak, -Y 'ip.addr == 10.0.0.7')
    #[arg(short = 'Y', long = "display-filter", value_name = "FILTER")]
    pub filter: Option<String>,
}

/// The width text output is laid out for.
#[derive(Debug, Clone, Args)]
pub struct LayoutArgs {
    /// Lay the text out for COLS columns: long lines broken between words,
    /// tables narrowed to fit [default: the terminal's width on a terminal;
    /// in a pipe or a file, whole lines; 0: whole lines]
    #[arg(long, value_name = "COLS")]
    pub width: Option<usize>,
}

impl LayoutArgs {
    /// The width to fit standard output's text to, if any.
    pub fn stdout_width(&self) -> Option<usize> {
        crate::output::fit::stdout_width(self.width)
    }
}

/// Settings of the analysis: for the report, `packets` and the TUI.
#[derive(Debug, Clone, Args)]
pub struct AnalysisArgs {
    /// Path MTU for sizing READ requests when nothing in the capture shows it
    /// (FIRST/MIDDLE payloads, a CM REQ): 256, 512, 1024, 2048 or 4096
    #[arg(long, value_name = "BYTES", value_parser = parse_pmtu)]
    pub pmtu: Option<u32>,

    /// Identical frames of a flow closer than this are capture duplicates
    #[arg(long, value_name = "DURATION", default_value = "2us", value_parser = parse_duration)]
    pub dup_window: u64,

    /// A pause longer than this is reported as a storm
    #[arg(long, value_name = "DURATION", default_value = "100ms", value_parser = parse_duration)]
    pub storm_threshold: u64,

    /// DSCP to priority for untagged frames, e.g. 24-31:3,48-55:6
    #[arg(long, value_name = "MAP", default_value = "24-31:3,48-55:6")]
    pub dscp_map: String,

    /// Events kept per flow (the rest are counted)
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub max_events: usize,

    /// Events kept in all (the rest are counted, with a warning)
    #[arg(long, value_name = "N", default_value_t = budget::DEFAULT_MAX_EVENTS_TOTAL)]
    pub max_events_total: u64,

    /// Flows analysed; frames of further flows are counted, with a warning
    #[arg(long, value_name = "N", default_value_t = budget::DEFAULT_MAX_FLOWS, help_heading = "Memory budgets")]
    pub max_flows: u64,

    /// UD source QPs whose PSNs are followed, in all
    #[arg(long, value_name = "N", default_value_t = budget::DEFAULT_MAX_UD_SOURCES, help_heading = "Memory budgets")]
    pub max_ud_sources: u64,

    /// (MAC, priority) pause sources tracked
    #[arg(long, value_name = "N", default_value_t = budget::DEFAULT_MAX_PAUSE_SOURCES, help_heading = "Memory budgets")]
    pub max_pause_sources: u64,

    /// Pause intervals listed one by one (the summary counts them all)
    #[arg(long, value_name = "N", default_value_t = budget::DEFAULT_MAX_INTERVALS, help_heading = "Memory budgets")]
    pub max_intervals: u64,

    /// RDMA CM requests remembered while they wait for their reply
    #[arg(long, value_name = "N", default_value_t = budget::DEFAULT_MAX_CM_PENDING, help_heading = "Memory budgets")]
    pub max_cm_pending: u64,

    /// Throughput series per flow in the report (flows[].timing.throughput.series), in bins of BIN (e.g. 10us) or by default the capture split in about 200 bins
    #[arg(long, value_name = "BIN", num_args = 0..=1, value_parser = parse_bin)]
    pub timeline: Option<Option<u64>>,

    /// Cable length of the captured link, for the time a paused sender may take to stop (pfc.intervals[].reaction)
    #[arg(long, value_name = "LENGTH", default_value = "100m", value_parser = parse_length, help_heading = "PFC reaction")]
    pub cable: f64,

    /// Largest frame a paused sender may finish [default: the largest in the capture, else 4200]
    #[arg(long, value_name = "BYTES", help_heading = "PFC reaction")]
    pub mtu: Option<u32>,

    /// The headroom configured on the pausing port (e.g. 100KiB): each pause says whether the sender's bytes exceeded it
    #[arg(long, value_name = "SIZE", value_parser = parse_size, help_heading = "PFC reaction")]
    pub headroom: Option<u64>,

    /// DCQCN reaction: the payload rate of a flow in this window before each CNP its sender received, against the same window from 5 us after it (flows[].cc)
    #[arg(long, value_name = "DURATION", default_value = "50us", value_parser = parse_cc_window)]
    pub cc_window: u64,

    /// Analysis stages to skip, for speed or to measure what each costs: duplicates, throughput, timing, pauses (frames sent while paused), cc (DCQCN reaction), nvme; comma-separated. The report says which were skipped
    #[arg(long, value_name = "STAGE[,STAGE]", value_parser = crate::analysis::Stages::skipping, default_value = "")]
    pub skip: crate::analysis::Stages,

    /// Upper-layer protocol of connections the RDMA CM does not describe:
    /// nvme (every connection whose SENDs read as NVMe-oF commands),
    /// nvme@IP[:PORT] (those to this controller; PORT is the NVMe-oF
    /// service port, read from CM requests), or none (the CM only, no
    /// payload heuristic). Repeatable
    // The help is clap's, not markdown: `[:PORT]` is not a link.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(long, value_name = "ULP[@IP[:PORT]]")]
    pub ulp: Vec<String>,

    /// Timing samples (round trips, completions, READ latencies, message sizes) kept for exact percentiles, in all; past it counts, minimum, maximum and mean stay exact, with a warning
    #[arg(long, value_name = "N", default_value_t = budget::DEFAULT_MAX_TIMING_SAMPLES, help_heading = "Memory budgets")]
    pub max_timing_samples: u64,

    /// Analyse the host pairs of a capture file on N threads side by side, each thread the frames of some of them; the report is the same. Pays with thousands of flows and more than 2 cores. A capture whose analysis does not split so (NVMe-oF, CM requests of two host pairs with one ID, more flows or timing samples than their budgets) is analysed again on one thread, with a note saying why
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub analysis_threads: u16,
}

impl AnalysisArgs {
    pub fn options(&self, decode: &DecodeArgs) -> Result<AnalysisOptions, RunError> {
        let dscp_map = parse_dscp_map(&self.dscp_map).map_err(RunError::Usage)?;
        Ok(AnalysisOptions {
            link_speed: decode.link_speed(),
            pmtu: self.pmtu,
            dup_window_ns: self.dup_window,
            storm_threshold_ns: self.storm_threshold,
            dscp_map,
            limits: Limits {
                flows: self.max_flows,
                ud_sources: self.max_ud_sources,
                pause_sources: self.max_pause_sources,
                intervals: self.max_intervals,
                cm_pending: self.max_cm_pending,
                events_per_flow: self.max_events,
                events_total: self.max_events_total,
                timing_samples: self.max_timing_samples,
            },
            timeline_bin_ns: self.timeline.flatten(),
            timeline_series: self.timeline.is_some(),
            cc_window_ns: self.cc_window,
            stages: self.skip,
            ends_process: false,
            split: usize::from(self.analysis_threads),
            reaction: crate::analysis::pfc::ReactionLimits {
                cable_m: self.cable,
                mtu: self.mtu,
                headroom_bytes: self.headroom,
            },
            ulp: {
                let mut rule = crate::analysis::nvme::UlpRule::default();
                for u in &self.ulp {
                    rule.add(u)
                        .map_err(|e| RunError::Usage(format!("--ulp {e}")))?;
                }
                rule
            },
        })
    }
}

/// Options of every command that decodes a capture.
#[derive(Debug, Clone, Args)]
pub struct DecodeArgs {
    /// UDP destination port that marks RoCE v2
    #[arg(long, value_name = "PORT", default_value_t = crate::dissect::ROCE_V2_PORT)]
    pub roce_port: u16,

    /// Link speed for PFC/PAUSE quanta: 10G, 25G, 40G, 50G, 100G, 200G, 400G, 800G or bits/s [default: the interface's pcapng if_speed, else 100G]
    #[arg(long, value_name = "SPEED", value_parser = parse_link_speed)]
    pub link_speed: Option<u64>,

    /// Do not verify ICRCs (faster; `icrc.valid` becomes null)
    #[arg(long)]
    pub no_icrc: bool,
}

impl DecodeArgs {
    pub fn link_speed(&self) -> crate::analysis::LinkSpeed {
        crate::analysis::LinkSpeed {
            given: self.link_speed,
        }
    }

    pub fn dissect_options(&self) -> DissectOptions {
        DissectOptions {
            roce_port: self.roce_port,
            check_icrc: !self.no_icrc,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// One line per frame like tshark; -V for the header tree, --json for JSON Lines
    Packets(PacketsArgs),
    /// Browse flows, packets, header trees, PSN charts and PFC pauses in the terminal
    Tui(TuiArgs),
    /// Synthesize a capture of a scenario, with the facts its report must show
    Gen(GenArgs),
    /// Print a shell completion script (e.g. `roce-dissect completions bash > /etc/bash_completion.d/roce-dissect`)
    Completions(CompletionsArgs),
    /// Print the manual page (roff) of roce-dissect or of one of its commands
    Man(ManArgs),
    /// List the fields -Y and -T fields know (like tshark -G fields)
    Fields(FieldsArgs),
    /// Plan a lossless fabric: PFC headroom, buffer thresholds, the DCQCN rate controller
    Plan(PlanArgs),
    /// Several links' captures on one clock: the pause graph, PFC deadlocks, pause propagation
    Fabric(FabricArgs),
    /// Write captures as a Parquet dataset (packets, flows, events, ...) for DuckDB, Spark or Trino
    #[cfg(feature = "parquet")]
    Export(ExportArgs),
}

/// `-r CAPTURE`, tshark's way of naming the capture, in every command
/// that reads captures.
#[derive(Debug, Args)]
pub struct ReadFile {
    /// A capture to read, as tshark's -r (the same as naming it; first
    /// among the captures named)
    #[arg(
        id = "read_file",
        short = 'r',
        long = "read-file",
        value_name = "CAPTURE"
    )]
    pub files: Vec<PathBuf>,
}

impl Cli {
    /// Puts the captures given with `-r` (tshark's way) before those named
    /// as arguments, in every command that reads captures, so that the
    /// commands see one list.
    pub fn gather_read_files(&mut self) {
        fn gather(captures: &mut Vec<PathBuf>, read: &mut Vec<PathBuf>) {
            if !read.is_empty() {
                captures.splice(0..0, read.drain(..));
            }
        }
        match &mut self.command {
            None => gather(&mut self.captures, &mut self.read.files),
            Some(Command::Packets(a)) => gather(&mut a.captures, &mut a.read.files),
            Some(Command::Tui(a)) => gather(&mut a.captures, &mut a.read.files),
            Some(Command::Fabric(a)) => gather(&mut a.captures, &mut a.read.files),
            #[cfg(feature = "parquet")]
            Some(Command::Export(a)) => gather(&mut a.captures, &mut a.read.files),
            Some(
                Command::Gen(_)
                | Command::Completions(_)
                | Command::Man(_)
                | Command::Fields(_)
                | Command::Plan(_),
            ) => {}
        }
    }
}

/// A table `export` writes.
#[cfg(feature = "parquet")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TableArg {
    /// A row per frame: every registry field, and the analysis's marks
    Packets,
    /// A row per flow: every figure of the report's flows[]
    Flows,
    /// A row per event the report lists for a flow
    Events,
    /// A row per retransmission episode
    Episodes,
    /// A row per PFC/802.3x pause interval
    #[value(name = "pfc_intervals")]
    PfcIntervals,
    /// A row per connection (the two flows of a QP pair)
    Connections,
    /// A row per completed NVMe-oF command
    #[value(name = "nvme_ios")]
    NvmeIos,
    /// A row per TCP conversation beside the RoCE
    #[value(name = "tcp_conversations")]
    TcpConversations,
}

#[cfg(feature = "parquet")]
impl TableArg {
    pub fn table(self) -> crate::export::Table {
        use crate::export::Table;
        match self {
            TableArg::Packets => Table::Packets,
            TableArg::Flows => Table::Flows,
            TableArg::Events => Table::Events,
            TableArg::Episodes => Table::Episodes,
            TableArg::PfcIntervals => Table::PfcIntervals,
            TableArg::Connections => Table::Connections,
            TableArg::NvmeIos => Table::NvmeIos,
            TableArg::TcpConversations => Table::TcpConversations,
        }
    }
}

#[cfg(feature = "parquet")]
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  roce-dissect export captures/*.pcap -o dataset\n  roce-dissect export big.pcapng -o dataset --tables flows,pfc_intervals\n  roce-dissect export host7.pcap -o dataset --where 'roce.analysis.retransmission'\n  duckdb -c \"SELECT capture, src, dst, retransmits FROM read_parquet('dataset/flows/**/*.parquet', hive_partitioning = true) ORDER BY retransmits DESC LIMIT 10\"\n\nThe dataset is DIR/TABLE/capture=NAME/part-0.parquet, NAME being the capture's file name; exporting a capture again replaces its partition. `roce-dissect export --schema` lists every table's columns."
)]
pub struct ExportArgs {
    /// Captures (or folders of them); each is a partition of every table
    #[arg(value_name = "CAPTURE", required_unless_present_any = ["schema", "read_file"])]
    pub captures: Vec<PathBuf>,

    #[command(flatten)]
    pub read: ReadFile,
    /// The dataset's folder (created if need be)
    #[arg(
        short = 'o',
        long = "output",
        value_name = "DIR",
        required_unless_present = "schema"
    )]
    pub output: Option<PathBuf>,
    /// Tables to write (default: all)
    #[arg(long, value_name = "TABLE,...", value_delimiter = ',')]
    pub tables: Vec<TableArg>,
    /// Only the frames this display filter matches go to the packets table (the other tables are the whole report)
    #[arg(long = "where", short = 'Y', value_name = "FILTER")]
    pub filter: Option<String>,
    /// Print every table's columns and types (Markdown) and exit
    #[arg(long)]
    pub schema: bool,
    /// Captures exported at once (default: one per core)
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: Option<u16>,
    #[command(flatten)]
    pub decode: DecodeArgs,
    #[command(flatten)]
    pub analysis: AnalysisArgs,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  roce-dissect fabric link-ab.pcapng link-bc.pcapng link-ca.pcapng --topology topo.json\n\nThe topology names each device's MACs: {\"devices\": {\"A\": [\"02:00:00:00:0a:01\"], ...}}"
)]
pub struct FabricArgs {
    /// Captures of the links (one per link, or folders of them), on one clock
    #[arg(value_name = "CAPTURE", required_unless_present = "read_file")]
    pub captures: Vec<PathBuf>,

    #[command(flatten)]
    pub read: ReadFile,
    /// JSON naming each device's MACs (without it each MAC is a device)
    #[arg(long, value_name = "FILE")]
    pub topology: Option<PathBuf>,
    /// A cycle of links paused at once for longer than this is a deadlock; pauses within it of one another spread
    #[arg(long, value_name = "DURATION", default_value = "100ms", value_parser = parse_duration)]
    pub deadlock_threshold: u64,
    /// JSON instead of text
    #[arg(long)]
    pub json: bool,
    /// Draw the pause graph in the terminal (arrows X → Y, deadlocks in red; q quits)
    #[arg(long, conflicts_with = "json")]
    pub tui: bool,
    #[command(flatten)]
    pub layout: LayoutArgs,
    #[command(flatten)]
    pub decode: DecodeArgs,
    #[command(flatten)]
    pub analysis: AnalysisArgs,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  roce-dissect plan headroom --speed 100G --cable 100m --mtu 4200\n  roce-dissect plan pfc --buffer 32MiB --ports 32 --lossless 3,4 --speed 100G\n  roce-dissect plan dcqcn --speed 100G --cnp 0us,100us,200us --params mlx5\n  roce-dissect plan dcqcn --from capture.pcap --flow 10.0.2.1,10.0.3.1,0x5001"
)]
pub struct PlanArgs {
    #[command(subcommand)]
    pub command: PlanCommand,
}

#[derive(Debug, Subcommand)]
pub enum PlanCommand {
    /// The headroom one lossless priority group needs: xoff, xon and each term of them
    Headroom(PlanHeadroomArgs),
    /// What a shared buffer leaves once every lossless group of every port has its headroom
    Pfc(PlanPfcArgs),
    /// The DCQCN rate controller stepped through CNPs: rate, target rate and alpha over time
    Dcqcn(PlanDcqcnArgs),
}

/// The port and traffic a headroom is computed for.
#[derive(Debug, Clone, Args)]
pub struct HeadroomArgs {
    /// Link speed (e.g. 100G, 25G, 400G)
    #[arg(long, value_name = "SPEED", default_value = "100G", value_parser = parse_link_speed)]
    pub speed: u64,
    /// Cable length (e.g. 100m, 5m, 2km) [default: 100m]
    #[arg(long, value_name = "LENGTH", value_parser = parse_length)]
    pub cable: Option<f64>,
    /// Largest lossless frame, bytes [default: 4200]
    #[arg(long, value_name = "BYTES")]
    pub mtu: Option<u32>,
    /// Largest frame the port may be sending, bytes [default: --mtu]
    #[arg(long, value_name = "BYTES")]
    pub port_mtu: Option<u32>,
    /// The switch's buffer cell, bytes [default: 96]
    #[arg(long, value_name = "BYTES")]
    pub cell: Option<u32>,
    /// Share of small packets, 0 to 100 (100: the worst cell use)
    #[arg(long, value_name = "PERCENT", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=100))]
    pub small_packets: u8,
    /// Gearbox (retimer) delay each way, bytes
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub gearbox: u32,
    /// Bytes in the switch's egress MAC and PHY when XOFF leaves [default: 819]
    #[arg(long, value_name = "BYTES")]
    pub mac_phy: Option<u32>,
    /// The switch's pipeline latency, the XON hysteresis, bytes [default: 18432]
    #[arg(long, value_name = "BYTES")]
    pub pipeline: Option<u32>,
}

#[derive(Debug, Args)]
pub struct PlanHeadroomArgs {
    #[command(flatten)]
    pub headroom: HeadroomArgs,
    /// JSON instead of text
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub layout: LayoutArgs,
}

#[derive(Debug, Args)]
pub struct PlanPfcArgs {
    /// The switch's shared buffer (e.g. 32MiB, 64MB, 16777216)
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub buffer: u64,
    /// Ports with lossless traffic
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub ports: u32,
    /// Lossless priorities (e.g. 3 or 3,4)
    #[arg(long, value_name = "P[,P]", value_delimiter = ',', default_value = "3", value_parser = clap::value_parser!(u8).range(0..=7))]
    pub lossless: Vec<u8>,
    #[command(flatten)]
    pub headroom: HeadroomArgs,
    /// JSON instead of text
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub layout: LayoutArgs,
}

#[derive(Debug, Args)]
pub struct PlanDcqcnArgs {
    /// Line rate (e.g. 100G) [default: 100G; with --from, the flow's payload rate in the 50 us before its first CNP]
    #[arg(long, value_name = "SPEED", value_parser = parse_link_speed)]
    pub speed: Option<u64>,
    /// When the CNPs arrive (e.g. 0us,100us,200us)
    #[arg(long, value_name = "TIMES", value_delimiter = ',', required_unless_present = "from", conflicts_with = "from", value_parser = parse_duration)]
    pub cnp: Vec<u64>,
    /// Replay the CNPs a flow's sender received in this capture, and set the expected rate against the flow's (needs --flow)
    #[arg(long, value_name = "CAPTURE", requires = "flow")]
    pub from: Option<std::path::PathBuf>,
    /// The flow of --from: SRC,DST,QP as the report names it (destination QP, decimal or 0x-hex)
    #[arg(long, value_name = "SRC,DST,QP", requires = "from", value_parser = crate::pipeline::parse_flow)]
    pub flow: Option<crate::analysis::FlowKey>,
    /// With --from: one row of the table every DURATION [default: about 60 rows]
    #[arg(long, value_name = "DURATION", requires = "from", value_parser = parse_duration)]
    pub step: Option<u64>,
    /// The reaction point's constants: mlx5 (firmware defaults) or paper (the DCQCN paper)
    #[arg(long, value_name = "SET", default_value = "mlx5")]
    pub params: String,
    /// How long to simulate [default: 3 ms past the last CNP]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<u64>,
    /// JSON instead of text
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub layout: LayoutArgs,
}

/// Parses `100m`, `2km`, `5` (metres), `0.5m`.
pub fn parse_length(s: &str) -> Result<f64, String> {
    let t = s.trim().to_ascii_lowercase();
    let (num, mult) = if let Some(n) = t.strip_suffix("km") {
        (n, 1000.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 1.0)
    } else {
        (t.as_str(), 1.0)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a length (try 100m, 3m, 2km)"))?;
    let m = v * mult;
    if !(0.0..=100_000.0).contains(&m) {
        return Err(format!("'{s}' is out of range for a cable (0 to 100 km)"));
    }
    Ok(m)
}

/// Parses `32MiB`, `32MB`, `16M` (MiB), `512KiB`, `33554432`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a size (try 32MiB, 64MB, 16777216)"))?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "kb" => 1e3,
        "m" | "mib" => 1024.0 * 1024.0,
        "mb" => 1e6,
        "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "gb" => 1e9,
        other => {
            return Err(format!(
                "unknown unit '{other}' in '{s}' (B, KiB, MiB, GiB, KB, MB, GB)"
            ));
        }
    };
    let b = v * mult;
    if !(1.0..=1e13).contains(&b) {
        return Err(format!("'{s}' is out of range for a buffer"));
    }
    Ok(b as u64)
}

#[derive(Debug, Args)]
pub struct FieldsArgs {
    /// Only the fields whose name, alias or title contains this
    #[arg(value_name = "PATTERN")]
    pub pattern: Option<String>,

    /// Tab-separated, as `tshark -G fields` prints them: F, title, name,
    /// type, protocol, base, then roce-dissect's alias and whether tshark
    /// 4.0 has the field
    #[arg(long)]
    pub tsv: bool,

    /// The names a filter may give the fields' values instead of numbers
    /// (`ip.proto == "UDP"`), as `tshark -G values` lists them (with
    /// --tsv, in its format: V, field, value, name)
    #[arg(long)]
    pub values: bool,
}

/// The command names, for suggestions when one is mistyped.
pub const COMMANDS: [&str; 9] = [
    "packets",
    "tui",
    "gen",
    "completions",
    "man",
    "fields",
    "plan",
    "fabric",
    "export",
];

#[derive(Debug, Args)]
#[command(
    after_help = "Keys: arrows/hjkl move, Enter drills in, Esc/Backspace back, Tab switches panes, / filter (a display filter, or address or QP words), s sort, p PSN chart, t PFC timeline, v verdict (the hints), a all frames, g/G top/end, ? help, q quit, Ctrl-C quits anywhere."
)]
pub struct TuiArgs {
    /// Capture file (pcap or pcapng, plain or gzip/zstd/xz; `-` reads
    /// standard input); several, or a folder, with --merge
    #[arg(value_name = "CAPTURE", required_unless_present = "read_file")]
    pub captures: Vec<PathBuf>,

    #[command(flatten)]
    pub read: ReadFile,

    /// Browse several captures as one, frames in timestamp order
    #[arg(long)]
    pub merge: bool,

    /// Start with this display filter applied, as if typed after `/`
    /// (Wireshark's language: `roce.analysis.flags`, `ip.proto == "UDP"`)
    #[arg(short = 'Y', long = "display-filter", value_name = "FILTER")]
    pub display_filter: Option<String>,

    #[command(flatten)]
    pub decode: DecodeArgs,

    #[command(flatten)]
    pub analysis: AnalysisArgs,
}

#[derive(Debug, Args)]
pub struct PacketsArgs {
    /// Capture file (pcap or pcapng, plain or gzip/zstd/xz; `-` reads
    /// standard input, to its end or a first Ctrl-C); several, or a folder,
    /// with --merge
    #[arg(value_name = "CAPTURE", required_unless_present = "read_file")]
    pub captures: Vec<PathBuf>,

    #[command(flatten)]
    pub read: ReadFile,

    /// Show several captures as one, frames in timestamp order (like
    /// mergecap)
    #[arg(long)]
    pub merge: bool,

    /// Print the full header tree of every frame
    #[arg(short = 'V', long)]
    pub verbose: bool,

    /// Add a hex dump of every frame
    #[arg(short = 'x', long)]
    pub hex: bool,

    /// Show addresses as numbers: always so (no name is ever looked up);
    /// accepted as tshark's -n, so `packets -n -r FILE` works
    #[arg(short = 'n')]
    pub numeric: bool,

    /// JSON Lines: one object per frame, every frame, in capture order
    #[arg(long, conflicts_with_all = ["verbose", "hex"])]
    pub json: bool,

    /// Display filter in Wireshark's language (`bth.opcode == 0x81`,
    /// `roce.analysis.retransmission && ip.dst == 10.0.0.0/8`): show only
    /// the frames it matches; the analysis still sees every frame
    #[arg(short = 'Y', long = "display-filter", value_name = "FILTER")]
    pub filter: Option<String>,

    /// Output format: text (the default), fields (the -e fields, as tshark
    /// -T fields prints them) or json (JSON Lines, as --json)
    #[arg(short = 'T', value_enum, value_name = "FORMAT")]
    pub format: Option<PacketsFormat>,

    /// A field for -T fields, by Wireshark's name or its short alias
    /// (repeat it; `roce-dissect fields` lists them)
    #[arg(short = 'e', value_name = "FIELD")]
    pub fields: Vec<String>,

    /// -T fields options, as tshark's: header=y|n, separator=/t|/s|C,
    /// occurrence=f|l|a, aggregator=,|/s|C, quote=d|s|n
    #[arg(short = 'E', value_name = "OPTION=VALUE")]
    pub field_options: Vec<String>,

    /// Stop after this many frames
    #[arg(short = 'c', long, value_name = "N")]
    pub count: Option<u64>,

    /// Write each frame's lines out as soon as it is read, as tshark's -l
    /// does (slower). Without it, lines are written in large pieces, and
    /// whenever a stream (`-`, a pipe) has nothing more for now
    #[arg(short = 'l', long = "line-buffered")]
    pub line_buffered: bool,

    /// Show only RoCE frames (and PFC/PAUSE frames)
    #[arg(long)]
    pub roce_only: bool,

    /// Show only the frames of one flow: SRC,DST,QP as the report names it
    #[arg(long, value_name = "SRC,DST,QP", value_parser = crate::pipeline::parse_flow)]
    pub flow: Option<crate::analysis::FlowKey>,

    /// Write the frames selected (all, or those -Y, --flow, --roce-only and
    /// -c leave) to FILE as a capture, as tshark's -w: pcapng, or pcap for
    /// a name ending in .pcap (-F chooses); .gz, .zst or .xz at the end
    /// compresses it; `-` writes it to standard output. Prints no lines
    /// unless -P
    #[arg(short = 'w', long = "write", value_name = "FILE")]
    pub write: Option<PathBuf>,

    /// The container -w writes (default: from FILE's name, else pcapng)
    #[arg(short = 'F', value_enum, value_name = "FORMAT", requires = "write")]
    pub write_format: Option<WriteFormat>,

    /// With -w, print the frames' lines (or -V, -T fields, JSON) as well,
    /// as tshark's -P
    #[arg(short = 'P', long = "print", requires = "write")]
    pub print: bool,

    /// Threads for reading and formatting (default: one per core, or
    /// ROCE_DISSECT_THREADS; 1 does everything on one thread). Frames are
    /// written in capture order whatever the number.
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,

    #[command(flatten)]
    pub decode: DecodeArgs,

    #[command(flatten)]
    pub analysis: AnalysisArgs,
}

/// What `packets -T` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PacketsFormat {
    /// One summary line per frame (with -V and -x as asked)
    Text,
    /// The -e fields, one line per frame
    Fields,
    /// JSON Lines, as --json
    Json,
}

/// The container `packets -w` writes. Timestamps keep the capture's
/// resolution (microseconds or nanoseconds) unless a format says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WriteFormat {
    /// pcapng: every link type and interface speed kept
    Pcapng,
    /// Classic pcap (one link type), in microseconds, or nanoseconds when the capture has them
    Pcap,
    /// Classic pcap in nanoseconds
    #[value(alias = "nsecpcap")]
    NsPcap,
}

/// The container `gen` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Classic pcap, microsecond timestamps
    Pcap,
    /// Classic pcap, nanosecond timestamps
    NsPcap,
    /// pcapng
    Pcapng,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  roce-dissect gen --scenario loss --seed 7 -o loss.pcapng --truth loss.truth.json"
)]
pub struct GenArgs {
    /// Scenario to generate
    #[arg(long, value_name = "NAME", value_enum)]
    pub scenario: crate::synth::scenario::Scenario,

    /// Seed: the same seed and options give the same bytes
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Output capture (.pcap, .ns.pcap or .pcapng picks the format; `-`
    /// writes pcapng to standard output)
    #[arg(short = 'o', long, value_name = "OUT")]
    pub output: PathBuf,

    /// Write the report facts the capture must produce (JSON) here
    #[arg(long, value_name = "FILE")]
    pub truth: Option<PathBuf>,

    /// Container format, overriding the file extension
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,

    /// Queue pairs (connections), at most 2^24; for nvme, the I/O queues (at most 64) beside the admin queue
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1 << 24))]
    pub qps: u32,

    /// Messages per queue pair
    #[arg(long, default_value_t = 50)]
    pub messages: u32,

    /// Message size in bytes
    #[arg(long, default_value_t = 8192)]
    pub size: u32,

    /// Path MTU in bytes: 256, 512, 1024, 2048 or 4096
    #[arg(long, default_value_t = 4096, value_parser = parse_pmtu)]
    pub pmtu: u32,

    /// Probability that a request packet is dropped (loss, mixed)
    #[arg(long, default_value_t = 0.01)]
    pub loss: f64,

    /// Where the capture sits relative to the drops
    #[arg(long, default_value = "sender", value_enum)]
    pub loss_side: crate::synth::scenario::LossSide,

    /// Probability that a packet is swapped with the next (reorder, mixed)
    #[arg(long, default_value_t = 0.01)]
    pub reorder: f64,

    /// Probability that a request packet is CE-marked (incast, mixed)
    #[arg(long, default_value_t = 0.05)]
    pub ecn: f64,

    /// Stop starting messages after this much simulated time (e.g. 50ms)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<u64>,

    /// The responder's ACK and NAK delay (the round trip a capture beside
    /// it sees): one duration, or several drawn from at random per answer
    /// (e.g. 2us or 1us,5us,50us)
    #[arg(long, value_name = "DURATION[,...]", value_delimiter = ',', default_value = "2us", value_parser = parse_duration)]
    pub rtt: Vec<u64>,

    /// ACK every N request packets of a message, and at its end (coalesced
    /// ACKs) [default: one ACK per message]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub ack_every: Option<u32>,

    /// A READ request to its first response (the responder's think time)
    #[arg(long, value_name = "DURATION", default_value = "2us", value_parser = parse_duration)]
    pub read_delay: u64,

    /// Link speed the frames are paced at and pause quanta last
    #[arg(long, value_name = "SPEED", default_value = "100G", value_parser = parse_link_speed)]
    pub link_speed: u64,

    /// Refuse (or stop) past this many frames
    #[arg(long, value_name = "N", default_value_t = super::gen_cmd::DEFAULT_MAX_FRAMES)]
    pub max_frames: u64,

    /// The link the capture is taken on: RoCE over Ethernet, or the same
    /// traffic on native InfiniBand (LIDs from the addresses, FECN for CE,
    /// no PFC frames)
    #[arg(long, value_enum, default_value = "ethernet")]
    pub link: GenLink,

    /// With --link infiniband or erf: a GRH in every packet (flows keyed
    /// by GIDs instead of LIDs)
    #[arg(long)]
    pub grh: bool,
}

/// The link a generated capture is taken on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GenLink {
    /// RoCE v1/v2 over Ethernet (link type 1)
    Ethernet,
    /// Native InfiniBand packets, LRH first (link type 247, DLT_INFINIBAND)
    Infiniband,
    /// Native InfiniBand in ERF records, as ibdump writes them (link type 197)
    Erf,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write completions for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// A command's own page (`packets`, `tui`, `gen`, ...) instead of the main one
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
}

/// The path MTUs InfiniBand and RoCE define.
pub const PMTUS: [u32; 5] = [256, 512, 1024, 2048, 4096];

/// Parses a path MTU: one of [`PMTUS`].
pub fn parse_pmtu(s: &str) -> Result<u32, String> {
    s.trim()
        .parse::<u32>()
        .ok()
        .filter(|m| PMTUS.contains(m))
        .ok_or_else(|| format!("'{s}' is not a path MTU: 256, 512, 1024, 2048 or 4096"))
}

/// Parses `2us`, `100ms`, `1.5s`, `500ns`, `0`. A number needs its unit
/// (only `0` stands alone): a bare `50` is more likely meant as 50 ms or
/// 50 µs than as 50 ns.
/// A throughput bin: a duration above zero.
fn parse_bin(s: &str) -> Result<u64, String> {
    match parse_duration(s)? {
        0 => Err("a bin must be longer than 0".into()),
        n => Ok(n),
    }
}

/// A DCQCN window: 1 µs to 10 ms.
fn parse_cc_window(s: &str) -> Result<u64, String> {
    match parse_duration(s)? {
        n @ 1_000..=10_000_000 => Ok(n),
        _ => Err(format!("'{s}': a window from 1us to 10ms")),
    }
}

pub fn parse_duration(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a duration (try 2us, 100ms, 1s)"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("'{s}' is not a duration (try 2us, 100ms, 1s)"));
    }
    let mult = match unit.trim() {
        "" if v == 0.0 => 1.0,
        "" => {
            return Err(format!("'{s}' needs a unit: {s}ns, {s}us, {s}ms or {s}s"));
        }
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        other => return Err(format!("unknown unit '{other}' in '{s}' (ns, us, ms, s)")),
    };
    let ns = (v * mult).round();
    if ns > u64::MAX as f64 {
        return Err(format!("'{s}' is too long a duration"));
    }
    Ok(ns as u64)
}

/// Parses `100G`, `25g`, `400Gb`, `10000000000`.
pub fn parse_link_speed(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let t = t
        .trim_end_matches("bps")
        .trim_end_matches("b/s")
        .trim_end_matches('b');
    let (num, mult) = if let Some(n) = t.strip_suffix('g') {
        (n, 1_000_000_000u64)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 1_000_000)
    } else if let Some(n) = t.strip_suffix('t') {
        (n, 1_000_000_000_000)
    } else {
        (t, 1)
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a link speed (try 100G, 25G or bits/s)"))?;
    let bps = v * mult as f64;
    if !(1.0..=1e15).contains(&bps) {
        return Err(format!("'{s}' is out of range for a link speed"));
    }
    Ok(bps as u64)
}

/// The command a mistyped word most likely meant (`packet` → `packets`).
pub fn suggest_command(word: &str) -> Option<&'static str> {
    if word.is_empty() || word.contains(['/', '.']) {
        return None;
    }
    // Edits away: one for a short word, two for a longer one; a swap of
    // neighbours counts as one.
    let allowed = if word.chars().count() <= 4 { 1 } else { 2 };
    COMMANDS
        .into_iter()
        .map(|c| (strsim::osa_distance(word, c), c))
        .filter(|(d, _)| *d <= allowed)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2us"), Ok(2_000));
        assert_eq!(parse_duration("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_duration("0"), Ok(0));
        assert!(parse_duration("50").unwrap_err().contains("needs a unit"));
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("1e30s").is_err());
    }

    #[test]
    fn mistyped_commands() {
        assert_eq!(suggest_command("packet"), Some("packets"));
        assert_eq!(suggest_command("pakcets"), Some("packets"));
        assert_eq!(suggest_command("tiu"), Some("tui"));
        assert_eq!(suggest_command("completion"), Some("completions"));
        assert_eq!(suggest_command("capture.pcap"), None);
        assert_eq!(suggest_command("loss"), None);
        assert_eq!(suggest_command("gem"), Some("gen"));
        assert_eq!(suggest_command("x"), None);
    }

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        let names: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        assert_eq!(names, COMMANDS);
    }
}
