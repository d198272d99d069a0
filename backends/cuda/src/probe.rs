//! Which behaviour a loaded driver's pools have (contract
//! [§12](mempool_hal::contract::profiles)): [`run`] measures it on a device and returns a
//! [`ProbeReport`], whose [`Display`](fmt::Display) is a table with a verdict per row
//! against CUDA's documented behaviour. `cargo run -p mempool-cuda --example probe` prints
//! it.
//!
//! Besides the library, its `cuDriverGetVersion` and the pool granularity, the report says
//! whether the library is the project's CPU libcuda: that library exports
//! `mempool_cuda_shim_version` ([`cpu_libcuda_version`]), which NVIDIA's driver does not.
//!
//! Each row is one small experiment on its own pool of a few granules and its own streams
//! (same-stream reuse, event-dependency reuse and release at synchronization are the
//! shared experiments of [`mempool_backend_kit::probe`], which also words and renders the
//! table):
//!
//! - **reuse flags of a fresh pool**: attributes 1-3 read before any write; CUDA creates
//!   pools with all three on (contract §3), Ascend with all three off;
//! - **same-stream reuse**: allocate, free and allocate one granule on one stream; reuse
//!   when the second allocation returns the first address (contract §4, rule a);
//! - **event-dependency reuse**: with only `ReuseFollowEventDependencies` on (the other two
//!   flags off, so no other rule can serve the block), free on stream A, record an event on
//!   A, make B wait for it, allocate on B (rule c), with no host synchronization in between;
//! - **release at synchronization**: threshold 0, allocate and free one granule,
//!   synchronize the stream; released when RESERVED is 0 afterwards (contract §6);
//! - **trim below USED**: threshold at the pool's size, one granule kept live and eight
//!   freed and synchronized, then `trim_to(0)`: CUDA releases what it can (RESERVED falls
//!   to USED) and answers no error, Ascend refuses the target (contract §6);
//! - **HIGH reset**: two granules allocated, one freed and synchronized (USED_MEM_HIGH is
//!   two granules, USED one), then USED_MEM_HIGH reset: CUDA sets the mark to the current
//!   value, Ascend to 0 (contract §3).
//!
//! The verdict is the profile ([`Profile::ALL`]) whose rules
//! ([`Profile::reuse_flags_on_at_creation`], [`Profile::reuses`],
//! [`Profile::releases_at_sync`], [`Profile::trim_below_used_releases`],
//! [`Profile::high_resets_to_current`]) match every pool row; none when the rows mix them
//! or an experiment failed.

use crate::backend::{Cuda, CudaPool, CudaStream};
use crate::loader::Runtime;
use mempool_backend_kit::probe;
use mempool_hal::attr::{ReleaseThreshold, ReservedMemCurrent, UsedMemCurrent, UsedMemHigh};
use mempool_hal::{Device, DevicePtr, MemPool, MemPoolExt, Profile, Result, ReuseFlags};
use std::ffi::{CStr, c_char};
use std::fmt;
use std::path::PathBuf;

/// The symbol only the project's CPU libcuda exports: `const char
/// *mempool_cuda_shim_version(void)`.
pub const CPU_LIBCUDA_MARKER: &str = "mempool_cuda_shim_version";

/// What `trim_to(0)` did to a pool holding one live granule and eight cached ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrimBelowUsed {
    /// No error, and RESERVED fell: CUDA's rule (released what it could).
    Released {
        /// RESERVED before the trim.
        before: u64,
        /// RESERVED after it.
        after: u64,
        /// USED, the live granule.
        used: u64,
    },
    /// No error, and RESERVED stayed where it was.
    Kept {
        /// RESERVED, before and after.
        reserved: u64,
        /// USED.
        used: u64,
    },
    /// The trim was refused (Ascend's rule, 507000); the error's code.
    Refused(i32),
}

/// What resetting USED_MEM_HIGH did, with USED at one granule below the mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HighReset {
    /// The mark equals USED_MEM_CURRENT afterwards (CUDA's rule): that value.
    ToCurrent(u64),
    /// The mark is 0 afterwards (Ascend's rule).
    ToZero,
    /// Something else.
    Other {
        /// The mark after the reset.
        high: u64,
        /// USED_MEM_CURRENT after the reset.
        current: u64,
    },
}

