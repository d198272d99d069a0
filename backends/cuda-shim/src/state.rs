//! The library's process-wide state: whether `cuInit` has run, the emulated devices,
//! the handle registries, the primary contexts and their retain counts, each device's
//! legacy default stream, default pool and current pool, the `cuMemAllocHost`
//! allocations, the calling thread's current context and per-thread default streams, and
//! the implicit order between each device's legacy default stream and its blocking
//! streams.
//!
//! # The default streams
//!
//! As the driver documents them: **the legacy default stream** (the NULL handle and
//! `CU_STREAM_LEGACY`, 0x1) is one stream per device whose work waits for all work enqueued
//! before it on every *blocking* stream of the device (those created with
//! `CU_STREAM_DEFAULT`, and the per-thread default streams), and work enqueued on a
//! blocking stream waits for the legacy stream's work enqueued before it. Streams created
//! with `CU_STREAM_NON_BLOCKING` take no part in it, in either direction. **The per-thread
//! default stream** (`CU_STREAM_PER_THREAD`, 0x2) is one blocking stream per host thread
//! and device, made at its first use and destroyed (its queued work still runs) when the
//! thread ends; it does not synchronize with other threads' per-thread streams.
//!
//! The implicit order is made of the emulator's own ordering, so its stream-order checker
//! sees exactly what the driver would order: every call that enqueues (copies, memsets,
//! host functions, event records, event waits, pool allocations and frees) goes through
//! [`Shim::enqueue`], which, under a lock of the stream's device,
//!
//! - before work on the legacy stream: for each blocking stream with work the legacy
//!   stream has not waited for yet, records an internal event at that stream's end and
//!   makes the legacy stream wait for it;
//! - before work on a blocking stream: if the legacy stream has had work enqueued since
//!   this stream last waited for it, makes it wait for an internal event recorded at the
//!   legacy stream's end (recorded once per new legacy operation, shared by every blocking
//!   stream that needs it);
//! - then enqueues the work itself and notes it (a count for the legacy stream, a flag and
//!   a list entry for a blocking stream).
//!
//! So a call that finds nothing new on the other side costs one uncontended lock and no
//! emulator call; one that must wait costs one record and one event wait per stream it
//! waits for, and only on the first call after new work there. Work on a non-blocking
//! stream takes neither the lock nor any wait. A blocking stream destroyed with work the
//! legacy stream has not waited for yet makes the legacy stream wait for that work at once
//! (later legacy work must still wait for it), after recording the legacy stream's end for
//! the blocking streams that have not caught up, so they do not wait for the destroyed
//! stream too.
//!
//! Host synchronizations and queries (`cuStreamSynchronize`, `cuStreamQuery`) enqueue
//! nothing: on the legacy stream they wait for, or ask about, the work enqueued on it and
//! what that work waits for, not blocking-stream work enqueued since. A call refused after
//! its stream was resolved may leave the implicit wait it made in place; it orders nothing
//! that the next call on that stream would not.

use crate::ffi::{
    CUDA_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_VALUE,
    CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_UNKNOWN, err,
};
use crate::types::{CU_STREAM_LEGACY, CU_STREAM_PER_THREAD};
use mempool_emu::cabi::{HandleKind, Handles, HostAllocs, HostBlock, HostRange};
use mempool_emu::{EmuEvent, EmuPool, EmuStream, Emulator};
use mempool_hal::attr::AttrId;
use mempool_hal::{Device, Error, HandleType, MemPool, PoolProps, RawAttrValue, Result};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How a stream takes part in the implicit order of its device's legacy default stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StreamKind {
    /// The legacy default stream (the NULL handle, `CU_STREAM_LEGACY`).
    Legacy,
    /// A stream created with `CU_STREAM_DEFAULT`, or a per-thread default stream
    /// (`CU_STREAM_PER_THREAD`): it and the legacy stream wait for each other's earlier
    /// work.
    Blocking,
    /// A stream created with `CU_STREAM_NON_BLOCKING`: no implicit order.
    NonBlocking,
}

/// A stream handle's target.
#[derive(Clone)]
pub(crate) struct StreamEntry {
    pub(crate) device: u32,
    pub(crate) stream: EmuStream,
    pub(crate) kind: StreamKind,
}

/// A blocking stream of a device, as [`Order`] follows it.
struct Blocking {
    stream: EmuStream,
    /// It has work the legacy stream has not waited for (its id is then in
    /// [`Order::unseen`]).
    unseen: bool,
    /// [`Order::legacy_ops`] when it last waited for the legacy stream's end (0: never).
    legacy_seen: u64,
}

