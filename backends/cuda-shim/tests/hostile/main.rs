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
//! (whose current context is device 0's primary context). The rows, by object, are in
//! `rows_*.rs`, the destroy-while-in-use scenario in `races.rs`; the harness that runs them
//! (rows, tables, trials, the checks around each call) is `mempool-hostile`'s, shared with
//! the ACL library's `tests/hostile/`.

#[path = "../common/mod.rs"]
mod common;

use common::{check, exported_functions, init_and_use, message};
use cuda::exports::*;
use cuda::types::*;
use libtest_mimic::Trial;
use mempool_hostile::{Fixture, GARBAGE, H, Kind, SENTINEL, outcome};
use std::ffi::{CStr, c_void};
use std::ptr::null_mut;
use std::sync::Arc;

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

/// Hostile values for a handle of `kind`: garbage, the destroyed one, the other kinds and
/// a context (null is listed where it is hostile: a null stream is the default stream).
fn bad_handles(kind: Kind) -> Vec<(String, H)> {
    mempool_hostile::bad_handles(kind, if kind == Kind::Stream { &GARBAGE_STREAMS } else { &GARBAGE })
}

/// A device address taken from the fixture.
type Addr = Box<dyn Fn(&Fx) -> u64 + Send + Sync>;

/// Device pointers a copy, memset or free must refuse.
fn bad_device_pointers(fx_free: bool) -> Vec<(String, Addr)> {
    let mut v = mempool_hostile::garbage(&GARBAGE, |g| Box::new(move |_: &Fx| g as u64) as Addr);
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

/// The rows of this library: each call returns a `CUresult`.
type Table = mempool_hostile::Table<Fx>;
type Row = mempool_hostile::Row<Fx>;

/// Panics (failing the row) when a refused call wrote its out-pointer.
fn untouched(rc: CUresult, slot: usize) -> CUresult {
    mempool_hostile::untouched(OK, rc, slot)
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

mod races;
mod rows_device;
mod rows_driver;
mod rows_host_register;
mod rows_memory;
mod rows_pool;
mod rows_stream;
mod rows_vmm;

use races::*;
use rows_device::*;
use rows_host_register::*;
use rows_memory::*;
use rows_pool::*;
use rows_stream::*;
use rows_vmm::*;

// ------------------------------------------------------------------ the table

fn table() -> Table {
    let mut t = Table::default();
    init_device_context_rows(&mut t);
    stream_rows(&mut t);
    event_rows(&mut t);
    memory_rows(&mut t);
    copy_rows(&mut t);
    pool_rows(&mut t);
    vmm_rows(&mut t);
    host_register_rows(&mut t);
    rows_driver::context_rows(&mut t);
    rows_driver::peer_rows(&mut t);
    rows_driver::proc_address_rows(&mut t);
    rows_driver::stream_getter_rows(&mut t);
    rows_driver::plain_memory_rows(&mut t);
    rows_driver::copy_twin_rows(&mut t);
    t
}

// ------------------------------------------------------------------ running the rows

fn current_context() -> usize {
    let mut c: CUcontext = null_mut();
    // SAFETY: a valid out-pointer.
    unsafe { cuCtxGetCurrent(&mut c) };
    c as usize
}

/// What `mempool_hostile::run_row` checks around each row: the message, the witness pools'
/// statistics, and the main thread's current context (device 0's primary context).
impl Fixture for Fx {
    type Code = CUresult;
    const OK: CUresult = OK;

    fn message() -> String {
        message()
    }

    fn stats(&self) -> Vec<u64> {
        mempool_hostile::pool_stats::<Self>(&[self.p, self.p1], |pool, attr, v| {
            // SAFETY: a live pool and a writable `cuuint64_t`, the width of attributes 5-8.
            unsafe { cuMemPoolGetAttribute(pl(pool), attr, v) }
        })
    }

    fn keeps_context(&self) -> bool {
        if current_context() == self.ctx {
            return true;
        }
        // SAFETY: a live context handle; restores the main thread's context.
        unsafe { cuCtxSetCurrent(self.ctx as CUcontext) };
        false
    }

    /// No row destroys a context: no entry point here takes a context of its own kind
    /// (`bad_handles` lists the live one among the other kinds).
    fn handles(&self, kind: Kind) -> (usize, Option<usize>) {
        match kind {
            Kind::Stream => (self.s, Some(self.dead_stream)),
            Kind::Event => (self.e, Some(self.dead_event)),
            Kind::Pool => (self.p, Some(self.dead_pool)),
            Kind::Context => (self.ctx, None),
        }
    }
}

/// The exports that return no `CUresult`, each with a test of its own instead of rows
/// (`setup::the_version_marker` here; the last message in `tests/behaviour.rs`).
const OWN_TRIALS: [&str; 2] = ["mempool_cuda_shim_version", "mempool_cuda_shim_last_error"];

/// Every exported function has a row (the library's own calls have their own trials), and
/// every row names an exported function.
fn coverage(rows: &[Row]) -> Vec<String> {
    let exports: Vec<String> = exported_functions().into_iter().filter(|e| !OWN_TRIALS.contains(&e.as_str())).collect();
    mempool_hostile::coverage(&exports, rows)
}

fn version_marker() -> Vec<String> {
    // SAFETY: takes nothing; returns a static NUL-terminated string.
    let v = unsafe { CStr::from_ptr(mempool_cuda_shim_version()) }.to_string_lossy().into_owned();
    let want = format!("mempool-emu-{}", env!("CARGO_PKG_VERSION"));
    if v == want { Vec::new() } else { vec![format!("mempool_cuda_shim_version answers {v:?}, not {want:?}")] }
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
    let args = mempool_hostile::arguments();
    let listing = args.list;
    let fx = if listing { None } else { Some(Arc::new(fixture())) };
    let t = table();
    let n_rows = t.rows.len();
    let cover = coverage(&t.rows);
    let mut trials = vec![
        Trial::test("setup::every_export_has_a_row", move || outcome(cover)),
        Trial::test("setup::the_version_marker", || outcome(version_marker())),
    ];
    trials.extend(mempool_hostile::row_trials(t.rows, fx.as_ref()));
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