/// What [`run`] found; each experiment is `Ok(observation)` or the error that stopped it.
#[derive(Debug, Clone)]
pub struct ProbeReport {
    /// The driver library in use.
    pub library: PathBuf,
    /// `cuDriverGetVersion`: 1000 × major + 10 × minor.
    pub driver_version: i32,
    /// What `mempool_cuda_shim_version` answered: `Some` only on the project's CPU libcuda
    /// (`mempool-emu-<version>`).
    pub cpu_libcuda: Option<String>,
    /// The pool granularity in bytes.
    pub granularity: u64,
    /// The reuse flags (attributes 1-3) of a pool just created.
    pub fresh_reuse_flags: std::result::Result<ReuseFlags, String>,
    /// Whether a block freed on a stream serves the next allocation on that stream.
    pub same_stream_reuse: std::result::Result<bool, String>,
    /// Whether a block freed on A serves B once B waits on an event recorded after the free
    /// (flag 1 alone on, no host synchronization).
    pub event_dependency_reuse: std::result::Result<bool, String>,
    /// Whether a stream synchronization releases cached memory above the threshold.
    pub release_at_sync: std::result::Result<bool, String>,
    /// What a trim below USED did.
    pub trim_below_used: std::result::Result<TrimBelowUsed, String>,
    /// What a reset of a high-water mark did.
    pub high_reset: std::result::Result<HighReset, String>,
}

impl ProbeReport {
    /// Whether the library is the project's CPU libcuda.
    pub fn is_cpu_libcuda(&self) -> bool {
        self.cpu_libcuda.is_some()
    }

    /// The profile whose rules every pool row matches ([`Profile::Cuda`] on a driver that
    /// behaves as CUDA documents), `None` when the rows mix profiles or an experiment
    /// failed.
    pub fn profile(&self) -> Option<Profile> {
        let flags_on = match *self.fresh_reuse_flags.as_ref().ok()? {
            f if f == ReuseFlags::ALL => true,
            f if f == ReuseFlags::NONE => false,
            _ => return None,
        };
        let same_stream = *self.same_stream_reuse.as_ref().ok()?;
        let event = *self.event_dependency_reuse.as_ref().ok()?;
        let release = *self.release_at_sync.as_ref().ok()?;
        let trim_releases = match self.trim_below_used.as_ref().ok()? {
            TrimBelowUsed::Released { .. } => true,
            TrimBelowUsed::Refused(_) => false,
            TrimBelowUsed::Kept { .. } => return None,
        };
        let high_to_current = match self.high_reset.as_ref().ok()? {
            HighReset::ToCurrent(_) => true,
            HighReset::ToZero => false,
            HighReset::Other { .. } => return None,
        };
        Profile::ALL.into_iter().find(|p| {
            p.reuse_flags_on_at_creation() == flags_on
                && p.reuses() == same_stream
                && p.reuses() == event
                && p.releases_at_sync() == release
                && p.trim_below_used_releases() == trim_releases
                && p.high_resets_to_current() == high_to_current
        })
    }

