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
//!
//! [`Staging::copy_to_device`] and [`Staging::copy_to_host`] are the staged copies
//! themselves: a buffer from the cache, the copy, and the host function that gives the
//! buffer back, queued on one stream through the backend's calls ([`StagedCopies`]).

use mempool_hal::{DevicePtr, HostBuffer, HostFn};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

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

/// The bytes of a staging buffer, as the host side of a copy reads and writes them.
pub trait HostBytes {
    /// Copies `src` into the start of the buffer (at most its length).
    fn fill_from(&mut self, src: &[u8]);

    /// Copies the start of the buffer into `dst` (at most its length).
    fn copy_to(&self, dst: &mut [u8]);
}

/// The calls of a staged copy on one stream, through a backend's driver or runtime.
pub trait StagedCopies {
    /// The staging buffer.
    type Buffer: PinnedBuffer<Error = mempool_hal::Error> + HostBytes + Send + 'static;

    /// Queues the copy of the first `n` bytes of `src` to the device memory at `dst`.
    ///
    /// # Errors
    ///
    /// The driver's or runtime's refusal; nothing was queued then.
    fn to_device(&self, dst: DevicePtr, src: &Self::Buffer, n: usize) -> mempool_hal::Result<()>;

    /// Queues the copy of `n` bytes of the device memory at `src` into the start of `dst`.
    ///
    /// # Errors
    ///
    /// The driver's or runtime's refusal; nothing was queued then.
    fn to_host(&self, dst: &Self::Buffer, src: DevicePtr, n: usize) -> mempool_hal::Result<()>;

