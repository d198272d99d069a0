//! Hostile input at every C entry point of the drop-in `libcuda.so`.
//!
//! A table with one or more rows per (entry point, input): null, garbage, destroyed and
//! wrong-kind handles (and the default stream handles `CU_STREAM_LEGACY` and
//! `CU_STREAM_PER_THREAD`, which need a current context and cannot be destroyed); null,
//! garbage, freed, interior and host pointers; sizes 0 and `SIZE_MAX`; unknown attributes
//! and flags; bad pool properties; calls on a thread with no current context. Each row states the `CUresult` the library documents for it. After
//! every row the statistics of the witness pools (attributes 5-8) must be unchanged, a
//! refused call must leave its out-pointer alone and leave a message naming the entry
//! point ([`cuda::last_error_message`]), the calling thread's current context must be the
//! same, and nothing may panic or crash. Then threads use a stream while the main thread
//! destroys it: every call answers 0 or `CUDA_ERROR_INVALID_HANDLE`.
//!
//! A libtest-mimic harness (`harness = false`): `main` sets the platform up through the
//! environment (three devices) before the first call, builds one fixture, then runs each
//! row as a trial of its own, `row::<entry>(<input>)`, one at a time on the main thread
//! (whose current context is device 0's primary context).

mod common;

use common::{check, exported_functions, init_and_use, message};
use cuda::exports::*;
use cuda::types::*;
use libtest_mimic::{Arguments, Failed, Trial};
use std::collections::HashMap;
use std::ffi::{CStr, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::null_mut;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const OK: CUresult = CUDA_SUCCESS;
const VALUE: CUresult = CUDA_ERROR_INVALID_VALUE;
const OOM: CUresult = CUDA_ERROR_OUT_OF_MEMORY;
const DEVICE: CUresult = CUDA_ERROR_INVALID_DEVICE;
const CONTEXT: CUresult = CUDA_ERROR_INVALID_CONTEXT;
const HANDLE: CUresult = CUDA_ERROR_INVALID_HANDLE;
const SUPPORT: CUresult = CUDA_ERROR_NOT_SUPPORTED;

const GRAN: usize = 2 << 20;
const DEVICE_MEMORY: usize = 1 << 30;
const POOL_SIZE: usize = 64 << 20;
const HOST_LEN: usize = 4096;
/// What an out-pointer holds before a call; a refused call must leave it.
const SENTINEL: usize = 0x05e4_71e1;
/// Garbage handle and pointer values.
const GARBAGE: [usize; 4] = [0x1, 0x1234, 0xdead_beef, usize::MAX];
/// Garbage stream handles: 0x1 and 0x2 are the default streams (`CU_STREAM_LEGACY`,
/// `CU_STREAM_PER_THREAD`).
const GARBAGE_STREAMS: [usize; 4] = [0x3, 0x1234, 0xdead_beef, usize::MAX];

/// The objects the rows refer to, as plain addresses and handle values.
struct Fx {
    ctx: usize,
    /// Device 2's primary context, retained once and released again (inactive).
    released_ctx: usize,
    /// A live stream of device 0, one of device 1, a destroyed one.
    s: usize,
    s1: usize,
    dead_stream: usize,
    /// An event recorded (complete) on `s`, one never recorded, one without timing
    /// (recorded), a destroyed one.
    e: usize,
    e_unrecorded: usize,
    e_untimed: usize,
    dead_event: usize,
    /// The witness pools (release threshold `UINT64_MAX`): `p` on device 0 holds live `a`
    /// and cached `freed`; `p1` on device 1.
    p: usize,
    p1: usize,
    dead_pool: usize,
    default_pool: usize,
    a: u64,
    freed: u64,
    dead_pool_ptr: u64,
    /// `cuMemAllocHost` memory (HOST_LEN bytes), and one already freed.
    host: usize,
    host_freed: usize,
    /// A heap buffer of HOST_LEN bytes (pageable).
    buf: usize,
}

/// A handle argument.
#[derive(Clone, Copy, Debug)]
enum H {
    Null,
    Raw(usize),
    S,
    DeadS,
    E,
    DeadE,
    P,
    DeadP,
    Ctx,
}

impl Fx {
    fn h(&self, h: H) -> usize {
        match h {
            H::Null => 0,
            H::Raw(v) => v,
            H::S => self.s,
            H::DeadS => self.dead_stream,
            H::E => self.e,
            H::DeadE => self.dead_event,
            H::P => self.p,
            H::DeadP => self.dead_pool,
            H::Ctx => self.ctx,
        }
    }
}

/// The kinds of handle an entry point takes.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Stream,
    Event,
    Pool,
}

/// Hostile values for a handle of `kind`: garbage, the destroyed one, the other kinds and
/// a context (null is listed where it is hostile: a null stream is the default stream).
fn bad_handles(kind: Kind) -> Vec<(String, H)> {
    let garbage = if kind == Kind::Stream { GARBAGE_STREAMS } else { GARBAGE };
    let mut v: Vec<(String, H)> = garbage.iter().map(|&g| (format!("garbage {g:#x}"), H::Raw(g))).collect();
    v.push((
        "a destroyed handle".into(),
        match kind {
            Kind::Stream => H::DeadS,
            Kind::Event => H::DeadE,
            Kind::Pool => H::DeadP,
        },
    ));
    for (k, name, h) in [
        (Kind::Stream, "a stream handle", H::S),
        (Kind::Event, "an event handle", H::E),
        (Kind::Pool, "a pool handle", H::P),
    ] {
        if k != kind {
            v.push((name.into(), h));
        }
    }
    v.push(("a context handle".into(), H::Ctx));
    v
}

/// A device address taken from the fixture.
type Addr = Box<dyn Fn(&Fx) -> u64 + Send + Sync>;

/// Device pointers a copy, memset or free must refuse.
fn bad_device_pointers(fx_free: bool) -> Vec<(String, Addr)> {
    let mut v: Vec<(String, Addr)> =
        GARBAGE.iter().map(|&g| (format!("garbage {g:#x}"), Box::new(move |_: &Fx| g as u64) as Addr)).collect();
    v.push(("a freed pointer".into(), Box::new(|f: &Fx| f.freed)));
    v.push(("a pointer of a destroyed pool".into(), Box::new(|f: &Fx| f.dead_pool_ptr)));
    v.push(("the last byte of the pool (unallocated)".into(), Box::new(|f: &Fx| f.a + POOL_SIZE as u64 - 1)));
    v.push(("a host heap address".into(), Box::new(|f: &Fx| f.buf as u64)));
    if fx_free {
        v.push(("an interior pointer (a + 1)".into(), Box::new(|f: &Fx| f.a + 1)));
        v.push(("cuMemAllocHost memory".into(), Box::new(|f: &Fx| f.host as u64)));
    }
    v
}

type Call = Box<dyn Fn(&Fx) -> CUresult + Send + Sync>;

struct Row {
    entry: &'static str,
    input: String,
    want: CUresult,
    /// Run on a fresh thread, with no current context.
    fresh: bool,
    call: Call,
}

