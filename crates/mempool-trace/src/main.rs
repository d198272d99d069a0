//! `mempool-trace`: replay pool traces against the emulator, compare settings, convert
//! PyTorch memory snapshots and RMM logs to traces and traces to snapshots, and regenerate
//! the bundled traces.

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mempool_emu::parse_bytes;
use mempool_trace::snapshot::Snapshot;
use mempool_trace::{Harness, ReplayOptions, Report, ReuseFlags, Trace, generate, replay_with, svg, table};
use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "mempool-trace",
    version,
    about = "Replay stream-ordered memory pool traces against the emulator; convert PyTorch memory \
             snapshots and RMM logs to traces, and traces to snapshots"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Debug, Clone)]
struct Settings {
    /// Allocation granularity in bytes (suffixes K, M, G: binary).
    #[arg(long, value_parser = parse_bytes, default_value = "2M")]
    granularity: u64,
    /// Pool size (and emulated device memory) in bytes.
    #[arg(long, value_parser = parse_bytes, default_value = "16G")]
    pool_size: u64,
    /// Reuse flags, comma-separated: follow, opportunistic, internal (or none).
    #[arg(long, value_parser = str::parse::<ReuseFlags>, default_value = "none")]
    flags: ReuseFlags,
    /// Run streams on worker threads instead of deferring work to synchronization
    /// (reuse then depends on timing).
    #[arg(long)]
    threaded: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Replays a trace and prints a statistics table.
    Replay {
        /// The trace (CSV).
        trace: PathBuf,
        /// Release threshold in bytes (default: the pool size, keep everything cached).
        #[arg(long, value_parser = parse_bytes)]
        threshold: Option<u64>,
        #[command(flatten)]
        settings: Settings,
        /// Replays through a small-block layer: requests of at most this many bytes
        /// (inclusive) are carved from pool blocks at 512-byte alignment, larger ones go to
        /// the pool as they are (0: every request goes to the pool through the layer).
        #[arg(long, value_parser = parse_bytes)]
        small_blocks: Option<u64>,
        /// Writes a plot of USED, RESERVED and the live requested bytes over the replay here.
        #[arg(long)]
        svg: Option<PathBuf>,
    },
    /// Replays a trace once per combination of the settings given (each of
    /// `--threshold`, `--granularity` and `--flags` may be repeated) and prints the
    /// results side by side.
    Compare {
        /// The trace (CSV).
        trace: PathBuf,
        /// A release threshold in bytes (default: the pool size).
        #[arg(long, value_parser = parse_bytes)]
        threshold: Vec<u64>,
        /// An allocation granularity in bytes (default: 2M).
        #[arg(long, value_parser = parse_bytes)]
        granularity: Vec<u64>,
        /// Reuse flags, comma-separated: follow, opportunistic, internal (or none; default).
        #[arg(long, value_parser = str::parse::<ReuseFlags>)]
        flags: Vec<ReuseFlags>,
        /// Replays through a small-block layer with this threshold (the largest request,
        /// inclusive, carved from pool blocks; see `replay --help`). Each value makes a
        /// column, beside one straight to the pool; `off` makes no column of its own.
        #[arg(long, value_parser = parse_small)]
        small_blocks: Vec<Option<u64>>,
        /// Pool size (and emulated device memory) in bytes.
        #[arg(long, value_parser = parse_bytes, default_value = "16G")]
        pool_size: u64,
        /// Run streams on worker threads instead of deferring work to synchronization.
        #[arg(long)]
        threaded: bool,
    },
    /// Converts a PyTorch memory snapshot (`torch.cuda.memory._dump_snapshot` pickle,
    /// plain or gzipped) or an RMM log (wall-clock times) into this tool's CSV.
    Import {
        /// The snapshot or log (the format is told from the content).
        input: PathBuf,
        /// Where to write the CSV (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// For a snapshot: the device whose events to convert (default: the only one
        /// with events).
        #[arg(long)]
        device: Option<usize>,
    },
    /// Converts a trace into a PyTorch memory snapshot (the pickle
    /// `torch.cuda.memory._dump_snapshot` writes).
    ///
    /// For PyTorch's viewer (https://pytorch.org/memory_viz): on device 0, each allocation
    /// is an `alloc` event in a segment of its own, each free `free_requested` then
    /// `free_completed`, each allocation failure an `oom`, with the trace's stream ids and
    /// times in microseconds; the segments hold the allocations live at the end. `import`
    /// reads it back. An output that cannot be written is an error (exit code 1).
    Export {
        /// The trace (CSV).
        trace: PathBuf,
        /// Where to write the snapshot.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Writes the bundled traces into a folder.
    Generate {
        /// The folder (created if missing).
        out: PathBuf,
    },
}

/// A byte count that names a column: [`table::bytes`] when that is exact, else the bytes.
fn exact_bytes(b: u64) -> String {
    let shown = table::bytes(b);
    if shown.contains('.') { format!("{b} B") } else { shown }
}

/// `values` without repeats, in their first order.
fn distinct<T: PartialEq>(values: Vec<T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(values.len());
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

fn load(path: &Path) -> Result<Trace, String> {
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let bytes = std::fs::read(path).map_err(|e| at(&e))?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        let line = 1 + bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count();
        at(&format!("line {line}: not UTF-8 text"))
    })?;
    let trace = mempool_trace::parse(text).map_err(|e| at(&e))?;
    if trace.rows.is_empty() {
        return Err(at(&"no operations (an empty trace, or a header alone)"));
    }
    Ok(trace)
}

