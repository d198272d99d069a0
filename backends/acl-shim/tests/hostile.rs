//! Hostile input at every C entry point of the drop-in library (SPEC.md section 8).
//!
//! A table with one row per (entry point, input): null, garbage, destroyed and wrong-kind
//! handles; interior, misaligned, freed and foreign pointers; sizes 0, 1, `SIZE_MAX` and
//! sizes that overflow when rounded to the granularity; unknown attribute ids and every
//! invalid value; `count > destMax`; bad memcpy kinds; calls on a thread without a current
//! device. Each row states the code SPEC.md section 8 documents for it. After every row
//! the statistics of the witness pools (attributes 5-8, read with `aclrtMemPoolGetAttr`)
//! must be unchanged, a refused call must leave its out-pointer alone and leave a message
//! naming the entry point in `aclGetRecentErrMsg`, and nothing may crash. Then threads
//! use a pool, a stream, an event and a context while the main thread destroys it: every
//! call returns 0 or a documented code, and nothing crashes or hangs.
//!
//! Calls before `aclInit`: the shim needs no initialization, so every entry point works
//! before `aclInit` (the real runtime expects it first; SPEC.md section 8 does not say). The first
//! calls of the test come before `aclInit` and check exactly that.
//!
//! Calls without a current device: every call that needs a device or context answers
//! 107002 (SPEC.md section 8). The pool attribute calls and `aclrtMemPoolTrimTo` do not
//! need one (the pool handle names its device), nor do host memory, host-to-host copies,
//! device and context management, `aclInit`/`aclFinalize` and `aclGetRecentErrMsg`.
//!
//! This file is a test binary of its own with a single test, so the platform it sets up
//! through the environment (two devices) is the one the shim builds at its first call.

use acl_rt::exports::*;
use mempool_ascend::sys::*;
use mempool_hal::code;
use std::ffi::c_void;

mod common;
use common::{message, props};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

const OK: aclError = code::ACL_SUCCESS;
const PARAM: aclError = code::ACL_ERROR_INVALID_PARAM;
const RT_PARAM: aclError = code::ACL_ERROR_RT_PARAM_INVALID;
const DEVICE_ID: aclError = code::ACL_ERROR_RT_INVALID_DEVICEID;
const NO_CONTEXT: aclError = code::ACL_ERROR_RT_CONTEXT_NULL;
const STREAM_CONTEXT: aclError = code::ACL_ERROR_RT_STREAM_CONTEXT;
const HANDLE: aclError = code::ACL_ERROR_RT_INVALID_HANDLE;
const HOST_ALLOC: aclError = code::ACL_ERROR_RT_MEMORY_ALLOCATION;
const INTERNAL: aclError = code::ACL_ERROR_RT_INTERNAL_ERROR;

const GRAN: usize = 2 << 20;
const DEVICE_MEMORY: usize = 16 << 30;
const POOL_SIZE: usize = 64 << 20;
const HOST_LEN: usize = 4096;
const BUF_LEN: usize = 4096;
/// What an out-pointer holds before a call; a refused call must leave it.
const SENTINEL: usize = 0x05e4_71e1;
/// Garbage handle and pointer values.
const GARBAGE: [usize; 4] = [0x1, 0x1234, 0xdead_beef, usize::MAX];
/// Sizes that overflow when rounded up to the granularity.
const OVERFLOWING: [usize; 3] = [usize::MAX, usize::MAX - 10, usize::MAX - GRAN + 2];
/// How long a destroy-while-in-use scenario may take before it counts as a hang.
const HANG: Duration = Duration::from_secs(30);

/// The objects the rows refer to, as plain addresses and handle values (never
/// dereferenced by the test; the shim only looks them up).
struct Fx {
    /// A live stream of device 0, and one of device 1.
    s: usize,
    s1: usize,
    dead_stream: usize,
    /// An event recorded (and complete) on `s`; one never recorded; a destroyed one.
    e: usize,
    e_unrecorded: usize,
    dead_event: usize,
    /// The witness pools: `p` (device 0) holds live `a` and cached `freed`, `q` (device 0)
    /// holds live `b`, `p1` is on device 1. Their release thresholds are their size, so no
    /// synchronization in a row releases anything.
    p: usize,
    q: usize,
    p1: usize,
    dead_pool: usize,
    /// A context of device 0 (not current), a destroyed one, device 0's default one.
    ctx: usize,
    dead_ctx: usize,
    default_ctx: usize,
    a: usize,
    freed: usize,
    b: usize,
    /// An allocation that was live when its pool was destroyed.
    dead_pool_ptr: usize,
    /// `aclrtMalloc` memory (HOST_LEN bytes), and an `aclrtMalloc` address already freed.
    d: usize,
    d_freed: usize,
    /// `aclrtMallocHost` memory (HOST_LEN bytes), and one already freed.
    host: usize,
    host_freed: usize,
    /// An address on the main thread's stack, and a heap buffer of BUF_LEN bytes.
    stack: usize,
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
    DeadCtx,
    DefaultCtx,
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
            H::DeadCtx => self.dead_ctx,
            H::DefaultCtx => self.default_ctx,
        }
    }

    fn ptr(&self, p: Ptr) -> usize {
        match p {
            Ptr::Raw(v) => v,
            Ptr::A(off) => self.a + off,
            Ptr::Freed => self.freed,
            Ptr::DeadPool => self.dead_pool_ptr,
            Ptr::D(off) => self.d + off,
            Ptr::DFreed => self.d_freed,
            Ptr::Host(off) => self.host + off,
            Ptr::HostFreed => self.host_freed,
            Ptr::Stack => self.stack,
            Ptr::Buf => self.buf,
        }
    }
}

/// A pointer argument.
#[derive(Clone, Copy, Debug)]
enum Ptr {
    Raw(usize),
    A(usize),
    Freed,
    DeadPool,
    D(usize),
    DFreed,
    Host(usize),
    HostFreed,
    Stack,
    Buf,
}

/// The kinds of handle an entry point takes.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Stream,
    Event,
    Pool,
    Context,
}

/// Hostile values for a handle of `kind`: garbage, the destroyed one, the other kinds
/// (null is listed separately: its code differs).
fn bad_handles(kind: Kind) -> Vec<(String, H)> {
    let mut v: Vec<(String, H)> = GARBAGE.iter().map(|&g| (format!("garbage {g:#x}"), H::Raw(g))).collect();
    v.push((
        "a destroyed handle".into(),
        match kind {
            Kind::Stream => H::DeadS,
            Kind::Event => H::DeadE,
            Kind::Pool => H::DeadP,
            Kind::Context => H::DeadCtx,
        },
    ));
    for (k, name, h) in [
        (Kind::Stream, "a stream handle", H::S),
        (Kind::Event, "an event handle", H::E),
        (Kind::Pool, "a pool handle", H::P),
        (Kind::Context, "a context handle", H::Ctx),
    ] {
        if k != kind {
            v.push((name.into(), h));
        }
    }
    v
}

/// Device addresses outside live memory, with what they are: refused by copies and
/// memsets (for 16 bytes) and by frees.
fn bad_device_pointers() -> Vec<(String, Ptr)> {
    let mut v: Vec<(String, Ptr)> = GARBAGE.iter().map(|&g| (format!("garbage {g:#x}"), Ptr::Raw(g))).collect();
    v.extend([
        ("the last byte of a pool (unallocated)".to_string(), Ptr::A(POOL_SIZE - 1)),
        ("a freed pointer".to_string(), Ptr::Freed),
        ("a pointer of a destroyed pool".to_string(), Ptr::DeadPool),
        ("a host stack address".to_string(), Ptr::Stack),
        ("an aclrtMallocHost address".to_string(), Ptr::Host(0)),
    ]);
    v
}

/// Addresses a free must refuse: the above, and interior (misaligned) pointers of a
/// live allocation, which copies may use.
fn bad_free_pointers() -> Vec<(String, Ptr)> {
    let mut v = bad_device_pointers();
    v.extend([
        ("an interior, misaligned pointer (a + 1)".to_string(), Ptr::A(1)),
        ("an interior pointer (a + granule/2)".to_string(), Ptr::A(GRAN / 2)),
    ]);
    v
}

type Call = Box<dyn Fn(&Fx) -> aclError + Send + Sync>;

struct Row {
    entry: &'static str,
    input: String,
    want: aclError,
    /// Run on a fresh thread, with no current device or context.
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
        want: aclError,
        call: impl Fn(&Fx) -> aclError + Send + Sync + 'static,
    ) {
        self.rows.push(Row { entry, input: input.into(), want, fresh: false, call: Box::new(call) });
    }

    fn fresh(
        &mut self,
        entry: &'static str,
        input: impl Into<String>,
        want: aclError,
        call: impl Fn(&Fx) -> aclError + Send + Sync + 'static,
    ) {
        self.rows.push(Row { entry, input: input.into(), want, fresh: true, call: Box::new(call) });
    }
}

/// Panics (failing the row) when a refused call wrote its out-pointer.
fn untouched(rc: aclError, slot: usize) -> aclError {
    assert!(rc == OK || slot == SENTINEL, "a refused call (code {rc}) wrote its out-pointer: {slot:#x}");
    rc
}

fn sv(v: usize) -> *mut c_void {
    v as *mut c_void
}

/// Statistics (attributes 5-8) of the witness pools.
fn stats(fx: &Fx) -> Vec<u64> {
    let mut out = Vec::new();
    for pool in [fx.p, fx.q, fx.p1] {
        for attr in 5..=8 {
            let mut v = u64::MAX;
            // SAFETY: the pool is a live handle and `v` is a writable `uint64_t`, the
            // width of attributes 5-8.
            let rc = unsafe { aclrtMemPoolGetAttr(sv(pool), attr, (&raw mut v).cast()) };
            assert_eq!(rc, OK, "reading attribute {attr} of a witness pool: {}", message());
            out.push(v);
        }
    }
    out
}

fn check(rc: aclError, what: &str) {
    assert_eq!(rc, OK, "{what}: {}", message());
}

/// Creates a pool whose release threshold is its size.
fn witness_pool(device: u32) -> usize {
    let mut pool: aclrtMemPool = null_mut();
    let pr = props(device, POOL_SIZE);
    let threshold = POOL_SIZE as u64;
    // SAFETY: valid out-pointer and props; the threshold is a `uint64_t`, the width of
    // attribute 4.
    unsafe {
        check(aclrtMemPoolCreate(&mut pool, &pr), "creating a witness pool");
        check(aclrtMemPoolSetAttr(pool, 4, (&raw const threshold).cast_mut().cast()), "its threshold");
    }
    pool as usize
}