#[derive(Default)]
struct Table {
    rows: Vec<Row>,
}

impl Table {
    fn add(
        &mut self,
        entry: &'static str,
        input: impl Into<String>,
        want: CUresult,
        call: impl Fn(&Fx) -> CUresult + Send + Sync + 'static,
    ) {
        self.rows.push(Row { entry, input: input.into(), want, fresh: false, call: Box::new(call) });
    }

    fn fresh(
        &mut self,
        entry: &'static str,
        input: impl Into<String>,
        want: CUresult,
        call: impl Fn(&Fx) -> CUresult + Send + Sync + 'static,
    ) {
        self.rows.push(Row { entry, input: input.into(), want, fresh: true, call: Box::new(call) });
    }
}

/// Panics (failing the row) when a refused call wrote its out-pointer.
fn untouched(rc: CUresult, slot: usize) -> CUresult {
    assert!(rc == OK || slot == SENTINEL, "a refused call (code {rc}) wrote its out-pointer: {slot:#x}");
    rc
}

fn st(v: usize) -> CUstream {
    v as CUstream
}
fn ev(v: usize) -> CUevent {
    v as CUevent
}
fn pl(v: usize) -> CUmemoryPool {
    v as CUmemoryPool
}

/// Statistics (attributes 5-8) of the witness pools.
fn stats(fx: &Fx) -> Vec<u64> {
    let mut out = Vec::new();
    for pool in [fx.p, fx.p1] {
        for attr in 5..=8 {
            let mut v = u64::MAX;
            // SAFETY: a live pool and a writable `cuuint64_t`, the width of attributes 5-8.
            let rc = unsafe { cuMemPoolGetAttribute(pl(pool), attr, (&raw mut v).cast()) };
            assert_eq!(rc, OK, "reading attribute {attr} of a witness pool: {}", message());
            out.push(v);
        }
    }
    out
}

/// Creates a witness pool on `device` whose release threshold keeps everything.
fn witness_pool(device: i32) -> usize {
    let mut pool: CUmemoryPool = null_mut();
    let props = CUmemPoolProps::device(device, POOL_SIZE);
    let keep = u64::MAX;
    // SAFETY: valid out-pointer and props; the threshold is a `cuuint64_t`.
    unsafe {
        check(cuMemPoolCreate(&mut pool, &props), "creating a witness pool");
        check(cuMemPoolSetAttribute(pool, 4, (&raw const keep).cast_mut().cast()), "its threshold");
    }
    pool as usize
}

fn alloc(pool: usize, stream: usize, size: usize) -> u64 {
    let mut p: CUdeviceptr = 0;
    // SAFETY: valid out-pointer, live handles.
    check(unsafe { cuMemAllocFromPoolAsync(&mut p, size, pl(pool), st(stream)) }, "a fixture allocation");
    p
}

/// Builds the fixture on the calling (main) thread, whose current context becomes device
/// 0's primary context.
fn fixture() -> Fx {
    let ctx = init_and_use(0) as usize;
    let [mut s, mut dead_stream] = [null_mut(); 2];
    let [mut e, mut e_unrecorded, mut e_untimed, mut dead_event] = [null_mut(); 4];
    let [mut host, mut host_freed] = [null_mut::<c_void>(); 2];
    let mut released: CUcontext = null_mut();
    let mut default_pool: CUmemoryPool = null_mut();
    // SAFETY: valid out-pointers and handles the library just returned.
    unsafe {
        check(cuStreamCreate(&mut s, 0), "stream");
        check(cuStreamCreate(&mut dead_stream, 0), "stream");
        check(cuStreamDestroy_v2(dead_stream), "destroying a stream");
        check(cuEventCreate(&mut e, 0), "event");
        check(cuEventCreate(&mut e_unrecorded, 0), "event");
        check(cuEventCreate(&mut e_untimed, CU_EVENT_DISABLE_TIMING), "event");
        check(cuEventCreate(&mut dead_event, 0), "event");
        check(cuEventDestroy_v2(dead_event), "destroying an event");
        check(cuEventRecord(e, s), "recording");
        check(cuEventRecord(e_untimed, s), "recording");
        check(cuEventSynchronize(e), "synchronizing the event");
        check(cuMemAllocHost_v2(&mut host, HOST_LEN), "cuMemAllocHost");
        check(cuMemAllocHost_v2(&mut host_freed, HOST_LEN), "cuMemAllocHost");
        check(cuMemFreeHost(host_freed), "cuMemFreeHost");
        check(cuDevicePrimaryCtxRetain(&mut released, 2), "retaining device 2");
        check(cuDevicePrimaryCtxRelease_v2(2), "releasing device 2");
        check(cuDeviceGetDefaultMemPool(&mut default_pool, 0), "the default pool");
    }
    let p = witness_pool(0);
    let a = alloc(p, s as usize, GRAN);
    let freed = alloc(p, s as usize, GRAN);
    let dead_pool = witness_pool(0);
    let dead_pool_ptr = alloc(dead_pool, s as usize, 100);
    // SAFETY: live handles and addresses the library returned.
    unsafe {
        check(cuMemFreeAsync(freed, s), "freeing");
        check(cuMemPoolDestroy(pl(dead_pool)), "destroying a pool");
        check(cuStreamSynchronize(s), "synchronizing");
    }
    // Device 1: a stream and a pool, made on a thread whose current context is device 1's.
    let (s1, p1) = std::thread::spawn(|| {
        init_and_use(1);
        let mut s1: CUstream = null_mut();
        // SAFETY: a valid out-pointer.
        check(unsafe { cuStreamCreate(&mut s1, 0) }, "a stream of device 1");
        (s1 as usize, witness_pool(1))
    })
    .join()
    .expect("the device 1 thread");
    let buf = Box::leak(vec![0u8; HOST_LEN].into_boxed_slice()).as_mut_ptr() as usize;
    Fx {
        ctx,
        released_ctx: released as usize,
        s: s as usize,
        s1,
        dead_stream: dead_stream as usize,
        e: e as usize,
        e_unrecorded: e_unrecorded as usize,
        e_untimed: e_untimed as usize,
        dead_event: dead_event as usize,
        p,
        p1,
        dead_pool,
        default_pool: default_pool as usize,
        a,
        freed,
        dead_pool_ptr,
        host: host as usize,
        host_freed: host_freed as usize,
        buf,
    }
}

extern "C" fn ignore(_: *mut c_void) {}

// ------------------------------------------------------------------ the rows

