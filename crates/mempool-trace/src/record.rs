//! Recording any backend: [`Recorder`] wraps a [`Device`] and implements [`Device`] itself.

use crate::format::{Op, Row, Trace};
use mempool_hal::{
    AttrId, Device, DevicePtr, EventStatus, HostBuffer, HostFn, MemInfo, MemPool, PoolProps, RawAttrValue, Result,
    StreamStatus,
};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

static NEXT_THREAD: AtomicU32 = AtomicU32::new(1);

thread_local! {
    static THREAD: u32 = NEXT_THREAD.fetch_add(1, Ordering::Relaxed);
}

struct LogState {
    rows: Vec<Row>,
    /// Live allocations: address to requested size (a free row carries the size).
    live: HashMap<u64, u64>,
}

struct Log {
    start: Instant,
    next_id: AtomicU64,
    state: Mutex<LogState>,
}

impl Log {
    fn lock(&self) -> MutexGuard<'_, LogState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn row(&self, op: Op) -> Row {
        let time_ns = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        Row { thread: u64::from(THREAD.with(|t| *t)), time_ns, op }
    }

    fn push(&self, op: Op) {
        let row = self.row(op);
        self.lock().rows.push(row);
    }
}

/// A stream of a [`Recorder`]: the backend's stream and the id the trace names it by.
#[derive(Clone, Debug)]
pub struct RecStream<S> {
    id: u64,
    inner: S,
}

impl<S> RecStream<S> {
    /// The id written in the trace's Stream column.
    pub fn id(&self) -> u64 {
        self.id
    }
    /// The backend's stream.
    pub fn inner(&self) -> &S {
        &self.inner
    }
}

/// An event of a [`Recorder`]: the backend's event and the id the trace names it by.
#[derive(Clone, Debug)]
pub struct RecEvent<E> {
    id: u64,
    inner: E,
}

impl<E> RecEvent<E> {
    /// The id written in the trace's Pointer column of `record`, `wait` and `sync_event`.
    pub fn id(&self) -> u64 {
        self.id
    }
    /// The backend's event.
    pub fn inner(&self) -> &E {
        &self.inner
    }
}

/// Records every pool, event and synchronization call made through it to a trace, and
/// forwards the call to the wrapped device.
///
/// It implements [`Device`], so code generic over `D: Device` records unchanged. Streams
/// and events get ids 1, 2, ... in order of creation (one counter for both).
///
/// ```
/// use mempool_hal::{Device, MemPool, PoolProps};
/// use mempool_trace::{Op, Recorder};
///
/// let rec = Recorder::new(mempool_emu::Emulator::new());
/// let s = rec.create_stream()?;
/// let pool = rec.create_pool(&PoolProps::builder().max_size(1 << 30).build())?;
/// let p = pool.malloc_async(4096, &s)?;
/// // SAFETY: `p` is a live allocation of `pool`, unused after this.
/// unsafe { pool.free_async(p, &s)? };
/// rec.synchronize_stream(&s)?;
/// let trace = rec.trace();
/// assert_eq!(trace.rows.len(), 3);
/// assert!(matches!(trace.rows[1].op, Op::Free { size: 4096, .. }));
/// assert_eq!(mempool_trace::parse(&trace.to_csv()).unwrap(), trace);
/// # Ok::<(), mempool_hal::Error>(())
/// ```
pub struct Recorder<D> {
    inner: D,
    log: Arc<Log>,
}

impl<D: fmt::Debug> fmt::Debug for Recorder<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recorder").field("inner", &self.inner).field("rows", &self.log.lock().rows.len()).finish()
    }
}

impl<D: Device> Recorder<D> {
    /// Starts recording calls made to `device` through the returned wrapper.
    pub fn new(device: D) -> Self {
        let state = LogState { rows: Vec::new(), live: HashMap::new() };
        Recorder {
            inner: device,
            log: Arc::new(Log { start: Instant::now(), next_id: AtomicU64::new(1), state: state.into() }),
        }
    }

    /// The wrapped device.
    pub fn inner(&self) -> &D {
        &self.inner
    }

    /// The rows recorded so far.
    pub fn trace(&self) -> Trace {
        Trace::from_rows(self.log.lock().rows.clone())
    }

    fn next_id(&self) -> u64 {
        self.log.next_id.fetch_add(1, Ordering::Relaxed)
    }
}

/// A pool of a [`Recorder`]: forwards every call and records allocations and frees.
///
/// A backend's own recovery inside one call is not a row of the trace: the Ascend backend's
/// out-of-memory retry (synchronize, trim to USED, allocate again) shows as the one
/// `allocate` or `allocate failure` it ended in. Read such counters through
/// [`RecordingPool::inner`] (for Ascend, `AscendPool::oom_retries`).
pub struct RecordingPool<P> {
    inner: P,
    log: Arc<Log>,
}

impl<P: fmt::Debug> fmt::Debug for RecordingPool<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordingPool").field("inner", &self.inner).finish()
    }
}

impl<P> RecordingPool<P> {
    /// The wrapped pool.
    pub fn inner(&self) -> &P {
        &self.inner
    }
}

impl<P: MemPool> MemPool for RecordingPool<P> {
    type Stream = RecStream<P::Stream>;

    fn malloc_async(&self, size: u64, stream: &Self::Stream) -> Result<DevicePtr> {
        // The log stays locked across the call so rows are in the order the pool saw them.
        let mut st = self.log.lock();
        let r = self.inner.malloc_async(size, &stream.inner);
        let op = match &r {
            Ok(p) => {
                st.live.insert(p.addr(), size);
                Op::Allocate { ptr: p.addr(), size, stream: stream.id }
            }
            Err(_) => Op::AllocateFailure { size, stream: stream.id },
        };
        st.rows.push(self.log.row(op));
        r
    }

