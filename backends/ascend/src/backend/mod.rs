//! The [`Device`] and [`MemPool`] implementation over the loaded runtime.

use crate::loader::{LoadOptions, Runtime, load, sym};
use crate::sys;
use mempool_hal::attr::{AttrId, AttrWidth};
use mempool_hal::{
    Device, DevicePtr, Error, ErrorKind, EventStatus, HostBuffer, HostFn, MemInfo, MemPool, MemPoolExt, OomInfo,
    PoolProps, RawAttrValue, Result, code, round_down, round_up,
};
use std::cell::Cell;
use std::ffi::c_void;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

static NEXT_INSTANCE: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The device instance whose context this thread last made current through this
    /// backend (instances are never reused, unlike context addresses).
    static CURRENT: Cell<u64> = const { Cell::new(0) };
}

/// What every handle of one device shares: the runtime and the device's context.
struct Shared {
    rt: Arc<Runtime>,
    device: u32,
    /// The `aclrtContext`, as an address.
    ctx: usize,
    instance: u64,
    granularity: OnceLock<u64>,
}

impl Shared {
    /// Makes the device's context current on the calling thread (ACL contexts are per
    /// thread), so the backend works from any thread. When this thread last entered this
    /// device it is one thread-local compare.
    #[inline]
    fn enter(&self) -> Result<()> {
        if CURRENT.with(Cell::get) == self.instance { Ok(()) } else { self.enter_slow() }
    }

    #[cold]
    #[inline(never)]
    fn enter_slow(&self) -> Result<()> {
        let f = sym!(self.rt, aclrtSetCurrentContext)?;
        // SAFETY: `ctx` was created by `aclrtCreateContext` on this runtime and is only
        // destroyed when the last handle of the device is dropped.
        let rc = unsafe { f(self.ctx as sys::aclrtContext) };
        self.rt.check(rc, "aclrtSetCurrentContext")?;
        CURRENT.with(|c| c.set(self.instance));
        Ok(())
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Ok(f) = sym!(self.rt, aclrtDestroyContext) {
            // SAFETY: the context is ours and no handle of this device is left.
            let _ = unsafe { f(self.ctx as sys::aclrtContext) };
            CURRENT.with(|c| {
                if c.get() == self.instance {
                    c.set(0);
                }
            });
        }
    }
}

/// One device of the real Ascend runtime; implements [`Device`].
///
/// Cheap to clone. `Send + Sync`: every call first makes the device's context current on
/// the calling thread.
#[derive(Clone)]
pub struct Ascend {
    shared: Arc<Shared>,
}

impl fmt::Debug for Ascend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ascend").field("library", &self.shared.rt.path()).field("device", &self.shared.device).finish()
    }
}

/// A handle's liveness, shared by its clones: destroyed handles are never passed to the
/// runtime again (on hardware that would be undefined behaviour).
#[derive(Debug)]
struct Handle {
    raw: usize,
    instance: u64,
    alive: AtomicBool,
}

impl Handle {
    fn new(raw: *mut c_void, instance: u64) -> Arc<Handle> {
        Arc::new(Handle { raw: raw as usize, instance, alive: AtomicBool::new(true) })
    }
}

/// A stream of the Ascend backend.
#[derive(Debug, Clone)]
pub struct AscendStream(Arc<Handle>);

impl AscendStream {
    /// The runtime's `aclrtStream`, to pass to other CANN calls (a kernel launch, say).
    /// It is valid until the stream is destroyed through the backend; using it is up to
    /// the caller's own `unsafe` code.
    pub fn as_raw(&self) -> sys::aclrtStream {
        self.0.raw as sys::aclrtStream
    }
}

/// An event of the Ascend backend.
#[derive(Debug, Clone)]
pub struct AscendEvent(Arc<Handle>);