/// The implicit order between one device's legacy default stream and its blocking streams
/// (see the module docs), under the device's lock.
#[derive(Default)]
struct Order {
    /// How many operations have been enqueued on the legacy stream.
    legacy_ops: u64,
    /// `legacy_ops` when the tail event was last recorded on the legacy stream (0: never).
    tail_at: u64,
    /// The internal events (made at the first need): the tail event, recorded at the
    /// legacy stream's end for blocking streams to wait for, and a scratch event, recorded
    /// at a blocking stream's end and waited for by the legacy stream at once.
    events: Option<(EmuEvent, EmuEvent)>,
    /// The live blocking streams, by the emulator's stream id.
    blocking: HashMap<u64, Blocking>,
    /// The ids of the blocking streams with work the legacy stream has not waited for (a
    /// stream destroyed since is skipped).
    unseen: Vec<u64>,
}

impl Order {
    fn events(&mut self, dev: &Emulator) -> Result<(EmuEvent, EmuEvent)> {
        if let Some(e) = &self.events {
            return Ok(e.clone());
        }
        let e = (dev.create_event()?, dev.create_event()?);
        Ok(self.events.insert(e).clone())
    }

    /// The tail event, recorded at the legacy stream's end since its last operation.
    fn tail(&mut self, dev: &Emulator, legacy: &EmuStream) -> Result<EmuEvent> {
        let (tail, _) = self.events(dev)?;
        if self.tail_at != self.legacy_ops {
            dev.record_event(&tail, legacy)?;
            self.tail_at = self.legacy_ops;
        }
        Ok(tail)
    }

    /// Makes `legacy` wait for the end of every blocking stream with work it has not
    /// waited for.
    fn legacy_waits(&mut self, dev: &Emulator, legacy: &EmuStream) -> Result<()> {
        if self.unseen.is_empty() {
            return Ok(());
        }
        let (_, scratch) = self.events(dev)?;
        while let Some(&id) = self.unseen.last() {
            if let Some(b) = self.blocking.get_mut(&id) {
                dev.record_event(&scratch, &b.stream)?;
                dev.stream_wait_event(legacy, &scratch)?;
                b.unseen = false;
            }
            self.unseen.pop();
        }
        Ok(())
    }

    /// Notes work enqueued on the blocking stream `id`.
    fn blocking_enqueued(&mut self, id: u64) {
        if let Some(b) = self.blocking.get_mut(&id)
            && !b.unseen
        {
            b.unseen = true;
            self.unseen.push(id);
        }
    }
}

thread_local! {
    /// This thread's per-thread default streams, one per device that it has used
    /// `CU_STREAM_PER_THREAD` on.
    static PER_THREAD: RefCell<PerThread> = const { RefCell::new(PerThread(Vec::new())) };
}

/// A thread's per-thread default streams (device, stream): destroyed when the thread
/// ends, as [`Shim::retire`] destroys a blocking stream (its queued work still runs, and
/// later legacy work waits for it).
struct PerThread(Vec<(u32, EmuStream)>);

impl Drop for PerThread {
    fn drop(&mut self) {
        if let Some(Ok(s)) = SHIM.get() {
            for (device, stream) in self.0.drain(..) {
                let entry = StreamEntry { device, stream, kind: StreamKind::Blocking };
                let _ = s.retire(&entry, "thread exit");
            }
        }
    }
}

/// An event handle's target.
#[derive(Clone)]
pub(crate) struct EventEntry {
    pub(crate) device: u32,
    pub(crate) event: EmuEvent,
    /// Whether it keeps time stamps (not created with `CU_EVENT_DISABLE_TIMING`).
    pub(crate) timing: bool,
    /// Whether `cuEventRecord` has recorded it (the driver answers an event never recorded
    /// as complete, where the emulator, as CANN, says not ready).
    pub(crate) recorded: Arc<AtomicBool>,
}

/// A pool handle's target.
#[derive(Clone)]
pub(crate) struct PoolEntry {
    pub(crate) device: u32,
    pub(crate) pool: EmuPool,
    /// The release threshold as the program last wrote it: the driver takes any value
    /// (`UINT64_MAX` is common), the emulator at most the pool's size, which it then gets.
    pub(crate) threshold: Arc<AtomicU64>,
    /// RESERVED and USED when their high-water marks (6, 8) were last reset: the driver
    /// resets a mark to the current value, the emulator (as CANN) to 0, so a mark reads as
    /// the larger of the emulator's and this.
    pub(crate) high_floor: Arc<[AtomicU64; 2]>,
}

