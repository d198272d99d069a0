//! The shim's process-wide state: the emulated platform, handle registries, the
//! per-thread current context and last error message.

use crate::ffi::{code, err, stale};
use crate::heap::SyncHeap;
use mempool_emu::cabi::{HandleKind, Handles, HostAllocs, HostBlock, HostRange};
use mempool_emu::{EmuEvent, EmuPool, EmuStream, Emulator};
use mempool_hal::{Device, Error, PoolCall, PoolProps, Result};
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// The total of each kind of core a device's resource limit counts (cube, vector, as the
/// device profile of `exports::device_info` has them): the limits' ceilings and their
/// values after a reset.
pub(crate) const CORES: [u32; 2] = [24, 48];

/// A stream handle's target.
#[derive(Clone)]
pub(crate) struct StreamEntry {
    pub(crate) device: u32,
    pub(crate) stream: EmuStream,
    /// The flags and priority it was created with (`aclrtStreamGetFlags`, `GetPriority`);
    /// 0 for a default stream.
    pub(crate) flags: u32,
    pub(crate) priority: u32,
}

/// An event handle's target.
#[derive(Clone)]
pub(crate) struct EventEntry {
    pub(crate) event: EmuEvent,
    /// The flags it was created with (`aclrtCreateEventWithFlag`; CANN's default for
    /// `aclrtCreateEvent`).
    pub(crate) flags: u32,
    /// Made by `aclrtCreateEventExWithFlag` (CANN's "new mode").
    pub(crate) ex: bool,
    /// The record flag and the wait flag its first `aclrtRecordEventWithFlag` and
    /// `aclrtStreamWaitEventWithFlag` used, which it keeps.
    pub(crate) fixed: Arc<Mutex<[Option<u32>; 2]>>,
}

impl EventEntry {
    /// A new event's entry: no record or wait flag used yet.
    pub(crate) fn new(event: EmuEvent, flags: u32, ex: bool) -> EventEntry {
        EventEntry { event, flags, ex, fixed: Arc::default() }
    }
}

/// Everything the exported functions share.
pub(crate) struct Shim {
    pub(crate) devices: Vec<Emulator>,
    pub(crate) streams: Handles<StreamEntry>,
    pub(crate) events: Handles<EventEntry>,
    pub(crate) pools: Handles<EmuPool>,
    pub(crate) contexts: Handles<u32>,
    default_contexts: Vec<OnceLock<usize>>,
    default_streams: Vec<OnceLock<EmuStream>>,
    sync_alloc: Vec<OnceLock<SyncHeap>>,
    /// Serializes the lazy setup of a device's default stream and synchronous heap, so
    /// two threads making their first use at once create the emulator's objects once:
    /// a loser's stream would keep a worker thread and its pool would stay registered.
    setup: Vec<Mutex<()>>,
    /// The `aclrtMallocHost` allocations by start address.
    pub(crate) host_allocs: HostAllocs,
    /// How many `aclrtSetDevice` calls of each device no `aclrtResetDevice` has undone
    /// (process-wide, as CANN counts them).
    pub(crate) set_counts: Mutex<Vec<u64>>,
    /// The failure mode set on each stream handle (`aclrtSetStreamFailureMode`).
    pub(crate) failure_modes: Mutex<HashMap<(u32, usize), u64>>,
    /// The stream handles that ran `aclrtLaunchHostFunc`: CANN subscribes such a stream
    /// to its own callback thread for good, so user subscriptions and callbacks on it
    /// answer 107011 until it is destroyed.
    pub(crate) host_func_streams: Mutex<HashSet<usize>>,
    /// Callback subscriptions (`aclrtSubscribeReport`).
    pub(crate) reports: crate::report::Reports,
    /// The external-allocator registry (`aclrtAllocator*`).
    pub(crate) allocators: crate::allocators::Allocators,
    /// Notification handles (`aclrtCreateNotify`).
    pub(crate) notifies: Handles<mempool_emu::EmuNotify>,
    /// Host-function subscriptions (`aclrtSubscribeHostFunc`): a host function launched
    /// on a subscribed stream runs on the subscriber's thread.
    pub(crate) host_func_subs: crate::report::Reports,
    /// Stream state callbacks by name (`aclrtRegStreamStateCallback`).
    pub(crate) stream_states: Mutex<std::collections::BTreeMap<String, StreamStateCallback>>,
    /// Each device's resource limits (cube, vector cores; `aclrtSetDeviceResLimit`).
    pub(crate) res_limits: Mutex<Vec<[u32; 2]>>,
    /// Live stream configuration handles (`aclrtCreateStreamConfigHandle`), by address.
    pub(crate) stream_configs: Mutex<HashSet<usize>>,
    /// The handle each device's default stream is known by once a program asked for it
    /// (`aclrtCtxGetCurrentDefaultStream`).
    pub(crate) default_stream_handles: Vec<OnceLock<usize>>,
}