/// The runtime calls of a pool's hot path, resolved when the pool is made so that each
/// allocation and free is one indirect call with no symbol lookup. `None` where the runtime
/// lacks the symbol: the call then resolves it again for the `NotSupported` error.
#[derive(Clone, Copy)]
struct PoolCalls {
    malloc: Option<sys::fns::aclrtMemPoolMallocAsync>,
    free: Option<sys::fns::aclrtMemPoolFreeAsync>,
}

impl PoolCalls {
    fn resolve(rt: &Runtime) -> PoolCalls {
        PoolCalls { malloc: sym!(rt, aclrtMemPoolMallocAsync).ok(), free: sym!(rt, aclrtMemPoolFreeAsync).ok() }
    }
}

/// A pool of the Ascend backend.
#[derive(Clone)]
pub struct AscendPool {
    handle: Arc<Handle>,
    shared: Arc<Shared>,
    size: u64,
    /// The device's pool granularity when the pool was made (1 for the probe's pool),
    /// for the rounding-overflow check of `malloc_async`.
    granularity: u64,
    calls: PoolCalls,
}

impl fmt::Debug for AscendPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AscendPool")
            .field("raw", &format_args!("{:#x}", self.handle.raw))
            .field("size", &self.size)
            .finish()
    }
}

#[cold]
#[inline(never)]
fn stale(op: &'static str, what: &str) -> Error {
    Error::new(
        ErrorKind::InvalidHandle,
        code::ACL_ERROR_RT_INVALID_HANDLE,
        op,
        format!("{what} is destroyed or foreign"),
    )
}

impl Ascend {
    /// Finds the runtime with the default search (SPEC.md section 9) and opens `device`.
    ///
    /// # Errors
    ///
    /// `Unavailable` when no runtime is found (the message lists every path tried);
    /// `InvalidDevice` for a device that does not exist.
    pub fn open(device: u32) -> Result<Ascend> {
        Ascend::open_with(&LoadOptions::default(), device)
    }

    /// Like [`Ascend::open`] with explicit search options.
    ///
    /// # Errors
    ///
    /// As [`Ascend::open`].
    pub fn open_with(opts: &LoadOptions, device: u32) -> Result<Ascend> {
        let rt = load(opts)?;
        let dev = i32::try_from(device).map_err(|_| {
            Error::new(ErrorKind::InvalidDevice, code::ACL_ERROR_RT_INVALID_DEVICEID, "open", "device id too large")
        })?;
        let set = sym!(rt, aclrtSetDevice)?;
        // SAFETY: plain integer argument.
        rt.check(unsafe { set(dev) }, "aclrtSetDevice")?;
        let create = sym!(rt, aclrtCreateContext)?;
        let mut ctx: sys::aclrtContext = std::ptr::null_mut();
        // SAFETY: `ctx` is a valid out-pointer.
        rt.check(unsafe { create(&mut ctx, dev) }, "aclrtCreateContext")?;
        let instance = NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed);
        // aclrtCreateContext makes the new context current on this thread.
        CURRENT.with(|c| c.set(instance));
        Ok(Ascend {
            shared: Arc::new(Shared { rt, device, ctx: ctx as usize, instance, granularity: OnceLock::new() }),
        })
    }

    /// The runtime library in use.
    pub fn runtime(&self) -> &Runtime {
        &self.shared.rt
    }

    #[inline]
    fn stream(&self, s: &AscendStream, op: &'static str) -> Result<sys::aclrtStream> {
        let h = &s.0;
        if h.instance != self.shared.instance || !h.alive.load(Ordering::Acquire) {
            return Err(stale(op, "stream"));
        }
        self.shared.enter()?;
        Ok(s.as_raw())
    }

    #[inline]
    fn event(&self, e: &AscendEvent, op: &'static str) -> Result<sys::aclrtEvent> {
        let h = &e.0;
        if h.instance != self.shared.instance || !h.alive.load(Ordering::Acquire) {
            return Err(stale(op, "event"));
        }
        self.shared.enter()?;
        Ok(h.raw as sys::aclrtEvent)
    }

    fn launch(&self, stream: sys::aclrtStream, f: HostFn) -> Result<()> {
        unsafe extern "C" fn trampoline(args: *mut c_void) {
            // SAFETY: `args` is the `Box<HostFn>` leaked by `launch`, and the runtime calls
            // each host function exactly once.
            let f = unsafe { Box::from_raw(args.cast::<HostFn>()) };
            // A panic must not unwind into the runtime's C frames.
            let _ = catch_unwind(AssertUnwindSafe(f));
        }
        let launch = sym!(self.shared.rt, aclrtLaunchHostFunc)?;
        let args = Box::into_raw(Box::new(f));
        // SAFETY: `stream` is live; `trampoline` matches `aclrtHostFunc`; `args` stays
        // valid until the trampoline takes it back.
        let rc = unsafe { launch(stream, Some(trampoline), args.cast()) };
        if rc != code::ACL_SUCCESS {
            // SAFETY: the launch failed, so the runtime will never call the trampoline:
            // the box is still ours.
            drop(unsafe { Box::from_raw(args) });
        }
        self.shared.rt.check(rc, "aclrtLaunchHostFunc")
    }

    fn memcpy_async(
        &self,
        dst: usize,
        src: usize,
        n: usize,
        kind: i32,
        stream: sys::aclrtStream,
        op: &'static str,
    ) -> Result<()> {
        let f = sym!(self.shared.rt, aclrtMemcpyAsync)?;
        // SAFETY: the callers pass device addresses the runtime checks and host buffers
        // they keep alive until the copy has run (staging owned by a later host function).
        let rc = unsafe { f(dst as *mut c_void, n, src as *const c_void, n, kind, stream) };
        self.shared.rt.check_with(rc, op, |rc| {
            if rc == code::ACL_ERROR_RT_PARAM_INVALID { ErrorKind::InvalidPointer } else { crate::result::kind_of(rc) }
        })
    }
}