fn init_device_context_rows(t: &mut Table) {
    t.add("cuInit", "flags 1", VALUE, |_| {
        // SAFETY: takes an integer only.
        unsafe { cuInit(1) }
    });
    t.add("cuInit", "again, flags 0", OK, |_| {
        // SAFETY: takes an integer only.
        unsafe { cuInit(0) }
    });
    t.add("cuDriverGetVersion", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuDriverGetVersion(null_mut()) }
    });
    t.add("cuDeviceGetCount", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuDeviceGetCount(null_mut()) }
    });
    t.add("cuDeviceGet", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuDeviceGet(null_mut(), 0) }
    });
    for ordinal in [-1, 3, i32::MAX, i32::MIN] {
        t.add("cuDeviceGet", format!("ordinal {ordinal}"), DEVICE, move |_| {
            let mut d = SENTINEL as CUdevice;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { cuDeviceGet(&mut d, ordinal) }, d as usize)
        });
    }
    let get_attr = |attrib: i32, dev: CUdevice| {
        let mut v = SENTINEL as i32;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { cuDeviceGetAttribute(&mut v, attrib, dev) }, v as usize)
    };
    t.add("cuDeviceGetAttribute", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuDeviceGetAttribute(null_mut(), CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 0) }
    });
    for attrib in [0, -5, 1, 16, 75, 100_000] {
        t.add("cuDeviceGetAttribute", format!("attribute {attrib}"), VALUE, move |_| get_attr(attrib, 0));
    }
    for dev in [-1, 3] {
        t.add("cuDeviceGetAttribute", format!("device {dev}"), DEVICE, move |_| get_attr(115, dev));
    }
    t.add("cuDeviceGetAttribute", "115 on device 2", OK, move |_| get_attr(115, 2));
    t.add("cuDevicePrimaryCtxRetain", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuDevicePrimaryCtxRetain(null_mut(), 0) }
    });
    for dev in [-1, 3] {
        t.add("cuDevicePrimaryCtxRetain", format!("device {dev}"), DEVICE, move |_| {
            let mut c = SENTINEL as CUcontext;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { cuDevicePrimaryCtxRetain(&mut c, dev) }, c as usize)
        });
    }
    for dev in [-1, 3] {
        t.add("cuDevicePrimaryCtxRelease_v2", format!("device {dev}"), DEVICE, move |_| {
            // SAFETY: takes an integer only.
            unsafe { cuDevicePrimaryCtxRelease_v2(dev) }
        });
    }
    t.add("cuDevicePrimaryCtxRelease_v2", "device 2, every retain released", CONTEXT, |_| {
        // SAFETY: takes an integer only.
        unsafe { cuDevicePrimaryCtxRelease_v2(2) }
    });
    for (input, h) in bad_handles(Kind::Stream).into_iter().filter(|(n, _)| !n.contains("context")) {
        let input = if input == "a destroyed handle" { "a destroyed stream".to_string() } else { input };
        t.add("cuCtxSetCurrent", input, CONTEXT, move |f| {
            // SAFETY: handles are looked up, never dereferenced.
            unsafe { cuCtxSetCurrent(f.h(h) as CUcontext) }
        });
    }
    t.add("cuCtxSetCurrent", "device 2's released primary context", CONTEXT, |f| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { cuCtxSetCurrent(f.released_ctx as CUcontext) }
    });
    t.fresh("cuCtxSetCurrent", "NULL (clears)", OK, |_| {
        // SAFETY: null clears the current context.
        unsafe { cuCtxSetCurrent(null_mut()) }
    });
    t.add("cuCtxGetCurrent", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuCtxGetCurrent(null_mut()) }
    });
    t.fresh("cuCtxGetCurrent", "no current context: NULL", OK, |_| {
        let mut c = SENTINEL as CUcontext;
        // SAFETY: a valid out-pointer.
        let rc = unsafe { cuCtxGetCurrent(&mut c) };
        assert!(c.is_null(), "no current context reads as NULL, got {c:p}");
        rc
    });
    t.fresh("cuCtxSynchronize", "without a current context", CONTEXT, |_| {
        // SAFETY: takes nothing.
        unsafe { cuCtxSynchronize() }
    });
}

fn stream_rows(t: &mut Table) {
    t.add("cuStreamCreate", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuStreamCreate(null_mut(), 0) }
    });
    for flags in [2, 3, 0x100, u32::MAX] {
        t.add("cuStreamCreate", format!("flags {flags:#x}"), VALUE, move |_| {
            let mut s = SENTINEL as CUstream;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { cuStreamCreate(&mut s, flags) }, s as usize)
        });
    }
    t.fresh("cuStreamCreate", "without a current context", CONTEXT, |_| {
        let mut s = SENTINEL as CUstream;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { cuStreamCreate(&mut s, 0) }, s as usize)
    });
    t.add("cuStreamDestroy_v2", "NULL (the default stream)", HANDLE, |_| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { cuStreamDestroy_v2(null_mut()) }
    });
    for (name, h) in [("CU_STREAM_LEGACY", CU_STREAM_LEGACY), ("CU_STREAM_PER_THREAD", CU_STREAM_PER_THREAD)] {
        let h = h as usize;
        t.add("cuStreamDestroy_v2", name, HANDLE, move |_| {
            // SAFETY: handles are looked up, never dereferenced.
            unsafe { cuStreamDestroy_v2(st(h)) }
        });
        t.add("cuStreamQuery", name, OK, move |_| {
            // SAFETY: as above.
            unsafe { cuStreamQuery(st(h)) }
        });
        t.fresh("cuStreamSynchronize", format!("{name} without a current context"), CONTEXT, move |_| {
            // SAFETY: as above.
            unsafe { cuStreamSynchronize(st(h)) }
        });
        t.fresh("cuLaunchHostFunc", format!("{name} without a current context"), CONTEXT, move |_| {
            // SAFETY: as above; the function is never run.
            unsafe { cuLaunchHostFunc(st(h), Some(ignore), null_mut()) }
        });
    }
    for (input, h) in bad_handles(Kind::Stream) {
        t.add("cuStreamDestroy_v2", input.clone(), HANDLE, move |f| {
            // SAFETY: handles are looked up, never dereferenced.
            unsafe { cuStreamDestroy_v2(st(f.h(h))) }
        });
        t.add("cuStreamSynchronize", input.clone(), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuStreamSynchronize(st(f.h(h))) }
        });
        t.add("cuStreamQuery", input.clone(), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuStreamQuery(st(f.h(h))) }
        });
        t.add("cuStreamWaitEvent", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuStreamWaitEvent(st(f.h(h)), ev(f.e), 0) }
        });
        t.add("cuEventRecord", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuEventRecord(ev(f.e_unrecorded), st(f.h(h))) }
        });
        t.add("cuLaunchHostFunc", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: as above; the function is never run.
            unsafe { cuLaunchHostFunc(st(f.h(h)), Some(ignore), null_mut()) }
        });
    }
    t.fresh("cuStreamSynchronize", "NULL without a current context", CONTEXT, |_| {
        // SAFETY: the null stream needs a current context, which this thread lacks.
        unsafe { cuStreamSynchronize(null_mut()) }
    });
    t.fresh("cuStreamSynchronize", "a live stream without a current context", OK, |f| {
        // SAFETY: a live handle.
        unsafe { cuStreamSynchronize(st(f.s)) }
    });
    t.fresh("cuStreamQuery", "NULL without a current context", CONTEXT, |_| {
        // SAFETY: as above.
        unsafe { cuStreamQuery(null_mut()) }
    });
    t.add("cuStreamQuery", "an idle stream", OK, |f| {
        // SAFETY: a live handle.
        unsafe { cuStreamQuery(st(f.s)) }
    });
    t.add("cuStreamWaitEvent", "flags 1", VALUE, |f| {
        // SAFETY: live handles.
        unsafe { cuStreamWaitEvent(st(f.s), ev(f.e), 1) }
    });
    t.add("cuStreamWaitEvent", "a stream of device 1 on an event of device 0", OK, |f| {
        // SAFETY: live handles.
        unsafe { cuStreamWaitEvent(st(f.s1), ev(f.e), 0) }
    });
    t.add("cuEventRecord", "an event of device 0 on a stream of device 1", OK, |f| {
        let mut e: CUevent = null_mut();
        // SAFETY: a valid out-pointer and live handles; the event is destroyed again.
        unsafe {
            check(cuEventCreate(&mut e, 0), "an event");
            let rc = cuEventRecord(e, st(f.s1));
            check(cuEventSynchronize(e), "synchronizing it");
            check(cuEventDestroy_v2(e), "destroying it");
            rc
        }
    });
    t.add("cuLaunchHostFunc", "null fn", VALUE, |f| {
        // SAFETY: a live stream; the null function is refused.
        unsafe { cuLaunchHostFunc(st(f.s), None, null_mut()) }
    });
    t.fresh("cuLaunchHostFunc", "NULL stream without a current context", CONTEXT, |_| {
        // SAFETY: the function is never run.
        unsafe { cuLaunchHostFunc(null_mut(), Some(ignore), null_mut()) }
    });
}

