//! The real traces through the library: the five traces of the folder named by
//! `MEMPOOL_TRACES` (`cargo xtask ci` sets it when a `shared/traces` folder lies beside the
//! repository) replayed through `mempool_alloc`/`mempool_free` on the emulator give the same
//! figures as `mempool-trace replay --small-blocks 16G` under the same settings:
//!
//! | setting | value | the library (environment) | `mempool-trace replay` |
//! |---|---|---|---|
//! | mode | deferred | `MEMPOOL_EMU_MODE=deferred` | the default (no `--threaded`) |
//! | pool size | 16 GiB | `MEMPOOL_ALLOC_POOL_SIZE=16G`, `MEMPOOL_EMU_DEVICE_MEMORY=16G` | `--pool-size 16G` (default) |
//! | release threshold | 16 GiB | `MEMPOOL_ALLOC_RELEASE_THRESHOLD=16G` | the pool size (default) |
//! | small-block threshold | 16 GiB | `MEMPOOL_ALLOC_SMALL_THRESHOLD=16G` | `--small-blocks 16G` |
//! | granularity | 2 MiB | `MEMPOOL_EMU_GRANULARITY=2M` | `--granularity 2M` (default) |
//!
//! and the stream-order checker off, no reuse flags (`MEMPOOL_ALLOC_REUSE=none`, the trace
//! tool's default `--flags none`), the emulator's default profile, one stream (the device's
//! default stream for the library). With a small-block threshold of 16 GiB every request
//! goes through the layer, as in the trace tool's own `small_blocks_traces` test.
//!
//! Each trial replays its trace's `allocate`/`free` rows (`allocate failure` rows are
//! skipped, as the replay skips them) on a device of its own, so each has its own pool and
//! statistics, and requires the library's `reserved_high`, `used_high` and
//! `requested_high` to equal the trace tool's RESERVED_HIGH, USED_HIGH and peak of live
//! requested bytes (and the small-block layer's held bytes, the live allocations and the
//! live requested bytes at the end to agree); it prints the figures and RESERVED_HIGH /
//! peak. Then it frees what the trace left live and requires no allocation to remain.
//!
//! Without the folder the five trials are reported ignored, "not run", never passed. The
//! `synthetic` trial always runs: a trace built here, compared the same way.
//!
//! The library reads its settings from the environment once per process, at its first
//! call: `main` sets them before any trial runs, which is why this is a harness of its own.

use libtest_mimic::{Arguments, Failed, Trial};
use mempool_alloc::Stats;
use mempool_trace::{Op, ReplayOptions, Report, ReuseFlags, Trace, parse, replay};
use std::collections::{HashMap, HashSet};
use std::ffi::{CStr, c_int, c_void};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The variable naming the folder of real traces.
const VAR: &str = "MEMPOOL_TRACES";

/// The pool size and each emulated device's memory.
const POOL_SIZE: u64 = 16 << 30;
/// The allocation granularity.
const GRANULARITY: u64 = 2 << 20;
/// The release threshold: the pool size, keep everything cached.
const RELEASE_THRESHOLD: u64 = POOL_SIZE;
/// The small-block threshold: every request goes through the layer.
const SMALL_THRESHOLD: u64 = 16 << 30;

/// The real traces; trace `i` runs on device `i`.
const TRACES: [&str; 5] = [
    "cs336-medium-ctx512-train.csv",
    "decomfl-opt125m-zo-finetune.csv",
    "hta-ddp-v100-rank1.csv",
    "somas-pangu-2.6B.csv",
    "somas-resnet50.csv",
];

/// The device of the synthetic trace, after those of the real ones.
const SYNTHETIC_DEVICE: c_int = TRACES.len() as c_int;

/// The environment the library starts from, with the bytes each byte count stands for
/// (checked against [`mempool_emu::parse_bytes`], so the two replays cannot drift apart).
const ENV: [(&str, &str, Option<u64>); 10] = [
    ("MEMPOOL_ALLOC_BACKEND", "emulator", None),
    ("MEMPOOL_EMU_DEVICES", "6", None),
    ("MEMPOOL_EMU_DEVICE_MEMORY", "16G", Some(POOL_SIZE)),
    ("MEMPOOL_EMU_GRANULARITY", "2M", Some(GRANULARITY)),
    ("MEMPOOL_EMU_MODE", "deferred", None),
    ("MEMPOOL_EMU_CHECKER", "off", None),
    ("MEMPOOL_ALLOC_POOL_SIZE", "16G", Some(POOL_SIZE)),
    ("MEMPOOL_ALLOC_RELEASE_THRESHOLD", "16G", Some(RELEASE_THRESHOLD)),
    ("MEMPOOL_ALLOC_SMALL_THRESHOLD", "16G", Some(SMALL_THRESHOLD)),
    // No reuse flags, as the trace tool sets them (`--flags none`).
    ("MEMPOOL_ALLOC_REUSE", "none", None),
];