fn malloc_async(pool: usize, stream: usize, size: usize) -> usize {
    let mut p: *mut c_void = null_mut();
    // SAFETY: valid out-pointer, live handles.
    check(unsafe { aclrtMemPoolMallocAsync(&mut p, size, sv(pool), sv(stream)) }, "a fixture allocation");
    p as usize
}

/// Builds the fixture on the calling (main) thread, whose current device is 0.
fn fixture(stack: usize, buf: usize) -> Fx {
    let [mut s, mut dead_stream, mut e, mut e_unrecorded, mut dead_event] = [null_mut::<c_void>(); 5];
    let [mut ctx, mut dead_ctx, mut default_ctx] = [null_mut::<c_void>(); 3];
    let [mut d, mut d_freed, mut host, mut host_freed] = [null_mut::<c_void>(); 4];
    // SAFETY: valid out-pointers and handles the shim just returned.
    unsafe {
        check(aclrtGetCurrentContext(&mut default_ctx), "the default context");
        check(aclrtCreateStream(&mut s), "stream");
        check(aclrtCreateStream(&mut dead_stream), "stream");
        check(aclrtDestroyStream(dead_stream), "destroying a stream");
        check(aclrtCreateEvent(&mut e), "event");
        check(aclrtCreateEvent(&mut e_unrecorded), "event");
        check(aclrtCreateEvent(&mut dead_event), "event");
        check(aclrtDestroyEvent(dead_event), "destroying an event");
        check(aclrtRecordEvent(e, s), "recording");
        check(aclrtSynchronizeEvent(e), "synchronizing the event");
        // Creating a context makes it current: restore the default one after each.
        check(aclrtCreateContext(&mut ctx, 0), "context");
        check(aclrtCreateContext(&mut dead_ctx, 0), "context");
        check(aclrtDestroyContext(dead_ctx), "destroying a context");
        check(aclrtSetCurrentContext(default_ctx), "back to the default context");
        check(aclrtMalloc(&mut d, HOST_LEN, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc");
        check(aclrtMalloc(&mut d_freed, HOST_LEN, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc");
        check(aclrtFree(d_freed), "aclrtFree");
        check(aclrtMallocHost(&mut host, HOST_LEN), "aclrtMallocHost");
        check(aclrtMallocHost(&mut host_freed, HOST_LEN), "aclrtMallocHost");
        check(aclrtFreeHost(host_freed), "aclrtFreeHost");
    }
    let (p, q) = (witness_pool(0), witness_pool(0));
    let a = malloc_async(p, s as usize, GRAN);
    let freed = malloc_async(p, s as usize, GRAN);
    let b = malloc_async(q, s as usize, 100);
    let dead_pool = witness_pool(0);
    let dead_pool_ptr = malloc_async(dead_pool, s as usize, 100);
    // SAFETY: live handles and an address the pool just returned.
    unsafe {
        check(aclrtMemPoolFreeAsync(sv(freed), s), "freeing");
        check(aclrtMemPoolDestroy(sv(dead_pool)), "destroying a pool");
        check(aclrtSynchronizeStream(s), "synchronizing");
    }
    // Device 1: a stream and a pool, made on another thread (the current device is per
    // thread).
    let (s1, p1) = std::thread::spawn(|| {
        let mut s1: aclrtStream = null_mut();
        // SAFETY: a valid device id and out-pointer.
        unsafe {
            check(aclrtSetDevice(1), "device 1");
            check(aclrtCreateStream(&mut s1), "a stream of device 1");
        }
        (s1 as usize, witness_pool(1))
    })
    .join()
    .unwrap();
    Fx {
        s: s as usize,
        s1,
        dead_stream: dead_stream as usize,
        e: e as usize,
        e_unrecorded: e_unrecorded as usize,
        dead_event: dead_event as usize,
        p,
        q,
        p1,
        dead_pool,
        ctx: ctx as usize,
        dead_ctx: dead_ctx as usize,
        default_ctx: default_ctx as usize,
        a,
        freed,
        b,
        dead_pool_ptr,
        d: d as usize,
        d_freed: d_freed as usize,
        host: host as usize,
        host_freed: host_freed as usize,
        stack,
        buf,
    }
}

extern "C" fn ignore_args(_: *mut c_void) {}

// ------------------------------------------------------------------ the table

fn device_rows(t: &mut Table) {
    for dev in [-1, 2, i32::MAX, i32::MIN] {
        t.add("aclrtSetDevice", format!("device {dev}"), DEVICE_ID, move |_| {
            // SAFETY: takes an integer only.
            unsafe { aclrtSetDevice(dev) }
        });
        t.add("aclrtResetDevice", format!("device {dev}"), DEVICE_ID, move |_| {
            // SAFETY: takes an integer only.
            unsafe { aclrtResetDevice(dev) }
        });
    }
    t.fresh("aclrtSetDevice", "device 1, without a current device", OK, |_| {
        // SAFETY: takes an integer only.
        unsafe { aclrtSetDevice(1) }
    });
    t.fresh("aclrtResetDevice", "device 0, without a current device", OK, |_| {
        // SAFETY: takes an integer only.
        unsafe { aclrtResetDevice(0) }
    });
    t.add("aclrtGetDeviceCount", "null count", PARAM, |_| {
        // SAFETY: a null out-pointer, which the shim refuses before writing.
        unsafe { aclrtGetDeviceCount(null_mut()) }
    });
    t.fresh("aclrtGetDeviceCount", "without a current device", OK, |_| {
        let mut n = 0u32;
        // SAFETY: a valid out-pointer.
        let rc = unsafe { aclrtGetDeviceCount(&mut n) };
        assert_eq!(n, 2, "two devices were configured");
        rc
    });
}

fn context_rows(t: &mut Table) {
    t.add("aclrtCreateContext", "null context", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtCreateContext(null_mut(), 0) }
    });
    for dev in [-1, 2, i32::MAX, i32::MIN] {
        t.add("aclrtCreateContext", format!("device {dev}"), DEVICE_ID, move |_| {
            let mut c = SENTINEL as aclrtContext;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { aclrtCreateContext(&mut c, dev) }, c as usize)
        });
    }
    t.fresh("aclrtCreateContext", "device 0, without a current device", OK, |_| {
        let mut c: aclrtContext = null_mut();
        // SAFETY: a valid out-pointer; the new context is destroyed again.
        unsafe {
            let rc = aclrtCreateContext(&mut c, 0);
            check(aclrtDestroyContext(c), "destroying it");
            rc
        }
    });
    t.add("aclrtDestroyContext", "null", PARAM, |_| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtDestroyContext(null_mut()) }
    });
    t.add("aclrtSetCurrentContext", "null", PARAM, |_| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtSetCurrentContext(null_mut()) }
    });
    for (input, h) in bad_handles(Kind::Context) {
        t.add("aclrtDestroyContext", input.clone(), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtDestroyContext(sv(f.h(h))) }
        });
        t.add("aclrtSetCurrentContext", input, HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtSetCurrentContext(sv(f.h(h))) }
        });
    }
    t.add("aclrtDestroyContext", "device 0's default context", HANDLE, |f| {
        // SAFETY: handles are looked up in the shim's registry, never dereferenced.
        unsafe { aclrtDestroyContext(sv(f.h(H::DefaultCtx))) }
    });
    t.fresh("aclrtDestroyContext", "a live context, without a current device", OK, |_| {
        let mut c: aclrtContext = null_mut();
        // SAFETY: a valid out-pointer, then the handle it received.
        unsafe {
            check(aclrtCreateContext(&mut c, 0), "a context to destroy");
            check(aclrtResetDevice(0), "no current device again");
            aclrtDestroyContext(c)
        }
    });
    t.fresh("aclrtSetCurrentContext", "a live context, without a current device", OK, |f| {
        // SAFETY: a live context handle.
        unsafe { aclrtSetCurrentContext(sv(f.ctx)) }
    });
    t.add("aclrtGetCurrentContext", "null context", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtGetCurrentContext(null_mut()) }
    });
    t.fresh("aclrtGetCurrentContext", "without a current device", NO_CONTEXT, |_| {
        let mut c = SENTINEL as aclrtContext;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { aclrtGetCurrentContext(&mut c) }, c as usize)
    });
}

fn stream_rows(t: &mut Table) {
    t.add("aclrtCreateStream", "null stream", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtCreateStream(null_mut()) }
    });
    t.fresh("aclrtCreateStream", "without a current device", NO_CONTEXT, |_| {
        let mut s = SENTINEL as aclrtStream;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { aclrtCreateStream(&mut s) }, s as usize)
    });
    t.add("aclrtDestroyStream", "null (the default stream)", PARAM, |_| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtDestroyStream(null_mut()) }
    });
    for (input, h) in bad_handles(Kind::Stream) {
        t.add("aclrtDestroyStream", input.clone(), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtDestroyStream(sv(f.h(h))) }
        });
        t.add("aclrtSynchronizeStream", input, HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtSynchronizeStream(sv(f.h(h))) }
        });
    }
    t.add("aclrtDestroyStream", "a stream of another device", STREAM_CONTEXT, |f| {
        // SAFETY: a live handle, checked against the current device.
        unsafe { aclrtDestroyStream(sv(f.s1)) }
    });
    t.add("aclrtSynchronizeStream", "a stream of another device", STREAM_CONTEXT, |f| {
        // SAFETY: a live handle, checked against the current device.
        unsafe { aclrtSynchronizeStream(sv(f.s1)) }
    });
    t.add("aclrtSynchronizeStream", "null (the default stream)", OK, |_| {
        // SAFETY: null means the default stream.
        unsafe { aclrtSynchronizeStream(null_mut()) }
    });
    for (entry, input, h) in [
        ("aclrtDestroyStream", "a live stream", H::S),
        ("aclrtSynchronizeStream", "a live stream", H::S),
        ("aclrtSynchronizeStream", "null (the default stream)", H::Null),
        ("aclrtSynchronizeStream", "garbage 0x1234", H::Raw(0x1234)),
    ] {
        t.fresh(entry, format!("{input}, without a current device"), NO_CONTEXT, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe {
                if entry == "aclrtDestroyStream" {
                    aclrtDestroyStream(sv(f.h(h)))
                } else {
                    aclrtSynchronizeStream(sv(f.h(h)))
                }
            }
        });
    }
    t.fresh("aclrtSynchronizeDevice", "without a current device", NO_CONTEXT, |_| {
        // SAFETY: takes no arguments.
        unsafe { aclrtSynchronizeDevice() }
    });
    t.add("aclrtSynchronizeDevice", "with a current device (the witness pools keep their memory)", OK, |_| {
        // SAFETY: takes no arguments.
        unsafe { aclrtSynchronizeDevice() }
    });
}

