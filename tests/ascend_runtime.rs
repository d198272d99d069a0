//! The Ascend backend against the runtime as it ships (contract §12), through the drop-in
//! `libacl_rt.so`, on both emulator profiles: `documented` and `cann-open` (no reuse, no
//! release at synchronization, a destroy that does not wait).
//!
//! The library reads its environment once, at its first call, so each profile runs in a
//! child process of this binary (`MEMPOOL_EMU_PROFILE` set there); the parent runs one
//! trial per profile and shows the child's report. Inside a child the cases run one after
//! the other on one runtime:
//!
//! - out of memory with cached bytes: synchronize, trim to USED, retry once, counted;
//! - `destroy_pool` waits for queued work: a facade `Buffer` and then its `Pool` are
//!   dropped while a host function holds the stream;
//! - host copies stay asynchronous through the page-locked staging cache, which stays
//!   bounded;
//! - a stream the host program created (a framework's) is borrowed
//!   (`Ascend::borrow_stream`): every call takes it, the backend never destroys it, and a
//!   null stream is refused;
//! - a context switched behind the backend's back is noticed on pool-management paths;
//! - `open` sets no device;
//! - `finalize` gives back only the backend's own `aclInit` reference.
//!
//! A build whose emulator has no profile switch (`MEMPOOL_EMU_PROFILE` missing from
//! `ENV_ALL`) reports the `cann-open` trial as ignored, saying why. Where the switch
//! exists, a child that asked for `cann-open` checks that it got it (a freed block stays
//! reserved after a synchronization) and fails loudly otherwise, as it does when the
//! library refuses the variable (`aclInit` answers 507000 naming it).

use libtest_mimic::{Arguments, Trial};
use mempool::hal::{Device, HostBuffer, MemPool, MemPoolExt, PoolProps, StreamStatus, attr};
use mempool::{ErrorKind, Pool, Stream};
use mempool_ascend::sys::{aclError, aclrtStream};
use mempool_ascend::{Ascend, LoadOptions};
use std::ffi::c_char;
use std::path::PathBuf;
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const PROFILE_VAR: &str = "MEMPOOL_EMU_PROFILE";
const CHILD_VAR: &str = "MEMPOOL_TEST_ASCEND_RUNTIME_CHILD";
const MIB: u64 = 1 << 20;
/// The granularity of the drop-in library (its default).
const GRAN: u64 = 2 * MIB;
/// How long a blocked stream is held before the test releases it anyway.
const HOLD: Duration = Duration::from_secs(10);

fn main() {
    if std::env::var_os(CHILD_VAR).is_some() {
        child();
        return;
    }
    let args = Arguments::from_args();
    let supported = acl_rt::ENV_ALL.contains(&PROFILE_VAR);
    if !supported {
        eprintln!(
            "ascend_runtime: the emulator of this build has no {PROFILE_VAR} (not in ENV_ALL): the cann-open trial is ignored"
        );
    }
    let trials = vec![
        Trial::test("documented", || run_child(None)),
        Trial::test("cann-open", || run_child(Some("cann-open"))).with_ignored_flag(!supported),
    ];
    libtest_mimic::run(&args, trials).exit()
}

/// Runs this binary as a child on `profile` (the default when `None`) and reports its
/// output.
fn run_child(profile: Option<&str>) -> Result<(), libtest_mimic::Failed> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(exe);
    cmd.env(CHILD_VAR, "1").env_remove("ASCEND_HOME_PATH").env_remove(mempool_ascend::ENV_LIBRARY);
    match profile {
        Some(p) => cmd.env(PROFILE_VAR, p),
        None => cmd.env_remove(PROFILE_VAR),
    };
    let out = cmd.output().map_err(|e| e.to_string())?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if out.status.success() {
        println!("{text}");
        Ok(())
    } else {
        Err(format!("the {} child failed ({}):\n{text}", profile.unwrap_or("documented"), out.status).into())
    }
}