impl Device for Ascend {
    type Stream = AscendStream;
    type Event = AscendEvent;
    type Pool = AscendPool;

    fn id(&self) -> u32 {
        self.shared.device
    }

    /// Measured once: the USED counter of a one-byte allocation (2 MiB on Ascend
    /// hardware). Falls back to 2 MiB if the probe fails.
    fn pool_granularity(&self) -> u64 {
        *self.shared.granularity.get_or_init(|| probe_granularity(self).unwrap_or(2 << 20))
    }

    fn mem_info(&self) -> Result<MemInfo> {
        self.shared.enter()?;
        let f = sym!(self.shared.rt, aclrtGetMemInfo)?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out-pointers.
        let rc = unsafe { f(sys::ACL_HBM_MEM, &mut free, &mut total) };
        self.shared.rt.check(rc, "aclrtGetMemInfo")?;
        Ok(MemInfo { free: free as u64, total: total as u64 })
    }

    fn create_stream(&self) -> Result<AscendStream> {
        self.shared.enter()?;
        let f = sym!(self.shared.rt, aclrtCreateStream)?;
        let mut s: sys::aclrtStream = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        self.shared.rt.check(unsafe { f(&mut s) }, "aclrtCreateStream")?;
        Ok(AscendStream(Handle::new(s, self.shared.instance)))
    }

    fn destroy_stream(&self, stream: &AscendStream) -> Result<()> {
        let raw = self.stream(stream, "aclrtDestroyStream")?;
        if !stream.0.alive.swap(false, Ordering::AcqRel) {
            return Err(stale("aclrtDestroyStream", "stream"));
        }
        let f = sym!(self.shared.rt, aclrtDestroyStream)?;
        // SAFETY: the stream is live and no clone will pass it to the runtime again.
        self.shared.rt.check(unsafe { f(raw) }, "aclrtDestroyStream")
    }

    fn synchronize_stream(&self, stream: &AscendStream) -> Result<()> {
        let raw = self.stream(stream, "aclrtSynchronizeStream")?;
        let f = sym!(self.shared.rt, aclrtSynchronizeStream)?;
        // SAFETY: the stream is live.
        self.shared.rt.check(unsafe { f(raw) }, "aclrtSynchronizeStream")
    }