fn event_rows(t: &mut Table) {
    t.add("aclrtCreateEvent", "null event", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtCreateEvent(null_mut()) }
    });
    t.fresh("aclrtCreateEvent", "without a current device", NO_CONTEXT, |_| {
        let mut e = SENTINEL as aclrtEvent;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { aclrtCreateEvent(&mut e) }, e as usize)
    });
    // Null events: a null pointer (100000), as CANN checks before the runtime.
    t.add("aclrtDestroyEvent", "null", PARAM, |_| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtDestroyEvent(null_mut()) }
    });
    t.add("aclrtRecordEvent", "null event", PARAM, |f| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtRecordEvent(null_mut(), sv(f.s)) }
    });
    t.add("aclrtStreamWaitEvent", "null event", PARAM, |f| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtStreamWaitEvent(sv(f.s), null_mut()) }
    });
    t.add("aclrtSynchronizeEvent", "null", PARAM, |_| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtSynchronizeEvent(null_mut()) }
    });
    t.add("aclrtQueryEventStatus", "null event", PARAM, |_| {
        let mut st = SENTINEL as aclrtEventRecordedStatus;
        // SAFETY: a valid out-pointer; handles are looked up, never dereferenced.
        untouched(unsafe { aclrtQueryEventStatus(null_mut(), &mut st) }, st as usize)
    });
    t.add("aclrtQueryEventStatus", "null status", PARAM, |f| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtQueryEventStatus(sv(f.e), null_mut()) }
    });
    t.add("aclrtEventElapsedTime", "null ms", PARAM, |f| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtEventElapsedTime(null_mut(), sv(f.e), sv(f.e)) }
    });
    t.add("aclrtEventElapsedTime", "null start event", PARAM, |f| {
        let mut ms = f32::NAN;
        // SAFETY: a valid out-pointer; handles are looked up, never dereferenced.
        let rc = unsafe { aclrtEventElapsedTime(&mut ms, null_mut(), sv(f.e)) };
        assert!(ms.is_nan(), "a refused call wrote ms");
        rc
    });
    t.add("aclrtEventElapsedTime", "null end event", PARAM, |f| {
        let mut ms = f32::NAN;
        // SAFETY: a valid out-pointer; handles are looked up, never dereferenced.
        unsafe { aclrtEventElapsedTime(&mut ms, sv(f.e), null_mut()) }
    });
    for (input, h) in bad_handles(Kind::Event) {
        let i = |what: &str| format!("{what}: {input}");
        t.add("aclrtDestroyEvent", input.clone(), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtDestroyEvent(sv(f.h(h))) }
        });
        t.add("aclrtRecordEvent", i("event"), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtRecordEvent(sv(f.h(h)), sv(f.s)) }
        });
        t.add("aclrtStreamWaitEvent", i("event"), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtStreamWaitEvent(sv(f.s), sv(f.h(h))) }
        });
        t.add("aclrtSynchronizeEvent", input.clone(), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtSynchronizeEvent(sv(f.h(h))) }
        });
        t.add("aclrtQueryEventStatus", i("event"), HANDLE, move |f| {
            let mut st = SENTINEL as aclrtEventRecordedStatus;
            // SAFETY: a valid out-pointer; handles are looked up, never dereferenced.
            untouched(unsafe { aclrtQueryEventStatus(sv(f.h(h)), &mut st) }, st as usize)
        });
        t.add("aclrtEventElapsedTime", i("start event"), HANDLE, move |f| {
            let mut ms = f32::NAN;
            // SAFETY: a valid out-pointer; handles are looked up, never dereferenced.
            unsafe { aclrtEventElapsedTime(&mut ms, sv(f.h(h)), sv(f.e)) }
        });
        t.add("aclrtEventElapsedTime", i("end event"), HANDLE, move |f| {
            let mut ms = f32::NAN;
            // SAFETY: a valid out-pointer; handles are looked up, never dereferenced.
            unsafe { aclrtEventElapsedTime(&mut ms, sv(f.e), sv(f.h(h))) }
        });
    }
    for (input, h) in bad_handles(Kind::Stream) {
        t.add("aclrtRecordEvent", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtRecordEvent(sv(f.e_unrecorded), sv(f.h(h))) }
        });
        t.add("aclrtStreamWaitEvent", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtStreamWaitEvent(sv(f.h(h)), sv(f.e)) }
        });
    }
    t.add("aclrtRecordEvent", "event and stream swapped", HANDLE, |f| {
        // SAFETY: handles are looked up in the shim's registry, never dereferenced.
        unsafe { aclrtRecordEvent(sv(f.s), sv(f.e)) }
    });
    t.add("aclrtStreamWaitEvent", "stream and event swapped", HANDLE, |f| {
        // SAFETY: handles are looked up in the shim's registry, never dereferenced.
        unsafe { aclrtStreamWaitEvent(sv(f.e), sv(f.s)) }
    });
    t.add("aclrtRecordEvent", "a stream of another device", STREAM_CONTEXT, |f| {
        // SAFETY: live handles.
        unsafe { aclrtRecordEvent(sv(f.e_unrecorded), sv(f.s1)) }
    });
    t.add("aclrtStreamWaitEvent", "a stream of another device", STREAM_CONTEXT, |f| {
        // SAFETY: live handles.
        unsafe { aclrtStreamWaitEvent(sv(f.s1), sv(f.e)) }
    });
    t.add("aclrtStreamWaitEvent", "an event never recorded (nothing to wait for)", OK, |f| {
        // SAFETY: live handles.
        unsafe { aclrtStreamWaitEvent(sv(f.s), sv(f.e_unrecorded)) }
    });
    t.add("aclrtSynchronizeEvent", "an event never recorded (returns at once)", OK, |f| {
        // SAFETY: a live handle.
        unsafe { aclrtSynchronizeEvent(sv(f.e_unrecorded)) }
    });
    t.add("aclrtQueryEventStatus", "an event never recorded (NOT_READY, as CANN documents)", OK, |f| {
        let mut st = -1;
        // SAFETY: a valid out-pointer and a live handle.
        let rc = unsafe { aclrtQueryEventStatus(sv(f.e_unrecorded), &mut st) };
        assert_eq!(st, ACL_EVENT_RECORDED_STATUS_NOT_READY, "status of an event never recorded");
        rc
    });
    t.add("aclrtEventElapsedTime", "a start event never recorded", RT_PARAM, |f| {
        let mut ms = f32::NAN;
        // SAFETY: a valid out-pointer and live handles.
        let rc = unsafe { aclrtEventElapsedTime(&mut ms, sv(f.e_unrecorded), sv(f.e)) };
        assert!(ms.is_nan(), "a refused call wrote ms");
        rc
    });
    for (entry, needs_stream) in [
        ("aclrtDestroyEvent", false),
        ("aclrtRecordEvent", true),
        ("aclrtStreamWaitEvent", true),
        ("aclrtSynchronizeEvent", false),
        ("aclrtQueryEventStatus", false),
        ("aclrtEventElapsedTime", false),
    ] {
        let input = if needs_stream { "a live event and stream" } else { "a live event" };
        t.fresh(entry, format!("{input}, without a current device"), NO_CONTEXT, move |f| {
            let (e, s) = (sv(f.e), sv(f.s));
            let (mut st, mut ms) = (-1, 0f32);
            // SAFETY: live handles and valid out-pointers.
            unsafe {
                match entry {
                    "aclrtDestroyEvent" => aclrtDestroyEvent(e),
                    "aclrtRecordEvent" => aclrtRecordEvent(e, s),
                    "aclrtStreamWaitEvent" => aclrtStreamWaitEvent(s, e),
                    "aclrtSynchronizeEvent" => aclrtSynchronizeEvent(e),
                    "aclrtQueryEventStatus" => aclrtQueryEventStatus(e, &mut st),
                    _ => aclrtEventElapsedTime(&mut ms, e, e),
                }
            }
        });
    }
}

fn sync_memory_rows(t: &mut Table) {
    const E: &str = "aclrtMalloc";
    t.add(E, "null devPtr", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtMalloc(null_mut(), 16, ACL_MEM_MALLOC_HUGE_FIRST) }
    });
    let mut sizes: Vec<(String, usize, aclError)> = vec![("size 0".into(), 0, PARAM)];
    sizes.extend(OVERFLOWING.iter().map(|&n| (format!("size {n:#x} (overflows when rounded)"), n, RT_PARAM)));
    sizes.push(("size 2^62 (more than the device)".into(), 1 << 62, INTERNAL));
    sizes.push(("size of the device + 1".into(), DEVICE_MEMORY + 1, INTERNAL));
    for (input, size, want) in sizes {
        t.add(E, input, want, move |_| {
            let mut p = SENTINEL as *mut c_void;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { aclrtMalloc(&mut p, size, ACL_MEM_MALLOC_HUGE_FIRST) }, p as usize)
        });
    }
    for policy in [-1, 99] {
        t.add(E, format!("size 1, policy {policy} (the policy is not used)"), OK, move |_| {
            let mut p: *mut c_void = null_mut();
            // SAFETY: a valid out-pointer, then the address it received.
            unsafe {
                let rc = aclrtMalloc(&mut p, 1, policy);
                check(aclrtFree(p), "freeing it");
                rc
            }
        });
    }
    t.fresh(E, "without a current device", NO_CONTEXT, |_| {
        let mut p = SENTINEL as *mut c_void;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { aclrtMalloc(&mut p, 16, ACL_MEM_MALLOC_HUGE_FIRST) }, p as usize)
    });

    const F: &str = "aclrtFree";
    t.add(F, "null", PARAM, |_| {
        // SAFETY: pointers are looked up by the emulator, never dereferenced.
        unsafe { aclrtFree(null_mut()) }
    });
    let mut ptrs = bad_free_pointers();
    ptrs.extend([
        ("a live pool allocation (another pool's pointer)".to_string(), Ptr::A(0)),
        ("an interior pointer of aclrtMalloc memory".to_string(), Ptr::D(8)),
        ("an aclrtMalloc address already freed".to_string(), Ptr::DFreed),
    ]);
    for (input, p) in ptrs {
        t.add(F, input, RT_PARAM, move |f| {
            // SAFETY: pointers are looked up by the emulator, never dereferenced.
            unsafe { aclrtFree(sv(f.ptr(p))) }
        });
    }
    t.fresh(F, "live aclrtMalloc memory, without a current device", NO_CONTEXT, |f| {
        // SAFETY: pointers are looked up by the emulator, never dereferenced.
        unsafe { aclrtFree(sv(f.d)) }
    });

    const MH: &str = "aclrtMallocHost";
    t.add(MH, "null hostPtr", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtMallocHost(null_mut(), 16) }
    });
    let mut sizes: Vec<(String, usize, aclError)> = vec![("size 0".into(), 0, PARAM)];
    sizes.extend(OVERFLOWING.iter().map(|&n| (format!("size {n:#x} (overflows when aligned)"), n, PARAM)));
    sizes.push(("size isize::MAX (overflows when aligned)".into(), isize::MAX as usize, PARAM));
    sizes.push(("size 2^62 (the host cannot)".into(), 1 << 62, HOST_ALLOC));
    for (input, size, want) in sizes {
        t.add(MH, input, want, move |_| {
            let mut p = SENTINEL as *mut c_void;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { aclrtMallocHost(&mut p, size) }, p as usize)
        });
    }
    t.fresh(MH, "size 1, without a current device (host memory needs none)", OK, |_| {
        let mut p: *mut c_void = null_mut();
        // SAFETY: a valid out-pointer, then the address it received.
        unsafe {
            let rc = aclrtMallocHost(&mut p, 1);
            check(aclrtFreeHost(p), "freeing it");
            rc
        }
    });

    const FH: &str = "aclrtFreeHost";
    t.add(FH, "null", PARAM, |_| {
        // SAFETY: pointers are looked up in the shim's registry, never dereferenced.
        unsafe { aclrtFreeHost(null_mut()) }
    });
    let mut ptrs: Vec<(String, Ptr)> = GARBAGE.iter().map(|&g| (format!("garbage {g:#x}"), Ptr::Raw(g))).collect();
    ptrs.extend([
        ("an interior, misaligned pointer".to_string(), Ptr::Host(1)),
        ("a pointer already freed".to_string(), Ptr::HostFreed),
        ("device memory (a pool allocation)".to_string(), Ptr::A(0)),
        ("device memory (aclrtMalloc)".to_string(), Ptr::D(0)),
        ("a host stack address".to_string(), Ptr::Stack),
        ("a host heap address not from aclrtMallocHost".to_string(), Ptr::Buf),
    ]);
    for (input, p) in ptrs {
        t.add(FH, input, PARAM, move |f| {
            // SAFETY: pointers are looked up in the shim's registry and only freed when
            // found there.
            unsafe { aclrtFreeHost(sv(f.ptr(p))) }
        });
    }
}

