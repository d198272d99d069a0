//! Replaying a trace against the emulator.

use crate::format::Trace;
use mempool_emu::{Emulator, ExecutionMode, ReuseCounts};
/// The reuse flags a replay sets (the hal's type; `--flags` takes its names).
pub use mempool_hal::ReuseFlags;
use mempool_hal::{Device, MemPoolExt, PoolProps, attr};
use mempool_small::{SmallBlocks, SmallStats};
pub use run::TIMED_ONE_IN;
use std::fmt;
use std::time::Duration;

mod run;

/// How to replay a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayOptions {
    /// The pool's size and the emulated device's memory, in bytes (default 16 GiB).
    pub pool_size: u64,
    /// The allocation granularity in bytes (default 2 MiB).
    pub granularity: u64,
    /// The release threshold in bytes; `None` means the pool size (keep everything cached).
    pub threshold: Option<u64>,
    /// The reuse flags (default: none, the pool's default).
    pub flags: ReuseFlags,
    /// Run streams on worker threads (`true`) or deferred until synchronization (`false`,
    /// the default: the replay is then deterministic).
    pub threaded: bool,
    /// Replay through a small-block layer ([`mempool_small::SmallBlocks`]) with this
    /// threshold: requests of at most this many bytes are carved from pool blocks, larger
    /// ones go to the pool. `None` (the default): straight to the pool.
    pub small_blocks: Option<u64>,
}

/// How the replay harness runs, besides the pool's settings ([`ReplayOptions`]).
///
/// The default measures the pool: no per-row statistics, the emulator's pool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Harness {
    /// Read the pool's statistics after every row into [`Report::samples`] (what a plot
    /// needs; it costs a statistics read per row). Without them `samples` is empty; the
    /// peaks do not depend on it (they are the pool's high-water marks at the end).
    pub samples: bool,
    /// Replay against a null pool instead of the emulator: allocations are the next
    /// address of a bump pointer, frees and stream and event operations do nothing, and
    /// USED and RESERVED stay 0. The report's times are then the harness's own cost, its
    /// ceiling in operations per second; the options are recorded but not used.
    pub null_pool: bool,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            pool_size: 16 << 30,
            granularity: 2 << 20,
            threshold: None,
            flags: ReuseFlags::default(),
            threaded: false,
            small_blocks: None,
        }
    }
}

/// USED, RESERVED and the live requested bytes after one operation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sample {
    /// Bytes of live allocations (rounded).
    pub used: u64,
    /// Bytes the pool holds.
    pub reserved: u64,
    /// Bytes of live allocations as the trace requested them (before rounding).
    pub requested: u64,
}

/// Time spent in one kind of operation: a **sampled estimate**.
///
/// The replay times a kind's first call and about one call in [`TIMED_ONE_IN`] after it
/// (spread evenly over the trace), not every call: two clock reads per row would cost
/// more than many of the calls. `total` weighs each timed call by the inverse of its
/// chance to be timed, which makes it an unbiased estimate of the time in all `count`
/// calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpTime {
    /// The Action column's text.
    pub action: &'static str,
    /// How many were replayed.
    pub count: u64,
    /// How many of them were timed (the sample the estimate rests on).
    pub timed: u64,
    /// Estimated total time in them.
    pub total: Duration,
}

impl OpTime {
    /// Estimated mean nanoseconds per operation.
    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 { 0.0 } else { self.total.as_nanos() as f64 / self.count as f64 }
    }
}

/// What a replay measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The options it ran with (threshold filled in).
    pub options: ReplayOptions,
    /// Rows replayed.
    pub ops: usize,
    /// `allocate failure` rows, skipped (the replay does not retry them).
    pub skipped_failures: u64,
    /// Peak of the live requested bytes (the trace's sizes, before rounding): what the
    /// program needed at its peak.
    pub requested_high: u64,
    /// Peak USED (`UsedMemHigh`): live allocations rounded to the granularity.
    pub used_high: u64,
    /// Peak RESERVED (`ReservedMemHigh`).
    pub reserved_high: u64,
    /// The small-block layer's own statistics at the end, when the replay went through one.
    pub small: Option<SmallStats>,
    /// RESERVED at the end.
    pub reserved_end: u64,
    /// How many allocations each reuse rule served.
    pub reuse: ReuseCounts,
    /// USED, RESERVED and the live requested bytes after each row, when the replay was
    /// asked for them ([`replay`] is, [`replay_with`] when [`Harness::samples`] is set);
    /// empty otherwise.
    pub samples: Vec<Sample>,
    /// Time per kind of operation (sampled estimates), in the order of
    /// [`Op::action`](crate::Op::action)s first seen.
    pub times: Vec<OpTime>,
    /// The replay loop's time, read once at each end: every row's call and the harness's
    /// own work per row (the sampled timing, and the statistics read per row when
    /// [`samples`](Report::samples) are kept). Not in it: creating streams and events,
    /// setting up the emulator and the pool, and resolving the trace's ids.
    pub total: Duration,
}