/// Everything the exported functions share.
pub(crate) struct Shim {
    pub(crate) devices: Vec<Emulator>,
    pub(crate) streams: Handles<StreamEntry>,
    pub(crate) events: Handles<EventEntry>,
    pub(crate) pools: Handles<PoolEntry>,
    /// Context handle → its device (the primary contexts, one per device).
    pub(crate) contexts: Handles<u32>,
    /// The primary context handle of each device.
    primary: Vec<usize>,
    /// How many `cuDevicePrimaryCtxRetain` of each device no release has undone.
    retains: Mutex<Vec<u64>>,
    /// Each device's legacy default stream, made at its first use.
    default_streams: Vec<OnceLock<EmuStream>>,
    /// Each device's implicit order between its legacy and blocking streams.
    orders: Vec<Mutex<Order>>,
    default_pools: Vec<OnceLock<usize>>,
    /// The pool `cuMemAllocAsync` uses on each device (`None`: the default pool).
    current_pools: Mutex<Vec<Option<usize>>>,
    /// Serializes the lazy setup of a device's default stream and default pool, so two
    /// threads making their first use at once create the emulator's objects once.
    setup: Vec<Mutex<()>>,
    /// The `cuMemAllocHost` allocations by start address.
    pub(crate) host_allocs: HostAllocs,
}

impl Shim {
    fn new() -> Result<Shim> {
        // The host functions of a device run one at a time on one thread, as the driver
        // runs a context's host functions.
        let root = Emulator::builder().with_env()?.host_functions_on_one_thread(true).build()?;
        let n = root.config().devices;
        let devices = (0..n).map(|i| root.device(i)).collect::<Result<Vec<_>>>()?;
        let contexts = Handles::new(HandleKind::Context);
        let primary = (0..n).map(|d| contexts.insert(d)).collect();
        Ok(Shim {
            devices,
            streams: Handles::new(HandleKind::Stream),
            events: Handles::new(HandleKind::Event),
            pools: Handles::new(HandleKind::Pool),
            contexts,
            primary,
            retains: Mutex::new(vec![0; n as usize]),
            default_streams: (0..n).map(|_| OnceLock::new()).collect(),
            orders: (0..n).map(|_| Mutex::new(Order::default())).collect(),
            default_pools: (0..n).map(|_| OnceLock::new()).collect(),
            current_pools: Mutex::new(vec![None; n as usize]),
            setup: (0..n).map(|_| Mutex::new(())).collect(),
            host_allocs: HostAllocs::default(),
        })
    }

    /// The emulator of `device` (checked by the callers).
    pub(crate) fn dev(&self, device: u32) -> &Emulator {
        &self.devices[device as usize]
    }

    /// Checks a device ordinal from C (`CUDA_ERROR_INVALID_DEVICE`).
    pub(crate) fn device_id(&self, id: i64, op: &'static str) -> Result<u32> {
        u32::try_from(id).ok().filter(|&d| (d as usize) < self.devices.len()).ok_or_else(|| {
            err(CUDA_ERROR_INVALID_DEVICE, op, format!("device {id} does not exist ({} device(s))", self.devices.len()))
        })
    }

    /// The primary context handle of `device`.
    pub(crate) fn primary_context(&self, device: u32) -> usize {
        self.primary[device as usize]
    }

    /// Counts one retain of `device`'s primary context.
    pub(crate) fn retain(&self, device: u32) {
        lock(&self.retains)[device as usize] += 1;
    }

    /// Undoes one retain of `device`'s primary context; returns how many are left.
    /// None left to undo: `CUDA_ERROR_INVALID_CONTEXT`.
    pub(crate) fn release(&self, device: u32, op: &'static str) -> Result<u64> {
        let mut r = lock(&self.retains);
        let n = &mut r[device as usize];
        if *n == 0 {
            return Err(err(
                CUDA_ERROR_INVALID_CONTEXT,
                op,
                format!("the primary context of device {device} is not retained (every retain was released)"),
            ));
        }
        *n -= 1;
        Ok(*n)
    }

    /// Whether `device`'s primary context is retained (active).
    pub(crate) fn is_active(&self, device: u32) -> bool {
        lock(&self.retains)[device as usize] > 0
    }

