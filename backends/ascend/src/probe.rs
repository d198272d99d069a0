//! Which behaviour an installed runtime's pools have (contract
//! [§12](mempool_hal::contract::profiles)): [`run`] measures it on a device and returns a
//! [`ProbeReport`], whose [`Display`](fmt::Display) is a table with a verdict per row
//! against the documented behaviour. `cargo run -p mempool-ascend --example probe` prints it.
//!
//! Each row is one small experiment on its own pool of a few granules (the first three are
//! the shared experiments of [`mempool_backend_kit::probe`], which also words and renders
//! the table):
//!
//! - **same-stream reuse**: allocate, free and allocate one granule on one stream; reuse
//!   when the second allocation returns the first address (contract §4, rule a);
//! - **event-dependency reuse**: with `ReuseFollowEventDependencies` on, free on stream A,
//!   record an event on A, make B wait for it, allocate on B (rule c), with no host
//!   synchronization in between;
//! - **release at synchronization**: threshold 0, allocate and free one granule, synchronize
//!   the stream; released when RESERVED is 0 afterwards (contract §6);
//! - **pageable async copy**: an `aclrtMemcpyAsync` from pageable host memory, enqueued
//!   behind a host function that blocks its stream for [`BLOCK`]; it *blocks* when the call
//!   returns only after the host function let go (CANN documents that a copy from memory
//!   that is not page-locked returns once it completes), and is *async* when it returns at once.

use crate::backend::{Ascend, AscendStream};
use crate::{result, sys};
use mempool_backend_kit::probe;
use mempool_hal::{Device, DevicePtr, MemPool, MemPoolExt, Profile, Result, attr};
use std::ffi::c_void;
use std::fmt;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long the host function of the copy experiment blocks its stream (it lets go by
/// itself then, so a copy that blocks the caller never deadlocks the probe).
pub const BLOCK: Duration = Duration::from_millis(1500);

/// What [`run`] found; each experiment is `Ok(observation)` or the error that stopped it.
#[derive(Debug, Clone)]
pub struct ProbeReport {
    /// The runtime library in use.
    pub library: PathBuf,
    /// `aclrtGetVersion`: (major, minor, patch), the ACL API version.
    pub version: std::result::Result<(i32, i32, i32), String>,
    /// `aclrtGetSocName`: the chip on CANN; `mempool-emu-<version>` on the project's
    /// drop-in library, which is how the two are told apart (both answer the ACL API
    /// version to `aclrtGetVersion`).
    pub soc_name: Option<String>,
    /// The pool granularity in bytes.
    pub granularity: u64,
    /// Whether a block freed on a stream serves the next allocation on that stream.
    pub same_stream_reuse: std::result::Result<bool, String>,
    /// Whether a block freed on A serves B once B waits on an event recorded after the free
    /// (flag 1 on, no host synchronization).
    pub event_dependency_reuse: std::result::Result<bool, String>,
    /// Whether a stream synchronization releases cached memory above the threshold.
    pub release_at_sync: std::result::Result<bool, String>,
    /// Whether `aclrtMemcpyAsync` from pageable host memory blocks the caller until the
    /// stream reaches the copy.
    pub pageable_copy_blocks: std::result::Result<bool, String>,
}

impl ProbeReport {
    /// The profile the pool rows match: [`Profile::Documented`] when the runtime reuses and
    /// releases at synchronization, [`Profile::CannOpen`] when it does neither, `None`
    /// when it mixes them or an experiment failed.
    pub fn profile(&self) -> Option<Profile> {
        match (&self.same_stream_reuse, &self.event_dependency_reuse, &self.release_at_sync) {
            (Ok(true), Ok(true), Ok(true)) => Some(Profile::Documented),
            (Ok(false), Ok(false), Ok(false)) => Some(Profile::CannOpen),
            _ => None,
        }
    }

    /// The rows of the table: (what, observed, documented, verdict).
    pub fn rows(&self) -> Vec<[String; 4]> {
        let version = match &self.version {
            Ok((a, b, c)) => format!("{a}.{b}.{c}"),
            Err(e) => probe::error(e),
        };
        vec![
            probe::info("library", self.library.display().to_string()),
            probe::info("version (aclrtGetVersion)", version),
            [
                "SoC (aclrtGetSocName)".into(),
                self.soc_name.clone().unwrap_or_else(|| "none".into()),
                "-".into(),
                match &self.soc_name {
                    Some(n) if n.starts_with("mempool-emu") => "the project's drop-in library".into(),
                    _ => "-".into(),
                },
            ],
            probe::info("granularity", format!("{} bytes", self.granularity)),
            probe::yes_row(
                "same-stream reuse (§4 a)",
                &self.same_stream_reuse,
                "reused",
                "fresh memory",
                "no reuse (cann-open)",
            ),
            probe::yes_row(
                "event-dependency reuse (§4 c)",
                &self.event_dependency_reuse,
                "reused",
                "fresh memory",
                "no reuse (cann-open)",
            ),
            probe::yes_row(
                "release at synchronization (§6)",
                &self.release_at_sync,
                "released",
                "kept until trim_to",
                "no release (cann-open)",
            ),
            probe::yes_row(
                "pageable aclrtMemcpyAsync",
                &self.pageable_copy_blocks,
                "blocks (synchronous)",
                "returns at once (async)",
                "asynchronous",
            ),
            [
                "profile (contract §12)".into(),
                self.profile().map_or_else(|| "mixed or unknown".to_string(), |p| p.to_string()),
                "documented".into(),
                match self.profile() {
                    Some(Profile::Documented) => "as documented".into(),
                    Some(Profile::CannOpen) => "differs: cann-open".into(),
                    Some(Profile::Cuda) => "differs: cuda".into(),
                    None => "differs".into(),
                },
            ],
        ]
    }
}

impl fmt::Display for ProbeReport {
    /// A Markdown table.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        probe::write_table(f, "documented", &self.rows())
    }
}