/// The memcpy kinds and which sides they make device memory.
const DEVICE_SIDES: [(aclrtMemcpyKind, &str, bool, bool); 3] = [
    (ACL_MEMCPY_HOST_TO_DEVICE, "HOST_TO_DEVICE", true, false),
    (ACL_MEMCPY_DEVICE_TO_HOST, "DEVICE_TO_HOST", false, true),
    (ACL_MEMCPY_DEVICE_TO_DEVICE, "DEVICE_TO_DEVICE", true, true),
];

/// One copy, sync or async (on `stream`).
///
/// # Safety
///
/// Host sides must be valid for `count` bytes until the copy has run.
unsafe fn copy(
    is_async: bool,
    dst: usize,
    dest_max: usize,
    src: usize,
    count: usize,
    kind: aclrtMemcpyKind,
    stream: usize,
) -> aclError {
    if is_async {
        // SAFETY: the caller's contract.
        unsafe { aclrtMemcpyAsync(sv(dst), dest_max, sv(src), count, kind, sv(stream)) }
    } else {
        // SAFETY: the caller's contract.
        unsafe { aclrtMemcpy(sv(dst), dest_max, sv(src), count, kind) }
    }
}

fn copy_rows(t: &mut Table) {
    for is_async in [false, true] {
        let entry = if is_async { "aclrtMemcpyAsync" } else { "aclrtMemcpy" };
        // Host sides are the fixture's buffer (BUF_LEN bytes) or aclrtMallocHost memory
        // (HOST_LEN bytes); device sides are `a` (a granule) unless the row says otherwise.
        t.add(entry, "null dst", PARAM, move |f| {
            // SAFETY: refused before any copy (null pointer).
            unsafe { copy(is_async, 0, 16, f.buf, 16, ACL_MEMCPY_HOST_TO_HOST, f.s) }
        });
        t.add(entry, "null src", PARAM, move |f| {
            // SAFETY: refused before any copy (null pointer).
            unsafe { copy(is_async, f.buf, 16, 0, 16, ACL_MEMCPY_HOST_TO_HOST, f.s) }
        });
        t.add(entry, "null dst and src, count 0", PARAM, move |f| {
            // SAFETY: refused before any copy (null pointers).
            unsafe { copy(is_async, 0, 0, 0, 0, ACL_MEMCPY_HOST_TO_HOST, f.s) }
        });
        for (input, dest_max, count) in [
            ("count 16 > destMax 8", 8, 16),
            ("count 1 > destMax 0", 0, 1),
            ("count SIZE_MAX > destMax", BUF_LEN, usize::MAX),
        ] {
            for (kind, name, _, _) in DEVICE_SIDES {
                t.add(entry, format!("{input}, {name}"), PARAM, move |f| {
                    let (d, s) = sides(f, kind);
                    // SAFETY: refused before any copy (count > destMax).
                    unsafe { copy(is_async, d, dest_max, s, count, kind, f.s) }
                });
            }
            t.add(entry, format!("{input}, HOST_TO_HOST"), PARAM, move |f| {
                // SAFETY: refused before any copy (count > destMax).
                unsafe { copy(is_async, f.buf, dest_max, f.host, count, ACL_MEMCPY_HOST_TO_HOST, f.s) }
            });
        }
        for kind in [-1, 5, 99, i32::MAX, i32::MIN] {
            t.add(entry, format!("kind {kind}"), PARAM, move |f| {
                // SAFETY: refused before any copy (bad kind); both sides are valid anyway.
                unsafe { copy(is_async, f.buf, BUF_LEN, f.host, 16, kind, f.s) }
            });
        }
        t.add(entry, "count 0 with kind 99 (count 0 is checked first: nothing is done)", OK, move |f| {
            // SAFETY: nothing is copied (count 0).
            unsafe { copy(is_async, f.buf, 0, f.host, 0, 99, f.s) }
        });
        t.add(entry, "count 0 with a garbage device side", OK, move |f| {
            // SAFETY: nothing is copied (count 0).
            unsafe { copy(is_async, 0x1234, 0, f.host, 0, ACL_MEMCPY_HOST_TO_DEVICE, f.s) }
        });
        for (kind, name, dst_dev, src_dev) in DEVICE_SIDES {
            for (what, p) in bad_device_pointers() {
                let mut cases = Vec::new();
                if dst_dev {
                    cases.push(("dst", true));
                }
                if src_dev {
                    cases.push(("src", false));
                }
                for (side, is_dst) in cases {
                    t.add(entry, format!("{name}, {side}: {what}"), RT_PARAM, move |f| {
                        let (mut d, mut s) = sides(f, kind);
                        if is_dst {
                            d = f.ptr(p);
                        } else {
                            s = f.ptr(p);
                        }
                        // SAFETY: the host side (if any) is a valid buffer of 16 bytes or
                        // more; the bad device side is refused before anything is copied.
                        unsafe { copy(is_async, d, 16, s, 16, kind, f.s) }
                    });
                }
            }
            t.add(entry, format!("{name}, a range past the end of the allocation"), RT_PARAM, move |f| {
                let (mut d, mut s) = sides(f, kind);
                let end = f.a + GRAN - 8;
                if dst_dev {
                    d = end;
                } else {
                    s = end;
                }
                // SAFETY: the host side (if any) holds 16 bytes; the device range is
                // refused before anything is copied.
                unsafe { copy(is_async, d, 16, s, 16, kind, f.s) }
            });
            t.add(entry, format!("{name}, count and destMax SIZE_MAX"), RT_PARAM, move |f| {
                let (d, s) = sides(f, kind);
                // SAFETY: the device range [a, a + SIZE_MAX) is refused before anything
                // is copied.
                unsafe { copy(is_async, d, usize::MAX, s, usize::MAX, kind, f.s) }
            });
            t.add(entry, format!("{name}, misaligned device address inside the allocation"), OK, move |f| {
                let (mut d, mut s) = sides(f, kind);
                if dst_dev {
                    d = f.a + 3;
                }
                if src_dev {
                    s = f.a + 3;
                }
                // SAFETY: host sides hold 16 bytes; device sides lie inside `a`; an async
                // copy is synchronized before the buffers could go away.
                unsafe {
                    let rc = copy(is_async, d, 16, s, 16, kind, f.s);
                    check(aclrtSynchronizeStream(sv(f.s)), "synchronizing the copy");
                    rc
                }
            });
        }
        t.add(entry, "DEFAULT, dst a freed pool address (found as device memory, refused)", RT_PARAM, move |f| {
            // SAFETY: the device side is refused before anything is copied.
            unsafe { copy(is_async, f.freed, 16, f.buf, 16, ACL_MEMCPY_DEFAULT, f.s) }
        });
        t.add(entry, "HOST_TO_DEVICE, dst a pointer of another pool (allowed)", OK, move |f| {
            // SAFETY: the host side holds 16 bytes; `b` is live device memory; an async
            // copy is synchronized before the buffers could go away.
            unsafe {
                let rc = copy(is_async, f.b, 16, f.buf, 16, ACL_MEMCPY_HOST_TO_DEVICE, f.s);
                check(aclrtSynchronizeStream(sv(f.s)), "synchronizing the copy");
                rc
            }
        });
        if is_async {
            for (input, h) in bad_handles(Kind::Stream) {
                t.add(entry, format!("stream: {input}"), HANDLE, move |f| {
                    // SAFETY: refused before any copy (the stream is checked first).
                    unsafe { copy(true, f.a, 16, f.buf, 16, ACL_MEMCPY_HOST_TO_DEVICE, f.h(h)) }
                });
            }
            t.add(entry, "a stream of another device", STREAM_CONTEXT, |f| {
                // SAFETY: refused before any copy (the stream is checked first).
                unsafe { copy(true, f.a, 16, f.buf, 16, ACL_MEMCPY_HOST_TO_DEVICE, f.s1) }
            });
            t.fresh(entry, "HOST_TO_HOST on the default stream, without a current device", NO_CONTEXT, |f| {
                // SAFETY: refused before any copy (no current device for the stream).
                unsafe { copy(true, f.buf, 16, f.host, 16, ACL_MEMCPY_HOST_TO_HOST, 0) }
            });
        } else {
            t.fresh(entry, "HOST_TO_DEVICE, without a current device", NO_CONTEXT, |f| {
                // SAFETY: refused before any copy (no current device).
                unsafe { copy(false, f.a, 16, f.buf, 16, ACL_MEMCPY_HOST_TO_DEVICE, 0) }
            });
            t.fresh(entry, "HOST_TO_HOST, without a current device (host copies need none)", OK, |f| {
                // SAFETY: both host sides hold 16 bytes or more.
                unsafe { copy(false, f.buf, 16, f.host, 16, ACL_MEMCPY_HOST_TO_HOST, 0) }
            });
        }
    }
}