    fn synchronize_device(&self) -> Result<()> {
        self.shared.enter()?;
        let f = sym!(self.shared.rt, aclrtSynchronizeDevice)?;
        // SAFETY: no arguments; the context is current.
        self.shared.rt.check(unsafe { f() }, "aclrtSynchronizeDevice")
    }

    fn create_event(&self) -> Result<AscendEvent> {
        self.shared.enter()?;
        let f = sym!(self.shared.rt, aclrtCreateEvent)?;
        let mut e: sys::aclrtEvent = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        self.shared.rt.check(unsafe { f(&mut e) }, "aclrtCreateEvent")?;
        Ok(AscendEvent(Handle::new(e, self.shared.instance)))
    }

    fn destroy_event(&self, event: &AscendEvent) -> Result<()> {
        let raw = self.event(event, "aclrtDestroyEvent")?;
        if !event.0.alive.swap(false, Ordering::AcqRel) {
            return Err(stale("aclrtDestroyEvent", "event"));
        }
        let f = sym!(self.shared.rt, aclrtDestroyEvent)?;
        // SAFETY: the event is live and no clone will pass it to the runtime again.
        self.shared.rt.check(unsafe { f(raw) }, "aclrtDestroyEvent")
    }

    fn record_event(&self, event: &AscendEvent, stream: &AscendStream) -> Result<()> {
        let e = self.event(event, "aclrtRecordEvent")?;
        let s = self.stream(stream, "aclrtRecordEvent")?;
        let f = sym!(self.shared.rt, aclrtRecordEvent)?;
        // SAFETY: both handles are live.
        self.shared.rt.check(unsafe { f(e, s) }, "aclrtRecordEvent")
    }

    fn stream_wait_event(&self, stream: &AscendStream, event: &AscendEvent) -> Result<()> {
        let s = self.stream(stream, "aclrtStreamWaitEvent")?;
        let e = self.event(event, "aclrtStreamWaitEvent")?;
        let f = sym!(self.shared.rt, aclrtStreamWaitEvent)?;
        // SAFETY: both handles are live.
        self.shared.rt.check(unsafe { f(s, e) }, "aclrtStreamWaitEvent")
    }

    fn synchronize_event(&self, event: &AscendEvent) -> Result<()> {
        let e = self.event(event, "aclrtSynchronizeEvent")?;
        let f = sym!(self.shared.rt, aclrtSynchronizeEvent)?;
        // SAFETY: the event is live.
        self.shared.rt.check(unsafe { f(e) }, "aclrtSynchronizeEvent")
    }

    fn query_event(&self, event: &AscendEvent) -> Result<EventStatus> {
        let e = self.event(event, "aclrtQueryEventStatus")?;
        let f = sym!(self.shared.rt, aclrtQueryEventStatus)?;
        let mut status = sys::ACL_EVENT_RECORDED_STATUS_NOT_READY;
        // SAFETY: the event is live; valid out-pointer.
        self.shared.rt.check(unsafe { f(e, &mut status) }, "aclrtQueryEventStatus")?;
        Ok(if status == sys::ACL_EVENT_RECORDED_STATUS_COMPLETE {
            EventStatus::Complete
        } else {
            EventStatus::NotReady
        })
    }

    fn event_elapsed_ms(&self, start: &AscendEvent, end: &AscendEvent) -> Result<f32> {
        let a = self.event(start, "aclrtEventElapsedTime")?;
        let b = self.event(end, "aclrtEventElapsedTime")?;
        let f = sym!(self.shared.rt, aclrtEventElapsedTime)?;
        let mut ms = 0f32;
        // SAFETY: both events are live; valid out-pointer.
        self.shared.rt.check(unsafe { f(&mut ms, a, b) }, "aclrtEventElapsedTime")?;
        Ok(ms)
    }

