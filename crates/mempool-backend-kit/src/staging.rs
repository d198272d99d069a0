//! A cache of page-locked staging buffers for host-to-device and device-to-host copies.
//!
//! Sizes are rounded up to a power of two (at least 4 KiB), and at most [`PER_CLASS`]
//! buffers of each size up to [`MAX_CACHED`] bytes are kept.
//!
//! A buffer goes back to the cache only after its copy has run: the backend moves it into
//! the host function launched after the copy on the same stream, which returns it
//! ([`Staging::give_back`]). Drivers forbid freeing memory inside a host function, so the
//! cache never allocates or frees there: a buffer it cannot keep is set aside and freed
//! later on a user thread (the next [`Staging::take`], or [`Staging::free_all`] at the
//! instance's end). The allocating and freeing is the backend's, through
//! [`PinnedBuffer`].

use std::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The smallest staging buffer, as a power of two (4 KiB).
const MIN_SHIFT: u32 = 12;
/// The largest cached buffer, as a power of two (64 MiB).
const MAX_SHIFT: u32 = 26;
/// How many size classes the cache has.
const CLASSES: usize = (MAX_SHIFT - MIN_SHIFT + 1) as usize;
/// The largest staging buffer the cache keeps, in bytes; a larger one has the copy's exact
/// size and is freed once its copy has run.
pub const MAX_CACHED: usize = 1 << MAX_SHIFT;
/// How many buffers of one size the cache keeps.
pub const PER_CLASS: usize = 4;

/// A page-locked host buffer a backend allocates and frees through its driver or runtime.
pub trait PinnedBuffer: Sized {
    /// What allocating and freeing need: the loaded library.
    type Host: ?Sized;
    /// What a failed allocation or free answers.
    type Error;

    /// A new buffer of `len` bytes (on a user thread).
    ///
    /// # Errors
    ///
    /// The driver's or runtime's failure.
    fn alloc(host: &Self::Host, len: usize) -> Result<Self, Self::Error>;

    /// Frees the buffer (on a user thread).
    ///
    /// # Errors
    ///
    /// The driver's or runtime's failure.
    fn free(self, host: &Self::Host) -> Result<(), Self::Error>;

    /// Its size in bytes.
    fn size(&self) -> usize;
}

/// What the staging cache holds and has done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StagingStats {
    /// Page-locked allocations ([`PinnedBuffer::alloc`]) made for staging so far.
    pub allocations: u64,
    /// Frees ([`PinnedBuffer::free`]) made for staging so far.
    pub frees: u64,
    /// Buffers in the cache, ready for the next copy.
    pub cached: usize,
    /// Their bytes.
    pub cached_bytes: usize,
    /// Buffers in use by copies that have not run yet.
    pub in_flight: usize,
}

struct State<B> {
    /// Ready buffers by size class (`shift - MIN_SHIFT`).
    classes: [Vec<B>; CLASSES],
    /// Buffers back from their copies that the cache does not keep: freed on a user thread.
    retired: Vec<B>,
    allocations: u64,
    frees: u64,
    in_flight: usize,
}

/// The staging cache of one backend instance. It never allocates or frees itself, so a
/// host function may return buffers to it; [`Staging::take`] and [`Staging::free_all`]
/// (user threads) do the allocating and freeing.
pub struct Staging<B> {
    state: Mutex<State<B>>,
}

impl<B> Default for Staging<B> {
    fn default() -> Self {
        Staging {
            state: Mutex::new(State {
                classes: std::array::from_fn(|_| Vec::new()),
                retired: Vec::new(),
                allocations: 0,
                frees: 0,
                in_flight: 0,
            }),
        }
    }
}

impl<B: PinnedBuffer> fmt::Debug for Staging<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Staging").field("stats", &self.stats()).finish()
    }
}

/// The size class of a copy of `len` bytes: `Some(index)` when cached, with the buffer size.
fn class_of(len: usize) -> (Option<usize>, usize) {
    let size = len.max(1 << MIN_SHIFT).checked_next_power_of_two().unwrap_or(usize::MAX);
    if size <= MAX_CACHED { (Some((size.trailing_zeros() - MIN_SHIFT) as usize), size) } else { (None, len) }
}