    #[allow(unsafe_code)]
    unsafe fn free_async(&self, ptr: DevicePtr, stream: &Self::Stream) -> Result<()> {
        let mut st = self.log.lock();
        // SAFETY: the caller upholds `free_async`'s contract for `ptr`; it is forwarded as is.
        unsafe { self.inner.free_async(ptr, &stream.inner) }?;
        let size = st.live.remove(&ptr.addr()).unwrap_or(0);
        st.rows.push(self.log.row(Op::Free { ptr: ptr.addr(), size, stream: stream.id }));
        Ok(())
    }

    fn trim_to(&self, min_bytes_to_keep: u64) -> Result<()> {
        self.inner.trim_to(min_bytes_to_keep)
    }

    fn get_attr_raw(&self, attr: AttrId) -> Result<RawAttrValue> {
        self.inner.get_attr_raw(attr)
    }

    fn set_attr_raw(&self, attr: AttrId, value: RawAttrValue) -> Result<()> {
        self.inner.set_attr_raw(attr, value)
    }

    fn size(&self) -> u64 {
        self.inner.size()
    }
}

impl<D: Device> Device for Recorder<D> {
    type Stream = RecStream<D::Stream>;
    type Event = RecEvent<D::Event>;
    type Pool = RecordingPool<D::Pool>;

    fn id(&self) -> u32 {
        self.inner.id()
    }

    fn pool_granularity(&self) -> u64 {
        self.inner.pool_granularity()
    }

    fn mem_info(&self) -> Result<MemInfo> {
        self.inner.mem_info()
    }

    fn create_stream(&self) -> Result<Self::Stream> {
        Ok(RecStream { inner: self.inner.create_stream()?, id: self.next_id() })
    }

    fn destroy_stream(&self, stream: &Self::Stream) -> Result<()> {
        self.inner.destroy_stream(&stream.inner)
    }

    fn synchronize_stream(&self, stream: &Self::Stream) -> Result<()> {
        self.inner.synchronize_stream(&stream.inner)?;
        self.log.push(Op::SyncStream { stream: stream.id });
        Ok(())
    }

    fn query_stream(&self, stream: &Self::Stream) -> Result<StreamStatus> {
        self.inner.query_stream(&stream.inner)
    }

    fn synchronize_device(&self) -> Result<()> {
        self.inner.synchronize_device()?;
        self.log.push(Op::SyncDevice);
        Ok(())
    }

    fn create_event(&self) -> Result<Self::Event> {
        Ok(RecEvent { inner: self.inner.create_event()?, id: self.next_id() })
    }

    fn destroy_event(&self, event: &Self::Event) -> Result<()> {
        self.inner.destroy_event(&event.inner)
    }

    fn record_event(&self, event: &Self::Event, stream: &Self::Stream) -> Result<()> {
        let mut st = self.log.lock();
        self.inner.record_event(&event.inner, &stream.inner)?;
        st.rows.push(self.log.row(Op::Record { event: event.id, stream: stream.id }));
        Ok(())
    }

    fn stream_wait_event(&self, stream: &Self::Stream, event: &Self::Event) -> Result<()> {
        let mut st = self.log.lock();
        self.inner.stream_wait_event(&stream.inner, &event.inner)?;
        st.rows.push(self.log.row(Op::Wait { event: event.id, stream: stream.id }));
        Ok(())
    }

    fn synchronize_event(&self, event: &Self::Event) -> Result<()> {
        self.inner.synchronize_event(&event.inner)?;
        self.log.push(Op::SyncEvent { event: event.id });
        Ok(())
    }

    fn query_event(&self, event: &Self::Event) -> Result<EventStatus> {
        self.inner.query_event(&event.inner)
    }

    fn event_elapsed_ms(&self, start: &Self::Event, end: &Self::Event) -> Result<f32> {
        self.inner.event_elapsed_ms(&start.inner, &end.inner)
    }

    fn create_pool(&self, props: &PoolProps) -> Result<Self::Pool> {
        Ok(RecordingPool { inner: self.inner.create_pool(props)?, log: Arc::clone(&self.log) })
    }

    fn destroy_pool(&self, pool: &Self::Pool) -> Result<()> {
        self.inner.destroy_pool(&pool.inner)
    }

    fn memcpy_h2d_async(&self, dst: DevicePtr, src: &[u8], stream: &Self::Stream) -> Result<()> {
        self.inner.memcpy_h2d_async(dst, src, &stream.inner)
    }

    fn memcpy_d2h_async(&self, dst: &HostBuffer, src: DevicePtr, stream: &Self::Stream) -> Result<()> {
        self.inner.memcpy_d2h_async(dst, src, &stream.inner)
    }

    fn memcpy_d2d_async(&self, dst: DevicePtr, src: DevicePtr, len: u64, stream: &Self::Stream) -> Result<()> {
        self.inner.memcpy_d2d_async(dst, src, len, &stream.inner)
    }

    fn memset_async(&self, dst: DevicePtr, value: u8, len: u64, stream: &Self::Stream) -> Result<()> {
        self.inner.memset_async(dst, value, len, &stream.inner)
    }

    fn launch_host_func(&self, stream: &Self::Stream, f: HostFn) -> Result<()> {
        self.inner.launch_host_func(&stream.inner, f)
    }
    fn can_access_peer(&self, peer: u32) -> Result<bool> {
        self.inner.can_access_peer(peer)
    }

    fn enable_peer_access(&self, peer: u32) -> Result<()> {
        self.inner.enable_peer_access(peer)
    }

    fn disable_peer_access(&self, peer: u32) -> Result<()> {
        self.inner.disable_peer_access(peer)
    }
}