/// A registered stream state callback and its argument.
#[derive(Clone, Copy)]
pub(crate) struct StreamStateCallback {
    pub(crate) func:
        unsafe extern "C" fn(*mut std::ffi::c_void, mempool_ascend::sys::aclrtStreamState, *mut std::ffi::c_void),
    pub(crate) args: *mut std::ffi::c_void,
}
// SAFETY: the argument is only handed back to the C function it was registered with; the
// C caller owns its thread safety (the ACL contract).
unsafe impl Send for StreamStateCallback {}

impl Shim {
    /// Calls every registered stream state callback for `stream` (a handle; the default
    /// stream is null), on the calling thread, as CANN does around a create or destroy.
    pub(crate) fn stream_state(&self, stream: usize, state: mempool_ascend::sys::aclrtStreamState) {
        let cbs: Vec<StreamStateCallback> =
            self.stream_states.lock().unwrap_or_else(PoisonError::into_inner).values().copied().collect();
        for cb in cbs {
            // SAFETY: the C caller registered `func` to be called with a stream, a state
            // and `args`.
            unsafe { (cb.func)(stream as *mut std::ffi::c_void, state, cb.args) };
        }
    }
}

impl Shim {
    fn new() -> Result<Shim> {
        // The host functions of a device run on one thread, as a CANN context's do on its
        // callback thread (all contexts of a device share it here).
        let root = Emulator::builder().with_env()?.host_functions_on_one_thread(true).build()?;
        // Task failures reach the exception callback (`exports::exception`).
        root.set_failure_hook(Some(Arc::new(crate::exception_info::dispatch)));
        let n = root.config().devices;
        let devices = (0..n).map(|i| root.device(i)).collect::<Result<Vec<_>>>()?;
        Ok(Shim {
            devices,
            streams: Handles::new(HandleKind::Stream),
            events: Handles::new(HandleKind::Event),
            pools: Handles::new(HandleKind::Pool),
            contexts: Handles::new(HandleKind::Context),
            default_contexts: (0..n).map(|_| OnceLock::new()).collect(),
            default_streams: (0..n).map(|_| OnceLock::new()).collect(),
            sync_alloc: (0..n).map(|_| OnceLock::new()).collect(),
            setup: (0..n).map(|_| Mutex::new(())).collect(),
            host_allocs: HostAllocs::default(),
            set_counts: Mutex::new(vec![0; n as usize]),
            failure_modes: Mutex::new(HashMap::new()),
            host_func_streams: Mutex::new(HashSet::new()),
            reports: crate::report::Reports::default(),
            allocators: crate::allocators::Allocators::new(),
            notifies: Handles::new(HandleKind::Notify),
            host_func_subs: crate::report::Reports::default(),
            stream_states: Mutex::new(std::collections::BTreeMap::new()),
            res_limits: Mutex::new(vec![CORES; n as usize]),
            stream_configs: Mutex::new(HashSet::new()),
            default_stream_handles: (0..n).map(|_| OnceLock::new()).collect(),
        })
    }

