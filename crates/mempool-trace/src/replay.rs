//! Replaying a trace against the emulator.

use crate::format::{Op, Trace};
use mempool_emu::{EmuEvent, EmuPool, EmuStream, Emulator, ExecutionMode, ReuseCounts};
/// The reuse flags a replay sets (the hal's type; `--flags` takes its names).
pub use mempool_hal::ReuseFlags;
use mempool_hal::{Device, DevicePtr, MemPool, MemPoolExt, PoolProps, attr};
use mempool_small::{SmallBlocks, SmallStats};
use std::collections::HashMap;
use std::fmt;
use std::time::{Duration, Instant};

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

/// Time spent in one kind of operation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpTime {
    /// The Action column's text.
    pub action: &'static str,
    /// How many were replayed.
    pub count: u64,
    /// Total time in them.
    pub total: Duration,
}

impl OpTime {
    /// Mean nanoseconds per operation.
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
    /// USED, RESERVED and the live requested bytes after each row.
    pub samples: Vec<Sample>,
    /// Time per kind of operation, in the order of [`Op::action`]s first seen.
    pub times: Vec<OpTime>,
    /// Time in pool, event and synchronization calls, all together.
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

    /// Replayed operations per second of time in the calls.
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
/// `progress(rows_done)` every 1024 rows and at the end.
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
pub fn replay(trace: &Trace, options: &ReplayOptions, mut progress: impl FnMut(usize)) -> Result<Report, ReplayError> {
    let mut options = *options;
    let threshold = options.threshold.unwrap_or(options.pool_size);
    options.threshold = Some(threshold);
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
    let r = match options.small_blocks {
        Some(t) => {
            let layer = SmallBlocks::new(&emu, &pool, t).map_err(setup_error)?;
            run(&emu, &pool, Some(&layer), trace, options, &mut progress)
        }
        None => run(&emu, &pool, None, trace, options, &mut progress),
    };
    let _ = emu.synchronize_device();
    let _ = emu.destroy_pool(&pool);
    r.map(|mut report| {
        let (live, peak) = crate::requested::live_requested(trace);
        report.requested_high = peak;
        for (s, r) in report.samples.iter_mut().zip(live) {
            s.requested = r;
        }
        report
    })
}

struct Handles<'a> {
    emu: &'a Emulator,
    streams: HashMap<u64, EmuStream>,
    events: HashMap<u64, EmuEvent>,
}

impl Handles<'_> {
    fn stream(&mut self, id: u64) -> mempool_hal::Result<&EmuStream> {
        if !self.streams.contains_key(&id) {
            self.streams.insert(id, self.emu.create_stream()?);
        }
        Ok(&self.streams[&id])
    }
    fn event(&mut self, id: u64) -> mempool_hal::Result<&EmuEvent> {
        if !self.events.contains_key(&id) {
            self.events.insert(id, self.emu.create_event()?);
        }
        Ok(&self.events[&id])
    }
}

fn run(
    emu: &Emulator,
    pool: &EmuPool,
    small: Option<&SmallBlocks<'_, Emulator>>,
    trace: &Trace,
    options: ReplayOptions,
    progress: &mut impl FnMut(usize),
) -> Result<Report, ReplayError> {
    let mut h = Handles { emu, streams: HashMap::new(), events: HashMap::new() };
    let mut ptrs: HashMap<u64, DevicePtr> = HashMap::new();
    let mut times: Vec<OpTime> = Vec::new();
    let mut samples = Vec::with_capacity(trace.rows.len());
    let mut skipped_failures = 0;
    let mut total = Duration::ZERO;
    for (i, row) in trace.rows.iter().enumerate() {
        let line = trace.lines.get(i).copied();
        let fail = |message: String| ReplayError { line, message };
        let hal = |e: mempool_hal::Error| ReplayError {
            line,
            message: format!("{} failed in the replay: {e}", row.op.action()),
        };
        // Handles are created before the clock starts.
        match row.op {
            Op::Allocate { stream: s, .. } | Op::Free { stream: s, .. } | Op::Record { stream: s, .. } => {
                h.stream(s).map_err(hal)?;
            }
            Op::Wait { stream: s, .. } | Op::SyncStream { stream: s } => {
                h.stream(s).map_err(hal)?;
            }
            _ => {}
        }
        if let Op::Record { event: e, .. } | Op::Wait { event: e, .. } | Op::SyncEvent { event: e } = row.op {
            h.event(e).map_err(hal)?;
        }
        let start = Instant::now();
        match row.op {
            Op::Allocate { ptr, size, stream } => {
                let s = &h.streams[&stream];
                let p = match small {
                    Some(l) => l.malloc_async(size, s),
                    None => pool.malloc_async(size, s),
                }
                .map_err(hal)?;
                ptrs.insert(ptr, p);
            }
            Op::AllocateFailure { .. } => skipped_failures += 1,
            Op::Free { ptr, stream, .. } => {
                let p = ptrs.remove(&ptr).ok_or_else(|| fail(format!("free of unknown pointer {ptr:#x}")))?;
                let s = &h.streams[&stream];
                match small {
                    #[allow(unsafe_code)]
                    // SAFETY: `p` is a live allocation the layer handed out; the replay
                    // enqueues no work on device memory, so there is no use to order before
                    // the free.
                    Some(l) => unsafe { l.free_async(p, s) },
                    None => pool.free(p, s),
                }
                .map_err(hal)?;
            }
            Op::Record { event, stream } => emu.record_event(&h.events[&event], &h.streams[&stream]).map_err(hal)?,
            Op::Wait { event, stream } => emu.stream_wait_event(&h.streams[&stream], &h.events[&event]).map_err(hal)?,
            Op::SyncStream { stream } => emu.synchronize_stream(&h.streams[&stream]).map_err(hal)?,
            Op::SyncEvent { event } => emu.synchronize_event(&h.events[&event]).map_err(hal)?,
            Op::SyncDevice => emu.synchronize_device().map_err(hal)?,
        }
        let dt = start.elapsed();
        total += dt;
        let action = row.op.action();
        match times.iter_mut().find(|t| t.action == action) {
            Some(t) => {
                t.count += 1;
                t.total += dt;
            }
            None => times.push(OpTime { action, count: 1, total: dt }),
        }
        let st = pool.stats().map_err(hal)?;
        samples.push(Sample { used: st.used_current, reserved: st.reserved_current, requested: 0 });
        if (i + 1) % 1024 == 0 {
            progress(i + 1);
        }
    }
    progress(trace.rows.len());
    let st = pool.stats().map_err(setup_error)?;
    Ok(Report {
        options,
        ops: trace.rows.len(),
        skipped_failures,
        requested_high: 0,
        used_high: st.used_high,
        reserved_high: st.reserved_high,
        small: small.map(SmallBlocks::small_stats),
        reserved_end: st.reserved_current,
        reuse: pool.reuse_counts(),
        samples,
        times,
        total,
    })
}