impl<B: PinnedBuffer> Staging<B> {
    fn lock(&self) -> MutexGuard<'_, State<B>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A page-locked buffer of at least `len` bytes, from the cache or newly allocated
    /// (the caller has made what `host` needs current, a device context say). Frees the
    /// buffers set aside since the last call first; a failure to free one is not reported.
    ///
    /// # Errors
    ///
    /// The allocation's failure.
    pub fn take(&self, host: &B::Host, len: usize) -> Result<B, B::Error> {
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
            let _ = buf.free(host);
        }
        if let Some(buf) = cached {
            return Ok(buf);
        }
        let buf = B::alloc(host, size)?;
        let mut st = self.lock();
        st.allocations += 1;
        st.in_flight += 1;
        Ok(buf)
    }

    /// Returns `buf` after its copy has run (from a host function or a user thread): into
    /// the cache, or set aside to be freed on a user thread. Never allocates or frees.
    pub fn give_back(&self, buf: B) {
        let mut st = self.lock();
        st.in_flight = st.in_flight.saturating_sub(1);
        match class_of(buf.size()) {
            (Some(c), size) if size == buf.size() && st.classes[c].len() < PER_CLASS => st.classes[c].push(buf),
            _ => st.retired.push(buf),
        }
    }

    /// Frees every buffer the cache holds or has set aside (on a user thread, once the
    /// instance's streams are idle).
    ///
    /// # Errors
    ///
    /// The first failing free; every buffer is still freed.
    pub fn free_all(&self, host: &B::Host) -> Result<(), B::Error> {
        let bufs: Vec<B> = {
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
            let freed = buf.free(host);
            if first.is_ok() {
                first = freed;
            }
        }
        first
    }

    /// The cache's counters now.
    pub fn stats(&self) -> StagingStats {
        let st = self.lock();
        StagingStats {
            allocations: st.allocations,
            frees: st.frees,
            cached: st.classes.iter().map(Vec::len).sum(),
            cached_bytes: st.classes.iter().flatten().map(B::size).sum(),
            in_flight: st.in_flight,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn sizes_round_to_classes() {
        assert_eq!(class_of(1), (Some(0), 4096));
        assert_eq!(class_of(4097), (Some(1), 8192));
        assert_eq!(class_of(MAX_CACHED), (Some((MAX_SHIFT - MIN_SHIFT) as usize), MAX_CACHED));
        assert_eq!(class_of(MAX_CACHED + 1), (None, MAX_CACHED + 1));
    }

    /// Counts what the cache asks of its host.
    #[derive(Default)]
    struct Host {
        allocs: Cell<usize>,
        frees: Cell<usize>,
        fail_frees: bool,
    }

    #[derive(Debug)]
    struct Buf(usize);

    impl PinnedBuffer for Buf {
        type Host = Host;
        type Error = &'static str;

        fn alloc(host: &Host, len: usize) -> Result<Self, &'static str> {
            host.allocs.set(host.allocs.get() + 1);
            Ok(Buf(len))
        }

        fn free(self, host: &Host) -> Result<(), &'static str> {
            host.frees.set(host.frees.get() + 1);
            if host.fail_frees { Err("free failed") } else { Ok(()) }
        }

        fn size(&self) -> usize {
            self.0
        }
    }

    #[test]
    fn buffers_are_reused_kept_per_class_and_freed_on_user_threads() {
        let host = Host::default();
        let staging = Staging::<Buf>::default();
        let a = staging.take(&host, 100).unwrap();
        assert_eq!(a.size(), 4096);
        staging.give_back(a);
        let b = staging.take(&host, 4000).unwrap();
        assert_eq!(host.allocs.get(), 1, "the cached buffer serves the second copy");
        staging.give_back(b);
        let many: Vec<Buf> = (0..PER_CLASS + 1).map(|_| staging.take(&host, 1).unwrap()).collect();
        assert_eq!(staging.stats().in_flight, PER_CLASS + 1);
        for buf in many {
            staging.give_back(buf);
        }
        assert_eq!(host.frees.get(), 0, "giving back never frees");
        let st = staging.stats();
        assert_eq!((st.cached, st.cached_bytes, st.in_flight), (PER_CLASS, PER_CLASS * 4096, 0));
        let big = staging.take(&host, MAX_CACHED + 1).unwrap();
        assert_eq!(host.frees.get(), 1, "the buffer set aside is freed by the next take");
        staging.give_back(big);
        assert_eq!(staging.free_all(&host), Ok(()));
        let st = staging.stats();
        assert_eq!((st.allocations, st.frees, st.cached), (PER_CLASS as u64 + 2, PER_CLASS as u64 + 2, 0));
    }

    #[test]
    fn free_all_frees_everything_and_answers_the_first_failure() {
        let host = Host { fail_frees: true, ..Host::default() };
        let staging = Staging::<Buf>::default();
        let bufs: Vec<Buf> = (0..3).map(|_| staging.take(&host, 1).unwrap()).collect();
        for buf in bufs {
            staging.give_back(buf);
        }
        assert_eq!(staging.free_all(&host), Err("free failed"));
        assert_eq!(host.frees.get(), 3);
        assert_eq!(staging.stats().cached, 0);
    }
}
