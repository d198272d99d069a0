//! The default streams, through the C entry points: the legacy default stream (NULL,
//! `CU_STREAM_LEGACY`) and the blocking streams (`CU_STREAM_DEFAULT`, and the per-thread
//! default streams, `CU_STREAM_PER_THREAD`) wait for each other's earlier work without any
//! event, a non-blocking stream (`CU_STREAM_NON_BLOCKING`) waits for nothing, and the
//! emulator's stream-order checker sees exactly that order.
//!
//! A libtest-mimic harness (`harness = false`): `main` sets the platform up through the
//! environment (two devices, so a host function of device 1 can hold device 0's legacy
//! stream while device 0's host-function thread stays free) before the first call, then
//! runs the trials one at a time on the main thread, whose current context is device 0's
//! primary context: they share device 0's legacy stream, and each leaves it idle.

mod common;

use common::{check, init_and_use, message};
use cuda::exports::*;
use cuda::types::*;
use libtest_mimic::{Arguments, Failed, Trial};
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

const NULL: CUstream = std::ptr::null_mut();
const LEN: usize = 4096;

/// A gate host functions wait on until the test opens it.
struct Gate(Mutex<bool>, Condvar);

/// A gate that opens when the test lets go of it, so a failed assertion leaves no host
/// function blocked for the next trial.
struct Held(Arc<Gate>);

impl std::ops::Deref for Held {
    type Target = Arc<Gate>;
    fn deref(&self) -> &Arc<Gate> {
        &self.0
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.0.open();
    }
}

impl Held {
    /// A closed gate.
    fn closed() -> Held {
        Held(Arc::new(Gate(Mutex::new(false), Condvar::new())))
    }
}

impl Gate {
    fn open(&self) {
        *self.0.lock().unwrap() = true;
        self.1.notify_all();
    }
    fn wait(&self) {
        let mut open = self.0.lock().unwrap();
        while !*open {
            open = self.1.wait(open).unwrap();
        }
    }
}

/// What [`gated_fill`] does: waits for the gate, then fills `len` bytes at `addr`.
struct Fill {
    gate: Arc<Gate>,
    addr: usize,
    len: usize,
    value: u8,
}

extern "C" fn gated_fill(data: *mut c_void) {
    // SAFETY: `data` is a `Box<Fill>` turned into a raw pointer by `launch_gated_fill`,
    // taken back once here.
    let f = unsafe { Box::from_raw(data.cast::<Fill>()) };
    f.gate.wait();
    if f.len > 0 {
        // SAFETY: `addr` is device memory (a host address here) holding `len` bytes, live
        // until this function has run (the test frees it later in stream order).
        unsafe { std::ptr::write_bytes(f.addr as *mut u8, f.value, f.len) };
    }
}

/// Queues on `s` a host function that waits for `gate`, then fills `len` bytes at `addr`
/// with `value` (`len` 0: it only holds the stream).
fn launch_gated_fill(s: CUstream, gate: &Arc<Gate>, addr: CUdeviceptr, len: usize, value: u8) {
    let data = Box::into_raw(Box::new(Fill { gate: Arc::clone(gate), addr: addr as usize, len, value }));
    // SAFETY: a live stream; `gated_fill` takes the box back.
    check(unsafe { cuLaunchHostFunc(s, Some(gated_fill), data.cast()) }, "cuLaunchHostFunc");
}

/// The tags host functions note, in the order they ran.
type Log = Arc<Mutex<Vec<u32>>>;

extern "C" fn note(data: *mut c_void) {
    // SAFETY: `data` is a `(Log, u32)` boxed by `launch_note`, taken back once here.
    let (log, tag) = *unsafe { Box::from_raw(data.cast::<(Log, u32)>()) };
    log.lock().unwrap().push(tag);
}

fn launch_note(s: CUstream, log: &Log, tag: u32) {
    let data = Box::into_raw(Box::new((Arc::clone(log), tag)));
    // SAFETY: a live stream; `note` takes the box back.
    check(unsafe { cuLaunchHostFunc(s, Some(note), data.cast()) }, "cuLaunchHostFunc");
}