fn event_rows(t: &mut Table) {
    t.add("cuEventCreate", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuEventCreate(null_mut(), 0) }
    });
    for (flags, want) in
        [(0x8, VALUE), (0x80, VALUE), (u32::MAX, VALUE), (CU_EVENT_INTERPROCESS, VALUE), (0x6, SUPPORT)]
    {
        t.add("cuEventCreate", format!("flags {flags:#x}"), want, move |_| {
            let mut e = SENTINEL as CUevent;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { cuEventCreate(&mut e, flags) }, e as usize)
        });
    }
    t.fresh("cuEventCreate", "without a current context", CONTEXT, |_| {
        let mut e = SENTINEL as CUevent;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { cuEventCreate(&mut e, 0) }, e as usize)
    });
    let mut handles = bad_handles(Kind::Event);
    handles.insert(0, ("null".into(), H::Null));
    for (input, h) in handles {
        t.add("cuEventRecord", format!("event: {input}"), HANDLE, move |f| {
            // SAFETY: handles are looked up, never dereferenced.
            unsafe { cuEventRecord(ev(f.h(h)), st(f.s)) }
        });
        t.add("cuStreamWaitEvent", format!("event: {input}"), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuStreamWaitEvent(st(f.s), ev(f.h(h)), 0) }
        });
        t.add("cuEventSynchronize", input.clone(), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuEventSynchronize(ev(f.h(h))) }
        });
        t.add("cuEventQuery", input.clone(), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuEventQuery(ev(f.h(h))) }
        });
        t.add("cuEventDestroy_v2", input.clone(), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuEventDestroy_v2(ev(f.h(h))) }
        });
        t.add("cuEventElapsedTime", format!("start: {input}"), HANDLE, move |f| {
            let mut ms = f32::from_bits(SENTINEL as u32);
            // SAFETY: a valid out-pointer; handles are looked up.
            let rc = unsafe { cuEventElapsedTime(&mut ms, ev(f.h(h)), ev(f.e)) };
            untouched(rc, ms.to_bits() as usize)
        });
    }
    t.fresh("cuEventQuery", "a recorded event without a current context", OK, |f| {
        // SAFETY: a live handle.
        unsafe { cuEventQuery(ev(f.e)) }
    });
    t.add("cuEventQuery", "never recorded: complete", OK, |f| {
        // SAFETY: a live handle.
        unsafe { cuEventQuery(ev(f.e_unrecorded)) }
    });
    t.fresh("cuEventSynchronize", "never recorded, without a current context", OK, |f| {
        // SAFETY: a live handle.
        unsafe { cuEventSynchronize(ev(f.e_unrecorded)) }
    });
    t.add("cuEventElapsedTime", "null ms", VALUE, |f| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuEventElapsedTime(null_mut(), ev(f.e), ev(f.e)) }
    });
    t.add("cuEventElapsedTime", "end never recorded", HANDLE, |f| {
        let mut ms = 0.0;
        // SAFETY: a valid out-pointer, live handles.
        unsafe { cuEventElapsedTime(&mut ms, ev(f.e), ev(f.e_unrecorded)) }
    });
    t.add("cuEventElapsedTime", "an event without timing", HANDLE, |f| {
        let mut ms = 0.0;
        // SAFETY: a valid out-pointer, live handles.
        unsafe { cuEventElapsedTime(&mut ms, ev(f.e_untimed), ev(f.e)) }
    });
    t.add("cuEventElapsedTime", "the same event twice: 0 ms", OK, |f| {
        let mut ms = -1.0;
        // SAFETY: a valid out-pointer, live handles.
        let rc = unsafe { cuEventElapsedTime(&mut ms, ev(f.e), ev(f.e)) };
        assert_eq!(ms, 0.0);
        rc
    });
}

fn memory_rows(t: &mut Table) {
    t.add("cuMemAllocHost_v2", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuMemAllocHost_v2(null_mut(), 16) }
    });
    for (input, size, want) in [("size 0", 0, VALUE), ("size SIZE_MAX", usize::MAX, OOM), ("size 2^62", 1 << 62, OOM)] {
        t.add("cuMemAllocHost_v2", input, want, move |_| {
            let mut p = SENTINEL as *mut c_void;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { cuMemAllocHost_v2(&mut p, size) }, p as usize)
        });
    }
    t.fresh("cuMemAllocHost_v2", "without a current context", CONTEXT, |_| {
        let mut p = SENTINEL as *mut c_void;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { cuMemAllocHost_v2(&mut p, 16) }, p as usize)
    });
    type HostAddr = fn(&Fx) -> usize;
    let frees: [(&str, HostAddr); 7] = [
        ("null", |_| 0),
        ("garbage 0x1234", |_| 0x1234),
        ("freed cuMemAllocHost memory", |f| f.host_freed),
        ("an interior pointer of cuMemAllocHost memory", |f| f.host + 8),
        ("a heap buffer", |f| f.buf),
        ("device memory", |f| f.a as usize),
        ("a stack address", |_| {
            let x = 0u8;
            std::hint::black_box(&raw const x) as usize
        }),
    ];
    for (input, addr) in frees {
        t.add("cuMemFreeHost", input, VALUE, move |f| {
            // SAFETY: the library looks the address up; it frees only its own allocations.
            unsafe { cuMemFreeHost(addr(f) as *mut c_void) }
        });
    }
    t.add("cuMemGetInfo_v2", "null free", VALUE, |_| {
        let mut total = 0;
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuMemGetInfo_v2(null_mut(), &mut total) }
    });
    t.add("cuMemGetInfo_v2", "null total", VALUE, |_| {
        let mut free = SENTINEL;
        // SAFETY: a null out-pointer, refused before any write.
        untouched(unsafe { cuMemGetInfo_v2(&mut free, null_mut()) }, free)
    });
    t.fresh("cuMemGetInfo_v2", "without a current context", CONTEXT, |_| {
        let (mut free, mut total) = (SENTINEL, SENTINEL);
        // SAFETY: valid out-pointers.
        let rc = unsafe { cuMemGetInfo_v2(&mut free, &mut total) };
        untouched(rc, free);
        untouched(rc, total)
    });
    for code in [4, 700, -1, 12_345] {
        t.add("cuGetErrorName", format!("unknown code {code}: NULL"), VALUE, move |_| {
            let mut s = SENTINEL as *const std::ffi::c_char;
            // SAFETY: a valid out-pointer.
            let rc = unsafe { cuGetErrorName(code, &mut s) };
            assert!(s.is_null(), "an unknown code gives NULL");
            rc
        });
        t.add("cuGetErrorString", format!("unknown code {code}: NULL"), VALUE, move |_| {
            let mut s = SENTINEL as *const std::ffi::c_char;
            // SAFETY: a valid out-pointer.
            let rc = unsafe { cuGetErrorString(code, &mut s) };
            assert!(s.is_null(), "an unknown code gives NULL");
            rc
        });
    }
    t.add("cuGetErrorName", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuGetErrorName(CUDA_ERROR_INVALID_VALUE, null_mut()) }
    });
    t.add("cuGetErrorString", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuGetErrorString(CUDA_ERROR_INVALID_VALUE, null_mut()) }
    });
}