    /// The rows of the table: (what, observed, documented for CUDA, verdict).
    pub fn rows(&self) -> Vec<[String; 4]> {
        let (flags, flags_verdict) = match &self.fresh_reuse_flags {
            Ok(f) if *f == ReuseFlags::ALL => (format!("on ({f})"), "as documented".to_string()),
            Ok(f) if *f == ReuseFlags::NONE => ("off".to_string(), "differs: off (Ascend's default)".to_string()),
            Ok(f) => (format!("partly on ({f})"), "differs".to_string()),
            Err(e) => (probe::error(e), "unknown".to_string()),
        };
        let (trim, trim_verdict) = match &self.trim_below_used {
            Ok(TrimBelowUsed::Released { before, after, used }) => (
                format!(
                    "releases what it can (RESERVED {} to {}, USED {})",
                    bytes(*before),
                    bytes(*after),
                    bytes(*used)
                ),
                "as documented".to_string(),
            ),
            Ok(TrimBelowUsed::Kept { reserved, used }) => (
                format!("no error, nothing released (RESERVED {}, USED {})", bytes(*reserved), bytes(*used)),
                "differs".to_string(),
            ),
            Ok(TrimBelowUsed::Refused(code)) => {
                (format!("refused ({code})"), "differs: refused (Ascend's rule)".to_string())
            }
            Err(e) => (probe::error(e), "unknown".to_string()),
        };
        let (high, high_verdict) = match &self.high_reset {
            Ok(HighReset::ToCurrent(v)) => (format!("to CURRENT ({})", bytes(*v)), "as documented".to_string()),
            Ok(HighReset::ToZero) => ("to 0".to_string(), "differs: to 0 (Ascend's rule)".to_string()),
            Ok(HighReset::Other { high, current }) => {
                (format!("to {} (CURRENT {})", bytes(*high), bytes(*current)), "differs".to_string())
            }
            Err(e) => (probe::error(e), "unknown".to_string()),
        };
        let v = self.driver_version;
        vec![
            probe::info("library", self.library.display().to_string()),
            probe::info("driver version (cuDriverGetVersion)", format!("{}.{} ({v})", v / 1000, (v % 1000) / 10)),
            [
                format!("CPU libcuda ({CPU_LIBCUDA_MARKER})"),
                self.cpu_libcuda.as_ref().map_or_else(|| "not exported".to_string(), |s| format!("exported: {s}")),
                "-".into(),
                if self.is_cpu_libcuda() { "the project's CPU libcuda".into() } else { "-".into() },
            ],
            probe::info("granularity", format!("{} bytes", self.granularity)),
            [
                "reuse flags of a fresh pool (§3)".into(),
                flags,
                "on (follow,opportunistic,internal)".into(),
                flags_verdict,
            ],
            probe::yes_row("same-stream reuse (§4 a)", &self.same_stream_reuse, "reused", "fresh memory", "no reuse"),
            probe::yes_row(
                "event-dependency reuse (§4 c)",
                &self.event_dependency_reuse,
                "reused",
                "fresh memory",
                "no reuse",
            ),
            probe::yes_row(
                "release at synchronization (§6)",
                &self.release_at_sync,
                "released",
                "kept until trim_to",
                "no release",
            ),
            ["trim_to below USED (§6)".into(), trim, "releases what it can".into(), trim_verdict],
            ["HIGH reset (§3)".into(), high, "to CURRENT".into(), high_verdict],
            [
                "profile (contract §12)".into(),
                self.profile().map_or_else(|| "mixed or unknown".to_string(), |p| p.to_string()),
                "cuda".into(),
                match self.profile() {
                    Some(Profile::Cuda) => "as documented".into(),
                    Some(p) => format!("differs: {p}"),
                    None => "differs".into(),
                },
            ],
        ]
    }
}

/// `n` bytes, in MiB when it is a whole number of them.
fn bytes(n: u64) -> String {
    if n != 0 && n % (1 << 20) == 0 { format!("{} MiB", n >> 20) } else { format!("{n} bytes") }
}

impl fmt::Display for ProbeReport {
    /// A Markdown table.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        probe::write_table(f, "documented (CUDA)", &self.rows())
    }
}