type Init = unsafe extern "C" fn(*const c_char) -> aclError;
type FinalizeReference = unsafe extern "C" fn(*mut u64) -> aclError;
type NoArgs = unsafe extern "C" fn() -> aclError;
type DeviceCall = unsafe extern "C" fn(i32) -> aclError;
type Message = unsafe extern "C" fn() -> *const c_char;
type CreateStream = unsafe extern "C" fn(*mut aclrtStream) -> aclError;
type DestroyStream = unsafe extern "C" fn(aclrtStream) -> aclError;

/// The drop-in library's C functions, called as a host program around the backend would,
/// and the folder it was loaded from.
struct Lib(libloading::Library, PathBuf);

impl Lib {
    fn get<T: Copy>(&self, name: &str) -> T {
        // SAFETY: each caller names a function of the library with the type `T` of its C
        // prototype (contract §8).
        unsafe { *self.0.get::<T>(name.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}")) }
    }

    fn message(&self) -> String {
        // SAFETY: no arguments; the answer is NULL or a NUL-terminated string valid until
        // the next call on this thread, copied at once.
        unsafe {
            let p = self.get::<Message>("aclGetRecentErrMsg")();
            if p.is_null() { String::new() } else { std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned() }
        }
    }
}

/// One case of a child run.
type Case = fn(&Ascend, &Lib);

fn child() {
    let profile = std::env::var(PROFILE_VAR).unwrap_or_else(|_| "documented".to_string());
    // SAFETY: set before this process starts any thread or calls the library, which reads
    // its environment at its first call.
    unsafe { std::env::set_var(acl_rt::ENV_DEVICE_MEMORY, (1u64 << 30).to_string()) };
    let home = mempool_tests::shim_home();
    let lib64 = home.path().join("lib64");
    // SAFETY: the library the backend loads too (the same mapping).
    let lib = Lib(unsafe { libloading::Library::new(lib64.join("libacl_rt.so")) }.expect("dlopen"), lib64.clone());

    // A host program that initialized ACL itself, before the backend.
    // SAFETY: a null configuration path.
    let rc = unsafe { lib.get::<Init>("aclInit")(std::ptr::null()) };
    assert!(
        rc == 0,
        "aclInit answered {rc} on profile {profile}: the drop-in library refused its environment ({}){}",
        lib.message(),
        if lib.message().contains(PROFILE_VAR) { " -- this library does not support the profile" } else { "" }
    );
    let dev = Ascend::open_with(&LoadOptions::only(&lib64), 0).expect("the drop-in library loads");
    println!("profile {profile}: runtime {}", dev.runtime().path().display());
    check_profile(&dev, &profile);

    let cases: [(&str, Case); 7] = [
        ("oom_retry", oom_retry),
        ("a_steady_loop_of_100_pools_worth_succeeds", a_steady_loop_of_100_pools_worth_succeeds),
        ("destroy_waits_for_queued_work", destroy_waits_for_queued_work),
        ("copies_stay_async_through_pinned_staging", copies_stay_async_through_pinned_staging),
        ("a_borrowed_stream_works_and_is_never_destroyed", a_borrowed_stream_works_and_is_never_destroyed),
        ("a_foreign_context_switch_is_noticed", a_foreign_context_switch_is_noticed),
        ("open_sets_no_device", open_sets_no_device),
    ];
    for (name, case) in cases {
        let t = Instant::now();
        case(&dev, &lib);
        println!("  {name}: ok ({:.1} ms)", t.elapsed().as_secs_f64() * 1e3);
    }
    drop(dev);
    finalize_gives_back_only_its_reference(&lib);
    println!("  finalize_gives_back_only_its_reference: ok");
    drop(home);
}

/// Fails loudly when the child did not get the profile it asked for: on `cann-open` a
/// freed block stays reserved after a synchronization, on `documented` it is released.
fn check_profile(dev: &Ascend, profile: &str) {
    let s = dev.create_stream().unwrap();
    let pool = dev.create_pool(&PoolProps::builder().max_size(8 * MIB).build()).unwrap();
    let p = pool.malloc_async(1, &s).unwrap();
    // SAFETY: `p` is a live allocation of `pool` that nothing uses.
    unsafe { pool.free_async(p, &s) }.unwrap();
    dev.synchronize_stream(&s).unwrap();
    let reserved = pool.stats().unwrap().reserved_current;
    dev.destroy_pool(&pool).unwrap();
    dev.destroy_stream(&s).unwrap();
    match profile {
        "cann-open" => assert_eq!(
            reserved, GRAN,
            "{PROFILE_VAR}=cann-open, but a freed block was released at synchronization: the library ran the documented profile"
        ),
        _ => assert_eq!(reserved, 0, "documented profile: a freed block is released at synchronization"),
    }
}

/// A pool of four granules that caches what it frees: reuse flags off, threshold at its
/// size.
fn caching_pool(dev: &Ascend) -> mempool_ascend::AscendPool {
    let pool = dev.create_pool(&PoolProps::builder().max_size(4 * GRAN).build()).unwrap();
    pool.set(attr::ReuseFollowEventDependencies, false).unwrap();
    pool.set(attr::ReuseAllowOpportunistic, false).unwrap();
    pool.set(attr::ReuseAllowInternalDependencies, false).unwrap();
    pool.set(attr::ReleaseThreshold, pool.size()).unwrap();
    pool
}

/// A steady allocate/free loop on one stream, 100 times the pool's size in total, succeeds
/// on both profiles: documented reuses the same block each time (no retry), cann-open takes
/// fresh memory each time and the backend's retry (synchronize, trim to USED) gives the
/// cached blocks back whenever the pool is full (contract §12).
fn a_steady_loop_of_100_pools_worth_succeeds(dev: &Ascend, _: &Lib) {
    let s = dev.create_stream().unwrap();
    let pool = caching_pool(dev);
    let rounds = 100 * pool.size() / GRAN;
    for i in 0..rounds {
        let p = pool.malloc_async(GRAN, &s).unwrap_or_else(|e| panic!("allocation {i} of {rounds}: {e}"));
        // SAFETY: a live allocation of `pool` that nothing uses.
        unsafe { pool.free_async(p, &s) }.unwrap();
    }
    let retries = pool.oom_retries();
    let profile = std::env::var(PROFILE_VAR).unwrap_or_else(|_| "documented".to_string());
    if profile == "cann-open" {
        // Each retry frees the pool's 4 cached granules; every 4th allocation needs one.
        assert!(retries >= rounds / 4 - 1, "{retries} retries in {rounds} allocations");
    } else {
        assert_eq!(retries, 0, "same-stream reuse needs no retry");
    }
    println!("    {rounds} allocations of 2 MiB in a {} MiB pool: {retries} retries", pool.size() / MIB);
    dev.synchronize_device().unwrap();
    dev.destroy_pool(&pool).unwrap();
    dev.destroy_stream(&s).unwrap();
}

/// Out of memory with cached bytes: the backend synchronizes, trims to USED and retries
/// once, and counts it; without cached bytes it does not retry; a retry that cannot help
/// fails with a message saying what was tried.
fn oom_retry(dev: &Ascend, _: &Lib) {
    let (a, b) = (dev.create_stream().unwrap(), dev.create_stream().unwrap());
    let pool = caching_pool(dev);
    // Fill the pool on `a`, free everything on `a` (not yet observed by the host): the
    // blocks are cached, and no rule lets `b` reuse them (and cann-open reuses nothing).
    let ptrs: Vec<_> = (0..4).map(|_| pool.malloc_async(GRAN, &a).unwrap()).collect();
    for p in ptrs {
        // SAFETY: live allocations of `pool` that nothing uses.
        unsafe { pool.free_async(p, &a) }.unwrap();
    }
    let before = pool.stats().unwrap();
    assert_eq!((before.used_current, before.reserved_current), (0, 4 * GRAN), "{before:?}");
    let p = pool.malloc_async(GRAN, &b).expect("the retry after a trim succeeds");
    assert_eq!(pool.oom_retries(), 1, "one retry, counted");
    let after = pool.stats().unwrap();
    assert_eq!((after.used_current, after.reserved_current), (GRAN, GRAN), "trimmed to USED, then one granule");
    println!("    cached {} MiB, USED 0: retried once, then USED/RESERVED {}/{} MiB", 4 * GRAN / MIB, 2, 2);

    // Full of live blocks: RESERVED == USED, so no retry.
    let more: Vec<_> = (0..3).map(|_| pool.malloc_async(GRAN, &b).unwrap()).collect();
    let e = pool.malloc_async(GRAN, &b).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::OutOfMemory);
    assert!(e.message().contains("no cached bytes to trim, so no retry"), "{e}");
    assert_eq!(pool.oom_retries(), 1, "not retried");