/// The trace tool's options for the same settings (`replay --small-blocks 16G`).
fn options() -> ReplayOptions {
    ReplayOptions {
        pool_size: POOL_SIZE,
        granularity: GRANULARITY,
        threshold: Some(RELEASE_THRESHOLD),
        threaded: false,
        flags: ReuseFlags::default(),
        small_blocks: Some(SMALL_THRESHOLD),
    }
}

/// The calling thread's last failure in the library, as text.
fn last_error() -> String {
    let p = mempool_alloc::mempool_last_error();
    if p.is_null() {
        return "no reason given".into();
    }
    // SAFETY: a non-NULL result is a NUL-terminated string, valid until this thread's next
    // call into the library; it is copied out before that.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// `device`'s statistics from the library.
fn stats(device: c_int) -> Result<Stats, Failed> {
    let mut s = Stats::default();
    // SAFETY: `s` is a live, writable `Stats` whose version and size `Stats::default` set.
    let rc = unsafe { mempool_alloc::mempool_stats(device, &mut s) };
    if rc != 0 {
        return Err(format!("mempool_stats({device}) returned {rc}: {}", last_error()).into());
    }
    Ok(s)
}

/// What replaying a trace through the library left behind.
struct Replayed {
    /// The statistics right after the last row.
    stats: Stats,
    /// The live allocations: the library's pointer and the size it was made with.
    live: Vec<(*mut c_void, u64)>,
    /// The live requested bytes after the last row.
    requested_live: u64,
    /// `allocate failure` rows skipped.
    skipped_failures: u64,
    /// Time in `mempool_alloc` and `mempool_free`.
    time: Duration,
}

/// Replays `trace`'s rows through `mempool_alloc`/`mempool_free` on `device`'s default
/// stream. A trace with other rows, or more than one stream, is refused: the library's
/// replay would not be the trace tool's.
fn through_library(trace: &Trace, device: c_int) -> Result<Replayed, Failed> {
    // Trace pointer -> (the library's pointer, the requested size).
    let mut ptrs: HashMap<u64, (*mut c_void, u64)> = HashMap::new();
    // The library's live pointers, to catch one handed out twice.
    let mut handed: HashSet<usize> = HashSet::new();
    let mut stream = None;
    let (mut requested_live, mut skipped_failures) = (0u64, 0u64);
    let mut time = Duration::ZERO;
    for (i, row) in trace.rows.iter().enumerate() {
        let line = trace.lines.get(i).copied().unwrap_or(i + 2);
        let s = match row.op {
            Op::Allocate { stream, .. } | Op::AllocateFailure { stream, .. } | Op::Free { stream, .. } => stream,
            other => return Err(format!("line {line}: {} rows are not replayed here", other.action()).into()),
        };
        if *stream.get_or_insert(s) != s {
            return Err(format!("line {line}: a second stream ({s}); the replay uses one").into());
        }
        match row.op {
            Op::Allocate { ptr, size, .. } => {
                let bytes = usize::try_from(size).map_err(|_| format!("line {line}: {size} bytes do not fit"))?;
                let start = Instant::now();
                // SAFETY: a plain allocation on the device's default stream (NULL); the
                // result is checked before use and never dereferenced.
                let p = unsafe { mempool_alloc::mempool_alloc(bytes, device, std::ptr::null_mut()) };
                time += start.elapsed();
                if p.is_null() {
                    return Err(format!("line {line}: mempool_alloc({size}, {device}) failed: {}", last_error()).into());
                }
                if !handed.insert(p as usize) {
                    return Err(format!("line {line}: mempool_alloc handed out the live pointer {p:p} again").into());
                }
                if ptrs.insert(ptr, (p, size)).is_some() {
                    return Err(format!("line {line}: the trace allocates the live pointer {ptr:#x}").into());
                }
                requested_live += size;
            }
            Op::AllocateFailure { .. } => skipped_failures += 1,
            Op::Free { ptr, .. } => {
                let (p, size) =
                    ptrs.remove(&ptr).ok_or_else(|| format!("line {line}: free of unknown pointer {ptr:#x}"))?;
                handed.remove(&(p as usize));
                let start = Instant::now();
                // SAFETY: `p` is a live allocation of `size` bytes the library handed out on
                // `device`'s default stream; nothing uses it, and it is not used again.
                unsafe { mempool_alloc::mempool_free(p, size as usize, device, std::ptr::null_mut()) };
                time += start.elapsed();
                // A free the library refuses changes nothing and leaves a reason; with the
                // checker off a free that succeeded leaves none.
                if !mempool_alloc::mempool_last_error().is_null() {
                    return Err(format!("line {line}: mempool_free({p:p}, {size}, {device}): {}", last_error()).into());
                }
                requested_live -= size;
            }
            _ => unreachable!("refused above"),
        }
    }
    let stats = stats(device)?;
    Ok(Replayed { stats, live: ptrs.into_values().collect(), requested_live, skipped_failures, time })
}

/// Frees what the trace left live and requires the device to hold no allocation after.
fn free_the_rest(device: c_int, live: Vec<(*mut c_void, u64)>) -> Result<(), Failed> {
    for (p, size) in live {
        // SAFETY: `p` is a live allocation of `size` bytes the library handed out on
        // `device`'s default stream, freed once here and not used again.
        unsafe { mempool_alloc::mempool_free(p, size as usize, device, std::ptr::null_mut()) };
    }
    let s = stats(device)?;
    if s.allocations != 0 || s.requested_current != 0 {
        return Err(format!(
            "after freeing every allocation: {} allocations, {} requested bytes live ({})",
            s.allocations,
            s.requested_current,
            last_error()
        )
        .into());
    }
    Ok(())
}

/// Replays `trace` both ways, compares, prints one line, and frees the rest.
fn compare(name: &str, trace: &Trace, device: c_int) -> Result<(), Failed> {
    let backend = mempool_alloc::mempool_backend();
    if backend.is_null() {
        return Err(format!("the library did not initialize: {}", last_error()).into());
    }
    // SAFETY: non-NULL, as checked: a NUL-terminated string that lives as long as the
    // process.
    let backend = unsafe { CStr::from_ptr(backend) }.to_string_lossy().into_owned();
    let expected = format!("emulator ({} devices", ENV[1].1);
    if !backend.starts_with(&expected) {
        return Err(format!("the library runs on {backend:?}, not the {expected}...)").into());
    }

    let started = Instant::now();
    let tool: Report = replay(trace, &options(), |_| {}).map_err(|e| format!("{name}: mempool-trace replay: {e}"))?;
    let tool_time = started.elapsed();
    let lib = through_library(trace, device).map_err(|e| format!("{name}: {}", e.message().unwrap_or("")))?;
    let small = tool.small.ok_or("the trace tool's replay has no statistics of the small-block layer")?;
    let used_end = tool.samples.last().map_or(0, |s| s.used);
    let s = &lib.stats;

    // (figure, the library's, the trace tool's)
    let figures = [
        ("reserved_high (RESERVED_HIGH)", s.reserved_high, tool.reserved_high),
        ("used_high (USED_HIGH)", s.used_high, tool.used_high),
        ("requested_high (peak of live requested bytes)", s.requested_high, tool.requested_high),
        ("small_held_high (the layer's held_high)", s.small_held_high, small.held_high),
        ("reserved_current at the end (reserved_end)", s.reserved_current, tool.reserved_end),
        ("used_current at the end", s.used_current, used_end),
        ("small_held_current at the end", s.small_held_current, small.held_current),
        ("requested_current at the end", s.requested_current, lib.requested_live),
        ("requested_current at the end (the layer's)", s.requested_current, small.requested_current),
        ("allocations at the end", s.allocations, lib.live.len() as u64),
        ("allocate failure rows skipped", lib.skipped_failures, tool.skipped_failures),
        ("oom_count", s.oom_count, 0),
    ];
    let lib_ratio = if s.requested_high == 0 { 1.0 } else { s.reserved_high as f64 / s.requested_high as f64 };
    println!(
        "{name} (device {device}): reserved_high {} used_high {} requested_high {} small_held_high {} \
         reserved_end {}; RESERVED_HIGH / peak {:.3} (mempool-trace {:.3}); {} rows, library {:.0} ms, \
         mempool-trace {:.0} ms",
        s.reserved_high,
        s.used_high,
        s.requested_high,
        s.small_held_high,
        s.reserved_current,
        lib_ratio,
        tool.reserved_over_requested(),
        trace.rows.len(),
        lib.time.as_secs_f64() * 1e3,
        tool_time.as_secs_f64() * 1e3,
    );
    let mut differ = String::new();
    for (what, ours, theirs) in figures {
        if ours != theirs {
            let _ = write!(differ, "\n  {what}: library {ours}, mempool-trace {theirs}");
        }
    }
    if tool.requested_high == 0 || tool.reserved_high < tool.used_high {
        let _ = write!(differ, "\n  a degenerate replay: {tool:?}");
    }
    let freed = free_the_rest(device, lib.live);
    if !differ.is_empty() {
        return Err(format!("{name} on device {device}: the figures differ:{differ}").into());
    }
    freed.map_err(|e| format!("{name} on device {device}: {}", e.message().unwrap_or("")).into())
}

/// One real trace, from the folder.
fn run(path: PathBuf, device: c_int) -> Result<(), Failed> {
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let trace = parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if trace.rows.is_empty() {
        return Err(format!("{}: no rows", path.display()).into());
    }
    compare(&path.display().to_string(), &trace, device)
}

/// A small deterministic trace: sizes from one byte to tens of MiB (carved small, odd,
/// granularity-sized and larger than a granularity), phases that mostly allocate and
/// mostly free, a few `allocate failure` rows, and allocations left live at the end.
fn synthetic_csv() -> String {
    const SIZES: [u64; 10] = [1, 100, 512, 513, 3_000, 65_537, 1 << 20, 2 << 20, (5 << 20) + 3, (41 << 20) + 9];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: u64| {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % n
    };
    let mut csv = String::from(mempool_trace::HEADER);
    csv.push('\n');
    let mut live: Vec<(u64, u64)> = Vec::new();
    let mut address = 0x7000_0000_0000u64;
    for i in 0..3_000u64 {
        let time = format!("0.{:09}", i * 1_000);
        // Five phases of 600 rows: allocate four in five, then free four in five, ...
        let allocating = (i / 600) % 2 == 0;
        if i % 450 == 449 {
            let _ = writeln!(csv, "1,{time},allocate failure,0x0,{},1", 20 << 30);
        } else if live.is_empty() || next(5) < if allocating { 4 } else { 1 } {
            address += 0x10_0000;
            let size = SIZES[next(SIZES.len() as u64) as usize];
            let _ = writeln!(csv, "1,{time},allocate,{address:#x},{size},1");
            live.push((address, size));
        } else {
            let (ptr, size) = live.swap_remove(next(live.len() as u64) as usize);
            let _ = writeln!(csv, "1,{time},free,{ptr:#x},{size},1");
        }
    }
    assert!(!live.is_empty(), "the synthetic trace leaves allocations live");
    csv
}

/// The synthetic trace, on a device of its own.
fn synthetic() -> Result<(), Failed> {
    let trace = parse(&synthetic_csv()).map_err(|e| format!("the synthetic trace: {e}"))?;
    compare("synthetic", &trace, SYNTHETIC_DEVICE)
}

fn main() {
    // The settings, checked against the byte counts the trace tool replays with.
    for (name, value, bytes) in ENV {
        if let Some(b) = bytes {
            assert_eq!(mempool_emu::parse_bytes(value), Ok(b), "{name}={value}");
        }
    }
    assert_eq!(ENV[1].1.parse::<c_int>(), Ok(SYNTHETIC_DEVICE + 1), "one device per trace and the synthetic one");
    let stale: Vec<_> = std::env::vars_os()
        .map(|(k, _)| k)
        .filter(|k| k.to_str().is_some_and(|k| k.starts_with("MEMPOOL_ALLOC_") || k.starts_with("MEMPOOL_EMU_")))
        .collect();
    for k in stale {
        // SAFETY: `main` runs before any other thread of this process is started (trials
        // start later), so nothing reads the environment concurrently.
        unsafe { std::env::remove_var(k) };
    }
    for (name, value, _) in ENV {
        // SAFETY: as above: no other thread yet, and no call into the library before this.
        unsafe { std::env::set_var(name, value) };
    }

    let args = Arguments::from_args();
    let dir = std::env::var_os(VAR).map(PathBuf::from).filter(|d| d.is_dir());
    let mut trials: Vec<Trial> = TRACES
        .iter()
        .zip(0..)
        .map(|(&name, device)| {
            let test = format!("traces::{}", name.trim_end_matches(".csv"));
            match &dir {
                Some(d) => {
                    let path = d.join(name);
                    Trial::test(test, move || run(path, device))
                }
                None => Trial::test(test, || Err(format!("not run: {VAR} does not name a folder of traces").into()))
                    .with_ignored_flag(true)
                    .with_kind("not-run"),
            }
        })
        .collect();
    trials.push(Trial::test("synthetic", synthetic));
    if dir.is_none() {
        println!("not run: set {VAR} to the folder of real traces");
    }
    libtest_mimic::run(&args, trials).exit();
}