    /// Where `[addr, addr + len)` lies: in one `aclrtMallocHost` allocation or one range
    /// registered with `aclrtHostRegister*` (`Some`, kept for queued work), or in pageable
    /// memory (`None`).
    ///
    /// # Errors
    ///
    /// 107000 when the range starts inside an `aclrtMallocHost` allocation and runs past
    /// its end.
    pub(crate) fn host_memory(&self, addr: usize, len: usize, op: &'static str) -> Result<Option<Arc<HostBlock>>> {
        match self.host_allocs.lookup(addr, len) {
            HostRange::Overrun { base, size } => Err(err(
                code::ACL_ERROR_RT_PARAM_INVALID,
                op,
                format!(
                    "[{addr:#x}, +{len}) runs past the end of its aclrtMallocHost allocation ({base:#x}, {size} bytes)"
                ),
            )),
            HostRange::Pinned(b) => Ok(Some(b)),
            // A range registered with `aclrtHostRegister*` is page-locked memory too; one
            // that runs past its registration is pageable.
            HostRange::Pageable => match self.devices[0].registered_host(addr, len) {
                HostRange::Pinned(b) => Ok(Some(b)),
                HostRange::Overrun { .. } | HostRange::Pageable => Ok(None),
            },
        }
    }

    /// Forgets what the library keeps about stream handle `h` of `device` (its failure
    /// mode, its host-function mark, its callback subscription, its registered
    /// allocator): the stream is being destroyed.
    pub(crate) fn forget_stream(&self, device: u32, h: usize) {
        self.failure_modes.lock().unwrap_or_else(PoisonError::into_inner).remove(&(device, h));
        self.host_func_streams.lock().unwrap_or_else(PoisonError::into_inner).remove(&h);
        self.reports.forget(device, h);
        self.host_func_subs.forget(device, h);
        self.allocators.by_stream().remove(&h);
    }

    /// The emulator of `device` (checked by the callers).
    pub(crate) fn dev(&self, device: u32) -> &Emulator {
        &self.devices[device as usize]
    }

    /// Checks a device id from C.
    pub(crate) fn device_id(&self, id: i64, op: &'static str) -> Result<u32> {
        u32::try_from(id).ok().filter(|&d| (d as usize) < self.devices.len()).ok_or_else(|| {
            err(
                code::ACL_ERROR_RT_INVALID_DEVICEID,
                op,
                format!("device {id} does not exist ({} device(s))", self.devices.len()),
            )
        })
    }

    /// The default context of `device` (what `aclrtSetDevice` makes current).
    pub(crate) fn default_context(&self, device: u32) -> usize {
        *self.default_contexts[device as usize].get_or_init(|| self.contexts.insert(device))
    }

    /// Whether `h` is a device's default context (only `aclrtResetDevice` ends those).
    pub(crate) fn is_default_context(&self, h: usize) -> bool {
        self.default_contexts.iter().any(|c| c.get() == Some(&h))
    }

    /// The default stream of `device` (what a null stream means).
    pub(crate) fn default_stream(&self, device: u32) -> Result<EmuStream> {
        let slot = &self.default_streams[device as usize];
        if let Some(s) = slot.get() {
            return Ok(s.clone());
        }
        // Created under the device's setup lock, once: `OnceLock::get_or_try_init` is
        // not stable, and creating before `get_or_init` would leave the loser of a race
        // with a stream (and its worker thread) nobody destroys.
        let _setup = self.setup[device as usize].lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(s) = slot.get() {
            return Ok(s.clone());
        }
        let s = self.dev(device).create_stream()?;
        Ok(slot.get_or_init(|| s).clone())
    }

    /// The synchronous allocator (`aclrtMalloc`) of `device`.
    pub(crate) fn sync_alloc(&self, device: u32) -> Result<&SyncHeap> {
        let slot = &self.sync_alloc[device as usize];
        if let Some(a) = slot.get() {
            return Ok(a);
        }
        // Under the device's setup lock, as in `default_stream`: the hidden pool and
        // stream are created once, never by a thread that then loses the race.
        let _setup = self.setup[device as usize].lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(a) = slot.get() {
            return Ok(a);
        }
        let dev = self.dev(device);
        let pool = dev.create_pool(&PoolProps::builder().device(device).build())?;
        let stream = match dev.create_stream() {
            Ok(s) => s,
            Err(e) => {
                // Nothing may stay behind a failed setup either.
                let _ = dev.destroy_pool(&pool);
                return Err(e);
            }
        };
        let gran = dev.config().granularity;
        Ok(slot.get_or_init(|| SyncHeap::new(pool, stream, gran)))
    }