/// Valid (dst, src) for a device kind: `a` on the device sides, host memory elsewhere.
fn sides(f: &Fx, kind: aclrtMemcpyKind) -> (usize, usize) {
    match kind {
        ACL_MEMCPY_HOST_TO_DEVICE => (f.a, f.buf),
        ACL_MEMCPY_DEVICE_TO_HOST => (f.buf, f.a),
        _ => (f.a, f.a + 64),
    }
}

fn memset_rows(t: &mut Table) {
    for is_async in [false, true] {
        let entry = if is_async { "aclrtMemsetAsync" } else { "aclrtMemset" };
        let set = move |p: usize, max: usize, value: i32, count: usize, stream: usize| {
            // SAFETY: device pointers are checked by the emulator before anything is
            // written; handles are looked up, never dereferenced.
            unsafe {
                if is_async {
                    aclrtMemsetAsync(sv(p), max, value, count, sv(stream))
                } else {
                    aclrtMemset(sv(p), max, value, count)
                }
            }
        };
        t.add(entry, "null devPtr", PARAM, move |f| set(0, 16, 0, 16, f.s));
        t.add(entry, "count 16 > maxCount 8", PARAM, move |f| set(f.a, 8, 0, 16, f.s));
        t.add(entry, "count SIZE_MAX > maxCount", PARAM, move |f| set(f.a, GRAN, 0, usize::MAX, f.s));
        t.add(entry, "count 0 with a garbage pointer (nothing is done)", OK, move |f| set(0x1234, 0, 0, 0, f.s));
        for (what, p) in bad_device_pointers() {
            t.add(entry, what, RT_PARAM, move |f| set(f.ptr(p), 16, 0, 16, f.s));
        }
        t.add(entry, "a range past the end of the allocation", RT_PARAM, move |f| set(f.a + GRAN - 8, 16, 0, 16, f.s));
        t.add(entry, "count and maxCount SIZE_MAX", RT_PARAM, move |f| set(f.a, usize::MAX, 0, usize::MAX, f.s));
        for value in [-1, i32::MAX, i32::MIN] {
            t.add(
                entry,
                format!("value {value}, misaligned inside the allocation (the low byte is used)"),
                OK,
                move |f| {
                    let rc = set(f.a + 1, 16, value, 16, f.s);
                    // SAFETY: a live stream.
                    check(unsafe { aclrtSynchronizeStream(sv(f.s)) }, "synchronizing");
                    rc
                },
            );
        }
        if is_async {
            for (input, h) in bad_handles(Kind::Stream) {
                t.add(entry, format!("stream: {input}"), HANDLE, move |f| set(f.a, 16, 0, 16, f.h(h)));
            }
            t.add(entry, "a stream of another device", STREAM_CONTEXT, move |f| set(f.a, 16, 0, 16, f.s1));
        }
        t.fresh(entry, "live memory, without a current device", NO_CONTEXT, move |f| set(f.a, 16, 0, 16, 0));
    }
}

fn misc_rows(t: &mut Table) {
    const L: &str = "aclrtLaunchHostFunc";
    let launch = |stream: usize, func: aclrtHostFunc, args: usize| {
        // SAFETY: the function ignores its argument, so any `args` value is fine; handles
        // are looked up, never dereferenced.
        unsafe { aclrtLaunchHostFunc(sv(stream), func, sv(args)) }
    };
    t.add(L, "null fn", PARAM, move |f| launch(f.s, None, 0));
    for (input, h) in bad_handles(Kind::Stream) {
        t.add(L, format!("stream: {input}"), HANDLE, move |f| launch(f.h(h), Some(ignore_args), 0));
    }
    t.add(L, "a stream of another device", STREAM_CONTEXT, move |f| launch(f.s1, Some(ignore_args), 0));
    t.add(L, "garbage args (passed through untouched)", OK, move |f| {
        let rc = launch(f.s, Some(ignore_args), 0xdead_beef);
        // SAFETY: a live stream.
        check(unsafe { aclrtSynchronizeStream(sv(f.s)) }, "synchronizing");
        rc
    });
    t.fresh(L, "the default stream, without a current device", NO_CONTEXT, move |_| launch(0, Some(ignore_args), 0));

    const M: &str = "aclrtGetMemInfo";
    t.add(M, "null free", PARAM, |_| {
        let mut total = SENTINEL;
        // SAFETY: one null and one valid out-pointer; refused before any write.
        untouched(unsafe { aclrtGetMemInfo(ACL_HBM_MEM, null_mut(), &mut total) }, total)
    });
    t.add(M, "null total", PARAM, |_| {
        let mut free = SENTINEL;
        // SAFETY: one valid and one null out-pointer; refused before any write.
        untouched(unsafe { aclrtGetMemInfo(ACL_HBM_MEM, &mut free, null_mut()) }, free)
    });
    for attr in [-1, 99] {
        t.add(M, format!("attribute {attr} (not used: every attribute reports device memory)"), OK, move |_| {
            let (mut free, mut total) = (0, 0);
            // SAFETY: valid out-pointers.
            unsafe { aclrtGetMemInfo(attr, &mut free, &mut total) }
        });
    }
    t.fresh(M, "without a current device", NO_CONTEXT, |_| {
        let (mut free, mut total) = (SENTINEL, SENTINEL);
        // SAFETY: valid out-pointers.
        let rc = unsafe { aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total) };
        untouched(untouched(rc, free), total)
    });

    const R: &str = "aclGetRecentErrMsg";
    t.fresh(R, "on a thread with no error yet: an empty string, not null", OK, |_| {
        // SAFETY: takes no arguments.
        let p = unsafe { aclGetRecentErrMsg() };
        assert!(!p.is_null());
        assert_eq!(message(), "");
        OK
    });
    t.fresh(R, "after a refused call: the message names the entry point", OK, |_| {
        // SAFETY: garbage handles are looked up, never dereferenced.
        assert_eq!(unsafe { aclrtSetCurrentContext(sv(0x1234)) }, HANDLE);
        assert!(message().starts_with("aclrtSetCurrentContext: "), "{}", message());
        OK
    });

    const I: &str = "aclInit";
    t.add(I, "null config, again (repeat calls are accepted)", OK, |_| {
        // SAFETY: the configuration path is not read.
        unsafe { aclInit(std::ptr::null()) }
    });
    t.fresh(I, "a config file that does not exist, on another thread (the file is not read)", OK, |_| {
        // SAFETY: a NUL-terminated string (not read by the shim).
        unsafe { aclInit(c"/nonexistent/acl.json".as_ptr()) }
    });
    const FI: &str = "aclFinalize";
    t.fresh(FI, "without a current device (the shim keeps working afterwards)", OK, |_| {
        // SAFETY: takes no arguments.
        unsafe { aclFinalize() }
    });
    t.add(FI, "twice (repeat calls are accepted)", OK, |_| {
        // SAFETY: takes no arguments.
        unsafe { aclFinalize() }
    });
}

fn pool_create_destroy_rows(t: &mut Table) {
    const C: &str = "aclrtMemPoolCreate";
    let create = |pr: aclrtMemPoolProps| {
        let mut pool = SENTINEL as aclrtMemPool;
        // SAFETY: a valid out-pointer and props struct.
        let rc = unsafe { aclrtMemPoolCreate(&mut pool, &pr) };
        if rc == OK {
            // SAFETY: the handle just created.
            check(unsafe { aclrtMemPoolDestroy(pool) }, "destroying it again");
        }
        untouched(rc, pool as usize)
    };
    t.add(C, "null pool", PARAM, |_| {
        let pr = props(0, POOL_SIZE);
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtMemPoolCreate(null_mut(), &pr) }
    });
    t.add(C, "null props", PARAM, |_| {
        let mut pool = SENTINEL as aclrtMemPool;
        // SAFETY: a valid out-pointer; null props are refused before any read.
        untouched(unsafe { aclrtMemPoolCreate(&mut pool, std::ptr::null()) }, pool as usize)
    });
    let mut cases: Vec<(String, aclrtMemPoolProps, aclError)> = Vec::new();
    for v in [1, 2, -1, i32::MAX] {
        cases.push((format!("allocType {v}"), aclrtMemPoolProps { allocType: v, ..props(0, POOL_SIZE) }, PARAM));
    }
    for v in [1, 3, -1, i32::MAX] {
        cases.push((format!("handleType {v}"), aclrtMemPoolProps { handleType: v, ..props(0, POOL_SIZE) }, PARAM));
    }
    for v in [0, 2, -1, i32::MAX] {
        let mut pr = props(0, POOL_SIZE);
        pr.location.type_ = v;
        cases.push((format!("location.type {v}"), pr, PARAM));
    }
    for v in [2, u32::MAX] {
        cases.push((format!("location.id {v}"), props(v, POOL_SIZE), DEVICE_ID));
    }
    for i in [0, 17, 31] {
        let mut pr = props(0, POOL_SIZE);
        pr.reserved[i] = 0xff;
        cases.push((format!("reserved[{i}] not zero"), pr, PARAM));
    }
    cases.push(("maxSize of the device + 1".into(), props(0, DEVICE_MEMORY + 1), RT_PARAM));
    cases.push(("maxSize 2^62".into(), props(0, 1 << 62), RT_PARAM));
    for n in OVERFLOWING {
        cases.push((format!("maxSize {n:#x} (overflows when rounded)"), props(0, n), RT_PARAM));
    }
    cases.push(("maxSize 1 (one granule)".into(), props(0, 1), OK));
    cases.push((
        "handleType POSIX (2), accepted".into(),
        aclrtMemPoolProps { handleType: 2, ..props(0, POOL_SIZE) },
        OK,
    ));
    cases.push(("a pool of another device than the current one".into(), props(1, POOL_SIZE), OK));
    for (input, pr, want) in cases {
        t.add(C, input, want, move |_| create(pr));
    }
    t.add(C, "props at a misaligned address (read unaligned)", OK, |_| {
        let mut bytes = [0u8; size_of::<aclrtMemPoolProps>() + 1];
        let pr = props(0, POOL_SIZE);
        let at = bytes[1..].as_mut_ptr().cast::<aclrtMemPoolProps>();
        let mut pool: aclrtMemPool = null_mut();
        // SAFETY: `at` has room for one props struct (written unaligned); the shim reads
        // it unaligned; the pool created is destroyed again.
        unsafe {
            at.write_unaligned(pr);
            let rc = aclrtMemPoolCreate(&mut pool, at);
            check(aclrtMemPoolDestroy(pool), "destroying it");
            rc
        }
    });
    t.fresh(C, "without a current device", NO_CONTEXT, |_| {
        let mut pool = SENTINEL as aclrtMemPool;
        let pr = props(0, POOL_SIZE);
        // SAFETY: a valid out-pointer and props.
        untouched(unsafe { aclrtMemPoolCreate(&mut pool, &pr) }, pool as usize)
    });

    const D: &str = "aclrtMemPoolDestroy";
    t.add(D, "null", PARAM, |_| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtMemPoolDestroy(null_mut()) }
    });
    for (input, h) in bad_handles(Kind::Pool) {
        t.add(D, input, INTERNAL, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtMemPoolDestroy(sv(f.h(h))) }
        });
    }
    t.fresh(D, "a live pool, without a current device (it stays alive)", NO_CONTEXT, |f| {
        // SAFETY: a live handle.
        unsafe { aclrtMemPoolDestroy(sv(f.p)) }
    });
}