    fn create_pool(&self, props: &PoolProps) -> Result<AscendPool> {
        const OP: &str = "aclrtMemPoolCreate";
        self.shared.enter()?;
        let f = sym!(self.shared.rt, aclrtMemPoolCreate)?;
        let c = sys::aclrtMemPoolProps::from(props);
        let mut pool: sys::aclrtMemPool = std::ptr::null_mut();
        // SAFETY: valid out-pointer and a properly laid out props struct (checked at
        // compile time in `sys`).
        self.shared.rt.check(unsafe { f(&mut pool, &c) }, OP)?;
        let gran = self.pool_granularity();
        let size = if props.max_size == 0 {
            round_down(self.mem_info()?.total, gran)
        } else {
            round_up(props.max_size, gran).unwrap_or(u64::MAX)
        };
        Ok(self.pool_handle(pool, size, gran))
    }

    fn destroy_pool(&self, pool: &AscendPool) -> Result<()> {
        const OP: &str = "aclrtMemPoolDestroy";
        let h = &pool.handle;
        if h.instance != self.shared.instance || !h.alive.swap(false, Ordering::AcqRel) {
            return Err(Error::new(
                ErrorKind::InvalidHandle,
                code::ACL_ERROR_RT_INTERNAL_ERROR,
                OP,
                "pool is destroyed or foreign",
            ));
        }
        self.shared.enter()?;
        let f = sym!(self.shared.rt, aclrtMemPoolDestroy)?;
        // SAFETY: the pool is live and no clone will pass it to the runtime again.
        self.shared.rt.check(unsafe { f(h.raw as sys::aclrtMemPool) }, OP)
    }

    fn memcpy_h2d_async(&self, dst: DevicePtr, src: &[u8], stream: &AscendStream) -> Result<()> {
        const OP: &str = "aclrtMemcpyAsync";
        let s = self.stream(stream, OP)?;
        if src.is_empty() {
            return Ok(());
        }
        // Stage the bytes: the caller may reuse `src` at once, and the staging buffer is
        // freed by a host function ordered after the copy.
        let staging: Box<[u8]> = src.into();
        self.memcpy_async(
            dst.addr() as usize,
            staging.as_ptr() as usize,
            staging.len(),
            sys::ACL_MEMCPY_HOST_TO_DEVICE,
            s,
            OP,
        )?;
        self.launch(s, Box::new(move || drop(staging)))
    }

    fn memcpy_d2h_async(&self, dst: &HostBuffer, src: DevicePtr, stream: &AscendStream) -> Result<()> {
        const OP: &str = "aclrtMemcpyAsync";
        let s = self.stream(stream, OP)?;
        let len = dst.len();
        if len == 0 {
            return Ok(());
        }
        let mut staging = vec![0u8; len].into_boxed_slice();
        let at = staging.as_mut_ptr() as usize;
        self.memcpy_async(at, src.addr() as usize, len, sys::ACL_MEMCPY_DEVICE_TO_HOST, s, OP)?;
        let dst = dst.clone();
        self.launch(
            s,
            Box::new(move || {
                let mut out = dst.lock();
                let n = out.len().min(staging.len());
                out[..n].copy_from_slice(&staging[..n]);
            }),
        )
    }