    // One cached granule, a request of two: trimming cannot make room, so no retry, and
    // the cached granule stays.
    // SAFETY: a live allocation of `pool` that nothing uses.
    unsafe { pool.free_async(more[0], &b) }.unwrap();
    let e = pool.malloc_async(2 * GRAN, &a).unwrap_err();
    assert!(e.message().contains("trimming to USED cannot make room, so no retry"), "{e}");
    assert_eq!(e.oom().unwrap().largest_cached_block, GRAN, "the cached granule is kept");
    assert_eq!(pool.oom_retries(), 1);
    for q in [p, more[1], more[2]] {
        // SAFETY: live allocations of `pool` that nothing uses.
        unsafe { pool.free_async(q, &b) }.unwrap();
    }
    dev.synchronize_device().unwrap();
    pool.trim_to(0).unwrap();

    // Live granules 0 and 2, cached 1 and 3, a request of two: there is room by the count,
    // so the backend retries, but the trimmed pool's free ranges are not contiguous.
    let q: Vec<_> = (0..4).map(|_| pool.malloc_async(GRAN, &a).unwrap()).collect();
    for i in [1, 3] {
        // SAFETY: live allocations of `pool` that nothing uses.
        unsafe { pool.free_async(q[i], &a) }.unwrap();
    }
    let e = pool.malloc_async(2 * GRAN, &b).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::OutOfMemory);
    assert!(e.message().contains("retried once after synchronizing and trimming to USED"), "{e}");
    assert!(e.message().contains("retries on this pool: 2"), "{e}");
    assert_eq!(e.oom().unwrap().stats.reserved_current, 2 * GRAN, "the cached granules were trimmed");
    assert_eq!(pool.oom_retries(), 2);
    println!("    final failure: {e}");

    for i in [0, 2] {
        // SAFETY: live allocations of `pool` that nothing uses.
        unsafe { pool.free_async(q[i], &a) }.unwrap();
    }
    dev.destroy_pool(&pool).unwrap();
    dev.destroy_stream(&a).unwrap();
    dev.destroy_stream(&b).unwrap();
}