    /// The device of the calling thread's current context. No current context, or one
    /// whose every retain was released: `CUDA_ERROR_INVALID_CONTEXT`.
    pub(crate) fn current(&self, op: &'static str) -> Result<u32> {
        let Some((d, _)) = CURRENT.with(Cell::get) else {
            return Err(err(
                CUDA_ERROR_INVALID_CONTEXT,
                op,
                "no current context on this thread (cuDevicePrimaryCtxRetain, then cuCtxSetCurrent)",
            ));
        };
        if !self.is_active(d) {
            return Err(err(
                CUDA_ERROR_INVALID_CONTEXT,
                op,
                format!("the current context (device {d}'s primary context) was released (retain it again)"),
            ));
        }
        Ok(d)
    }

    /// The legacy default stream of `device` (what the NULL stream and
    /// `CU_STREAM_LEGACY` mean there).
    fn default_stream(&self, device: u32) -> Result<EmuStream> {
        let slot = &self.default_streams[device as usize];
        if let Some(s) = slot.get() {
            return Ok(s.clone());
        }
        // Created under the device's setup lock, once: a stream made by a thread that then
        // loses the race would keep a worker thread nobody destroys.
        let _setup = lock(&self.setup[device as usize]);
        if let Some(s) = slot.get() {
            return Ok(s.clone());
        }
        let s = self.dev(device).create_stream()?;
        Ok(slot.get_or_init(|| s).clone())
    }

    /// The calling thread's per-thread default stream of `device`, made at its first use.
    fn per_thread_stream(&self, device: u32, op: &'static str) -> Result<EmuStream> {
        let exiting = || err(CUDA_ERROR_INVALID_CONTEXT, op, "the calling thread is exiting");
        PER_THREAD
            .try_with(|p| {
                if let Some((_, st)) = p.borrow().0.iter().find(|(d, _)| *d == device) {
                    return Ok(st.clone());
                }
                let st = self.dev(device).create_stream().map_err(|e| e.with_op(op))?;
                self.adopt(device, &st);
                p.borrow_mut().0.push((device, st.clone()));
                Ok(st)
            })
            .map_err(|_| exiting())?
    }

    /// Makes a stream just created on `device` one of its blocking streams.
    pub(crate) fn adopt(&self, device: u32, stream: &EmuStream) {
        let b = Blocking { stream: stream.clone(), unseen: false, legacy_seen: 0 };
        lock(&self.orders[device as usize]).blocking.insert(stream.id(), b);
    }

    /// Destroys the stream of `e` (its queued work still runs). A blocking stream with work
    /// the legacy stream has not waited for makes the legacy stream wait for it first.
    pub(crate) fn retire(&self, e: &StreamEntry, op: &'static str) -> Result<()> {
        let dev = self.dev(e.device);
        if e.kind != StreamKind::Blocking {
            return dev.destroy_stream(&e.stream).map_err(|x| x.with_op(op));
        }
        let mut o = lock(&self.orders[e.device as usize]);
        let mut ordered = Ok(());
        if o.blocking.remove(&e.stream.id()).is_some_and(|b| b.unseen) {
            ordered = (|| {
                let legacy = self.default_stream(e.device)?;
                if o.legacy_ops > 0 {
                    // The blocking streams that have not caught up with the legacy stream
                    // wait for its end as it is now, without this stream's work.
                    o.tail(dev, &legacy)?;
                }
                let (_, scratch) = o.events(dev)?;
                dev.record_event(&scratch, &e.stream)?;
                dev.stream_wait_event(&legacy, &scratch)
            })();
        }
        // Under the lock: an enqueue on this stream either came first (and is ordered
        // above) or finds it destroyed.
        let destroyed = dev.destroy_stream(&e.stream);
        ordered.and(destroyed).map_err(|x| x.with_op(op))
    }