/// Replays `trace`; with `samples`, the report keeps USED, RESERVED and the requested bytes
/// after every row (for a plot).
fn run_one(path: &Path, trace: &Trace, options: &ReplayOptions, samples: bool) -> Result<Report, String> {
    let bar = ProgressBar::new(trace.rows.len() as u64);
    if std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} ops ({eta})") {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(path.display().to_string());
    } else {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    let harness = Harness { samples, ..Harness::default() };
    let r = replay_with(trace, options, &harness, |done| bar.set_position(done as u64));
    bar.finish_and_clear();
    r.map_err(|e| format!("{}: {e}", path.display()))
}

fn options(s: &Settings, threshold: Option<u64>, small_blocks: Option<u64>) -> ReplayOptions {
    ReplayOptions {
        pool_size: s.pool_size,
        granularity: s.granularity,
        threshold,
        flags: s.flags,
        threaded: s.threaded,
        small_blocks,
    }
}

/// A `--small-blocks` value of `compare`: bytes, or `off` for the pool alone.
fn parse_small(s: &str) -> Result<Option<u64>, String> {
    if s == "off" { Ok(None) } else { parse_bytes(s).map(Some) }
}

fn main_inner(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Replay { trace: path, threshold, settings, small_blocks, svg: out } => {
            let trace = load(&path)?;
            let report = run_one(&path, &trace, &options(&settings, threshold, small_blocks), out.is_some())?;
            let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into());
            print!("{}", table::render(std::slice::from_ref(&name), std::slice::from_ref(&report)));
            if let Some(out) = out {
                let title = format!("{name}: USED, RESERVED and requested (MiB)");
                std::fs::write(&out, svg::plot(&title, &report.samples))
                    .map_err(|e| format!("{}: {e}", out.display()))?;
                println!("plot written to {}", out.display());
            }
        }
        Command::Compare { trace: path, threshold, granularity, flags, small_blocks, pool_size, threaded } => {
            let trace = load(&path)?;
            // A value given twice makes one column.
            let thresholds: Vec<Option<u64>> =
                if threshold.is_empty() { vec![None] } else { distinct(threshold).into_iter().map(Some).collect() };
            let granularities = if granularity.is_empty() { vec![2 << 20] } else { distinct(granularity) };
            let flag_sets = if flags.is_empty() { vec![ReuseFlags::default()] } else { distinct(flags) };
            // The pool alone first, then one column per threshold of the layer.
            let smalls = if small_blocks.is_empty() {
                vec![None]
            } else {
                distinct(std::iter::once(None).chain(small_blocks).collect())
            };
            let mut names = Vec::new();
            let mut reports = Vec::new();
            for &g in &granularities {
                for &f in &flag_sets {
                    for &t in &thresholds {
                        for &sb in &smalls {
                            let settings = Settings { granularity: g, pool_size, flags: f, threaded };
                            reports.push(run_one(&path, &trace, &options(&settings, t, sb), false)?);
                            // A column is named by the settings that vary.
                            let mut name = Vec::new();
                            if granularities.len() > 1 {
                                name.push(format!("granularity {}", exact_bytes(g)));
                            }
                            if flag_sets.len() > 1 {
                                name.push(format!("flags {f}"));
                            }
                            if thresholds.len() > 1 || (name.is_empty() && smalls.len() == 1) {
                                name.push(format!("threshold {}", exact_bytes(t.unwrap_or(pool_size))));
                            }
                            if smalls.len() > 1 {
                                name.push(match sb {
                                    Some(b) => format!("small blocks {}", exact_bytes(b)),
                                    None => "pool alone".into(),
                                });
                            }
                            names.push(name.join(", "));
                        }
                    }
                }
            }
            println!("{}", path.display());
            print!("{}", table::render(&names, &reports));
        }
        Command::Import { input, output, device } => {
            let bytes = std::fs::read(&input).map_err(|e| format!("{}: {e}", input.display()))?;
            let imported = mempool_trace::import::import(&bytes, &mempool_trace::import::ImportOptions { device })
                .map_err(|e| format!("{}: {e}", input.display()))?;
            let csv = imported.trace.to_csv();
            eprintln!("{}: {}", input.display(), imported.format);
            for note in &imported.notes {
                eprintln!("  {note}");
            }
            match output {
                Some(out) => {
                    std::fs::write(&out, csv).map_err(|e| format!("{}: {e}", out.display()))?;
                    eprintln!("wrote {} ({} rows)", out.display(), imported.trace.rows.len());
                }
                None => {
                    use std::io::Write as _;
                    std::io::stdout().lock().write_all(csv.as_bytes()).map_err(|e| format!("standard output: {e}"))?;
                }
            }
        }
        Command::Export { trace: path, output } => {
            let trace = load(&path)?;
            let snapshot = Snapshot::from_trace(&trace);
            snapshot.write_file(&output)?;
            eprintln!(
                "wrote {} ({} events, {} allocations live at the end)",
                output.display(),
                snapshot.device_traces.iter().map(Vec::len).sum::<usize>(),
                snapshot.segments.len()
            );
        }
        Command::Generate { out } => {
            std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
            for (name, trace) in generate::bundled() {
                let p = out.join(name);
                std::fs::write(&p, trace.to_csv()).map_err(|e| format!("{}: {e}", p.display()))?;
                println!("wrote {} ({} rows)", p.display(), trace.rows.len());
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match main_inner(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mempool-trace: {e}");
            ExitCode::FAILURE
        }
    }
}