/// A host function that blocks its stream until the returned sender is used (or `HOLD`
/// passes), and reports when it ends.
fn hold(stream: &Stream<'_, Ascend>) -> (mpsc::Sender<()>, mpsc::Receiver<Instant>) {
    let (go, wait) = mpsc::channel::<()>();
    let (done, ended) = mpsc::channel();
    stream
        .launch_host_func(move || {
            let _ = wait.recv_timeout(HOLD);
            let _ = done.send(Instant::now());
        })
        .unwrap();
    (go, ended)
}

/// The facade's drop order, a `Buffer` (its free queued) and then its `Pool`, while a host
/// function holds the stream: the destroy waits for the queue, so the queued free never
/// meets a destroyed pool, and no failure is reported afterwards.
fn destroy_waits_for_queued_work(dev: &Ascend, _: &Lib) {
    let stream = Stream::new(dev).unwrap();
    let pool = Pool::new(dev, &PoolProps::builder().max_size(8 * MIB).build()).unwrap();
    let buf = pool.alloc(MIB, &stream).unwrap();
    buf.fill(7, &stream).unwrap();
    let (go, ended) = hold(&stream);
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        let released = Instant::now();
        let _ = go.send(());
        released
    });
    drop(buf); // queues the free behind the held host function
    drop(pool); // destroys: must wait for the free
    let destroyed = Instant::now();
    let released = releaser.join().unwrap();
    let ended = ended.recv_timeout(HOLD).expect("the host function ran");
    assert!(destroyed >= ended && ended >= released, "the destroy returned before the queue drained");
    stream.synchronize().expect("no failure from work queued before the destroy");
    dev.synchronize_device().unwrap();
    println!("    destroy returned {:.1} ms after the stream was released", (destroyed - released).as_secs_f64() * 1e3);
}

