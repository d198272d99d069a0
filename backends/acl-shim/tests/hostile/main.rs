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
//! This file is a test binary of its own (a libtest-mimic harness, `harness = false`) whose
//! `main` sets up the platform through the environment (two devices) before the shim's
//! first call, then runs every row as a trial of its own, named `row::<entry>(<input>)`,
//! one at a time on the main thread: the rows share one fixture and one library instance.
//! The destroy-while-in-use scenarios follow as `race::<object>_destroyed_in_use`. The rows,
//! by object, are in `rows_*.rs`, the scenarios in `races.rs`; the harness that runs the rows
//! (rows, tables, trials, the checks around each call) is `mempool-hostile`'s, shared with
//! the CUDA library's `tests/hostile/`.

use acl_rt::exports::*;
use mempool_ascend::sys::*;
use mempool_hal::code;
use std::ffi::c_void;

#[path = "../common/mod.rs"]
mod common;
use common::{message, props};
use libtest_mimic::Trial;
use mempool_hostile::{Fixture, GARBAGE, H, Kind, SENTINEL, outcome};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
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

impl Fx {
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

/// Hostile values for a handle of `kind`: garbage, the destroyed one, the other kinds
/// (null is listed separately: its code differs).
fn bad_handles(kind: Kind) -> Vec<(String, H)> {
    mempool_hostile::bad_handles(kind, &GARBAGE)
}

/// Device addresses outside live memory, with what they are: refused by copies and
/// memsets (for 16 bytes) and by frees.
fn bad_device_pointers() -> Vec<(String, Ptr)> {
    let mut v = mempool_hostile::garbage(&GARBAGE, Ptr::Raw);
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

/// The rows of this library: each call returns an `aclError`.
type Table = mempool_hostile::Table<Fx>;
type Row = mempool_hostile::Row<Fx>;

/// Panics (failing the row) when a refused call wrote its out-pointer.
fn untouched(rc: aclError, slot: usize) -> aclError {
    mempool_hostile::untouched(OK, rc, slot)
}

fn sv(v: usize) -> *mut c_void {
    v as *mut c_void
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
mod rows_allocator;
mod rows_device;
mod rows_failures;
mod rows_host_register;
mod rows_memory;
mod rows_pool;
mod rows_queries;
mod rows_runtime;
mod rows_stream;
mod rows_vmm;

use races::*;
use rows_allocator::*;
use rows_device::*;
use rows_failures::*;
use rows_host_register::*;
use rows_memory::*;
use rows_pool::*;
use rows_queries::*;
use rows_runtime::*;
use rows_stream::*;
use rows_vmm::*;

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
    allocator_rows(&mut t);
    vmm_rows(&mut t);
    host_register_rows(&mut t);
    failure_rows(&mut t);
    query_rows(&mut t);
    t
}

/// The calling thread's current context (0 if none).
fn current_context() -> usize {
    let mut c: aclrtContext = null_mut();
    // SAFETY: a valid out-pointer.
    unsafe { aclrtGetCurrentContext(&mut c) };
    c as usize
}

/// What `mempool_hostile::run_row` checks around each row: the message, the witness pools'
/// statistics, and the main thread's current context (device 0's default context).
impl Fixture for Fx {
    type Code = aclError;
    const OK: aclError = OK;

    fn message() -> String {
        message()
    }

    fn stats(&self) -> Vec<u64> {
        mempool_hostile::pool_stats::<Self>(&[self.p, self.q, self.p1], |pool, attr, v| {
            // SAFETY: the pool is a live handle and `v` is a writable `uint64_t`, the
            // width of attributes 5-8.
            unsafe { aclrtMemPoolGetAttr(sv(pool), attr, v) }
        })
    }

    fn keeps_context(&self) -> bool {
        if current_context() == self.default_ctx {
            return true;
        }
        // SAFETY: takes an integer only; restores the main thread's device so one
        // failure does not cascade.
        unsafe { aclrtSetDevice(0) };
        false
    }

    fn handles(&self, kind: Kind) -> (usize, Option<usize>) {
        match kind {
            Kind::Stream => (self.s, Some(self.dead_stream)),
            Kind::Event => (self.e, Some(self.dead_event)),
            Kind::Pool => (self.p, Some(self.dead_pool)),
            Kind::Context => (self.ctx, Some(self.dead_ctx)),
        }
    }
}

// ------------------------------------------------------------------ the test

/// Codes the library returns that other tests see through the C ABI (rows may expect
/// them too), and where.
const CODES_SEEN_ELSEWHERE: &[(aclError, &str)] = &[
    (ACL_ERROR_REPEAT_INITIALIZE, "tests/runtime.rs (lifecycle), setup::calls_before_acl_init"),
    (ACL_ERROR_INVALID_FILE, "tests/runtime.rs (lifecycle)"),
    (ACL_ERROR_REPEAT_FINALIZE, "tests/runtime.rs (lifecycle), tests/headers.rs (acl_rt.h alone)"),
    (code::ACL_ERROR_RT_MEMORY_ALLOCATION, "tests/device_memory.rs (aclrtMalloc on a full device)"),
    (ACL_ERROR_RT_REPORT_TIMEOUT, "tests/runtime.rs (callbacks)"),
    (code::ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, "tests/runtime.rs (timeouts)"),
    (code::ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, "tests/runtime.rs (timeouts)"),
];

/// The codes of the C ABI contract's error table (`c_abi.md`, rows `| code | name | when |`)
/// against the codes the rows expect and [`CODES_SEEN_ELSEWHERE`]: each code returned is in
/// the table, and each code in the table is returned somewhere.
fn error_table(rows: &[Row]) -> Vec<String> {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../crates/mempool-hal/src/contract/c_abi.md");
    let text = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    let listed: std::collections::BTreeSet<aclError> =
        text.lines().filter_map(|l| l.strip_prefix("| ")?.split(" |").next()?.parse::<aclError>().ok()).collect();
    let seen: std::collections::BTreeSet<aclError> =
        rows.iter().map(|r| r.want).chain(CODES_SEEN_ELSEWHERE.iter().map(|c| c.0)).collect();
    let mut failures: Vec<String> = seen
        .difference(&listed)
        .map(|c| format!("code {c} is returned but not in the error table of {}", page.display()))
        .collect();
    failures.extend(
        listed.difference(&seen).map(|c| format!("code {c} is in the error table, but no test sees it returned")),
    );
    failures
}

/// The exported functions: the declaration tables of `mempool_ascend::sys` (the main one
/// and the external-allocator registry's), which the library's exports are checked
/// against at compile time, `aclGetRecentErrMsg` and `aclrtGetSocName`.
/// With the ordering and failure calls, which the backend does not call (so they are not
/// in its tables; `tests/headers.rs` checks their signatures against the prototypes).
fn exported() -> Vec<&'static str> {
    FUNCTION_NAMES
        .iter()
        .copied()
        .chain(["aclGetRecentErrMsg", "aclrtGetSocName"])
        .chain(ALLOCATOR_FUNCTION_NAMES.iter().copied())
        .chain(ORDERING_AND_FAILURE_CALLS)
        .collect()
}

/// The exports outside the backend's tables: the ordering and failure calls, then the queries.
const ORDERING_AND_FAILURE_CALLS: [&str; 46] = [
    "aclrtCreateNotify",
    "aclrtDestroyNotify",
    "aclrtRecordNotify",
    "aclrtWaitAndResetNotify",
    "aclrtValueWrite",
    "aclrtValueWait",
    "aclrtCreateEventExWithFlag",
    "aclrtRecordEventWithFlag",
    "aclrtStreamWaitEventWithFlag",
    "aclrtSubscribeHostFunc",
    "aclrtProcessHostFunc",
    "aclrtUnSubscribeHostFunc",
    "aclrtStreamAbort",
    "aclrtStreamStop",
    "aclrtRegStreamStateCallback",
    "aclrtSetExceptionInfoCallback",
    "aclrtGetTaskIdFromExceptionInfo",
    "aclrtGetStreamIdFromExceptionInfo",
    "aclrtGetThreadIdFromExceptionInfo",
    "aclrtGetDeviceIdFromExceptionInfo",
    "aclrtGetErrorCodeFromExceptionInfo",
    "aclrtGetArgsFromExceptionInfo",
    "aclrtGetFuncHandleFromExceptionInfo",
    "aclrtGetErrorVerbose",
    "aclrtGetThreadLastTaskId",
    "aclrtGetDeviceInfo",
    "aclrtQueryDeviceStatus",
    "aclrtGetDeviceUtilizationRate",
    "aclrtGetDeviceResLimit",
    "aclrtSetDeviceResLimit",
    "aclrtResetDeviceResLimit",
    "aclrtGetResInCurrentThread",
    "aclrtDeviceGetStreamPriorityRange",
    "aclsysGetVersionStr",
    "aclsysGetVersionNum",
    "aclrtCtxGetCurrentDefaultStream",
    "aclrtStreamGetFlags",
    "aclrtStreamGetPriority",
    "aclrtStreamGetId",
    "aclrtCreateStreamConfigHandle",
    "aclrtDestroyStreamConfigHandle",
    "aclrtSetStreamConfigOpt",
    "aclrtCreateStreamV2",
    "aclDataTypeSize",
    "aclFloatToFloat16",
    "aclFloat16ToFloat",
];

/// The calls before `aclInit`: the shim needs no initialization, so these work (CANN
/// would require `aclInit` first; contract §8 does not say). Returns the failures and
/// how many calls were made.
fn before_init() -> (Vec<String>, usize) {
    let mut failures = Vec::new();
    let mut expect = |what: &str, ok: bool| {
        if !ok {
            failures.push(format!("before aclInit: {what}: {}", message()));
        }
    };
    let mut count = 0u32;
    let mut s: aclrtStream = null_mut();
    // SAFETY: valid out-pointers and handles the shim returned.
    unsafe {
        expect("no error yet (aclGetRecentErrMsg is NULL)", message().is_empty());
        expect("aclrtGetDeviceCount", aclrtGetDeviceCount(&mut count) == OK);
        expect("two devices", count == 2);
        expect("aclrtSetDevice(5) is 107001", aclrtSetDevice(5) == DEVICE_ID);
        expect("aclrtSetDevice(0)", aclrtSetDevice(0) == OK);
        expect("aclrtCreateStream", aclrtCreateStream(&mut s) == OK);
        expect("aclrtDestroyStream", aclrtDestroyStream(s) == OK);
        expect("aclInit", aclInit(std::ptr::null()) == OK);
    }
    (failures, 6)
}

/// Every exported function has a row, and every row names an exported function.
fn coverage(rows: &[Row]) -> Vec<String> {
    let exports = exported();
    let mut failures = Vec::new();
    if exports.len() != 130 {
        failures.push(format!("{} exports, contracts §8, §14, §15 and §16 list 130: {exports:?}", exports.len()));
    }
    failures.extend(mempool_hostile::coverage(&exports, rows));
    failures
}

/// Everything the fixture made still answers (nothing was corrupted on the way), and goes.
fn teardown(fx: &Fx) {
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
}

/// A destroy-while-in-use scenario: its failures and how many concurrent calls it made.
type Scenario = fn() -> (Vec<String>, u64);

/// Each row of the table is a trial of its own (`row::<entry>(<input>)`), so a failing row
/// is reported by name and one row can be run alone (`cargo test --test hostile -- <name>`).
/// The rows are built at run time (one per hostile value of each argument), share one
/// fixture and the process's one library instance, and check the witness pools' statistics
/// around each call, so they run one at a time, in order, on the main thread (whose
/// current device is 0): a libtest-mimic harness, not rstest cases, which are fixed at
/// compile time and run on threads of their own.
fn main() {
    // SAFETY: `main` has started no thread yet, so nothing reads the environment
    // concurrently; the shim reads it at its first call.
    unsafe {
        std::env::set_var(acl_rt::ENV_DEVICES, "2");
        std::env::set_var(acl_rt::ENV_DEVICE_MEMORY, DEVICE_MEMORY.to_string());
        std::env::set_var(acl_rt::ENV_GRANULARITY, GRAN.to_string());
        std::env::set_var(acl_rt::ENV_MODE, "threaded");
    }
    let args = mempool_hostile::arguments();
    let listing = args.list;

    // Before aclInit: the first calls of the process.
    let (before, n_before) = if listing { (Vec::new(), 0) } else { before_init() };

    // Both outlive every trial: `main` runs them, then exits the process.
    let stack = [0u8; 64];
    let mut buf = vec![0u8; BUF_LEN];
    let fx = if listing { None } else { Some(Arc::new(fixture(stack.as_ptr() as usize, buf.as_mut_ptr() as usize))) };

    let t = table();
    let (n_rows, n_fresh) = (t.rows.len(), t.rows.iter().filter(|r| r.fresh).count());
    let cover = coverage(&t.rows);
    let table_codes = error_table(&t.rows);
    let mut trials = vec![
        Trial::test("setup::calls_before_acl_init", move || outcome(before)),
        Trial::test("setup::every_export_has_a_row", move || outcome(cover)),
        Trial::test("setup::the_error_table_lists_exactly_the_codes_returned", move || outcome(table_codes)),
    ];
    trials.extend(mempool_hostile::row_trials(t.rows, fx.as_ref()));
    let scenarios: [(&str, Scenario); 4] = [
        ("race::pool_destroyed_in_use", pool_destroyed_in_use),
        ("race::stream_destroyed_in_use", stream_destroyed_in_use),
        ("race::event_destroyed_in_use", event_destroyed_in_use),
        ("race::context_destroyed_in_use", context_destroyed_in_use),
    ];
    let n_scenarios = scenarios.len();
    for (name, run) in scenarios {
        trials.push(Trial::test(name, move || {
            let (failures, calls) = run();
            println!("{name}: {calls} concurrent calls");
            outcome(failures)
        }));
    }
    let end = fx.clone();
    trials.push(Trial::test("teardown::the_fixture_still_answers", move || {
        if let Some(fx) = end {
            teardown(&fx);
        }
        Ok(())
    }));
    if !listing {
        println!(
            "hostile: {} entry points, {} inputs ({n_rows} table rows, {n_fresh} of them on a thread without a current \
             device; {n_before} calls before aclInit; {n_scenarios} destroy-while-in-use scenarios)",
            exported().len(),
            n_rows + n_before + n_scenarios,
        );
    }
    libtest_mimic::run(&args, trials).exit();
}