fn copy_rows(t: &mut Table) {
    let len = 16;
    t.add("cuMemcpyHtoDAsync_v2", "null src", VALUE, move |f| {
        // SAFETY: a null source, refused before any read.
        unsafe { cuMemcpyHtoDAsync_v2(f.a, std::ptr::null(), len, st(f.s)) }
    });
    t.add("cuMemcpyHtoDAsync_v2", "dst 0", VALUE, move |f| {
        // SAFETY: a null destination, refused.
        unsafe { cuMemcpyHtoDAsync_v2(0, f.buf as *const c_void, len, st(f.s)) }
    });
    t.add("cuMemcpyDtoHAsync_v2", "null dst", VALUE, move |f| {
        // SAFETY: a null destination, refused before any write.
        unsafe { cuMemcpyDtoHAsync_v2(null_mut(), f.a, len, st(f.s)) }
    });
    t.add("cuMemcpyDtoDAsync_v2", "src 0", VALUE, move |f| {
        // SAFETY: a null source, refused.
        unsafe { cuMemcpyDtoDAsync_v2(f.a, 0, len, st(f.s)) }
    });
    t.add("cuMemsetD8Async", "dst 0", VALUE, move |f| {
        // SAFETY: a null destination, refused.
        unsafe { cuMemsetD8Async(0, 7, len, st(f.s)) }
    });
    for (input, addr) in bad_device_pointers(false) {
        let addr = Arc::new(addr);
        let (a1, a2, a3, a4) = (Arc::clone(&addr), Arc::clone(&addr), Arc::clone(&addr), Arc::clone(&addr));
        t.add("cuMemcpyHtoDAsync_v2", format!("dst: {input}"), VALUE, move |f| {
            // SAFETY: the source is a live heap buffer of HOST_LEN bytes; the destination is
            // checked by the emulator and refused.
            unsafe { cuMemcpyHtoDAsync_v2(a1(f), f.buf as *const c_void, len, st(f.s)) }
        });
        t.add("cuMemcpyDtoHAsync_v2", format!("src: {input}"), VALUE, move |f| {
            // SAFETY: the destination is a live heap buffer; the source is refused.
            unsafe { cuMemcpyDtoHAsync_v2(f.buf as *mut c_void, a2(f), len, st(f.s)) }
        });
        t.add("cuMemcpyDtoDAsync_v2", format!("dst: {input}"), VALUE, move |f| {
            // SAFETY: device pointers are checked by the emulator, never dereferenced raw.
            unsafe { cuMemcpyDtoDAsync_v2(a3(f), f.a, len, st(f.s)) }
        });
        t.add("cuMemsetD8Async", input, VALUE, move |f| {
            // SAFETY: the target is looked up (device memory, or cuMemAllocHost memory).
            unsafe { cuMemsetD8Async(a4(f), 7, len, st(f.s)) }
        });
    }
    t.add("cuMemcpyHtoDAsync_v2", "past the end of the allocation", VALUE, move |f| {
        // SAFETY: the source holds HOST_LEN bytes; the range is refused first.
        unsafe { cuMemcpyHtoDAsync_v2(f.a + GRAN as u64 - 8, f.buf as *const c_void, len, st(f.s)) }
    });
    t.add("cuMemcpyHtoDAsync_v2", "src lying in device memory", VALUE, move |f| {
        // SAFETY: a host side in device memory is refused, never read raw.
        unsafe { cuMemcpyHtoDAsync_v2(f.a, f.a as *const c_void, len, st(f.s)) }
    });
    t.add("cuMemcpyDtoHAsync_v2", "past the end of cuMemAllocHost memory", VALUE, move |f| {
        // SAFETY: the range is refused before any write.
        unsafe { cuMemcpyDtoHAsync_v2((f.host + HOST_LEN - 8) as *mut c_void, f.a, len, st(f.s)) }
    });
    t.add("cuMemcpyDtoHAsync_v2", "count 0", OK, move |f| {
        // SAFETY: nothing is copied.
        unsafe { cuMemcpyDtoHAsync_v2(f.buf as *mut c_void, f.a, 0, st(f.s)) }
    });
    t.add("cuMemcpyHtoDAsync_v2", "pageable memory, done at once", OK, move |f| {
        // SAFETY: the source is a live heap buffer of HOST_LEN bytes; `a` is live.
        unsafe { cuMemcpyHtoDAsync_v2(f.a, f.buf as *const c_void, len, st(f.s)) }
    });
    t.add("cuMemsetD8Async", "a heap buffer (pageable)", VALUE, move |f| {
        // SAFETY: refused: pageable memory is not a memset target.
        unsafe { cuMemsetD8Async(f.buf as u64, 7, len, st(f.s)) }
    });
    for (input, h) in bad_handles(Kind::Stream) {
        t.add("cuMemcpyHtoDAsync_v2", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: the stream is refused before anything is copied.
            unsafe { cuMemcpyHtoDAsync_v2(f.a, f.buf as *const c_void, len, st(f.h(h))) }
        });
        t.add("cuMemcpyDtoHAsync_v2", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuMemcpyDtoHAsync_v2(f.buf as *mut c_void, f.a, len, st(f.h(h))) }
        });
        t.add("cuMemcpyDtoDAsync_v2", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuMemcpyDtoDAsync_v2(f.a + 64, f.a, len, st(f.h(h))) }
        });
        t.add("cuMemsetD8Async", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuMemsetD8Async(f.a, 7, len, st(f.h(h))) }
        });
    }
    t.fresh("cuMemcpyDtoDAsync_v2", "NULL stream without a current context", CONTEXT, move |f| {
        // SAFETY: refused before anything is copied.
        unsafe { cuMemcpyDtoDAsync_v2(f.a + 64, f.a, len, null_mut()) }
    });
}