    /// The device and synchronous allocator whose memory holds `addr`, if any.
    pub(crate) fn heap_of(&self, addr: u64) -> Option<(u32, &SyncHeap)> {
        self.sync_alloc
            .iter()
            .enumerate()
            .find_map(|(d, h)| h.get().filter(|h| h.contains(addr)).map(|h| (d as u32, h)))
    }

    /// Refuses a device range of a copy or memset that falls in `aclrtMalloc` memory but
    /// not inside one live allocation (107000); other ranges are left to the emulator.
    pub(crate) fn check_device_range(&self, addr: u64, len: u64, op: &'static str) -> Result<()> {
        match self.heap_of(addr) {
            Some((_, h)) => h.check_range(addr, len, op).unwrap_or(Ok(())),
            None => Ok(()),
        }
    }

    /// The stream behind handle `h` (null: the current device's default stream), checked
    /// to belong to the current device.
    /// A destroyed or unknown handle is 107017 before a missing context is 107002, as CANN
    /// checks the handle first.
    pub(crate) fn stream(&self, h: usize, op: &'static str) -> Result<StreamEntry> {
        if h == 0 {
            let device = current(op)?;
            return Ok(StreamEntry { device, stream: self.default_stream(device)?, flags: 0, priority: 0 });
        }
        let e = self.streams.get(h).ok_or_else(|| stale(op, "stream", h))?;
        let device = current(op)?;
        if e.device != device {
            return Err(err(
                code::ACL_ERROR_RT_STREAM_CONTEXT,
                op,
                format!("stream {h:#x} belongs to device {}, the current device is {device}", e.device),
            ));
        }
        Ok(e)
    }

    /// The stream of a pool allocation or free (`h` non-null), checked as CANN checks it
    /// there: a destroyed or unknown handle is 107017 first; then no current context, or
    /// a stream of another device, is 107003 (`ACL_ERROR_RT_STREAM_CONTEXT`).
    pub(crate) fn pool_stream(&self, h: usize, op: &'static str) -> Result<StreamEntry> {
        let e = self.streams.get(h).ok_or_else(|| stale(op, "stream", h))?;
        match CURRENT.with(Cell::get) {
            Some((d, _)) if d == e.device => Ok(e),
            Some((d, _)) => Err(err(
                code::ACL_ERROR_RT_STREAM_CONTEXT,
                op,
                format!("stream {h:#x} belongs to device {}, the current device is {d}", e.device),
            )),
            None => Err(err(
                code::ACL_ERROR_RT_STREAM_CONTEXT,
                op,
                format!(
                    "no current device or context on this thread, so stream {h:#x} (device {}) is not in it \
                     (call aclrtSetDevice)",
                    e.device
                ),
            )),
        }
    }

    /// The stream behind handle `h` (null: the current device's default stream), whatever
    /// device it belongs to; a current device is still needed (CANN's `aclrtStreamQuery`
    /// checks the context but not which one the stream belongs to, and its stream
    /// synchronizations switch to the stream's context).
    pub(crate) fn stream_of_any_device(&self, h: usize, op: &'static str) -> Result<StreamEntry> {
        if h == 0 {
            let device = current(op)?;
            return Ok(StreamEntry { device, stream: self.default_stream(device)?, flags: 0, priority: 0 });
        }
        // The handle first (107017), then the context (107002), as CANN checks them.
        let e = self.streams.get(h).ok_or_else(|| stale(op, "stream", h))?;
        current(op)?;
        Ok(e)
    }

    /// Whether `h` is the handle a device's default stream is known by.
    pub(crate) fn is_default_stream_handle(&self, h: usize) -> bool {
        self.default_stream_handles.iter().any(|d| d.get() == Some(&h))
    }