impl Report {
    /// `RESERVED_HIGH / USED_HIGH` (1 when nothing was allocated).
    pub fn ratio(&self) -> f64 {
        if self.used_high == 0 { 1.0 } else { self.reserved_high as f64 / self.used_high as f64 }
    }

    /// `RESERVED_HIGH / peak requested`: what the pool held at its peak against what the
    /// program needed at its peak (1 when nothing was requested).
    pub fn reserved_over_requested(&self) -> f64 {
        if self.requested_high == 0 { 1.0 } else { self.reserved_high as f64 / self.requested_high as f64 }
    }

    /// `USED_HIGH / peak requested`: the cost of rounding alone (1 when nothing was
    /// requested).
    pub fn used_over_requested(&self) -> f64 {
        if self.requested_high == 0 { 1.0 } else { self.used_high as f64 / self.requested_high as f64 }
    }

    /// Fragmentation: `1 - USED_HIGH / RESERVED_HIGH`, the share of the peak reservation
    /// that was never needed by live allocations at their peak (0 = none lost).
    pub fn fragmentation(&self) -> f64 {
        if self.reserved_high == 0 { 0.0 } else { 1.0 - self.used_high as f64 / self.reserved_high as f64 }
    }

    /// Replayed operations per second of the replay loop ([`total`](Report::total)).
    pub fn ops_per_sec(&self) -> f64 {
        let s = self.total.as_secs_f64();
        if s == 0.0 { 0.0 } else { self.ops as f64 / s }
    }
}

/// A replay that could not go on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayError {
    /// The trace line of the failing row, if a row failed.
    pub line: Option<usize>,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "line {l}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ReplayError {}

fn setup_error(e: mempool_hal::Error) -> ReplayError {
    ReplayError { line: None, message: format!("setting up the emulator: {e}") }
}

/// Replays `trace` on a fresh emulator and pool set up by `options`, calling
/// `progress(rows_done)` every 1024 rows and at the end, and keeps USED, RESERVED and the
/// live requested bytes after every row in [`Report::samples`]: [`replay_with`] with
/// [`Harness::samples`] set.
///
/// Trace pointers are mapped to the pointers the replay hands out; streams and events are
/// created on first mention of their ids. `allocate failure` rows are skipped. Rows are
/// replayed in file order from one host thread (the Thread and Time columns are not used),
/// so a trace recorded from several threads replays the interleaving the pool saw.
///
/// # Errors
///
/// Bad options; a row the emulator refuses (an allocation that does not fit, a free of a
/// pointer never allocated) names its line.
///
/// # Example
///
/// ```
/// use mempool_trace::{ReplayOptions, generate, replay};
///
/// let trace = generate::pipeline(1);
/// let report = replay(&trace, &ReplayOptions::default(), |_| {})?;
/// assert!(report.used_high > 0 && report.reserved_high >= report.used_high);
/// assert_eq!(report.samples.len(), trace.rows.len());
/// # Ok::<(), mempool_trace::ReplayError>(())
/// ```
pub fn replay(trace: &Trace, options: &ReplayOptions, progress: impl FnMut(usize)) -> Result<Report, ReplayError> {
    replay_with(trace, options, &Harness { samples: true, ..Harness::default() }, progress)
}

/// [`replay`], with the harness set by `harness`: without [`Harness::samples`] the replay
/// reads no statistics per row (the figures are the same, `samples` is empty); with
/// [`Harness::null_pool`] it runs against a pool that does nothing, which measures the
/// harness itself.
///
/// Before the loop, the trace's stream, event and pointer ids are resolved to dense indices
/// (one pass with Fx hash maps, which also sums the live requested bytes), so the loop
/// hashes nothing. To replay one trace several times, resolve it once with
/// [`Prepared::new`] and replay that ([`replay_prepared`]).
///
/// # Errors
///
/// As [`replay`].
///
/// # Example
///
/// ```
/// use mempool_trace::replay::{Harness, ReplayOptions, replay, replay_with};
/// use mempool_trace::generate;
///
/// let trace = generate::training(1);
/// let options = ReplayOptions::default();
/// let fast = replay_with(&trace, &options, &Harness::default(), |_| {})?;
/// let plotted = replay(&trace, &options, |_| {})?;
/// assert!(fast.samples.is_empty());
/// assert_eq!((fast.used_high, fast.reserved_high), (plotted.used_high, plotted.reserved_high));
/// let null = replay_with(&trace, &options, &Harness { null_pool: true, ..Harness::default() }, |_| {})?;
/// assert_eq!((null.ops, null.reserved_high), (trace.rows.len(), 0));
/// # Ok::<(), mempool_trace::ReplayError>(())
/// ```
pub fn replay_with(
    trace: &Trace,
    options: &ReplayOptions,
    harness: &Harness,
    progress: impl FnMut(usize),
) -> Result<Report, ReplayError> {
    replay_prepared(&Prepared::new(trace), options, harness, progress)
}