/// Host copies return while their stream is held (pageable staging would wait for the
/// stream), the bytes arrive, and the staging cache stays bounded.
fn copies_stay_async_through_pinned_staging(dev: &Ascend, _: &Lib) {
    let stream = Stream::new(dev).unwrap();
    let pool = Pool::new(dev, &PoolProps::builder().max_size(16 * MIB).build()).unwrap();
    let buf = pool.alloc(MIB, &stream).unwrap();
    let data: Vec<u8> = (0..MIB as usize).map(|i| (i * 7 % 251) as u8).collect();
    let out = HostBuffer::new(MIB as usize);
    let before = dev.staging();

    let (go, ended) = hold(&stream);
    let t = Instant::now();
    buf.copy_from_host(&data, &stream).unwrap();
    buf.copy_to_host(&out, &stream).unwrap();
    let returned = t.elapsed();
    assert!(ended.try_recv().is_err(), "the stream was still held when both copies returned");
    assert_eq!(dev.staging().in_flight, before.in_flight + 2, "both buffers belong to queued copies");
    go.send(()).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(out.to_vec(), data, "the bytes made the round trip");
    println!("    two 1 MiB copies returned in {:.2} ms on a held stream", returned.as_secs_f64() * 1e3);

    // Many copies of mixed sizes, each round waited for: buffers are reused, and at most
    // four per size are kept.
    for round in 0..64usize {
        let n = 1 + (round * 4099) % (MIB as usize);
        buf.copy_from_host(&data[..n], &stream).unwrap();
        let o = HostBuffer::new(n);
        buf.copy_to_host(&o, &stream).unwrap();
        stream.synchronize().unwrap();
        assert_eq!(o.to_vec(), data[..n]);
    }
    stream.synchronize().unwrap();
    let st = dev.staging();
    assert_eq!(st.in_flight, 0, "{st:?}");
    // Sizes up to 1 MiB: nine size classes (4 KiB to 1 MiB), at most four buffers each.
    assert!(st.cached <= 9 * 4, "{st:?}");
    // Each round's two buffers are back before the next round: at most two per size
    // class were ever needed, plus the two of the first copies.
    assert!(st.allocations - before.allocations <= 2 * 9 + 2, "buffers are reused: {st:?}");
    println!(
        "    130 copies: {} aclrtMallocHost, {} aclrtFreeHost, {} cached ({} KiB)",
        st.allocations,
        st.frees,
        st.cached,
        st.cached_bytes >> 10
    );
}