fn pool_attr_rows(t: &mut Table) {
    const S: &str = "aclrtMemPoolSetAttr";
    const G: &str = "aclrtMemPoolGetAttr";
    let set = |pool: usize, attr: i32, value: Option<u64>| {
        let v = value.unwrap_or(0);
        let ptr = if value.is_some() { (&raw const v).cast_mut().cast::<c_void>() } else { null_mut() };
        // SAFETY: `ptr` is null or points to a `uint64_t`, at least as wide as any
        // attribute's value (a `uint32_t` is read from its first four bytes: little
        // endian); handles are looked up, never dereferenced.
        unsafe { aclrtMemPoolSetAttr(sv(pool), attr, ptr) }
    };
    let get = |pool: usize, attr: i32, out: bool| {
        let mut v = SENTINEL as u64;
        let ptr = if out { (&raw mut v).cast::<c_void>() } else { null_mut() };
        // SAFETY: `ptr` is null or points to a `uint64_t`, room for any attribute's
        // value; handles are looked up, never dereferenced.
        let rc = unsafe { aclrtMemPoolGetAttr(sv(pool), attr, ptr) };
        untouched(rc, v as usize)
    };
    t.add(S, "null pool", PARAM, move |_| set(0, 4, Some(0)));
    t.add(G, "null pool", PARAM, move |_| get(0, 7, true));
    for (input, h) in bad_handles(Kind::Pool) {
        t.add(S, format!("pool: {input}"), RT_PARAM, move |f| set(f.h(h), 4, Some(0)));
        t.add(G, format!("pool: {input}"), RT_PARAM, move |f| get(f.h(h), 7, true));
    }
    for attr in [0, 9, -1, i32::MAX, i32::MIN] {
        t.add(S, format!("attribute {attr}"), RT_PARAM, move |f| set(f.p, attr, Some(0)));
        t.add(G, format!("attribute {attr}"), RT_PARAM, move |f| get(f.p, attr, true));
    }
    for attr in 1..=8 {
        t.add(S, format!("attribute {attr}, null value"), RT_PARAM, move |f| set(f.p, attr, None));
        t.add(G, format!("attribute {attr}, null value"), RT_PARAM, move |f| get(f.p, attr, false));
    }
    for attr in [5, 7] {
        for v in [0, 1, u64::MAX] {
            t.add(S, format!("read-only attribute {attr} = {v}"), RT_PARAM, move |f| set(f.p, attr, Some(v)));
        }
    }
    for attr in [6, 8] {
        for v in [1, GRAN as u64, u64::MAX] {
            t.add(S, format!("high mark {attr} = {v} (only 0 resets)"), INTERNAL, move |f| set(f.p, attr, Some(v)));
        }
    }
    for (input, v) in [("pool size + 1", POOL_SIZE as u64 + 1), ("u64::MAX", u64::MAX)] {
        t.add(S, format!("threshold {input} (above the pool size)"), INTERNAL, move |f| set(f.p, 4, Some(v)));
    }
    t.add(S, "threshold = the pool size through a misaligned value pointer (read unaligned)", OK, |f| {
        let mut bytes = [0u8; 9];
        bytes[1..].copy_from_slice(&(POOL_SIZE as u64).to_ne_bytes());
        // SAFETY: eight readable bytes at `bytes[1]`, read unaligned by the shim; a live
        // pool.
        unsafe { aclrtMemPoolSetAttr(sv(f.p), 4, bytes[1..].as_mut_ptr().cast()) }
    });
    t.add(G, "attribute 7 through a misaligned value pointer (written unaligned)", OK, |f| {
        let mut bytes = [0u8; 9];
        // SAFETY: eight writable bytes at `bytes[1]`, written unaligned by the shim; a
        // live pool.
        let rc = unsafe { aclrtMemPoolGetAttr(sv(f.p), 7, bytes[1..].as_mut_ptr().cast()) };
        assert_eq!(u64::from_ne_bytes(bytes[1..].try_into().unwrap()), GRAN as u64, "USED of the witness pool");
        rc
    });
    t.add(S, "reuse flag 1 = 0xdeadbeef (stores 1), then 0", OK, |f| {
        let (on, off) = (0xdead_beef_u32, 0u32);
        let mut back = 0u32;
        // SAFETY: `uint32_t` values, the width of attribute 1; a live pool.
        unsafe {
            let rc = aclrtMemPoolSetAttr(sv(f.p), 1, (&raw const on).cast_mut().cast());
            check(aclrtMemPoolGetAttr(sv(f.p), 1, (&raw mut back).cast()), "reading the flag");
            assert_eq!(back, 1, "a non-zero flag reads 1");
            check(aclrtMemPoolSetAttr(sv(f.p), 1, (&raw const off).cast_mut().cast()), "turning it off");
            rc
        }
    });
    t.fresh(S, "a live pool, without a current device (the pool names its device)", OK, |f| {
        let v = POOL_SIZE as u64;
        // SAFETY: a `uint64_t`, the width of attribute 4; a live pool.
        unsafe { aclrtMemPoolSetAttr(sv(f.p), 4, (&raw const v).cast_mut().cast()) }
    });
    t.fresh(G, "a live pool, without a current device (the pool names its device)", OK, move |f| get(f.p, 7, true));
}

fn pool_alloc_rows(t: &mut Table) {
    const M: &str = "aclrtMemPoolMallocAsync";
    let malloc = |out: bool, size: usize, pool: usize, stream: usize| {
        let mut p = SENTINEL as *mut c_void;
        let ptr: *mut *mut c_void = if out { &mut p } else { null_mut() };
        // SAFETY: `ptr` is null or a valid out-pointer; handles are looked up, never
        // dereferenced.
        let rc = unsafe { aclrtMemPoolMallocAsync(ptr, size, sv(pool), sv(stream)) };
        if rc == OK && p as usize != SENTINEL {
            // SAFETY: the address was just allocated on `stream`.
            check(unsafe { aclrtMemPoolFreeAsync(p, sv(stream)) }, "freeing it again");
        }
        untouched(rc, p as usize)
    };
    t.add(M, "null ptr", PARAM, move |f| malloc(false, 16, f.p, f.s));
    t.add(M, "null pool", PARAM, move |f| malloc(true, 16, 0, f.s));
    t.add(M, "null stream", PARAM, move |f| malloc(true, 16, f.p, 0));
    t.add(M, "size 0 (nothing written)", OK, move |f| malloc(true, 0, f.p, f.s));
    t.add(M, "size 0 with a garbage pool and stream (size 0 is checked first)", OK, move |_| {
        malloc(true, 0, 0x1234, 0x1234)
    });
    for (input, h) in bad_handles(Kind::Pool) {
        t.add(M, format!("pool: {input}"), INTERNAL, move |f| malloc(true, 16, f.h(h), f.s));
    }
    for (input, h) in bad_handles(Kind::Stream) {
        t.add(M, format!("stream: {input}"), HANDLE, move |f| malloc(true, 16, f.p, f.h(h)));
    }
    t.add(M, "a stream of another device", STREAM_CONTEXT, move |f| malloc(true, 16, f.p, f.s1));
    t.add(M, "a pool of another device than the stream", STREAM_CONTEXT, move |f| malloc(true, 16, f.p1, f.s));
    for n in OVERFLOWING {
        t.add(M, format!("size {n:#x} (overflows when rounded)"), RT_PARAM, move |f| malloc(true, n, f.p, f.s));
    }
    for (input, n) in
        [("pool size + 1", POOL_SIZE + 1), ("2^62", 1 << 62), ("SIZE_MAX - 2 granules", usize::MAX - 2 * GRAN)]
    {
        t.add(M, format!("size {input} (more than the pool)"), INTERNAL, move |f| malloc(true, n, f.p, f.s));
    }
    t.add(M, "size 1 in a new pool (one granule)", OK, |f| {
        let pool = witness_pool(0);
        let mut p: *mut c_void = null_mut();
        let mut used = 0u64;
        // SAFETY: a valid out-pointer, live handles, a `uint64_t` for attribute 7; the
        // allocation is freed and the pool destroyed.
        unsafe {
            let rc = aclrtMemPoolMallocAsync(&mut p, 1, sv(pool), sv(f.s));
            check(aclrtMemPoolGetAttr(sv(pool), 7, (&raw mut used).cast()), "USED");
            assert_eq!(used, GRAN as u64, "one byte uses one granule");
            assert_eq!(p as usize % GRAN, 0, "granule-aligned");
            check(aclrtMemPoolFreeAsync(p, sv(f.s)), "freeing it");
            check(aclrtSynchronizeStream(sv(f.s)), "synchronizing");
            check(aclrtMemPoolDestroy(sv(pool)), "destroying the pool");
            rc
        }
    });
    t.fresh(M, "live pool and stream, without a current device", NO_CONTEXT, move |f| malloc(true, 16, f.p, f.s));

    const F: &str = "aclrtMemPoolFreeAsync";
    let free = |ptr: usize, stream: usize| {
        // SAFETY: pointers are looked up by the emulator, never dereferenced; handles are
        // looked up in the shim's registry.
        unsafe { aclrtMemPoolFreeAsync(sv(ptr), sv(stream)) }
    };
    t.add(F, "null ptr", PARAM, move |f| free(0, f.s));
    t.add(F, "null ptr and null stream", PARAM, move |_| free(0, 0));
    t.add(F, "a live pointer on a null stream", INTERNAL, move |f| free(f.a, 0));
    for (input, h) in bad_handles(Kind::Stream) {
        t.add(F, format!("a live pointer on stream: {input}"), HANDLE, move |f| free(f.a, f.h(h)));
    }
    t.add(F, "a live pointer on a stream of another device", STREAM_CONTEXT, move |f| free(f.a, f.s1));
    let mut ptrs = bad_free_pointers();
    ptrs.extend([
        ("an interior pointer of aclrtMalloc memory".to_string(), Ptr::D(8)),
        ("an aclrtMalloc address already freed".to_string(), Ptr::DFreed),
    ]);
    for (input, p) in ptrs {
        t.add(F, input, RT_PARAM, move |f| free(f.ptr(p), f.s));
    }
    t.fresh(F, "a live pointer, without a current device", NO_CONTEXT, move |f| free(f.a, f.s));

    const T: &str = "aclrtMemPoolTrimTo";
    let trim = |pool: usize, keep: usize| {
        // SAFETY: handles are looked up in the shim's registry, never dereferenced.
        unsafe { aclrtMemPoolTrimTo(sv(pool), keep) }
    };
    t.add(T, "null pool", PARAM, move |_| trim(0, 0));
    for (input, h) in bad_handles(Kind::Pool) {
        t.add(T, format!("pool: {input}"), INTERNAL, move |f| trim(f.h(h), POOL_SIZE));
    }
    for (input, keep) in
        [("0, below USED", 0), ("USED - 1", GRAN - 1), ("pool size + 1", POOL_SIZE + 1), ("SIZE_MAX", usize::MAX)]
    {
        t.add(T, format!("keep {input}"), INTERNAL, move |f| trim(f.p, keep));
    }
    t.add(T, "keep RESERVED (nothing to do)", OK, move |f| trim(f.p, 2 * GRAN));
    t.fresh(T, "keep the pool size, without a current device (the pool names its device)", OK, move |f| {
        trim(f.p, POOL_SIZE)
    });
}