    fn memcpy_d2d_async(&self, dst: DevicePtr, src: DevicePtr, len: u64, stream: &AscendStream) -> Result<()> {
        const OP: &str = "aclrtMemcpyAsync";
        let s = self.stream(stream, OP)?;
        if len == 0 {
            return Ok(());
        }
        let n = usize::try_from(len)
            .map_err(|_| Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_INVALID_PARAM, OP, "length too large"))?;
        self.memcpy_async(dst.addr() as usize, src.addr() as usize, n, sys::ACL_MEMCPY_DEVICE_TO_DEVICE, s, OP)
    }

    fn memset_async(&self, dst: DevicePtr, value: u8, len: u64, stream: &AscendStream) -> Result<()> {
        const OP: &str = "aclrtMemsetAsync";
        let s = self.stream(stream, OP)?;
        if len == 0 {
            return Ok(());
        }
        let n = usize::try_from(len)
            .map_err(|_| Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_INVALID_PARAM, OP, "length too large"))?;
        let f = sym!(self.shared.rt, aclrtMemsetAsync)?;
        // SAFETY: the runtime checks the device range; the stream is live.
        let rc = unsafe { f(dst.addr() as *mut c_void, n, i32::from(value), n, s) };
        self.shared.rt.check_with(rc, OP, |rc| {
            if rc == code::ACL_ERROR_RT_PARAM_INVALID { ErrorKind::InvalidPointer } else { crate::result::kind_of(rc) }
        })
    }

    fn launch_host_func(&self, stream: &AscendStream, f: HostFn) -> Result<()> {
        let s = self.stream(stream, "aclrtLaunchHostFunc")?;
        self.launch(s, f)
    }
}

/// Measures the pool granularity: the USED counter of a one-byte allocation.
fn probe_granularity(dev: &Ascend) -> Result<u64> {
    let pool = dev.create_pool_unprobed()?;
    let stream = dev.create_stream()?;
    let measured = (|| {
        let p = pool.malloc_async(1, &stream)?;
        let used = pool.get(mempool_hal::attr::UsedMemCurrent)?;
        // SAFETY: `p` was just allocated from `pool` and nothing used it.
        unsafe { pool.free_async(p, &stream)? };
        dev.synchronize_stream(&stream)?;
        Ok(used)
    })();
    let _ = dev.destroy_stream(&stream);
    let _ = dev.destroy_pool(&pool);
    measured
}

impl Ascend {
    /// A one-granule pool for the granularity probe (its `size` is not known yet).
    fn create_pool_unprobed(&self) -> Result<AscendPool> {
        self.shared.enter()?;
        let f = sym!(self.shared.rt, aclrtMemPoolCreate)?;
        let c = sys::aclrtMemPoolProps::from(&PoolProps::builder().device(self.shared.device).max_size(1).build());
        let mut pool: sys::aclrtMemPool = std::ptr::null_mut();
        // SAFETY: valid out-pointer and props.
        self.shared.rt.check(unsafe { f(&mut pool, &c) }, "aclrtMemPoolCreate")?;
        Ok(self.pool_handle(pool, 1, 1))
    }

    fn pool_handle(&self, pool: sys::aclrtMemPool, size: u64, granularity: u64) -> AscendPool {
        AscendPool {
            handle: Handle::new(pool, self.shared.instance),
            shared: Arc::clone(&self.shared),
            size,
            granularity,
            calls: PoolCalls::resolve(&self.shared.rt),
        }
    }
}

impl AscendPool {
    /// The runtime's `aclrtMemPool`, to pass to other CANN calls. It is valid until the
    /// pool is destroyed through the backend; using it is up to the caller's own `unsafe`
    /// code.
    pub fn as_raw(&self) -> sys::aclrtMemPool {
        self.handle.raw as sys::aclrtMemPool
    }

    #[inline]
    fn raw(&self, op: &'static str, dead_code: i32) -> Result<sys::aclrtMemPool> {
        if !self.handle.alive.load(Ordering::Acquire) {
            return Err(destroyed_pool(op, dead_code));
        }
        self.shared.enter()?;
        Ok(self.as_raw())
    }

    #[inline]
    fn stream(&self, s: &AscendStream, op: &'static str) -> Result<sys::aclrtStream> {
        if s.0.instance != self.shared.instance || !s.0.alive.load(Ordering::Acquire) {
            return Err(stale(op, "stream"));
        }
        Ok(s.as_raw())
    }