/// What `mempool_cuda_shim_version` answers in the library `rt` loaded: `Some` only for the
/// project's CPU libcuda, `None` for any library without the symbol (NVIDIA's driver).
pub fn cpu_libcuda_version(rt: &Runtime) -> Option<String> {
    // SAFETY: `rt` holds this library loaded and never unloads it, so opening it again by
    // the path (or bare name) it was loaded with only takes another reference to the loaded
    // library: no initializer runs. The reference is given back when `lib` is dropped.
    let lib = unsafe { libloading::Library::new(rt.path()) }.ok()?;
    // SAFETY: the type is the symbol's C declaration, `const char
    // *mempool_cuda_shim_version(void)`, in the only library that exports it.
    let version = unsafe { lib.get::<unsafe extern "C" fn() -> *const c_char>(CPU_LIBCUDA_MARKER.as_bytes()) }.ok()?;
    // SAFETY: the call takes nothing and returns a static string (or, defensively, null).
    let p = unsafe { version() };
    if p.is_null() {
        return Some(String::new());
    }
    // SAFETY: non-null, a NUL-terminated static string of the library, read while `lib`
    // keeps the library loaded.
    Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// Runs every experiment on `dev` (each on its own pool and streams, destroyed after).
/// An experiment that fails is reported in its row; the others still run.
pub fn run(dev: &Cuda) -> ProbeReport {
    let err = |e: mempool_hal::Error| e.to_string();
    ProbeReport {
        library: dev.runtime().path().to_path_buf(),
        driver_version: dev.driver_version(),
        cpu_libcuda: cpu_libcuda_version(dev.runtime()),
        granularity: dev.pool_granularity(),
        fresh_reuse_flags: fresh_reuse_flags(dev).map_err(err),
        same_stream_reuse: probe::same_stream_reuse(dev).map_err(err),
        // Rule c alone: with the opportunistic and internal-dependency flags on (CUDA's
        // default), the block could come back by another rule.
        event_dependency_reuse: probe::event_dependency_reuse(dev, |pool| {
            ReuseFlags { follow_event_dependencies: true, ..ReuseFlags::NONE }.apply(pool)
        })
        .map_err(err),
        release_at_sync: probe::release_at_sync(dev, |pool| pool.set(ReleaseThreshold, 0)).map_err(err),
        trim_below_used: trim_below_used(dev).map_err(err),
        high_reset: high_reset(dev).map_err(err),
    }
}

/// Frees `p`, a live allocation of `pool` that no queued work touches.
fn free(pool: &CudaPool, p: DevicePtr, s: &CudaStream) -> Result<()> {
    // SAFETY: every caller passes an allocation it made on `pool` and has not freed, and
    // the probe enqueues no work on it after the free.
    unsafe { pool.free_async(p, s) }
}

fn fresh_reuse_flags(dev: &Cuda) -> Result<ReuseFlags> {
    let pool = probe::pool(dev, 1)?;
    let flags = ReuseFlags::read(&pool)?;
    dev.destroy_pool(&pool)?;
    Ok(flags)
}

fn trim_below_used(dev: &Cuda) -> Result<TrimBelowUsed> {
    let g = dev.pool_granularity();
    let pool = probe::pool(dev, 16)?;
    pool.set(ReleaseThreshold, pool.size())?;
    let s = dev.create_stream()?;
    let live = pool.malloc_async(g, &s)?;
    // A block of several granules, so that a driver reserving in chunks larger than one
    // granule still has a chunk of its own to give back.
    let cached = pool.malloc_async(8 * g, &s)?;
    free(&pool, cached, &s)?;
    dev.synchronize_stream(&s)?;
    let before = pool.get(ReservedMemCurrent)?;
    let trimmed = pool.trim_to(0);
    let (after, used) = (pool.get(ReservedMemCurrent)?, pool.get(UsedMemCurrent)?);
    free(&pool, live, &s)?;
    dev.synchronize_stream(&s)?;
    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&s)?;
    Ok(match trimmed {
        Err(e) => TrimBelowUsed::Refused(e.code()),
        Ok(()) if after < before => TrimBelowUsed::Released { before, after, used },
        Ok(()) => TrimBelowUsed::Kept { reserved: after, used },
    })
}

fn high_reset(dev: &Cuda) -> Result<HighReset> {
    let g = dev.pool_granularity();
    let pool = probe::pool(dev, 4)?;
    pool.set(ReleaseThreshold, pool.size())?;
    let s = dev.create_stream()?;
    let live = pool.malloc_async(g, &s)?;
    let gone = pool.malloc_async(g, &s)?;
    free(&pool, gone, &s)?;
    dev.synchronize_stream(&s)?;
    pool.reset(UsedMemHigh)?;
    let (high, current) = (pool.get(UsedMemHigh)?, pool.get(UsedMemCurrent)?);
    free(&pool, live, &s)?;
    dev.synchronize_stream(&s)?;
    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&s)?;
    Ok(if high == 0 {
        HighReset::ToZero
    } else if high == current {
        HighReset::ToCurrent(current)
    } else {
        HighReset::Other { high, current }
    })
}