fn pool_rows(t: &mut Table) {
    const C: &str = "cuMemPoolCreate";
    t.add(C, "null pool", VALUE, |_| {
        let props = CUmemPoolProps::device(0, POOL_SIZE);
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuMemPoolCreate(null_mut(), &props) }
    });
    t.add(C, "null props", VALUE, |_| {
        let mut p = SENTINEL as CUmemoryPool;
        // SAFETY: null props are refused before any read.
        untouched(unsafe { cuMemPoolCreate(&mut p, std::ptr::null()) }, p as usize)
    });
    let base = CUmemPoolProps::device(0, POOL_SIZE);
    let mut cases: Vec<(String, CUmemPoolProps, CUresult)> = Vec::new();
    for v in [0, 2, -1] {
        cases.push((format!("allocType {v}"), CUmemPoolProps { allocType: v, ..base }, VALUE));
    }
    for v in [2, 4, 8, -1] {
        cases.push((format!("handleTypes {v}"), CUmemPoolProps { handleTypes: v, ..base }, VALUE));
    }
    for v in [0, 2, -1] {
        cases.push((
            format!("location.type {v}"),
            CUmemPoolProps { location: CUmemLocation { type_: v, id: 0 }, ..base },
            VALUE,
        ));
    }
    for v in [3, -1, i32::MAX] {
        cases.push((format!("location.id {v}"), CUmemPoolProps::device(v, POOL_SIZE), DEVICE));
    }
    cases.push(("usage 1".into(), CUmemPoolProps { usage: 1, ..base }, VALUE));
    for i in [0, 53] {
        let mut pr = base;
        pr.reserved[i] = 1;
        cases.push((format!("reserved[{i}] not zero"), pr, VALUE));
    }
    cases.push(("maxSize above the device's memory".into(), CUmemPoolProps::device(0, DEVICE_MEMORY + 1), VALUE));
    cases.push(("maxSize SIZE_MAX".into(), CUmemPoolProps::device(0, usize::MAX), VALUE));
    cases.push((
        "handleTypes POSIX_FILE_DESCRIPTOR, accepted".into(),
        CUmemPoolProps { handleTypes: CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, ..base },
        OK,
    ));
    cases.push((
        "win32SecurityAttributes set, ignored".into(),
        CUmemPoolProps { win32SecurityAttributes: 0x1234 as *mut c_void, ..base },
        OK,
    ));
    cases.push(("maxSize 1 (one granule)".into(), CUmemPoolProps::device(0, 1), OK));
    cases.push(("a pool of device 1".into(), CUmemPoolProps::device(1, POOL_SIZE), OK));
    for (input, props, want) in cases {
        let props = SendProps(props);
        t.add(C, input, want, move |_| {
            let props = props;
            let mut p = SENTINEL as CUmemoryPool;
            // SAFETY: a valid out-pointer and props struct; a pool created is destroyed.
            let rc = unsafe { cuMemPoolCreate(&mut p, &props.0) };
            if rc == OK {
                // SAFETY: the pool just created.
                check(unsafe { cuMemPoolDestroy(p) }, "destroying it again");
            }
            untouched(rc, p as usize)
        });
    }
    t.fresh(C, "without a current context", OK, |_| {
        let props = CUmemPoolProps::device(0, POOL_SIZE);
        let mut p: CUmemoryPool = null_mut();
        // SAFETY: a valid out-pointer and props; the pool is destroyed again.
        unsafe {
            let rc = cuMemPoolCreate(&mut p, &props);
            check(cuMemPoolDestroy(p), "destroying it");
            rc
        }
    });

    const D: &str = "cuMemPoolDestroy";
    let mut handles = bad_handles(Kind::Pool);
    handles.insert(0, ("null".into(), H::Null));
    for (input, h) in handles {
        t.add(D, input.clone(), HANDLE, move |f| {
            // SAFETY: handles are looked up, never dereferenced.
            unsafe { cuMemPoolDestroy(pl(f.h(h))) }
        });
        t.add("cuMemPoolTrimTo", input.clone(), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuMemPoolTrimTo(pl(f.h(h)), 0) }
        });
        t.add("cuMemPoolSetAttribute", input.clone(), HANDLE, move |f| {
            let v = 0u64;
            // SAFETY: as above; the value is a readable `cuuint64_t`.
            unsafe { cuMemPoolSetAttribute(pl(f.h(h)), 4, (&raw const v).cast_mut().cast()) }
        });
        t.add("cuMemPoolGetAttribute", input.clone(), HANDLE, move |f| {
            let mut v = SENTINEL as u64;
            // SAFETY: as above; the value is a writable `cuuint64_t`.
            untouched(unsafe { cuMemPoolGetAttribute(pl(f.h(h)), 5, (&raw mut v).cast()) }, v as usize)
        });
        t.add("cuMemAllocFromPoolAsync", format!("pool: {input}"), HANDLE, move |f| {
            let mut d = SENTINEL as CUdeviceptr;
            // SAFETY: a valid out-pointer; handles are looked up.
            untouched(unsafe { cuMemAllocFromPoolAsync(&mut d, 16, pl(f.h(h)), st(f.s)) }, d as usize)
        });
        t.add("cuDeviceSetMemPool", format!("pool: {input}"), HANDLE, move |f| {
            // SAFETY: handles are looked up, never dereferenced.
            unsafe { cuDeviceSetMemPool(0, pl(f.h(h))) }
        });
    }
    t.add(D, "device 0's default pool", VALUE, |f| {
        // SAFETY: a live handle; the default pool is refused.
        unsafe { cuMemPoolDestroy(pl(f.default_pool)) }
    });

    let set = |pool: usize, attr: i32, value: Option<u64>| {
        let v = value.unwrap_or(0);
        let ptr = if value.is_some() { (&raw const v).cast_mut().cast::<c_void>() } else { null_mut() };
        // SAFETY: `ptr` is null or points to a `cuuint64_t`, as wide as any attribute's
        // value (an `int` is read from its first four bytes: little endian).
        unsafe { cuMemPoolSetAttribute(pl(pool), attr, ptr) }
    };
    let get = |pool: usize, attr: i32, out: bool| {
        let mut v = SENTINEL as u64;
        let ptr = if out { (&raw mut v).cast::<c_void>() } else { null_mut() };
        // SAFETY: `ptr` is null or points to a `cuuint64_t`, room for any value.
        untouched(unsafe { cuMemPoolGetAttribute(pl(pool), attr, ptr) }, v as usize)
    };
    for attr in [0, 9, -1, 100] {
        t.add("cuMemPoolSetAttribute", format!("attribute {attr}"), VALUE, move |f| set(f.p, attr, Some(0)));
        t.add("cuMemPoolGetAttribute", format!("attribute {attr}"), VALUE, move |f| get(f.p, attr, true));
    }
    t.add("cuMemPoolSetAttribute", "null value", VALUE, move |f| set(f.p, 4, None));
    t.add("cuMemPoolGetAttribute", "null value", VALUE, move |f| get(f.p, 7, false));
    for (attr, v) in [(5, 0), (5, 1), (7, 0), (6, 1), (8, 1), (8, u64::MAX)] {
        t.add("cuMemPoolSetAttribute", format!("attribute {attr} = {v}"), VALUE, move |f| set(f.p, attr, Some(v)));
    }
    t.fresh("cuMemPoolGetAttribute", "without a current context", OK, move |f| get(f.p, 5, true));
    t.add("cuMemPoolTrimTo", "to SIZE_MAX (nothing to release)", OK, |f| {
        // SAFETY: a live handle.
        unsafe { cuMemPoolTrimTo(pl(f.p), usize::MAX) }
    });

    const A: &str = "cuMemAllocFromPoolAsync";
    t.add(A, "null dptr", VALUE, |f| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuMemAllocFromPoolAsync(null_mut(), 16, pl(f.p), st(f.s)) }
    });
    for (input, size, want) in
        [("size 0", 0, VALUE), ("size SIZE_MAX", usize::MAX, OOM), ("larger than the pool", POOL_SIZE + 1, OOM)]
    {
        t.add(A, input, want, move |f| {
            let mut d = SENTINEL as CUdeviceptr;
            // SAFETY: a valid out-pointer, live handles.
            untouched(unsafe { cuMemAllocFromPoolAsync(&mut d, size, pl(f.p), st(f.s)) }, d as usize)
        });
    }
    for (input, h) in bad_handles(Kind::Stream) {
        t.add(A, format!("stream: {input}"), HANDLE, move |f| {
            let mut d = SENTINEL as CUdeviceptr;
            // SAFETY: a valid out-pointer; handles are looked up.
            untouched(unsafe { cuMemAllocFromPoolAsync(&mut d, 16, pl(f.p), st(f.h(h))) }, d as usize)
        });
        t.add("cuMemAllocAsync", format!("stream: {input}"), HANDLE, move |f| {
            let mut d = SENTINEL as CUdeviceptr;
            // SAFETY: as above.
            untouched(unsafe { cuMemAllocAsync(&mut d, 16, st(f.h(h))) }, d as usize)
        });
        t.add("cuMemFreeAsync", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: handles are looked up; nothing is freed.
            unsafe { cuMemFreeAsync(f.a, st(f.h(h))) }
        });
    }
    t.add(A, "a stream of device 1, a pool of device 0", CONTEXT, |f| {
        let mut d = SENTINEL as CUdeviceptr;
        // SAFETY: a valid out-pointer, live handles.
        untouched(unsafe { cuMemAllocFromPoolAsync(&mut d, 16, pl(f.p), st(f.s1)) }, d as usize)
    });
    t.fresh(A, "NULL stream without a current context", CONTEXT, |f| {
        let mut d = SENTINEL as CUdeviceptr;
        // SAFETY: a valid out-pointer, a live pool.
        untouched(unsafe { cuMemAllocFromPoolAsync(&mut d, 16, pl(f.p), null_mut()) }, d as usize)
    });
    t.add("cuMemAllocAsync", "null dptr", VALUE, |f| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuMemAllocAsync(null_mut(), 16, st(f.s)) }
    });
    t.add("cuMemAllocAsync", "size 0", VALUE, |f| {
        let mut d = SENTINEL as CUdeviceptr;
        // SAFETY: a valid out-pointer, a live stream.
        untouched(unsafe { cuMemAllocAsync(&mut d, 0, st(f.s)) }, d as usize)
    });
    t.fresh("cuMemAllocAsync", "NULL stream without a current context", CONTEXT, |_| {
        let mut d = SENTINEL as CUdeviceptr;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { cuMemAllocAsync(&mut d, 16, null_mut()) }, d as usize)
    });
    t.add("cuMemFreeAsync", "0", VALUE, |f| {
        // SAFETY: refused: a null device pointer.
        unsafe { cuMemFreeAsync(0, st(f.s)) }
    });
    for (input, addr) in bad_device_pointers(true) {
        t.add("cuMemFreeAsync", input, VALUE, move |f| {
            // SAFETY: the emulator looks the address up; nothing is freed.
            unsafe { cuMemFreeAsync(addr(f), st(f.s)) }
        });
    }
    t.add("cuMemFreeAsync", "a stream of device 1, memory of device 0", CONTEXT, |f| {
        // SAFETY: live handles; the free is refused.
        unsafe { cuMemFreeAsync(f.a, st(f.s1)) }
    });

    for (entry, name) in [("cuDeviceGetDefaultMemPool", "pool_out"), ("cuDeviceGetMemPool", "pool")] {
        let call = move |out: *mut CUmemoryPool, dev: CUdevice| {
            // SAFETY: `out` is null or a writable `CUmemoryPool`.
            unsafe {
                if entry == "cuDeviceGetMemPool" {
                    cuDeviceGetMemPool(out, dev)
                } else {
                    cuDeviceGetDefaultMemPool(out, dev)
                }
            }
        };
        t.add(entry, format!("null {name}"), VALUE, move |_| call(null_mut(), 0));
        for dev in [-1, 3] {
            t.add(entry, format!("device {dev}"), DEVICE, move |_| {
                let mut p = SENTINEL as CUmemoryPool;
                untouched(call(&mut p, dev), p as usize)
            });
        }
    }
    t.add("cuDeviceSetMemPool", "device 3", DEVICE, |f| {
        // SAFETY: a live pool; the device is refused.
        unsafe { cuDeviceSetMemPool(3, pl(f.p)) }
    });
    t.add("cuDeviceSetMemPool", "a pool of device 1 for device 0", VALUE, |f| {
        // SAFETY: live handles; refused.
        unsafe { cuDeviceSetMemPool(0, pl(f.p1)) }
    });
}