    /// The one way work is enqueued on a stream: runs `f`, which enqueues on `e`'s stream,
    /// with the implicit order of the legacy default stream before it (module docs), and
    /// notes the work when `f` succeeds. A non-blocking stream runs `f` alone.
    ///
    /// # Errors
    ///
    /// `f`'s; a blocking stream destroyed meanwhile: `CUDA_ERROR_INVALID_HANDLE`.
    pub(crate) fn enqueue<T>(&self, e: &StreamEntry, op: &'static str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        if e.kind == StreamKind::NonBlocking {
            return f();
        }
        let dev = self.dev(e.device);
        let mut o = lock(&self.orders[e.device as usize]);
        if e.kind == StreamKind::Legacy {
            o.legacy_waits(dev, &e.stream).map_err(|x| x.with_op(op))?;
            let r = f()?;
            o.legacy_ops += 1;
            return Ok(r);
        }
        let id = e.stream.id();
        let Some(seen) = o.blocking.get(&id).map(|b| b.legacy_seen) else {
            return Err(err(CUDA_ERROR_INVALID_HANDLE, op, format!("stream {id} was destroyed")));
        };
        if o.legacy_ops > seen {
            // Work on the legacy stream exists, so the stream does.
            let legacy = self.default_stream(e.device).map_err(|x| x.with_op(op))?;
            let tail = o.tail(dev, &legacy).map_err(|x| x.with_op(op))?;
            dev.stream_wait_event(&e.stream, &tail).map_err(|x| x.with_op(op))?;
            let now = o.legacy_ops;
            if let Some(b) = o.blocking.get_mut(&id) {
                b.legacy_seen = now;
            }
        }
        let r = f()?;
        o.blocking_enqueued(id);
        Ok(r)
    }

    /// The stream behind handle `h`: null and `CU_STREAM_LEGACY` are the current
    /// context's legacy default stream, `CU_STREAM_PER_THREAD` the calling thread's
    /// per-thread default stream there (both need a current context); a live handle is
    /// used whatever the current context. Garbage, destroyed or wrong-kind:
    /// `CUDA_ERROR_INVALID_HANDLE`.
    pub(crate) fn stream(&self, h: usize, op: &'static str) -> Result<StreamEntry> {
        if h == 0 || h == CU_STREAM_LEGACY as usize {
            let device = self.current(op)?;
            return Ok(StreamEntry { device, stream: self.default_stream(device)?, kind: StreamKind::Legacy });
        }
        if h == CU_STREAM_PER_THREAD as usize {
            let device = self.current(op)?;
            let stream = self.per_thread_stream(device, op)?;
            return Ok(StreamEntry { device, stream, kind: StreamKind::Blocking });
        }
        self.streams.get(h).ok_or_else(|| bad_handle(op, "stream", h))
    }

    /// The event behind handle `h` (null, garbage, destroyed, wrong-kind:
    /// `CUDA_ERROR_INVALID_HANDLE`).
    pub(crate) fn event(&self, h: usize, op: &'static str) -> Result<EventEntry> {
        self.events.get(h).ok_or_else(|| bad_handle(op, "event", h))
    }

    /// The pool behind handle `h` (null, garbage, destroyed, wrong-kind:
    /// `CUDA_ERROR_INVALID_HANDLE`).
    pub(crate) fn pool(&self, h: usize, op: &'static str) -> Result<PoolEntry> {
        self.pools.get(h).ok_or_else(|| bad_handle(op, "memory pool", h))
    }

    /// Creates a pool with `props` on `device` and registers it: the reuse attributes 1-3
    /// are on, as the driver creates pools (the emulator starts them off, as CANN does).
    pub(crate) fn create_pool(&self, device: u32, props: &PoolProps, op: &'static str) -> Result<usize> {
        let dev = self.dev(device);
        let pool = dev.create_pool(props).map_err(|e| e.with_op(op))?;
        for id in 1..=3 {
            if let Err(e) = pool.set_attr_raw(AttrId(id), RawAttrValue::U32(1)) {
                let _ = dev.destroy_pool(&pool);
                return Err(e.with_op(op));
            }
        }
        Ok(self.pools.insert(PoolEntry {
            device,
            pool,
            threshold: Arc::new(AtomicU64::new(0)),
            high_floor: Arc::new([AtomicU64::new(0), AtomicU64::new(0)]),
        }))
    }

    /// The default pool of `device` (the whole device), made at its first use.
    pub(crate) fn default_pool(&self, device: u32, op: &'static str) -> Result<usize> {
        let slot = &self.default_pools[device as usize];
        if let Some(&h) = slot.get() {
            return Ok(h);
        }
        // As for the default stream: created once, under the device's setup lock.
        let _setup = lock(&self.setup[device as usize]);
        if let Some(&h) = slot.get() {
            return Ok(h);
        }
        let props = PoolProps::builder().device(device).handle_type(HandleType::NONE).max_size(0).build();
        let h = self.create_pool(device, &props, op)?;
        Ok(*slot.get_or_init(|| h))
    }

    /// Whether `h` is a device's default pool.
    pub(crate) fn is_default_pool(&self, h: usize) -> bool {
        self.default_pools.iter().any(|p| p.get() == Some(&h))
    }

    /// The pool `cuMemAllocAsync` uses on `device`: the one `cuDeviceSetMemPool` set, or
    /// the default pool.
    pub(crate) fn current_pool(&self, device: u32, op: &'static str) -> Result<usize> {
        match lock(&self.current_pools)[device as usize] {
            Some(h) => Ok(h),
            None => self.default_pool(device, op),
        }
    }

    /// Makes `h` (a pool of `device`) the pool `cuMemAllocAsync` uses there.
    pub(crate) fn set_current_pool(&self, device: u32, h: usize) {
        lock(&self.current_pools)[device as usize] = Some(h);
    }

    /// A pool being destroyed stops being any device's current pool (the device's default
    /// pool takes its place, as on the driver).
    pub(crate) fn forget_pool(&self, h: usize) {
        for slot in lock(&self.current_pools).iter_mut() {
            if *slot == Some(h) {
                *slot = None;
            }
        }
    }

    /// Where `[addr, addr + len)` lies: in one `cuMemAllocHost` allocation or one range
    /// registered with `cuMemHostRegister` (`Some`, kept for queued work), or in pageable
    /// memory (`None`).
    ///
    /// # Errors
    ///
    /// `CUDA_ERROR_INVALID_VALUE` when the range starts inside a `cuMemAllocHost`
    /// allocation and runs past its end.
    pub(crate) fn host_memory(&self, addr: usize, len: usize, op: &'static str) -> Result<Option<Arc<HostBlock>>> {
        match self.host_allocs.lookup(addr, len) {
            HostRange::Overrun { base, size } => Err(err(
                CUDA_ERROR_INVALID_VALUE,
                op,
                format!(
                    "[{addr:#x}, +{len}) runs past the end of its cuMemAllocHost allocation ({base:#x}, {size} bytes)"
                ),
            )),
            HostRange::Pinned(b) => Ok(Some(b)),
            // A range registered with `cuMemHostRegister` is page-locked memory too; one
            // that runs past its registration is pageable.
            HostRange::Pageable => match self.devices[0].registered_host(addr, len) {
                HostRange::Pinned(b) => Ok(Some(b)),
                HostRange::Overrun { .. } | HostRange::Pageable => Ok(None),
            },
        }
    }
}