fn table() -> Table {
    let mut t = Table::default();
    device_rows(&mut t);
    context_rows(&mut t);
    stream_rows(&mut t);
    event_rows(&mut t);
    sync_memory_rows(&mut t);
    copy_rows(&mut t);
    memset_rows(&mut t);
    misc_rows(&mut t);
    pool_create_destroy_rows(&mut t);
    pool_attr_rows(&mut t);
    pool_alloc_rows(&mut t);
    t
}

/// The calling thread's current context (0 if none).
fn current_context() -> usize {
    let mut c: aclrtContext = null_mut();
    // SAFETY: a valid out-pointer.
    unsafe { aclrtGetCurrentContext(&mut c) };
    c as usize
}

/// Runs every row; returns the failures.
fn run_table(fx: &Fx, rows: &[Row]) -> Vec<String> {
    let mut failures = Vec::new();
    let mut before = stats(fx);
    for row in rows {
        let attempt = || {
            let got = catch_unwind(AssertUnwindSafe(|| (row.call)(fx)));
            (got, message())
        };
        let (got, msg) = if row.fresh { std::thread::scope(|sc| sc.spawn(attempt).join().unwrap()) } else { attempt() };
        let at = format!("{}({})", row.entry, row.input);
        match got {
            Err(panic) => {
                let why = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
                failures.push(format!("{at}: panicked: {}", why.unwrap_or_default()));
            }
            Ok(rc) if rc != row.want => {
                failures.push(format!("{at}: returned {rc}, expected {}; message: {msg}", row.want))
            }
            Ok(rc) if rc != OK && !msg.starts_with(&format!("{}: ", row.entry)) => {
                failures.push(format!("{at}: refused with {rc} but the message does not name the entry point: {msg:?}"))
            }
            Ok(_) => {}
        }
        if !row.fresh && current_context() != fx.default_ctx {
            failures.push(format!("{at}: changed the calling thread's current context"));
            // SAFETY: takes an integer only; restores the main thread's device so one
            // failure does not cascade.
            unsafe { aclrtSetDevice(0) };
        }
        let after = stats(fx);
        if after != before {
            failures.push(format!("{at}: changed the witness pools' statistics from {before:?} to {after:?}"));
            before = after;
        }
    }
    failures
}

// ------------------------------------------------------------------ destroy while in use

/// What the threads of a scenario saw: codes outside the documented set (with where),
/// and how many calls succeeded and were refused.
#[derive(Default)]
struct Tally {
    odd: Vec<String>,
    ok: u64,
    refused: u64,
}

type Seen = Arc<Mutex<Tally>>;

/// A worker's call: `rc` must be one of `allowed`.
fn expect_in(seen: &Seen, what: &str, rc: aclError, allowed: &[aclError]) -> aclError {
    let mut t = seen.lock().unwrap();
    if !allowed.contains(&rc) {
        t.odd.push(format!("{what} returned {rc} (allowed {allowed:?}): {}", message()));
    } else if rc == OK {
        t.ok += 1;
    } else {
        t.refused += 1;
    }
    rc
}

/// The destroying thread's call: `rc` must be `want` (not counted).
fn expect_eq(seen: &Seen, what: &str, rc: aclError, want: aclError) {
    if rc != want {
        seen.lock().unwrap().odd.push(format!("{what} returned {rc}, expected {want}: {}", message()));
    }
}

/// Runs `workers` threads of `body(i, stop)` while `destroy` runs on this thread after a
/// short while; every worker must end within HANG after `stop` is set, and the workers
/// must have seen calls succeed (before the destroy) and be refused (after it). Returns
/// the failures and the number of worker calls.
fn scenario(
    name: &str,
    workers: usize,
    body: impl Fn(usize, &AtomicBool, &Seen) + Send + Sync + 'static,
    destroy: impl FnOnce(&Seen),
) -> (Vec<String>, u64) {
    let seen: Seen = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let body = Arc::new(body);
    let (done_tx, done_rx) = mpsc::channel();
    for i in 0..workers {
        let (seen, stop, body, done) = (Arc::clone(&seen), Arc::clone(&stop), Arc::clone(&body), done_tx.clone());
        std::thread::spawn(move || {
            let r = catch_unwind(AssertUnwindSafe(|| body(i, &stop, &seen)));
            let _ = done.send(r.is_ok());
        });
    }
    std::thread::sleep(Duration::from_millis(30));
    destroy(&seen);
    std::thread::sleep(Duration::from_millis(30));
    stop.store(true, Ordering::Release);
    let mut failures: Vec<String> = Vec::new();
    for _ in 0..workers {
        match done_rx.recv_timeout(HANG) {
            Ok(true) => {}
            Ok(false) => failures.push(format!("{name}: a worker panicked")),
            Err(_) => {
                failures.push(format!("{name}: a worker did not finish within {HANG:?} (hang)"));
                break;
            }
        }
    }
    let t = seen.lock().unwrap();
    failures.extend(t.odd.iter().map(|s| format!("{name}: {s}")));
    if t.ok == 0 || t.refused == 0 {
        failures.push(format!("{name}: {} calls succeeded and {} were refused: no race was run", t.ok, t.refused));
    }
    (failures, t.ok + t.refused)
}

fn set_device_0() {
    // SAFETY: takes an integer only.
    check(unsafe { aclrtSetDevice(0) }, "aclrtSetDevice(0)");
}

fn new_stream() -> usize {
    let mut s: aclrtStream = null_mut();
    // SAFETY: a valid out-pointer.
    check(unsafe { aclrtCreateStream(&mut s) }, "a worker stream");
    s as usize
}

/// Threads allocate, write, free, read attributes, trim and synchronize on a pool while
/// it is destroyed.
fn pool_destroyed_in_use() -> (Vec<String>, u64) {
    let pool = witness_pool(0);
    scenario(
        "pool destroyed while in use",
        4,
        move |_, stop, seen| {
            set_device_0();
            let s = new_stream();
            let mut after_stop = 0;
            while after_stop < 50 {
                if stop.load(Ordering::Acquire) {
                    after_stop += 1;
                }
                let mut p: *mut c_void = null_mut();
                // SAFETY: a valid out-pointer, handles from the shim (the pool may be
                // destroyed meanwhile: that is the point), addresses it returned, and a
                // `uint64_t` for attribute 7.
                unsafe {
                    let rc = aclrtMemPoolMallocAsync(&mut p, 1 << 20, sv(pool), sv(s));
                    if expect_in(seen, "aclrtMemPoolMallocAsync", rc, &[OK, INTERNAL]) == OK {
                        expect_in(
                            seen,
                            "aclrtMemsetAsync",
                            aclrtMemsetAsync(p, 1 << 20, 7, 1 << 20, sv(s)),
                            &[OK, RT_PARAM],
                        );
                        expect_in(seen, "aclrtMemPoolFreeAsync", aclrtMemPoolFreeAsync(p, sv(s)), &[OK, RT_PARAM]);
                    }
                    let mut used = 0u64;
                    expect_in(
                        seen,
                        "aclrtMemPoolGetAttr",
                        aclrtMemPoolGetAttr(sv(pool), 7, (&raw mut used).cast()),
                        &[OK, RT_PARAM],
                    );
                    expect_in(seen, "aclrtMemPoolTrimTo", aclrtMemPoolTrimTo(sv(pool), POOL_SIZE), &[OK, INTERNAL]);
                    expect_in(seen, "aclrtSynchronizeStream", aclrtSynchronizeStream(sv(s)), &[OK]);
                }
            }
            // SAFETY: the worker's own stream.
            expect_in(seen, "aclrtDestroyStream", unsafe { aclrtDestroyStream(sv(s)) }, &[OK]);
        },
        move |seen| {
            // SAFETY: a pool handle, destroyed once and then once more.
            unsafe {
                expect_eq(seen, "aclrtMemPoolDestroy", aclrtMemPoolDestroy(sv(pool)), OK);
                expect_eq(seen, "aclrtMemPoolDestroy (again)", aclrtMemPoolDestroy(sv(pool)), INTERNAL);
            }
        },
    )
}