    /// The error of a failed `aclrtMemPoolMallocAsync`: 507000 is the pool's out-of-memory
    /// answer, reported with the pool's statistics; the runtime's message is taken first
    /// either way (a later call would overwrite it).
    #[cold]
    #[inline(never)]
    fn malloc_failed(&self, rc: i32, size: u64) -> Error {
        const OP: &str = "aclrtMemPoolMallocAsync";
        if rc == code::ACL_ERROR_RT_INTERNAL_ERROR {
            let _ = self.shared.rt.recent_error_message();
            return self.oom(OP, round_up(size, self.granularity).unwrap_or(size));
        }
        self.shared.rt.failure(rc, OP, crate::result::kind_of(rc))
    }

    fn oom(&self, op: &'static str, requested: u64) -> Error {
        let stats = self.stats().unwrap_or_default();
        Error::out_of_memory(
            op,
            OomInfo {
                requested,
                stats,
                pool_size: self.size,
                // The runtime does not report its free ranges; what is certainly free is
                // the address space the pool has not reserved, as one upper bound.
                largest_free_range: self.size.saturating_sub(stats.reserved_current),
                largest_cached_block: stats.reserved_current - stats.used_current.min(stats.reserved_current),
            },
        )
    }
}

impl MemPool for AscendPool {
    type Stream = AscendStream;

    #[inline]
    fn malloc_async(&self, size: u64, stream: &AscendStream) -> Result<DevicePtr> {
        const OP: &str = "aclrtMemPoolMallocAsync";
        let s = self.stream(stream, OP)?;
        let pool = self.raw(OP, code::ACL_ERROR_RT_INTERNAL_ERROR)?;
        if size == 0 {
            return Err(bad_size("size 0"));
        }
        let n = match usize::try_from(size) {
            Ok(n) if round_up(size, self.granularity).is_some() => n,
            _ => return Err(bad_size("size overflows when rounded")),
        };
        let f = match self.calls.malloc {
            Some(f) => f,
            None => resolve_late(&self.shared.rt, &self.shared.rt.symbols().aclrtMemPoolMallocAsync, OP)?,
        };
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer; pool and stream are live handles.
        let rc = unsafe { f(&mut p, n, pool, s) };
        if rc != code::ACL_SUCCESS {
            return Err(self.malloc_failed(rc, size));
        }
        Ok(DevicePtr::from_addr(p as u64))
    }

    #[inline]
    unsafe fn free_async(&self, ptr: DevicePtr, stream: &AscendStream) -> Result<()> {
        const OP: &str = "aclrtMemPoolFreeAsync";
        let s = self.stream(stream, OP)?;
        self.shared.enter()?;
        if ptr.is_null() {
            return Err(null_free());
        }
        let f = match self.calls.free {
            Some(f) => f,
            None => resolve_late(&self.shared.rt, &self.shared.rt.symbols().aclrtMemPoolFreeAsync, OP)?,
        };
        // SAFETY: the caller guarantees `ptr` is a live allocation with every use ordered
        // before this free (the trait's contract); the stream is live.
        let rc = unsafe { f(ptr.addr() as *mut c_void, s) };
        self.shared.rt.check_with(rc, OP, |rc| {
            if rc == code::ACL_ERROR_RT_PARAM_INVALID { ErrorKind::InvalidPointer } else { crate::result::kind_of(rc) }
        })
    }

    fn trim_to(&self, min_bytes_to_keep: u64) -> Result<()> {
        const OP: &str = "aclrtMemPoolTrimTo";
        let pool = self.raw(OP, code::ACL_ERROR_RT_INTERNAL_ERROR)?;
        let f = sym!(self.shared.rt, aclrtMemPoolTrimTo)?;
        let keep = usize::try_from(min_bytes_to_keep).unwrap_or(usize::MAX);
        // SAFETY: the pool is live.
        let rc = unsafe { f(pool, keep) };
        self.shared.rt.check_with(rc, OP, |rc| {
            if rc == code::ACL_ERROR_RT_INTERNAL_ERROR { ErrorKind::InvalidParam } else { crate::result::kind_of(rc) }
        })
    }