/// Props travel into the row closures (its raw pointer field makes it neither `Send`
/// nor `Sync`).
#[derive(Clone, Copy)]
struct SendProps(CUmemPoolProps);
// SAFETY: the pointer field is never dereferenced (the library ignores it).
unsafe impl Send for SendProps {}
// SAFETY: as above.
unsafe impl Sync for SendProps {}

#[path = "hostile_rows/vmm.rs"]
mod vmm_rows;
// Host registration (contract §15).
#[path = "hostile_rows/host_register.rs"]
mod rows_host_register;
use rows_host_register::host_register_rows;

fn table() -> Table {
    let mut t = Table::default();
    init_device_context_rows(&mut t);
    stream_rows(&mut t);
    event_rows(&mut t);
    memory_rows(&mut t);
    copy_rows(&mut t);
    pool_rows(&mut t);
    vmm_rows::vmm_rows(&mut t);
    host_register_rows(&mut t);
    t
}

// ------------------------------------------------------------------ running the rows

fn current_context() -> usize {
    let mut c: CUcontext = null_mut();
    // SAFETY: a valid out-pointer.
    unsafe { cuCtxGetCurrent(&mut c) };
    c as usize
}

/// Runs one row: `Err` with why it failed.
fn run_row(fx: &Fx, row: &Row) -> Result<(), String> {
    let before = stats(fx);
    let attempt = || {
        let got = catch_unwind(AssertUnwindSafe(|| (row.call)(fx)));
        (got, message())
    };
    let (got, msg) = if row.fresh {
        std::thread::scope(|sc| sc.spawn(attempt).join().expect("the row's thread"))
    } else {
        attempt()
    };
    let mut failures = Vec::new();
    match got {
        Err(panic) => {
            let why =
                panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
            failures.push(format!("panicked: {}", why.unwrap_or_default()));
        }
        Ok(rc) if rc != row.want => failures.push(format!("returned {rc}, expected {}; message: {msg}", row.want)),
        Ok(rc) if rc != OK && !msg.starts_with(&format!("{}: ", row.entry)) => {
            failures.push(format!("refused with {rc} but the message does not name the entry point: {msg:?}"))
        }
        Ok(_) => {}
    }
    if !row.fresh && current_context() != fx.ctx {
        failures.push("changed the calling thread's current context".to_string());
        // SAFETY: a live context handle; restores the main thread's context.
        unsafe { cuCtxSetCurrent(fx.ctx as CUcontext) };
    }
    let after = stats(fx);
    if after != before {
        failures.push(format!("changed the witness pools' statistics from {before:?} to {after:?}"));
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("; ")) }
}