fn stream(flags: u32) -> CUstream {
    let mut s: CUstream = null_mut();
    // SAFETY: a valid out-pointer.
    check(unsafe { cuStreamCreate(&mut s, flags) }, "cuStreamCreate");
    s
}

fn destroy(s: CUstream) {
    // SAFETY: a live stream.
    check(unsafe { cuStreamDestroy_v2(s) }, "cuStreamDestroy");
}

fn pool(device: i32) -> CUmemoryPool {
    let props = CUmemPoolProps::device(device, 16 << 20);
    let mut p: CUmemoryPool = null_mut();
    // SAFETY: valid out-pointer and props.
    check(unsafe { cuMemPoolCreate(&mut p, &props) }, "cuMemPoolCreate");
    p
}

fn destroy_pool(p: CUmemoryPool) {
    // SAFETY: a live pool.
    check(unsafe { cuMemPoolDestroy(p) }, "cuMemPoolDestroy");
}

fn alloc(p: CUmemoryPool, s: CUstream) -> CUdeviceptr {
    let mut d: CUdeviceptr = 0;
    // SAFETY: a valid out-pointer and live handles.
    check(unsafe { cuMemAllocFromPoolAsync(&mut d, LEN, p, s) }, "cuMemAllocFromPoolAsync");
    d
}

fn memset(d: CUdeviceptr, value: u8, s: CUstream) -> CUresult {
    // SAFETY: `d` holds LEN bytes or is refused; a live stream.
    unsafe { cuMemsetD8Async(d, value, LEN, s) }
}

fn free(d: CUdeviceptr, s: CUstream) -> CUresult {
    // SAFETY: a live stream; the address is checked.
    unsafe { cuMemFreeAsync(d, s) }
}

fn sync(s: CUstream) {
    // SAFETY: a live stream.
    check(unsafe { cuStreamSynchronize(s) }, "cuStreamSynchronize");
}

fn query(s: CUstream) -> CUresult {
    // SAFETY: a live stream.
    unsafe { cuStreamQuery(s) }
}

fn event() -> CUevent {
    let mut e: CUevent = null_mut();
    // SAFETY: a valid out-pointer.
    check(unsafe { cuEventCreate(&mut e, CU_EVENT_DISABLE_TIMING) }, "cuEventCreate");
    e
}

/// Records `e` on `from` and makes `to` wait for it.
fn order(e: CUevent, from: CUstream, to: CUstream) {
    // SAFETY: live handles.
    unsafe {
        check(cuEventRecord(e, from), "cuEventRecord");
        check(cuStreamWaitEvent(to, e, 0), "cuStreamWaitEvent");
    }
}

/// `cuMemAllocHost` memory of LEN bytes, filled with `value`.
struct Pinned(*mut u8);

impl Pinned {
    fn new(value: u8) -> Pinned {
        let mut p: *mut c_void = null_mut();
        // SAFETY: a valid out-pointer.
        check(unsafe { cuMemAllocHost_v2(&mut p, LEN) }, "cuMemAllocHost");
        // SAFETY: LEN writable bytes just allocated.
        unsafe { std::ptr::write_bytes(p.cast::<u8>(), value, LEN) };
        Pinned(p.cast())
    }
    /// Whether every byte is `value` (read while no queued work writes it, or racing with
    /// a copy into it: bytes, so any interleaving reads as not all `value` or all).
    fn all(&self, value: u8) -> bool {
        // SAFETY: LEN bytes of live memory; read as volatile bytes since a queued copy may
        // be writing them on another thread (the tests read it only when that copy either
        // has run or cannot have started).
        (0..LEN).all(|i| unsafe { self.0.add(i).read_volatile() } == value)
    }
    fn copy_from(&self, d: CUdeviceptr, s: CUstream) -> CUresult {
        // SAFETY: LEN bytes of cuMemAllocHost memory, kept until the copy has run.
        unsafe { cuMemcpyDtoHAsync_v2(self.0.cast(), d, LEN, s) }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: memory cuMemAllocHost gave, freed once (kept until queued copies ran).
        check(unsafe { cuMemFreeHost(self.0.cast()) }, "cuMemFreeHost");
    }
}

