//! The library's process-wide state: whether `cuInit` has run, the emulated devices,
//! the handle registries, the primary contexts and their retain counts, each device's
//! legacy default stream, default pool and current pool, the `cuMemAllocHost`
//! allocations, the calling thread's current context and per-thread default streams, and
//! the implicit order between each device's legacy default stream and its blocking
//! streams.

use crate::ffi::{
    CUDA_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_NOT_INITIALIZED,
    CUDA_ERROR_UNKNOWN, err,
};
use crate::types::{CU_STREAM_LEGACY, CU_STREAM_PER_THREAD};
mod contexts;
mod default_streams;

pub(crate) use contexts::{ContextEntry, current_context, pop_current, push_current, set_current};
use default_streams::Order;
pub(crate) use default_streams::StreamKind;
use mempool_emu::cabi::{HandleKind, Handles, HostAllocs, HostBlock, HostRange};
use mempool_emu::{EmuEvent, EmuPool, EmuStream, Emulator};
use mempool_hal::attr::AttrId;
use mempool_hal::{Device, Error, HandleType, MemPool, PoolProps, RawAttrValue, Result};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A stream handle's target.
#[derive(Clone)]
pub(crate) struct StreamEntry {
    pub(crate) device: u32,
    pub(crate) stream: EmuStream,
    pub(crate) kind: StreamKind,
    /// The context it was made in (a default stream: the context current at the look-up).
    pub(crate) context: usize,
    /// The flags it was created with (`CU_STREAM_DEFAULT`, `CU_STREAM_NON_BLOCKING`).
    pub(crate) flags: u32,
    /// Its id (`cuStreamGetId`): unique in the process.
    pub(crate) id: u64,
}

impl StreamEntry {
    /// A default stream's entry (made at each look-up): in the current context, blocking,
    /// with the id of its handle value (0 or 1 for the legacy stream, 2 for a per-thread one).
    pub(crate) fn default_stream(device: u32, stream: EmuStream, kind: StreamKind, id: u64) -> StreamEntry {
        let context = current_context().unwrap_or(0);
        StreamEntry { device, stream, kind, context, flags: 0, id }
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
    /// Context handle → its device and flags (the primary contexts, one per device, and
    /// those `cuCtxCreate` made).
    pub(crate) contexts: Handles<ContextEntry>,
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
    /// The next stream id.
    stream_ids: AtomicU64,
    /// Each device's `cuMemAlloc` memory: a hidden whole-device pool and a hidden stream,
    /// made at the first use.
    plain: Vec<OnceLock<Plain>>,
    /// Pool range base → pool handle, for the pointer attributes.
    pool_bases: Mutex<std::collections::BTreeMap<u64, usize>>,
}

/// A device's `cuMemAlloc` memory.
pub(crate) struct Plain {
    pub(crate) pool: EmuPool,
    pub(crate) stream: EmuStream,
}

impl Shim {
    fn new() -> Result<Shim> {
        // The host functions of a device run one at a time on one thread, as the driver
        // runs a context's host functions.
        let root = Emulator::builder().with_env()?.host_functions_on_one_thread(true).build()?;
        let n = root.config().devices;
        let devices = (0..n).map(|i| root.device(i)).collect::<Result<Vec<_>>>()?;
        let contexts = Handles::new(HandleKind::Context);
        let primary = (0..n).map(|d| contexts.insert(ContextEntry::new(d, 0))).collect();
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
            stream_ids: AtomicU64::new(3),
            plain: (0..n).map(|_| OnceLock::new()).collect(),
            pool_bases: Mutex::new(std::collections::BTreeMap::new()),
        })
    }

    /// A new stream id (`cuStreamGetId`), above the default streams' 0, 1 and 2.
    pub(crate) fn next_stream_id(&self) -> u64 {
        self.stream_ids.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
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

    /// The stream behind handle `h`: null and `CU_STREAM_LEGACY` are the current
    /// context's legacy default stream, `CU_STREAM_PER_THREAD` the calling thread's
    /// per-thread default stream there (both need a current context); a live handle is
    /// used whatever the current context. Garbage, destroyed or wrong-kind:
    /// `CUDA_ERROR_INVALID_HANDLE`.
    pub(crate) fn stream(&self, h: usize, op: &'static str) -> Result<StreamEntry> {
        if h == 0 || h == CU_STREAM_LEGACY as usize {
            let device = self.current(op)?;
            let stream = self.default_stream(device)?;
            return Ok(StreamEntry::default_stream(device, stream, StreamKind::Legacy, h as u64));
        }
        if h == CU_STREAM_PER_THREAD as usize {
            let device = self.current(op)?;
            let stream = self.per_thread_stream(device, op)?;
            return Ok(StreamEntry::default_stream(device, stream, StreamKind::Blocking, h as u64));
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
        let base = pool.base().addr();
        let h = self.pools.insert(PoolEntry {
            device,
            pool,
            threshold: Arc::new(AtomicU64::new(0)),
            high_floor: Arc::new([AtomicU64::new(0), AtomicU64::new(0)]),
        });
        lock(&self.pool_bases).insert(base, h);
        Ok(h)
    }

    /// The handle of the pool whose range starts at `base` (`None`: a hidden pool, or one
    /// destroyed).
    pub(crate) fn pool_by_base(&self, base: u64) -> Option<usize> {
        let h = *lock(&self.pool_bases).get(&base)?;
        self.pools.get(h).map(|_| h)
    }

    /// The `cuMemAlloc` memory of `device`, made at its first use: a hidden whole-device
    /// pool (reuse off, nothing kept at synchronizations) and a hidden stream that nothing
    /// else uses, so an allocation waits for no work.
    pub(crate) fn plain(&self, device: u32, op: &'static str) -> Result<&Plain> {
        let slot = &self.plain[device as usize];
        if let Some(p) = slot.get() {
            return Ok(p);
        }
        let _setup = lock(&self.setup[device as usize]);
        if let Some(p) = slot.get() {
            return Ok(p);
        }
        let dev = self.dev(device);
        let props = PoolProps::builder().device(device).handle_type(HandleType::NONE).max_size(0).build();
        let pool = dev.create_pool(&props).map_err(|e| e.with_op(op))?;
        let stream = dev.create_stream().map_err(|e| e.with_op(op))?;
        Ok(slot.get_or_init(|| Plain { pool, stream }))
    }

    /// The device whose `cuMemAlloc` pool holds `addr`, if one does.
    pub(crate) fn plain_device(&self, base: u64) -> Option<u32> {
        self.plain.iter().position(|p| p.get().is_some_and(|p| p.pool.base().addr() == base)).map(|d| d as u32)
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
