//! Page-locked staging buffers for host-to-device and device-to-host copies.
//!
//! The driver copies asynchronously only between device memory and page-locked host
//! memory: with pageable memory, `cuMemcpyHtoDAsync_v2` and `cuMemcpyDtoHAsync_v2` stage
//! through the driver's own buffers and may return only once the copy is done. So the
//! backend stages every copy through `cuMemAllocHost_v2` memory, which keeps it
//! asynchronous. Buffers are reused from a small cache per backend instance: sizes are
//! rounded up to a power of two (at least 4 KiB), and at most [`PER_CLASS`] buffers of
//! each size up to [`MAX_CACHED`] bytes are kept.
//!
//! A buffer goes back to the cache only after its copy has run: it is moved into the host
//! function launched after the copy on the same stream, which returns it. The driver
//! forbids CUDA calls inside a host function, so a buffer the cache cannot keep is set
//! aside there and freed later on a user thread (the next copy, or the instance's end).

use crate::loader::Runtime;
use crate::result::{self, memory::PinnedHost};
use mempool_hal::Result;
use std::sync::{Mutex, PoisonError};

/// The smallest staging buffer, as a power of two (4 KiB).
const MIN_SHIFT: u32 = 12;
/// The largest cached buffer, as a power of two (64 MiB).
const MAX_SHIFT: u32 = 26;
/// The largest staging buffer the cache keeps, in bytes; a larger one has the copy's exact
/// size and is freed once its copy has run.
pub const MAX_CACHED: usize = 1 << MAX_SHIFT;
/// How many buffers of one size the cache keeps.
pub const PER_CLASS: usize = 4;

/// What the staging cache holds and has done, for [`Cuda::staging`](super::Cuda::staging).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StagingStats {
    /// `cuMemAllocHost_v2` calls made for staging so far.
    pub allocations: u64,
    /// `cuMemFreeHost` calls made for staging so far.
    pub frees: u64,
    /// Buffers in the cache, ready for the next copy.
    pub cached: usize,
    /// Their bytes.
    pub cached_bytes: usize,
    /// Buffers in use by copies that have not run yet.
    pub in_flight: usize,
}

#[derive(Default)]
struct State {
    /// Ready buffers by size class (`shift - MIN_SHIFT`).
    classes: [Vec<PinnedHost>; (MAX_SHIFT - MIN_SHIFT + 1) as usize],
    /// Buffers back from their copies that the cache does not keep: freed on a user thread.
    retired: Vec<PinnedHost>,
    allocations: u64,
    frees: u64,
    in_flight: usize,
}

/// The staging cache of one backend instance. It never calls the driver itself, so a host
/// function may return buffers to it; [`Staging::take`] and [`Staging::free_all`] (user
/// threads) do the allocating and freeing.
#[derive(Default)]
pub(super) struct Staging {
    state: Mutex<State>,
}

/// The size class of a copy of `len` bytes: `Some(index)` when cached, with the buffer size.
fn class_of(len: usize) -> (Option<usize>, usize) {
    let size = len.max(1 << MIN_SHIFT).checked_next_power_of_two().unwrap_or(usize::MAX);
    if size <= MAX_CACHED { (Some((size.trailing_zeros() - MIN_SHIFT) as usize), size) } else { (None, len) }
}

impl Staging {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A page-locked buffer of at least `len` bytes, from the cache or newly allocated
    /// (the caller has made the instance's context current). Frees the buffers set aside
    /// since the last call first.
    pub(super) fn take(&self, rt: &Runtime, len: usize) -> Result<PinnedHost> {
        let (class, size) = class_of(len);
        let (retired, cached) = {
            let mut st = self.lock();
            let retired = std::mem::take(&mut st.retired);
            st.frees += retired.len() as u64;
            let cached = class.and_then(|c| st.classes[c].pop());
            if cached.is_some() {
                st.in_flight += 1;
            }
            (retired, cached)
        };
        for buf in retired {
            let _ = result::memory::free_host(rt, buf);
        }
        if let Some(buf) = cached {
            return Ok(buf);
        }
        let buf = result::memory::malloc_host(rt, size)?;
        let mut st = self.lock();
        st.allocations += 1;
        st.in_flight += 1;
        Ok(buf)
    }

    /// Returns `buf` after its copy has run (from a host function or a user thread): into
    /// the cache, or set aside to be freed on a user thread. Never calls the driver.
    pub(super) fn give_back(&self, buf: PinnedHost) {
        let mut st = self.lock();
        st.in_flight = st.in_flight.saturating_sub(1);
        match class_of(buf.len()) {
            (Some(c), size) if size == buf.len() && st.classes[c].len() < PER_CLASS => st.classes[c].push(buf),
            _ => st.retired.push(buf),
        }
    }

    /// Frees every buffer the cache holds or has set aside (on a user thread, once the
    /// instance's streams are idle).
    ///
    /// # Errors
    ///
    /// The first failing `cuMemFreeHost`; every buffer is still given to it.
    pub(super) fn free_all(&self, rt: &Runtime) -> Result<()> {
        let bufs: Vec<PinnedHost> = {
            let mut st = self.lock();
            let mut all = std::mem::take(&mut st.retired);
            for class in &mut st.classes {
                all.append(class);
            }
            st.frees += all.len() as u64;
            all
        };
        let mut first = Ok(());
        for buf in bufs {
            let freed = result::memory::free_host(rt, buf);
            if first.is_ok() {
                first = freed;
            }
        }
        first
    }

    /// The cache's counters now.
    pub(super) fn stats(&self) -> StagingStats {
        let st = self.lock();
        StagingStats {
            allocations: st.allocations,
            frees: st.frees,
            cached: st.classes.iter().map(Vec::len).sum(),
            cached_bytes: st.classes.iter().flatten().map(PinnedHost::len).sum(),
            in_flight: st.in_flight,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_round_to_classes() {
        assert_eq!(class_of(1), (Some(0), 4096));
        assert_eq!(class_of(4097), (Some(1), 8192));
        assert_eq!(class_of(MAX_CACHED), (Some((MAX_SHIFT - MIN_SHIFT) as usize), MAX_CACHED));
        assert_eq!(class_of(MAX_CACHED + 1), (None, MAX_CACHED + 1));
    }
}