/// Polls `cond` for up to 10 s.
fn eventually(cond: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

/// Time for work that would (wrongly) run to run.
fn settle() {
    std::thread::sleep(Duration::from_millis(30));
}

/// (a) A copy on a blocking stream waits for a host function enqueued before it on the
/// legacy stream, without any event: the checker accepts the copy of memory allocated on
/// the legacy stream, and the free on the legacy stream after the copy.
fn blocking_stream_waits_for_the_legacy_stream() -> Result<(), Failed> {
    let p = pool(0);
    let b = stream(CU_STREAM_DEFAULT);
    let d = alloc(p, NULL);
    check(memset(d, 0, CU_STREAM_LEGACY), "memset on CU_STREAM_LEGACY");
    let gate = Held::closed();
    launch_gated_fill(NULL, &gate, d, LEN, 0x42);
    let out = Pinned::new(0xee);
    check(out.copy_from(d, b), "D2H on the blocking stream, ordered after the allocation through the legacy stream");
    settle();
    assert_eq!(query(b), CUDA_ERROR_NOT_READY, "the copy waits for the legacy stream's host function");
    assert!(out.all(0xee), "the copy has not run");
    gate.open();
    sync(b);
    assert!(out.all(0x42), "the copy ran after the host function and saw its data");
    check(free(d, NULL), "free on the legacy stream after the blocking stream's copy, no event");
    sync(NULL);
    drop(out);
    destroy(b);
    destroy_pool(p);
    Ok(())
}

/// (b) A non-blocking stream waits for nothing on the legacy stream: its copy runs, and
/// reads the old data, while a host function holds the legacy stream; and its host
/// function runs while the legacy stream is held (by a wait for device 1, so device 0's
/// host-function thread is free), where a blocking stream's waits.
fn non_blocking_stream_does_not_wait_for_the_legacy_stream() -> Result<(), Failed> {
    let p = pool(0);
    let n = stream(CU_STREAM_NON_BLOCKING);
    let d = alloc(p, NULL);
    check(memset(d, 0, NULL), "memset on the legacy stream");
    // The host has observed the allocation: any stream may use it.
    sync(NULL);
    let gate = Held::closed();
    launch_gated_fill(CU_STREAM_LEGACY, &gate, d, LEN, 0x42);
    let out = Pinned::new(0xee);
    check(out.copy_from(d, n), "D2H on the non-blocking stream");
    sync(n);
    assert!(out.all(0), "the copy ran before the legacy stream's host function: it read the old data");
    assert_eq!(query(NULL), CUDA_ERROR_NOT_READY, "the legacy stream is still held");
    gate.open();
    sync(NULL);

    // Host functions: hold device 0's legacy stream by a wait for a host function of a
    // stream of device 1.
    let b = stream(CU_STREAM_DEFAULT);
    let ctx0 = current();
    let mut ctx1: CUcontext = null_mut();
    let mut x: CUstream = null_mut();
    // SAFETY: valid out-pointers and live contexts.
    unsafe {
        check(cuDevicePrimaryCtxRetain(&mut ctx1, 1), "retaining device 1");
        check(cuCtxSetCurrent(ctx1), "device 1 current");
        check(cuStreamCreate(&mut x, CU_STREAM_NON_BLOCKING), "a stream of device 1");
        check(cuCtxSetCurrent(ctx0), "device 0 current again");
    }
    let gate = Held::closed();
    launch_gated_fill(x, &gate, 0, 0, 0);
    let e = event();
    order(e, x, NULL);
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    launch_note(NULL, &log, 1);
    launch_note(n, &log, 2);
    launch_note(b, &log, 3);
    assert!(eventually(|| *log.lock().unwrap() == [2]), "the non-blocking stream's host function ran: {log:?}");
    settle();
    assert_eq!(*log.lock().unwrap(), [2], "the legacy and blocking streams' host functions wait");
    assert_eq!(query(NULL), CUDA_ERROR_NOT_READY);
    assert_eq!(query(b), CUDA_ERROR_NOT_READY, "the blocking stream waits for the legacy stream");
    gate.open();
    sync(b);
    assert_eq!(*log.lock().unwrap(), [2, 1, 3], "the blocking stream's host function ran after the legacy one's");
    check(free(d, NULL), "free");
    sync(NULL);
    // SAFETY: live handles.
    unsafe {
        check(cuEventDestroy_v2(e), "cuEventDestroy");
        check(cuStreamDestroy_v2(x), "destroying the stream of device 1");
        check(cuDevicePrimaryCtxRelease_v2(1), "releasing device 1");
    }
    drop(out);
    destroy(n);
    destroy(b);
    destroy_pool(p);
    Ok(())
}

fn current() -> CUcontext {
    let mut c: CUcontext = null_mut();
    // SAFETY: a valid out-pointer.
    check(unsafe { cuCtxGetCurrent(&mut c) }, "cuCtxGetCurrent");
    c
}

/// (c) The per-thread default streams of two threads run independently, and each orders
/// with the legacy stream: the legacy stream waits for both, and later work on either
/// waits for the legacy stream.
fn per_thread_streams_are_independent_and_order_with_the_legacy_stream() -> Result<(), Failed> {
    let ctx = current() as usize;
    let p = pool(0);
    let d = alloc(p, NULL);
    check(memset(d, 0, NULL), "memset on the legacy stream");
    sync(NULL);
    let gate = Held::closed();
    let (a_held, a_held_rx) = mpsc::channel::<()>();
    let (a_exit, a_exit_rx) = mpsc::channel::<()>();
    let (b_step, b_step_rx) = mpsc::channel::<()>();
    let (b_done, b_done_rx) = mpsc::channel::<()>();
    // A moving closure: on a failed assertion the senders go before the scope joins the
    // threads, so they see the channels closed instead of waiting forever.
    std::thread::scope(move |scope| {
        let a_gate = Arc::clone(&*gate);
        let a = scope.spawn(move || {
            // SAFETY: a live context.
            check(unsafe { cuCtxSetCurrent(ctx as CUcontext) }, "cuCtxSetCurrent");
            launch_gated_fill(CU_STREAM_PER_THREAD, &a_gate, 0, 0, 0);
            a_held.send(()).unwrap();
            a_exit_rx.recv().unwrap();
            // The thread ends: its per-thread stream is destroyed, its held work still
            // queued (and still waited for by the legacy stream).
        });
        let b = scope.spawn(move || {
            // SAFETY: a live context.
            check(unsafe { cuCtxSetCurrent(ctx as CUcontext) }, "cuCtxSetCurrent");
            a_held_rx.recv().unwrap();
            check(memset(d, 0x11, CU_STREAM_PER_THREAD), "memset on B's per-thread stream");
            // B's per-thread stream does not wait for A's, which is held.
            sync(CU_STREAM_PER_THREAD);
            assert_eq!(query(CU_STREAM_PER_THREAD), CUDA_SUCCESS);
            b_done.send(()).unwrap();
            // The main thread has enqueued a memset on the legacy stream, which waits for A.
            b_step_rx.recv().unwrap();
            let out = Pinned::new(0xee);
            check(out.copy_from(d, CU_STREAM_PER_THREAD), "D2H on B's per-thread stream");
            settle();
            assert_eq!(query(CU_STREAM_PER_THREAD), CUDA_ERROR_NOT_READY, "B's copy waits for the legacy stream");
            assert!(out.all(0xee), "B's copy has not run");
            b_done.send(()).unwrap();
            b_step_rx.recv().unwrap();
            sync(CU_STREAM_PER_THREAD);
            assert!(out.all(0x22), "B's copy ran after the legacy stream's memset");
        });
        b_done_rx.recv().expect("B ran on while A is held");
        check(memset(d, 0x22, NULL), "memset on the legacy stream, after both per-thread streams' work");
        settle();
        assert_eq!(query(NULL), CUDA_ERROR_NOT_READY, "the legacy stream waits for A's per-thread stream");
        b_step.send(()).unwrap();
        b_done_rx.recv().expect("B's copy was enqueued");
        a_exit.send(()).unwrap();
        a.join().expect("thread A");
        assert_eq!(query(NULL), CUDA_ERROR_NOT_READY, "A's ended thread's queued work is still waited for");
        gate.open();
        b_step.send(()).unwrap();
        b.join().expect("thread B");
    });
    sync(NULL);
    check(free(d, NULL), "free on the legacy stream after B's per-thread copy, no event");
    sync(NULL);
    destroy_pool(p);
    Ok(())
}

/// Blocking streams are ordered with each other only through work on the legacy stream.
fn blocking_streams_order_only_through_the_legacy_stream() -> Result<(), Failed> {
    let (b1, b2) = (stream(CU_STREAM_DEFAULT), stream(CU_STREAM_DEFAULT));
    let p = pool(0);
    let d = alloc(p, NULL);
    sync(NULL);
    let gate = Held::closed();
    launch_gated_fill(b1, &gate, 0, 0, 0);
    check(memset(d, 1, b2), "memset on the second blocking stream");
    sync(b2);
    // A legacy operation (here a record) between them orders the later work of b2 after b1.
    let e = event();
    // SAFETY: live handles.
    check(unsafe { cuEventRecord(e, NULL) }, "cuEventRecord on the legacy stream");
    check(memset(d, 2, b2), "memset on the second blocking stream");
    settle();
    assert_eq!(query(b2), CUDA_ERROR_NOT_READY, "b2 waits for the legacy record, which waits for b1");
    // SAFETY: a live event.
    assert_eq!(unsafe { cuEventQuery(e) }, CUDA_ERROR_NOT_READY, "the legacy record waits for b1");
    gate.open();
    sync(b2);
    check(free(d, NULL), "free");
    sync(NULL);
    // SAFETY: a live event.
    check(unsafe { cuEventDestroy_v2(e) }, "cuEventDestroy");
    destroy(b1);
    destroy(b2);
    destroy_pool(p);
    Ok(())
}

/// (d) The checker: memory allocated on the legacy stream and used on a blocking stream is
/// freed on the legacy stream with no event; used on a non-blocking stream, the use
/// needs an event after the allocation and the free one after the use, or they are
/// refused.
fn the_checker_sees_the_implicit_order() -> Result<(), Failed> {
    let p = pool(0);
    let (b, n) = (stream(CU_STREAM_DEFAULT), stream(CU_STREAM_NON_BLOCKING));
    // A blocking stream: no event either way.
    let d = alloc(p, NULL);
    check(memset(d, 1, b), "a blocking stream uses memory allocated on the legacy stream");
    check(free(d, NULL), "the legacy stream frees memory a blocking stream used");
    // The same on the per-thread default stream.
    let d = alloc(p, CU_STREAM_LEGACY);
    check(memset(d, 1, CU_STREAM_PER_THREAD), "the per-thread stream uses it");
    check(free(d, CU_STREAM_LEGACY), "the legacy stream frees it");

    // A non-blocking stream: the use is not ordered after the allocation...
    let d = alloc(p, NULL);
    assert_eq!(memset(d, 1, n), CUDA_ERROR_INVALID_VALUE, "{}", message());
    assert!(message().starts_with("cuMemsetD8Async: "), "{}", message());
    assert!(message().contains("is not ordered after that allocation"), "{}", message());
    // ... until an event orders it; then the free on the legacy stream races with the use.
    let e = event();
    order(e, NULL, n);
    check(memset(d, 1, n), "the non-blocking stream's use, after an event");
    assert_eq!(free(d, NULL), CUDA_ERROR_INVALID_VALUE, "{}", message());
    let m = message();
    assert!(m.starts_with("cuMemFreeAsync: "), "{m}");
    assert!(m.contains("races with memset_async on stream"), "{m}");
    assert!(m.contains("not ordered before the free"), "{m}");
    // An event after the use makes the free legal.
    order(e, n, NULL);
    check(free(d, NULL), "the free, after an event");
    sync(NULL);
    sync(n);
    // SAFETY: a live event.
    check(unsafe { cuEventDestroy_v2(e) }, "cuEventDestroy");
    destroy(b);
    destroy(n);
    destroy_pool(p);
    Ok(())
}

/// A blocking stream destroyed with queued work: later work on the legacy stream still
/// waits for it; and the default streams cannot be destroyed.
fn a_destroyed_blocking_streams_work_is_still_waited_for() -> Result<(), Failed> {
    let b = stream(CU_STREAM_DEFAULT);
    let gate = Held::closed();
    launch_gated_fill(b, &gate, 0, 0, 0);
    destroy(b);
    let e = event();
    // SAFETY: a live event.
    check(unsafe { cuEventRecord(e, NULL) }, "cuEventRecord on the legacy stream");
    settle();
    // SAFETY: a live event.
    assert_eq!(unsafe { cuEventQuery(e) }, CUDA_ERROR_NOT_READY, "the legacy stream waits for the destroyed stream");
    gate.open();
    // SAFETY: a live event.
    check(unsafe { cuEventSynchronize(e) }, "cuEventSynchronize");
    // SAFETY: a live event; the default streams are refused.
    unsafe {
        check(cuEventDestroy_v2(e), "cuEventDestroy");
        for h in [NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD] {
            assert_eq!(cuStreamDestroy_v2(h), CUDA_ERROR_INVALID_HANDLE, "{h:p}");
            assert!(message().contains("cannot be destroyed"), "{}", message());
        }
    }
    Ok(())
}

/// A trial's body.
type Test = fn() -> Result<(), Failed>;

fn main() {
    // SAFETY: `main` has started no thread yet; the library reads the environment at
    // `cuInit`.
    unsafe {
        for var in cuda::ENV_ALL {
            std::env::remove_var(var);
        }
        std::env::set_var(cuda::ENV_DEVICES, "2");
        std::env::set_var(cuda::ENV_DEVICE_MEMORY, "1G");
        // A wrong wait shows as a failed trial in seconds, not a minute.
        std::env::set_var(cuda::ENV_WAIT_TIMEOUT, "10s");
    }
    let mut args = Arguments::from_args();
    args.test_threads = Some(1);
    if !args.list {
        init_and_use(0);
    }
    let trials: [(&str, Test); 6] = [
        ("blocking_stream_waits_for_the_legacy_stream", blocking_stream_waits_for_the_legacy_stream),
        (
            "non_blocking_stream_does_not_wait_for_the_legacy_stream",
            non_blocking_stream_does_not_wait_for_the_legacy_stream,
        ),
        (
            "per_thread_streams_are_independent_and_order_with_the_legacy_stream",
            per_thread_streams_are_independent_and_order_with_the_legacy_stream,
        ),
        (
            "blocking_streams_order_only_through_the_legacy_stream",
            blocking_streams_order_only_through_the_legacy_stream,
        ),
        ("the_checker_sees_the_implicit_order", the_checker_sees_the_implicit_order),
        (
            "a_destroyed_blocking_streams_work_is_still_waited_for",
            a_destroyed_blocking_streams_work_is_still_waited_for,
        ),
    ];
    let trials = trials.into_iter().map(|(name, f)| Trial::test(name, f)).collect();
    libtest_mimic::run(&args, trials).exit();
}