    fn get_attr_raw(&self, attr: AttrId) -> Result<RawAttrValue> {
        const OP: &str = "aclrtMemPoolGetAttr";
        let pool = self.raw(OP, code::ACL_ERROR_RT_PARAM_INVALID)?;
        let f = sym!(self.shared.rt, aclrtMemPoolGetAttr)?;
        let id = i32::try_from(attr.0).unwrap_or(i32::MAX);
        // Room for the widest value, whatever the id.
        let mut buf = 0u64;
        // SAFETY: the pool is live; `buf` has room for a u32 or a u64 value.
        let rc = unsafe { f(pool, id, (&mut buf as *mut u64).cast()) };
        self.shared.rt.check_with(rc, OP, |rc| attr_kind(attr, rc))?;
        Ok(match attr.info().map(|i| i.width) {
            Some(AttrWidth::U32) => {
                RawAttrValue::U32(u32::from_ne_bytes(buf.to_ne_bytes()[..4].try_into().unwrap_or([0; 4])))
            }
            _ => RawAttrValue::U64(buf),
        })
    }

    fn set_attr_raw(&self, attr: AttrId, value: RawAttrValue) -> Result<()> {
        const OP: &str = "aclrtMemPoolSetAttr";
        if let Some(info) = attr.info() {
            if info.width != value.width() {
                return Err(Error::new(
                    ErrorKind::InvalidParam,
                    code::ACL_ERROR_RT_PARAM_INVALID,
                    OP,
                    format!("{attr:?} takes a {:?} value", info.width),
                ));
            }
        }
        let pool = self.raw(OP, code::ACL_ERROR_RT_PARAM_INVALID)?;
        let f = sym!(self.shared.rt, aclrtMemPoolSetAttr)?;
        let id = i32::try_from(attr.0).unwrap_or(i32::MAX);
        let mut buf = match value {
            RawAttrValue::U32(v) => {
                let mut b = [0u8; 8];
                b[..4].copy_from_slice(&v.to_ne_bytes());
                u64::from_ne_bytes(b)
            }
            RawAttrValue::U64(v) => v,
        };
        // SAFETY: the pool is live; `buf` holds the value at its start in the id's width.
        let rc = unsafe { f(pool, id, (&mut buf as *mut u64).cast()) };
        self.shared.rt.check_with(rc, OP, |rc| attr_kind(attr, rc))
    }

    fn size(&self) -> u64 {
        self.size
    }
}

#[cold]
#[inline(never)]
fn destroyed_pool(op: &'static str, code: i32) -> Error {
    Error::new(ErrorKind::InvalidHandle, code, op, "the pool was destroyed")
}

#[cold]
#[inline(never)]
fn bad_size(why: &str) -> Error {
    Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_RT_PARAM_INVALID, "aclrtMemPoolMallocAsync", why)
}

#[cold]
#[inline(never)]
fn null_free() -> Error {
    Error::new(ErrorKind::InvalidPointer, code::ACL_ERROR_INVALID_PARAM, "aclrtMemPoolFreeAsync", "null pointer")
}

/// A hot-path symbol the pool found missing when it was made, resolved through the
/// loader's slot again, off the hot path: the loader's `NotSupported` error naming it.
#[cold]
#[inline(never)]
fn resolve_late<F: Copy>(rt: &Runtime, slot: &OnceLock<Option<F>>, name: &'static str) -> Result<F> {
    rt.resolve(slot, name)
}

/// The portable kind of an attribute call's failure.
fn attr_kind(attr: AttrId, rc: i32) -> ErrorKind {
    match (attr.info().map(|i| i.access), rc) {
        (None, code::ACL_ERROR_RT_PARAM_INVALID) => ErrorKind::UnknownAttribute,
        (Some(mempool_hal::attr::Access::ReadOnly), code::ACL_ERROR_RT_PARAM_INVALID) => ErrorKind::ReadOnly,
        (_, code::ACL_ERROR_RT_INTERNAL_ERROR) => ErrorKind::InvalidParam,
        _ => crate::result::kind_of(rc),
    }
}