/// Threads allocate, free, record, wait and synchronize on one stream while it is
/// destroyed. Copies, memsets and host functions on the stream being destroyed are left
/// out: the emulator can accept such work after the stream's worker has ended (it checks
/// the stream before it takes the queue's lock), and the work then never runs, so every
/// later device synchronization waits for it until the emulator's wait time-out.
fn stream_destroyed_in_use() -> (Vec<String>, u64) {
    set_device_0();
    let shared = new_stream();
    let pool = witness_pool(0);
    let (mut failures, calls) = scenario(
        "stream destroyed while in use",
        4,
        move |_, stop, seen| {
            set_device_0();
            let own = new_stream();
            let mut ev: aclrtEvent = null_mut();
            // SAFETY: a valid out-pointer.
            check(unsafe { aclrtCreateEvent(&mut ev) }, "a worker event");
            let mut after_stop = 0;
            while after_stop < 50 {
                if stop.load(Ordering::Acquire) {
                    after_stop += 1;
                }
                let mut p: *mut c_void = null_mut();
                // SAFETY: a valid out-pointer, handles from the shim (the shared stream may
                // be destroyed meanwhile: that is the point) and addresses it returned.
                unsafe {
                    let rc = aclrtMemPoolMallocAsync(&mut p, 64 << 10, sv(pool), sv(shared));
                    if expect_in(seen, "aclrtMemPoolMallocAsync", rc, &[OK, HANDLE]) == OK {
                        let rc = aclrtMemPoolFreeAsync(p, sv(shared));
                        if expect_in(seen, "aclrtMemPoolFreeAsync", rc, &[OK, HANDLE]) != OK {
                            // The stream is gone: free the block on this thread's own
                            // stream once the device has passed everything.
                            expect_in(seen, "aclrtSynchronizeDevice", aclrtSynchronizeDevice(), &[OK]);
                            expect_in(
                                seen,
                                "aclrtMemPoolFreeAsync (own stream)",
                                aclrtMemPoolFreeAsync(p, sv(own)),
                                &[OK],
                            );
                        }
                    }
                    expect_in(seen, "aclrtRecordEvent", aclrtRecordEvent(ev, sv(shared)), &[OK, HANDLE]);
                    expect_in(seen, "aclrtStreamWaitEvent", aclrtStreamWaitEvent(sv(own), ev), &[OK]);
                    expect_in(seen, "aclrtSynchronizeStream", aclrtSynchronizeStream(sv(shared)), &[OK, HANDLE]);
                    expect_in(seen, "aclrtSynchronizeStream (own)", aclrtSynchronizeStream(sv(own)), &[OK]);
                }
            }
            // SAFETY: the worker's own handles.
            unsafe {
                expect_in(seen, "aclrtDestroyEvent", aclrtDestroyEvent(ev), &[OK]);
                expect_in(seen, "aclrtDestroyStream (own)", aclrtDestroyStream(sv(own)), &[OK]);
            }
        },
        move |seen| {
            // SAFETY: a stream handle, destroyed once and then once more.
            unsafe {
                expect_eq(seen, "aclrtDestroyStream", aclrtDestroyStream(sv(shared)), OK);
                expect_eq(seen, "aclrtDestroyStream (again)", aclrtDestroyStream(sv(shared)), HANDLE);
            }
        },
    );
    let mut used = u64::MAX;
    // SAFETY: live handles and a `uint64_t` for attribute 7.
    unsafe {
        check(aclrtSynchronizeDevice(), "synchronizing the device");
        check(aclrtMemPoolGetAttr(sv(pool), 7, (&raw mut used).cast()), "USED");
        check(aclrtMemPoolDestroy(sv(pool)), "destroying the pool");
    }
    if used != 0 {
        failures.push(format!("stream destroyed while in use: {used} bytes still in use after every free"));
    }
    (failures, calls)
}

/// Threads record, wait on, synchronize and query one event while it is destroyed.
fn event_destroyed_in_use() -> (Vec<String>, u64) {
    set_device_0();
    let mut ev: aclrtEvent = null_mut();
    // SAFETY: a valid out-pointer.
    check(unsafe { aclrtCreateEvent(&mut ev) }, "the shared event");
    let ev = ev as usize;
    scenario(
        "event destroyed while in use",
        4,
        move |_, stop, seen| {
            set_device_0();
            let own = new_stream();
            let mut after_stop = 0;
            while after_stop < 50 {
                if stop.load(Ordering::Acquire) {
                    after_stop += 1;
                }
                let mut st = 0;
                // SAFETY: handles from the shim (the event may be destroyed meanwhile:
                // that is the point) and a valid out-pointer.
                unsafe {
                    expect_in(seen, "aclrtRecordEvent", aclrtRecordEvent(sv(ev), sv(own)), &[OK, HANDLE]);
                    expect_in(seen, "aclrtStreamWaitEvent", aclrtStreamWaitEvent(sv(own), sv(ev)), &[OK, HANDLE]);
                    expect_in(seen, "aclrtSynchronizeEvent", aclrtSynchronizeEvent(sv(ev)), &[OK, HANDLE]);
                    expect_in(seen, "aclrtQueryEventStatus", aclrtQueryEventStatus(sv(ev), &mut st), &[OK, HANDLE]);
                }
            }
            // SAFETY: the worker's own stream.
            expect_in(seen, "aclrtDestroyStream (own)", unsafe { aclrtDestroyStream(sv(own)) }, &[OK]);
        },
        move |seen| {
            // SAFETY: an event handle, destroyed once and then once more.
            unsafe {
                expect_eq(seen, "aclrtDestroyEvent", aclrtDestroyEvent(sv(ev)), OK);
                expect_eq(seen, "aclrtDestroyEvent (again)", aclrtDestroyEvent(sv(ev)), HANDLE);
            }
        },
    )
}

/// Threads make a context current and create and destroy streams in it while it is
/// destroyed.
fn context_destroyed_in_use() -> (Vec<String>, u64) {
    let mut ctx: aclrtContext = null_mut();
    // SAFETY: a valid out-pointer; the default context is made current again after.
    unsafe {
        check(aclrtCreateContext(&mut ctx, 0), "the shared context");
    }
    set_device_0();
    let ctx = ctx as usize;
    scenario(
        "context destroyed while in use",
        4,
        move |_, stop, seen| {
            // SAFETY: the shared handle (maybe destroyed meanwhile: that is the point).
            if unsafe { aclrtSetCurrentContext(sv(ctx)) } != OK {
                set_device_0();
            }
            let mut after_stop = 0;
            while after_stop < 50 {
                if stop.load(Ordering::Acquire) {
                    after_stop += 1;
                }
                let mut s: aclrtStream = null_mut();
                // SAFETY: the shared handle, a valid out-pointer and the stream created.
                unsafe {
                    expect_in(seen, "aclrtSetCurrentContext", aclrtSetCurrentContext(sv(ctx)), &[OK, HANDLE]);
                    if expect_in(seen, "aclrtCreateStream", aclrtCreateStream(&mut s), &[OK]) == OK {
                        expect_in(seen, "aclrtDestroyStream", aclrtDestroyStream(s), &[OK]);
                    }
                }
            }
        },
        move |seen| {
            // SAFETY: a context handle, destroyed once and then once more.
            unsafe {
                expect_eq(seen, "aclrtDestroyContext", aclrtDestroyContext(sv(ctx)), OK);
                expect_eq(seen, "aclrtDestroyContext (again)", aclrtDestroyContext(sv(ctx)), HANDLE);
            }
        },
    )
}

// ------------------------------------------------------------------ the test

/// The exported functions, read from the source.
fn exported() -> Vec<&'static str> {
    include_str!("../src/exports.rs")
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub unsafe extern \"C\" fn "))
        .map(|rest| rest.split('(').next().unwrap())
        .collect()
}

#[test]
fn hostile_input_at_every_entry_point() {
    // SAFETY: this binary has this one test and it has started no thread yet, so
    // nothing reads the environment concurrently; the shim reads it at its first call.
    unsafe {
        std::env::set_var(acl_rt::ENV_DEVICES, "2");
        std::env::set_var(acl_rt::ENV_DEVICE_MEMORY, DEVICE_MEMORY.to_string());
        std::env::set_var(acl_rt::ENV_GRANULARITY, GRAN.to_string());
        std::env::set_var(acl_rt::ENV_MODE, "threaded");
    }

    // Before aclInit: the shim needs no initialization, so these work (CANN would
    // require aclInit first; SPEC.md section 8 does not say).
    let mut before_init = 0;
    let mut count = 0u32;
    let mut s: aclrtStream = null_mut();
    // SAFETY: valid out-pointers and handles the shim returned.
    unsafe {
        assert_eq!(message(), "", "no error yet");
        assert_eq!(aclrtGetDeviceCount(&mut count), OK);
        assert_eq!(count, 2);
        assert_eq!(aclrtSetDevice(5), DEVICE_ID);
        assert!(message().starts_with("aclrtSetDevice: "), "{}", message());
        assert_eq!(aclrtSetDevice(0), OK);
        assert_eq!(aclrtCreateStream(&mut s), OK);
        assert_eq!(aclrtDestroyStream(s), OK);
        before_init += 6;
        assert_eq!(aclInit(std::ptr::null()), OK);
    }

    let stack = [0u8; 64];
    let mut buf = vec![0u8; BUF_LEN];
    let fx = fixture(stack.as_ptr() as usize, buf.as_mut_ptr() as usize);

    let t = table();
    let mut failures = run_table(&fx, &t.rows);
    for f in &failures {
        eprintln!("hostile: FAILED {f}");
    }

    let exports = exported();
    assert_eq!(exports.len(), 38, "the exports of SPEC.md section 8: {exports:?}");
    let missing: Vec<_> = exports.iter().filter(|e| !t.rows.iter().any(|r| r.entry == **e)).collect();
    assert!(missing.is_empty(), "entry points without a row: {missing:?}");
    let unknown: Vec<_> = t.rows.iter().filter(|r| !exports.contains(&r.entry)).map(|r| r.entry).collect();
    assert!(unknown.is_empty(), "rows for functions that are not exported: {unknown:?}");

    let scenarios =
        [pool_destroyed_in_use(), stream_destroyed_in_use(), event_destroyed_in_use(), context_destroyed_in_use()];
    let n_scenarios = scenarios.len();
    let mut concurrent_calls = 0;
    for (f, calls) in scenarios {
        failures.extend(f);
        concurrent_calls += calls;
    }

    // Everything the fixture made still answers: nothing was corrupted on the way.
    // SAFETY: live handles and addresses from the shim.
    unsafe {
        check(aclrtSetDevice(0), "device 0");
        check(aclrtMemPoolFreeAsync(sv(fx.a), sv(fx.s)), "freeing a");
        check(aclrtMemPoolFreeAsync(sv(fx.b), sv(fx.s)), "freeing b");
        check(aclrtSynchronizeStream(sv(fx.s)), "synchronizing");
        for pool in [fx.p, fx.q, fx.p1] {
            check(aclrtMemPoolDestroy(sv(pool)), "destroying a witness pool");
        }
        check(aclrtFree(sv(fx.d)), "aclrtFree");
        check(aclrtFreeHost(sv(fx.host)), "aclrtFreeHost");
        check(aclrtDestroyStream(sv(fx.s)), "destroying the stream");
        check(aclrtDestroyContext(sv(fx.ctx)), "destroying the context");
        check(aclFinalize(), "aclFinalize");
    }
    drop(buf);

    let fresh = t.rows.iter().filter(|r| r.fresh).count();
    println!(
        "hostile: {} entry points, {} inputs ({} table rows, {} of them on a thread without a current device; {} calls before aclInit; {} destroy-while-in-use scenarios, {} concurrent calls)",
        exports.len(),
        t.rows.len() + before_init + n_scenarios,
        t.rows.len(),
        fresh,
        before_init,
        n_scenarios,
        concurrent_calls
    );
    assert!(failures.is_empty(), "{} of the hostile inputs failed:\n{}", failures.len(), failures.join("\n"));
}
