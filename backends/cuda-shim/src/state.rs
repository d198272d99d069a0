//! The library's process-wide state: whether `cuInit` has run, the emulated devices,
//! the handle registries, the primary contexts and their retain counts, each device's
//! default stream, default pool and current pool, the `cuMemAllocHost` allocations, and
//! the calling thread's current context.

use crate::ffi::{
    CUDA_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_VALUE,
    CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_UNKNOWN, err,
};
use mempool_emu::{EmuEvent, EmuPool, EmuStream, Emulator};
use mempool_hal::attr::AttrId;
use mempool_hal::{Device, Error, HandleType, MemPool, PoolProps, RawAttrValue, Result};
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

/// Handle kinds live in separate ranges, so a handle of one kind is never valid as
/// another, and small garbage values (like 0x1234) are never valid at all.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Stream = 1,
    Event = 2,
    Pool = 3,
    Context = 4,
}

static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

fn new_handle(kind: Kind) -> usize {
    ((kind as usize) << 44) | (NEXT_ID.fetch_add(1, Ordering::Relaxed) << 4)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Live handles of one kind. Ids are never reused: a stale handle is an error, never
/// another object.
pub(crate) struct Registry<T> {
    kind: Kind,
    map: Mutex<HashMap<usize, T>>,
}

impl<T: Clone> Registry<T> {
    fn new(kind: Kind) -> Self {
        Registry { kind, map: Mutex::new(HashMap::new()) }
    }

    pub(crate) fn insert(&self, v: T) -> usize {
        let h = new_handle(self.kind);
        lock(&self.map).insert(h, v);
        h
    }

    pub(crate) fn get(&self, h: usize) -> Option<T> {
        lock(&self.map).get(&h).cloned()
    }

    pub(crate) fn remove(&self, h: usize) -> Option<T> {
        lock(&self.map).remove(&h)
    }
}

/// A stream handle's target.
#[derive(Clone)]
pub(crate) struct StreamEntry {
    pub(crate) device: u32,
    pub(crate) stream: EmuStream,
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

/// One `cuMemAllocHost` allocation: page-locked host memory on the driver, ordinary host
/// memory here. Queued work that uses it holds a reference, so it is deallocated only
/// when `cuMemFreeHost` has been called and that work has run.
pub(crate) struct HostBlock {
    pub(crate) addr: usize,
    pub(crate) layout: std::alloc::Layout,
}

impl Drop for HostBlock {
    fn drop(&mut self) {
        // SAFETY: `addr` was returned by `alloc` with `layout`, and this is the block's
        // only deallocation (it runs once, when the last reference goes).
        unsafe { std::alloc::dealloc(self.addr as *mut u8, self.layout) };
    }
}

/// Where a host address lies, for copies and memsets.
pub(crate) enum HostMemory {
    /// Inside one `cuMemAllocHost` allocation (the whole range).
    Pinned(Arc<HostBlock>),
    /// Not `cuMemAllocHost` memory (plain `malloc`, the stack...).
    Pageable,
}

/// Everything the exported functions share.
pub(crate) struct Shim {
    pub(crate) devices: Vec<Emulator>,
    pub(crate) streams: Registry<StreamEntry>,
    pub(crate) events: Registry<EventEntry>,
    pub(crate) pools: Registry<PoolEntry>,
    /// Context handle → its device (the primary contexts, one per device).
    pub(crate) contexts: Registry<u32>,
    /// The primary context handle of each device.
    primary: Vec<usize>,
    /// How many `cuDevicePrimaryCtxRetain` of each device no release has undone.
    retains: Mutex<Vec<u64>>,
    default_streams: Vec<OnceLock<EmuStream>>,
    default_pools: Vec<OnceLock<usize>>,
    /// The pool `cuMemAllocAsync` uses on each device (`None`: the default pool).
    current_pools: Mutex<Vec<Option<usize>>>,
    /// Serializes the lazy setup of a device's default stream and default pool, so two
    /// threads making their first use at once create the emulator's objects once.
    setup: Vec<Mutex<()>>,
    /// The `cuMemAllocHost` allocations by start address.
    pub(crate) host_allocs: Mutex<BTreeMap<usize, Arc<HostBlock>>>,
}

impl Shim {
    fn new() -> Result<Shim> {
        // The host functions of a device run one at a time on one thread, as the driver
        // runs a context's host functions.
        let root = Emulator::builder().with_env()?.host_functions_on_one_thread(true).build()?;
        let n = root.config().devices;
        let devices = (0..n).map(|i| root.device(i)).collect::<Result<Vec<_>>>()?;
        let contexts = Registry::new(Kind::Context);
        let primary = (0..n).map(|d| contexts.insert(d)).collect();
        Ok(Shim {
            devices,
            streams: Registry::new(Kind::Stream),
            events: Registry::new(Kind::Event),
            pools: Registry::new(Kind::Pool),
            contexts,
            primary,
            retains: Mutex::new(vec![0; n as usize]),
            default_streams: (0..n).map(|_| OnceLock::new()).collect(),
            default_pools: (0..n).map(|_| OnceLock::new()).collect(),
            current_pools: Mutex::new(vec![None; n as usize]),
            setup: (0..n).map(|_| Mutex::new(())).collect(),
            host_allocs: Mutex::new(BTreeMap::new()),
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

    /// The default stream of `device` (what the NULL stream means there).
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

    /// The stream behind handle `h`: null is the current context's default stream (which
    /// needs a current context); a live handle is used whatever the current context.
    /// Garbage, destroyed or wrong-kind: `CUDA_ERROR_INVALID_HANDLE`.
    pub(crate) fn stream(&self, h: usize, op: &'static str) -> Result<StreamEntry> {
        if h == 0 {
            let device = self.current(op)?;
            return Ok(StreamEntry { device, stream: self.default_stream(device)? });
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

    /// Whether `[addr, addr + len)` is `cuMemAllocHost` memory.
    ///
    /// # Errors
    ///
    /// `CUDA_ERROR_INVALID_VALUE` when the range starts inside a `cuMemAllocHost`
    /// allocation and runs past its end.
    pub(crate) fn host_memory(&self, addr: usize, len: usize, op: &'static str) -> Result<HostMemory> {
        let map = lock(&self.host_allocs);
        let Some((_, b)) = map.range(..=addr).next_back() else { return Ok(HostMemory::Pageable) };
        let size = b.layout.size();
        if addr - b.addr >= size {
            return Ok(HostMemory::Pageable);
        }
        if len > size - (addr - b.addr) {
            return Err(err(
                CUDA_ERROR_INVALID_VALUE,
                op,
                format!(
                    "[{addr:#x}, +{len}) runs past the end of its cuMemAllocHost allocation ({:#x}, {size} bytes)",
                    b.addr
                ),
            ));
        }
        Ok(HostMemory::Pinned(Arc::clone(b)))
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