/// The host program's own stream (`aclrtCreateStream` in the instance's context), borrowed:
/// allocations, copies, events and frees on it go through the backend; destroying it
/// through the backend is refused and leaves it usable; its owner destroys it. A null
/// stream is refused: CANN's pool calls do not take the default stream.
fn a_borrowed_stream_works_and_is_never_destroyed(dev: &Ascend, lib: &Lib) {
    // Makes the instance's context current on this thread, where the host creates its stream.
    dev.synchronize_device().unwrap();
    let mut raw: aclrtStream = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { lib.get::<CreateStream>("aclrtCreateStream")(&mut raw) }, 0, "{}", lib.message());
    // SAFETY: a live stream of the runtime the backend loaded, destroyed below after its
    // last use.
    let s = unsafe { dev.borrow_stream(raw) }.unwrap();
    assert!(s.is_borrowed() && s.as_raw() == raw);
    let pool = dev.create_pool(&PoolProps::builder().max_size(8 * MIB).build()).unwrap();
    let p = pool.malloc_async(MIB, &s).unwrap();
    dev.memset_async(p, 0x5a, MIB, &s).unwrap();
    dev.memcpy_h2d_async(p, b"borrowed", &s).unwrap();
    let back = HostBuffer::new(12);
    dev.memcpy_d2h_async(&back, p, &s).unwrap();
    let done = dev.create_event().unwrap();
    dev.record_event(&done, &s).unwrap();
    let own = dev.create_stream().unwrap();
    dev.stream_wait_event(&own, &done).unwrap();
    // SAFETY: a live allocation of `pool`, used only on `s` before this free.
    unsafe { pool.free_async(p, &s) }.unwrap();
    dev.synchronize_stream(&s).unwrap();
    assert_eq!(dev.query_stream(&s).unwrap(), StreamStatus::Complete);
    assert_eq!(back.to_vec(), b"borrowed\x5a\x5a\x5a\x5a");

    let err = dev.destroy_stream(&s).unwrap_err();
    assert_eq!((err.kind(), err.code(), err.op()), (ErrorKind::InvalidHandle, 107_017, "aclrtDestroyStream"));
    assert!(err.message().starts_with("a borrowed stream is not destroyed by the backend"), "{err}");
    let q = pool.malloc_async(1, &s).expect("the stream is still usable");
    // SAFETY: a live allocation of `pool` that nothing used.
    unsafe { pool.free_async(q, &s) }.unwrap();
    dev.synchronize_stream(&s).unwrap();

    // SAFETY: null is refused before anything uses it.
    let null = unsafe { dev.borrow_stream(std::ptr::null_mut()) }.unwrap_err();
    assert_eq!((null.kind(), null.code()), (ErrorKind::InvalidParam, 107_000), "{null}");

    dev.destroy_pool(&pool).unwrap();
    dev.synchronize_stream(&own).unwrap();
    dev.destroy_stream(&own).unwrap();
    dev.destroy_event(&done).unwrap();
    // SAFETY: the host's own stream, used no more.
    assert_eq!(unsafe { lib.get::<DestroyStream>("aclrtDestroyStream")(raw) }, 0, "the backend had not destroyed it");
}

/// Another CANN user on this thread resets the device the backend's context is current
/// for (no context is current afterwards): the next pool-management call notices it
/// through `aclrtGetCurrentContext` and restores the backend's context.
fn a_foreign_context_switch_is_noticed(dev: &Ascend, lib: &Lib) {
    let s = dev.create_stream().unwrap();
    // SAFETY: integer arguments.
    unsafe {
        assert_eq!(lib.get::<DeviceCall>("aclrtSetDevice")(0), 0);
        assert_eq!(lib.get::<DeviceCall>("aclrtResetDevice")(0), 0);
    }
    let pool = dev.create_pool(&PoolProps::builder().max_size(8 * MIB).build()).expect("the context is restored");
    let p = pool.malloc_async(MIB, &s).expect("the hot path runs in the restored context");
    // SAFETY: a live allocation of `pool` that nothing uses.
    unsafe { pool.free_async(p, &s) }.unwrap();
    dev.destroy_pool(&pool).unwrap();
    dev.destroy_stream(&s).unwrap();
}

/// `open` does not call `aclrtSetDevice` (`aclrtCreateContext` retains the device), so
/// nothing is left set for a reset to undo.
fn open_sets_no_device(_: &Ascend, lib: &Lib) {
    let other = Ascend::open_with(&LoadOptions::only(&lib.1), 0).unwrap();
    drop(other);
    // SAFETY: an integer argument.
    let rc = unsafe { lib.get::<DeviceCall>("aclrtResetDevice")(0) };
    assert_eq!(rc, mempool_ascend::sys::ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, "no device was left set");
}

/// The host program's `aclInit` came first, so the backend's answered 100002 and took a
/// second reference: `finalize` gives back that one only, and the host's reference is
/// still there to give back.
fn finalize_gives_back_only_its_reference(lib: &Lib) {
    mempool_ascend::finalize().unwrap();
    let mut left = u64::MAX;
    // SAFETY: a valid out-pointer.
    let rc = unsafe { lib.get::<FinalizeReference>("aclFinalizeReference")(&mut left) };
    assert_eq!((rc, left), (0, 0), "the host's reference was still there, and was the last");
    // SAFETY: no arguments.
    let rc = unsafe { lib.get::<NoArgs>("aclFinalize")() };
    assert_eq!(rc, mempool_ascend::sys::ACL_ERROR_REPEAT_FINALIZE, "finalized once, by the host");
}