/// A handle that is not a live one of its kind.
fn bad_handle(op: &'static str, what: &str, h: usize) -> Error {
    let why = if h == 0 { "null" } else { "not a live handle of that kind (garbage, destroyed, or another kind)" };
    err(CUDA_ERROR_INVALID_HANDLE, op, format!("{what} {h:#x} is {why}"))
}

/// The one state of the process, made by the first `cuInit` (a failure is kept: the
/// environment does not change).
static SHIM: OnceLock<std::result::Result<Shim, Error>> = OnceLock::new();

/// `cuInit`: starts the emulator at the first call.
///
/// # Errors
///
/// The emulator could not start (a setting of the environment does not parse, say):
/// `CUDA_ERROR_UNKNOWN`, with the reason.
pub(crate) fn init(op: &'static str) -> Result<&'static Shim> {
    SHIM.get_or_init(Shim::new)
        .as_ref()
        .map_err(|e| err(CUDA_ERROR_UNKNOWN, op, format!("the emulator could not start: {e}")))
}

/// The state, once `cuInit` has succeeded.
///
/// # Errors
///
/// Before a successful `cuInit`: `CUDA_ERROR_NOT_INITIALIZED`.
pub(crate) fn shim(op: &'static str) -> Result<&'static Shim> {
    match SHIM.get() {
        Some(Ok(s)) => Ok(s),
        Some(Err(e)) => Err(err(CUDA_ERROR_NOT_INITIALIZED, op, format!("cuInit failed: {e}"))),
        None => Err(err(CUDA_ERROR_NOT_INITIALIZED, op, "cuInit has not been called")),
    }
}

thread_local! {
    /// The current (device, context handle) of this thread.
    static CURRENT: Cell<Option<(u32, usize)>> = const { Cell::new(None) };
}

/// The current context handle of this thread, if any (released or not).
pub(crate) fn current_context() -> Option<usize> {
    CURRENT.with(Cell::get).map(|(_, c)| c)
}

/// Makes `(device, context)` current on this thread (`None` clears it).
pub(crate) fn set_current(v: Option<(u32, usize)>) {
    CURRENT.with(|c| c.set(v));
}