/// The exports that return no `CUresult`, each with a test of its own instead of rows
/// (`setup::the_version_marker` here; the last message in `tests/behaviour.rs`).
const OWN_TRIALS: [&str; 2] = ["mempool_cuda_shim_version", "mempool_cuda_shim_last_error"];

/// Every exported function has a row (the library's own calls have their own trials), and
/// every row names an exported function.
fn coverage(rows: &[Row]) -> Vec<String> {
    let exports: Vec<String> = exported_functions().into_iter().filter(|e| !OWN_TRIALS.contains(&e.as_str())).collect();
    let mut failures = Vec::new();
    let missing: Vec<_> = exports.iter().filter(|e| !rows.iter().any(|r| r.entry == e.as_str())).collect();
    if !missing.is_empty() {
        failures.push(format!("entry points without a row: {missing:?}"));
    }
    let unknown: Vec<_> = rows.iter().filter(|r| !exports.iter().any(|e| e == r.entry)).map(|r| r.entry).collect();
    if !unknown.is_empty() {
        failures.push(format!("rows for functions that are not exported: {unknown:?}"));
    }
    failures
}

fn version_marker() -> Vec<String> {
    // SAFETY: takes nothing; returns a static NUL-terminated string.
    let v = unsafe { CStr::from_ptr(mempool_cuda_shim_version()) }.to_string_lossy().into_owned();
    let want = format!("mempool-emu-{}", env!("CARGO_PKG_VERSION"));
    if v == want { Vec::new() } else { vec![format!("mempool_cuda_shim_version answers {v:?}, not {want:?}")] }
}

/// Threads query, set and launch on a stream while the main thread destroys it: every call
/// answers 0 or `CUDA_ERROR_INVALID_HANDLE`, and nothing hangs or crashes.
fn stream_destroyed_in_use(fx: &Fx) -> Vec<String> {
    let mut failures = Vec::new();
    for round in 0..20 {
        let mut s: CUstream = null_mut();
        // SAFETY: a valid out-pointer.
        check(unsafe { cuStreamCreate(&mut s, 0) }, "a stream");
        let h = s as usize;
        let stop = Arc::new(AtomicBool::new(false));
        let (a, host) = (fx.a, fx.host);
        let workers: Vec<_> = (0..3)
            .map(|i| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut codes = Vec::new();
                    while !stop.load(Ordering::Acquire) {
                        // SAFETY: the handle is looked up (live or destroyed); `a` is a live
                        // allocation holding 64 bytes, `host` cuMemAllocHost memory.
                        let rc = unsafe {
                            match i {
                                0 => cuStreamQuery(st(h)),
                                1 => cuMemcpyDtoHAsync_v2(host as *mut c_void, a, 64, st(h)),
                                _ => cuLaunchHostFunc(st(h), Some(ignore), null_mut()),
                            }
                        };
                        codes.push(rc);
                    }
                    codes
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(2));
        // SAFETY: a live handle.
        check(unsafe { cuStreamDestroy_v2(s) }, "destroying the stream in use");
        std::thread::sleep(Duration::from_millis(2));
        stop.store(true, Ordering::Release);
        for w in workers {
            for rc in w.join().expect("a worker") {
                if rc != OK && rc != HANDLE && rc != CUDA_ERROR_NOT_READY {
                    failures.push(format!("round {round}: a call answered {rc}"));
                }
            }
        }
    }
    // The copies queued on the destroyed streams ran: the pinned buffer is idle again.
    // SAFETY: a live handle.
    check(unsafe { cuStreamSynchronize(st(fx.s)) }, "synchronizing");
    failures
}

fn outcome(failures: Vec<String>) -> Result<(), Failed> {
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n").into()) }
}

fn main() {
    // SAFETY: `main` has started no thread yet; the library reads the environment at
    // `cuInit`.
    unsafe {
        for var in cuda::ENV_ALL {
            std::env::remove_var(var);
        }
        std::env::set_var(cuda::ENV_DEVICES, "3");
        std::env::set_var(cuda::ENV_DEVICE_MEMORY, DEVICE_MEMORY.to_string());
        std::env::set_var(cuda::ENV_GRANULARITY, GRAN.to_string());
    }
    let mut args = Arguments::from_args();
    args.test_threads = Some(1);
    let listing = args.list;
    let fx = if listing { None } else { Some(Arc::new(fixture())) };
    let t = table();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let names: Vec<String> = t
        .rows
        .iter()
        .map(|r| {
            let base = format!("row::{}({})", r.entry, r.input);
            let n = seen.entry(base.clone()).or_insert(0);
            *n += 1;
            if *n == 1 { base } else { format!("{base} #{n}") }
        })
        .collect();
    let n_rows = t.rows.len();
    let cover = coverage(&t.rows);
    let mut trials = vec![
        Trial::test("setup::every_export_has_a_row", move || outcome(cover)),
        Trial::test("setup::the_version_marker", || outcome(version_marker())),
    ];
    for (row, name) in t.rows.into_iter().zip(names) {
        let fx = fx.clone();
        trials.push(Trial::test(name, move || match fx {
            Some(fx) => run_row(&fx, &row).map_err(Into::into),
            None => Ok(()),
        }));
    }
    let race = fx.clone();
    trials.push(Trial::test("race::stream_destroyed_in_use", move || match race {
        Some(fx) => outcome(stream_destroyed_in_use(&fx)),
        None => Ok(()),
    }));
    if !listing {
        println!("hostile: {} entry points, {n_rows} rows", exported_functions().len());
    }
    libtest_mimic::run(&args, trials).exit();
}