/// A trace resolved for replay, once: its stream, event and pointer ids as dense indices
/// and the peak of its live requested bytes (what [`replay_with`] computes before each
/// replay). It borrows the trace, which cannot change while it lives.
///
/// ```
/// use mempool_trace::replay::{Harness, Prepared, ReplayOptions, replay_prepared, replay_with};
/// use mempool_trace::generate;
///
/// let trace = generate::training(1);
/// let prepared = Prepared::new(&trace);
/// let options = ReplayOptions::default();
/// let a = replay_prepared(&prepared, &options, &Harness::default(), |_| {})?;
/// let b = replay_with(&trace, &options, &Harness::default(), |_| {})?;
/// assert_eq!((a.used_high, a.reserved_high, a.reuse), (b.used_high, b.reserved_high, b.reuse));
/// # Ok::<(), mempool_trace::ReplayError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Prepared<'a> {
    trace: &'a Trace,
    resolved: crate::resolve::Resolved,
}

impl<'a> Prepared<'a> {
    /// Resolves `trace` (one pass over its rows).
    pub fn new(trace: &'a Trace) -> Prepared<'a> {
        Prepared { trace, resolved: crate::resolve::resolve(trace, false) }
    }

    /// The trace.
    pub fn trace(&self) -> &'a Trace {
        self.trace
    }
}

/// [`replay_with`] of a trace resolved beforehand: the same replay and report, without
/// the pass that resolves the trace (with [`Harness::samples`], the live requested bytes
/// per row are still computed, in one more pass).
///
/// # Errors
///
/// As [`replay`].
pub fn replay_prepared(
    prepared: &Prepared<'_>,
    options: &ReplayOptions,
    harness: &Harness,
    mut progress: impl FnMut(usize),
) -> Result<Report, ReplayError> {
    let trace = prepared.trace;
    let mut options = *options;
    let threshold = options.threshold.unwrap_or(options.pool_size);
    options.threshold = Some(threshold);
    let per_row;
    let resolved = if harness.samples {
        per_row = crate::resolve::resolve(trace, true);
        &per_row
    } else {
        &prepared.resolved
    };
    let report = |o: run::Outcome| Report {
        options,
        ops: trace.rows.len(),
        skipped_failures: o.skipped_failures,
        requested_high: resolved.requested_high,
        used_high: 0,
        reserved_high: 0,
        small: None,
        reserved_end: 0,
        reuse: ReuseCounts::default(),
        samples: o.samples,
        times: o.times,
        total: o.total,
    };
    if harness.null_pool {
        return run::run(&run::Null::new(), trace, resolved, harness.samples, &mut progress).map(report);
    }
    let mode = if options.threaded { ExecutionMode::Threaded } else { ExecutionMode::Deferred };
    let emu = Emulator::builder()
        .device_memory(options.pool_size)
        .granularity(options.granularity)
        .mode(mode)
        .checker(false)
        .build()
        .map_err(setup_error)?;
    let pool = emu.create_pool(&PoolProps::builder().max_size(options.pool_size).build()).map_err(setup_error)?;
    (|| {
        pool.set(attr::ReleaseThreshold, threshold)?;
        options.flags.apply(&pool)
    })()
    .map_err(setup_error)?;
    let mut finish = |small: Option<&SmallBlocks<'_, Emulator>>| -> Result<Report, ReplayError> {
        let target = run::Emu { emu: &emu, pool: &pool, small };
        let outcome = run::run(&target, trace, resolved, harness.samples, &mut progress)?;
        let st = pool.stats().map_err(setup_error)?;
        Ok(Report {
            used_high: st.used_high,
            reserved_high: st.reserved_high,
            small: small.map(SmallBlocks::small_stats),
            reserved_end: st.reserved_current,
            reuse: pool.reuse_counts(),
            ..report(outcome)
        })
    };
    let r = match options.small_blocks {
        Some(t) => {
            let layer = SmallBlocks::new(&emu, &pool, t).map_err(setup_error)?;
            finish(Some(&layer))
        }
        None => finish(None),
    };
    let _ = emu.synchronize_device();
    let _ = emu.destroy_pool(&pool);
    r
}