/// Runs every experiment on `dev` (each on its own pool and streams, destroyed after).
/// An experiment that fails is reported in its row; the others still run.
pub fn run(dev: &Ascend) -> ProbeReport {
    let err = |e: mempool_hal::Error| e.to_string();
    ProbeReport {
        library: dev.runtime().path().to_path_buf(),
        version: result::device::version(dev.runtime()).map_err(err),
        soc_name: dev.runtime().soc_name(),
        granularity: dev.pool_granularity(),
        same_stream_reuse: probe::same_stream_reuse(dev).map_err(err),
        event_dependency_reuse: probe::event_dependency_reuse(dev, |pool| {
            pool.set(attr::ReuseFollowEventDependencies, true)
        })
        .map_err(err),
        release_at_sync: probe::release_at_sync(dev, |_| Ok(())).map_err(err),
        pageable_copy_blocks: pageable_copy_blocks(dev).map_err(err),
    }
}

/// Frees `p`, a live allocation of `pool` that no queued work touches.
fn free(pool: &crate::AscendPool, p: DevicePtr, s: &AscendStream) -> Result<()> {
    // SAFETY: every caller passes an allocation it made on `pool` and has not freed, and
    // the probe enqueues no work on it after the free.
    unsafe { pool.free_async(p, s) }
}

fn pageable_copy_blocks(dev: &Ascend) -> Result<bool> {
    const LEN: usize = 4096;
    let pool = probe::pool(dev, 2)?;
    let s = dev.create_stream()?;
    let d = pool.malloc_async(LEN as u64, &s)?;
    dev.synchronize_stream(&s)?;
    let (release, wait) = mpsc::channel::<()>();
    dev.launch_host_func(
        &s,
        Box::new(move || {
            let _ = wait.recv_timeout(BLOCK);
        }),
    )?;
    // Pageable host memory: a plain heap buffer, kept until the stream has run the copy.
    let host = vec![0x5Au8; LEN];
    // Any call on the stream makes the device's context current on this thread, for the
    // raw copy below.
    dev.query_stream(&s)?;
    let start = Instant::now();
    let copied = result::memory::memcpy_async(
        dev.runtime(),
        d.addr() as *mut c_void,
        host.as_ptr().cast(),
        LEN,
        sys::ACL_MEMCPY_HOST_TO_DEVICE,
        s.as_raw(),
    );
    let took = start.elapsed();
    let _ = release.send(());
    let synced = dev.synchronize_stream(&s);
    if synced.is_err() {
        // The copy may still be queued: its source must outlive it.
        std::mem::forget(host);
    }
    copied?;
    synced?;
    free(&pool, d, &s)?;
    dev.synchronize_stream(&s)?;
    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&s)?;
    Ok(took >= BLOCK / 2)
}
