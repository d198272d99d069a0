//! Hostile input at every C entry point of the drop-in library (contract §8 (`mempool_hal::contract::c_abi`)).
//!
//! A table with one row per (entry point, input): null, garbage, destroyed and wrong-kind
//! handles; interior, misaligned, freed and foreign pointers; sizes 0, 1, `SIZE_MAX` and
//! sizes that overflow when rounded to the granularity; unknown attribute ids and every
//! invalid value; `count > destMax`; bad memcpy kinds; calls on a thread without a current
//! device. Each row states the code contract §8 (`mempool_hal::contract::c_abi`) documents for it. After every row
//! the statistics of the witness pools (attributes 5-8, read with `aclrtMemPoolGetAttr`)
//! must be unchanged, a refused call must leave its out-pointer alone and leave a message
//! naming the entry point in `aclGetRecentErrMsg`, and nothing may crash. Then threads
//! use a pool, a stream, an event and a context while the main thread destroys it: every
//! call returns 0 or a documented code, and nothing crashes or hangs.
//!
//! Calls before `aclInit`: the shim needs no initialization, so every entry point works
//! before `aclInit` (the real runtime expects it first; contract §8 (`mempool_hal::contract::c_abi`) does not say). The first
//! calls of the test come before `aclInit` and check exactly that.
//!
//! Calls without a current device answer what CANN answers, call by call (contract §8
//! (`mempool_hal::contract::c_abi`)): most calls that need a device or context 107002
//! (`aclrtMallocHost` and every copy, host-to-host too, included); pool malloc and free
//! 107003; event destroy, synchronize, query, elapsed time, `aclrtFree`, `aclrtFreeHost`,
//! the pool attribute calls and `aclrtMemPoolTrimTo` need none, nor do device and context
//! management, `aclInit`/`aclFinalize` and `aclGetRecentErrMsg`.
//!
//! This file is a test binary of its own with a single test, so the platform it sets up
//! through the environment (two devices) is the one the shim builds at its first call.

use acl_rt::exports::*;
use mempool_ascend::sys::*;
use mempool_hal::code;
use std::ffi::c_void;

#[path = "../common/mod.rs"]
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
const FEATURE: aclError = code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
const REPEAT_INIT: aclError = ACL_ERROR_REPEAT_INITIALIZE;
const REPEAT_FINALIZE: aclError = ACL_ERROR_REPEAT_FINALIZE;
const INVALID_FILE: aclError = ACL_ERROR_INVALID_FILE;
const CONTEXT_RELEASE: aclError = ACL_ERROR_RT_CONTEXT_RELEASE_ERROR;
const STREAM_SUBSCRIBE: aclError = ACL_ERROR_RT_STREAM_SUBSCRIBE;
const THREAD_SUBSCRIBE: aclError = ACL_ERROR_RT_THREAD_SUBSCRIBE;
const NO_SUBSCRIBER: aclError = ACL_ERROR_RT_STREAM_NO_CB_REG;

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

mod races;
mod rows_device;
mod rows_memory;
mod rows_pool;
mod rows_runtime;
mod rows_stream;

use races::*;
use rows_device::*;
use rows_memory::*;
use rows_pool::*;
use rows_runtime::*;
use rows_stream::*;

// ------------------------------------------------------------------ the table

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
    runtime_rows(&mut t);
    stream_extra_rows(&mut t);
    event_extra_rows(&mut t);
    callback_rows(&mut t);
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

// ------------------------------------------------------------------ the test

/// The exported functions: the declaration table of `mempool_ascend::sys`, which the
/// library's exports are checked against at compile time, and `aclGetRecentErrMsg`.
fn exported() -> Vec<&'static str> {
    FUNCTION_NAMES.iter().copied().chain(["aclGetRecentErrMsg", "aclrtGetSocName"]).collect()
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
    // require aclInit first; contract §8 (`mempool_hal::contract::c_abi`) does not say).
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
    assert_eq!(exports.len(), 60, "the exports of contract §8: {exports:?}");
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