    /// The handle of `device`'s default stream, made once, when first asked for
    /// (`aclrtCtxGetCurrentDefaultStream`); the library's calls take NULL for the same stream.
    pub(crate) fn default_stream_handle(&self, device: u32) -> Result<usize> {
        let slot = &self.default_stream_handles[device as usize];
        if let Some(h) = slot.get() {
            return Ok(*h);
        }
        let stream = self.default_stream(device)?;
        let _setup = self.setup[device as usize].lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(h) = slot.get() {
            return Ok(*h);
        }
        let h = self.streams.insert(StreamEntry { device, stream, flags: 0, priority: 0 });
        Ok(*slot.get_or_init(|| h))
    }

    /// The event behind handle `h`.
    pub(crate) fn event(&self, h: usize, op: &'static str) -> Result<EventEntry> {
        self.events.get(h).ok_or_else(|| stale(op, "event", h))
    }

    /// The pool behind handle `h`; an unknown handle answers with the code CANN gives for
    /// `call` (507000 for destroy/malloc/trim, 107000 for attributes).
    pub(crate) fn pool(&self, h: usize, op: &'static str, call: PoolCall) -> Result<EmuPool> {
        self.pools.get(h).ok_or_else(|| Error::destroyed_pool(op, call, format_args!("pool {h:#x}")))
    }
}

/// The one shim of the process, made at the first call.
pub(crate) fn shim(op: &'static str) -> Result<&'static Shim> {
    static SHIM: OnceLock<std::result::Result<Shim, Error>> = OnceLock::new();
    SHIM.get_or_init(Shim::new)
        .as_ref()
        .map_err(|e| err(code::ACL_ERROR_RT_INTERNAL_ERROR, op, format!("the emulator could not start: {e}")))
}

thread_local! {
    /// The current (device, context handle) of this thread.
    static CURRENT: Cell<Option<(u32, usize)>> = const { Cell::new(None) };
    /// The number of the last task this thread enqueued (`aclrtGetThreadLastTaskId`);
    /// `u32::MAX` before any, as on CANN.
    static LAST_TASK: Cell<u32> = const { Cell::new(u32::MAX) };
}

/// Notes the task the calling thread just enqueued on `e` (`aclrtGetThreadLastTaskId`):
/// its position on the stream, as task failures number it. Another thread enqueuing on
/// the same stream at once may move it past this thread's task.
pub(crate) fn note_task(s: &Shim, e: &StreamEntry) {
    if let Ok(t) = s.dev(e.device).last_task(&e.stream) {
        LAST_TASK.with(|c| c.set(t as u32));
    }
}

/// The number of the last task the calling thread enqueued.
pub(crate) fn last_task() -> u32 {
    LAST_TASK.with(Cell::get)
}

/// Whether `aclInit` has run since the last `aclFinalize`, and whether `aclFinalize` has
/// run since the last `aclInit` (CANN keeps both flags: a first `aclFinalize` before any
/// `aclInit` succeeds), and the init reference count: every `aclInit`, the first and each
/// repeat, adds one; `aclFinalizeReference` takes one away and finalizes at zero;
/// `aclFinalize` clears it.
#[derive(Default)]
pub(crate) struct Lifecycle {
    pub(crate) initialized: bool,
    pub(crate) finalized: bool,
    pub(crate) references: u64,
}

/// The process's lifecycle flags.
pub(crate) fn lifecycle() -> std::sync::MutexGuard<'static, Lifecycle> {
    static L: Mutex<Lifecycle> = Mutex::new(Lifecycle { initialized: false, finalized: false, references: 0 });
    L.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The current device of this thread.
pub(crate) fn current(op: &'static str) -> Result<u32> {
    CURRENT.with(Cell::get).map(|(d, _)| d).ok_or_else(|| {
        err(code::ACL_ERROR_RT_CONTEXT_NULL, op, "no current device or context on this thread (call aclrtSetDevice)")
    })
}

/// The current context handle of this thread, if any.
pub(crate) fn current_context() -> Option<usize> {
    CURRENT.with(Cell::get).map(|(_, c)| c)
}

/// Makes `(device, context)` current on this thread (`None` clears it).
pub(crate) fn set_current(v: Option<(u32, usize)>) {
    CURRENT.with(|c| c.set(v));
}