    /// Queues the host function `f` after the copy; a failed launch drops `f` without
    /// running it.
    ///
    /// # Errors
    ///
    /// The driver's or runtime's refusal.
    fn launch_host_func(&self, f: HostFn) -> mempool_hal::Result<()>;
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

impl<B> Staging<B>
where
    B: PinnedBuffer<Error = mempool_hal::Error> + HostBytes + Send + 'static,
{
    /// Stages `src` in a buffer from the cache and queues its copy to `dst`, then a host
    /// function that gives the buffer back; returns at once, and the caller may reuse
    /// `src`. An empty `src` queues nothing.
    ///
    /// # Errors
    ///
    /// The staging buffer's allocation, the copy's or the launch's failure. A buffer whose
    /// copy was not queued goes back to the cache; one whose host function was not
    /// launched is dropped with it (leaked, never freed under the queued copy).
    pub fn copy_to_device<C>(
        self: &Arc<Self>,
        host: &B::Host,
        dst: DevicePtr,
        src: &[u8],
        on: &C,
    ) -> mempool_hal::Result<()>
    where
        C: StagedCopies<Buffer = B>,
    {
        if src.is_empty() {
            return Ok(());
        }
        let mut buf = self.take(host, src.len())?;
        buf.fill_from(src);
        if let Err(e) = on.to_device(dst, &buf, src.len()) {
            // Nothing was queued: the buffer is free now.
            self.give_back(buf);
            return Err(e);
        }
        let staging = Arc::clone(self);
        // A failed launch drops the closure and the buffer with it: leaked, never freed
        // under the queued copy.
        on.launch_host_func(Box::new(move || staging.give_back(buf)))
    }

    /// Queues the copy of `dst.len()` bytes at `src` into a buffer from the cache, then a
    /// host function that moves the bytes into `dst` and gives the buffer back; `dst` is
    /// written only by that function. An empty `dst` queues nothing.
    ///
    /// # Errors
    ///
    /// As [`Staging::copy_to_device`].
    pub fn copy_to_host<C>(
        self: &Arc<Self>,
        host: &B::Host,
        dst: &HostBuffer,
        src: DevicePtr,
        on: &C,
    ) -> mempool_hal::Result<()>
    where
        C: StagedCopies<Buffer = B>,
    {
        let len = dst.len();
        if len == 0 {
            return Ok(());
        }
        let buf = self.take(host, len)?;
        if let Err(e) = on.to_host(&buf, src, len) {
            self.give_back(buf);
            return Err(e);
        }
        let dst = dst.clone();
        let staging = Arc::clone(self);
        on.launch_host_func(Box::new(move || {
            {
                let mut out = dst.lock();
                let n = out.len().min(len);
                buf.copy_to(&mut out[..n]);
            }
            staging.give_back(buf);
        }))
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

    /// A buffer with bytes, for the staged copies (written through `&` as a driver does).
    struct Bytes(Mutex<Vec<u8>>);

    impl PinnedBuffer for Bytes {
        type Host = ();
        type Error = mempool_hal::Error;

        fn alloc((): &(), len: usize) -> mempool_hal::Result<Self> {
            Ok(Bytes(Mutex::new(vec![0; len])))
        }

        fn free(self, (): &()) -> mempool_hal::Result<()> {
            Ok(())
        }

        fn size(&self) -> usize {
            self.0.lock().unwrap().len()
        }
    }

    impl HostBytes for Bytes {
        fn fill_from(&mut self, src: &[u8]) {
            self.0.get_mut().unwrap()[..src.len()].copy_from_slice(src);
        }

        fn copy_to(&self, dst: &mut [u8]) {
            dst.copy_from_slice(&self.0.lock().unwrap()[..dst.len()]);
        }
    }

    /// One stream over 64 bytes of device memory: copies run at once, host functions
    /// when [`Stream::run`] says.
    #[derive(Default)]
    struct Stream {
        memory: Mutex<Vec<u8>>,
        queued: Mutex<Vec<HostFn>>,
        refuse_copies: bool,
    }

    impl Stream {
        fn new(refuse_copies: bool) -> Self {
            Stream { memory: Mutex::new(vec![0; 64]), queued: Mutex::default(), refuse_copies }
        }

        fn run(&self) {
            let queued = std::mem::take(&mut *self.queued.lock().unwrap());
            for f in queued {
                f();
            }
        }

        fn refused(&self) -> mempool_hal::Result<()> {
            if self.refuse_copies { Err(mempool_hal::Error::invalid_param("copy", "refused")) } else { Ok(()) }
        }
    }

    impl StagedCopies for Stream {
        type Buffer = Bytes;

        fn to_device(&self, dst: DevicePtr, src: &Bytes, n: usize) -> mempool_hal::Result<()> {
            self.refused()?;
            let at = dst.addr() as usize;
            self.memory.lock().unwrap()[at..at + n].copy_from_slice(&src.0.lock().unwrap()[..n]);
            Ok(())
        }

        fn to_host(&self, dst: &Bytes, src: DevicePtr, n: usize) -> mempool_hal::Result<()> {
            self.refused()?;
            let at = src.addr() as usize;
            dst.0.lock().unwrap()[..n].copy_from_slice(&self.memory.lock().unwrap()[at..at + n]);
            Ok(())
        }

        fn launch_host_func(&self, f: HostFn) -> mempool_hal::Result<()> {
            self.queued.lock().unwrap().push(f);
            Ok(())
        }
    }

    #[test]
    fn staged_copies_give_their_buffers_back_once_run() {
        let staging = Arc::new(Staging::<Bytes>::default());
        let stream = Stream::new(false);
        staging.copy_to_device(&(), DevicePtr::from_addr(8), b"hello", &stream).unwrap();
        assert_eq!(staging.stats().in_flight, 1, "held until its host function runs");
        stream.run();
        let dst = HostBuffer::new(5);
        staging.copy_to_host(&(), &dst, DevicePtr::from_addr(8), &stream).unwrap();
        assert_eq!(dst.to_vec(), [0; 5], "written only by the host function");
        stream.run();
        assert_eq!(dst.to_vec(), b"hello");
        let st = staging.stats();
        assert_eq!((st.allocations, st.cached, st.in_flight), (1, 1, 0), "one buffer served both");
        staging.copy_to_device(&(), DevicePtr::from_addr(0), &[], &stream).unwrap();
        staging.copy_to_host(&(), &HostBuffer::new(0), DevicePtr::from_addr(0), &stream).unwrap();
        assert_eq!(staging.stats(), st, "empty copies queue nothing");
    }

    #[test]
    fn a_refused_copy_gives_its_buffer_back_at_once() {
        let staging = Arc::new(Staging::<Bytes>::default());
        let stream = Stream::new(true);
        assert!(staging.copy_to_device(&(), DevicePtr::from_addr(0), b"x", &stream).is_err());
        assert!(staging.copy_to_host(&(), &HostBuffer::new(1), DevicePtr::from_addr(0), &stream).is_err());
        let st = staging.stats();
        assert_eq!((st.allocations, st.cached, st.in_flight), (1, 1, 0));
        assert!(stream.queued.lock().unwrap().is_empty());
    }
}
