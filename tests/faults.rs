//! Fault injection at the boundaries of the emulator and of the drop-in library:
//!
//! - a kernel (a host function that declares the device memory it touches) that panics
//!   is reported by the next synchronization of its stream, and the stream and its pool
//!   keep working;
//! - a host function that does not return: every synchronization that waits for it gives
//!   up after the emulator's wait time-out, reporting it, while the pool and the other
//!   streams keep working; the stream catches up once the function returns (with each
//!   stream running its host functions, and with all on the device's one thread, as the
//!   drop-in library runs them);
//! - the drop-in library loaded twice in one process under two names (`libacl_rt.so` and
//!   `libascendcl.so`, separate copies of the file): two independent instances, each
//!   answering correctly with its own state.
//!
//! The library's own fault tests (a blocked host function through the C ABI, a process
//! exiting with work queued) are in `backends/acl-shim/tests/faults.rs`.

use mempool_emu::{Emulator, KernelAccess};
use mempool_hal::{Device, ErrorKind, HostBuffer, MemPool, MemPoolExt, PoolProps};
use rstest::rstest;
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const G: u64 = 64 << 10;

#[test]
fn a_panicking_kernel_is_reported_at_the_next_sync_and_the_stream_and_pool_go_on() {
    let emu = Emulator::builder().granularity(G).device_memory(64 * G).build().unwrap();
    let s = emu.create_stream().unwrap();
    let pool = emu.create_pool(&PoolProps::builder().max_size(16 * G).build()).unwrap();
    let x = pool.malloc_async(64, &s).unwrap();
    emu.launch_kernel(&s, &[KernelAccess::Write(x, 64)], |_| panic!("kernel exploded")).unwrap();
    let err = emu.synchronize_stream(&s).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AsyncFailure, "{err}");
    assert!(err.message().contains("kernel exploded"), "{err}");
    // Reported once; the stream and the pool work on.
    emu.launch_kernel(&s, &[KernelAccess::Write(x, 64)], move |mem| mem.write(x, &[7; 64])).unwrap();
    let out = HostBuffer::new(64);
    emu.memcpy_d2h_async(&out, x, &s).unwrap();
    pool.free(x, &s).unwrap();
    let y = pool.malloc_async(64, &s).unwrap();
    pool.free(y, &s).unwrap();
    emu.synchronize_stream(&s).unwrap();
    assert_eq!(out.to_vec(), vec![7; 64]);
    assert_eq!(pool.stats().unwrap().used_current, 0);
    emu.destroy_pool(&pool).unwrap();
}

/// The host function never returns within the wait time-out; `one_thread`: the device's
/// host functions run on one thread (as in the drop-in library) or each on its stream's
/// worker.
#[rstest]
#[case::own_worker(false)]
#[case::one_thread_per_device(true)]
fn a_blocked_host_function_is_bounded_by_the_wait_timeout(#[case] one_thread: bool) {
    let timeout = Duration::from_millis(200);
    let emu = Emulator::builder()
        .granularity(G)
        .device_memory(64 * G)
        .wait_timeout(timeout)
        .host_functions_on_one_thread(one_thread)
        .build()
        .unwrap();
    let (s, other) = (emu.create_stream().unwrap(), emu.create_stream().unwrap());
    let pool = emu.create_pool(&PoolProps::builder().max_size(16 * G).build()).unwrap();
    let x = pool.malloc_async(64, &s).unwrap();
    let gate = Arc::new(AtomicBool::new(false));
    let g = Arc::clone(&gate);
    emu.launch_host_func(
        &s,
        Box::new(move || {
            while !g.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(1));
            }
        }),
    )
    .unwrap();
    emu.memset_async(x, 3, 64, &s).unwrap();

    // Every wait for it gives up after the time-out, and says why.
    for (what, waited) in [
        ("synchronize_stream", {
            let t = Instant::now();
            let e = emu.synchronize_stream(&s).unwrap_err();
            assert!(e.message().contains("did not reach"), "{e}");
            t.elapsed()
        }),
        ("synchronize_device", {
            let t = Instant::now();
            let e = emu.synchronize_device().unwrap_err();
            assert!(e.message().contains("did not reach"), "{e}");
            t.elapsed()
        }),
    ] {
        assert!(waited >= timeout && waited < Duration::from_secs(20), "{what} gave up after {waited:?}");
    }

    // The pool and the other stream keep working meanwhile.
    let y = pool.malloc_async(64, &other).unwrap();
    emu.memset_async(y, 9, 64, &other).unwrap();
    let out = HostBuffer::new(64);
    emu.memcpy_d2h_async(&out, y, &other).unwrap();
    pool.free(y, &other).unwrap();
    emu.synchronize_stream(&other).unwrap();
    assert_eq!(out.to_vec(), vec![9; 64]);

    // Once it returns, the stream catches up and goes on.
    gate.store(true, Ordering::Release);
    emu.memcpy_d2h_async(&out, x, &s).unwrap();
    pool.free(x, &s).unwrap();
    emu.synchronize_stream(&s).unwrap();
    assert_eq!(out.to_vec(), vec![3; 64]);
    emu.launch_host_func(&s, Box::new(|| {})).unwrap();
    emu.synchronize_device().unwrap();
    assert_eq!(pool.stats().unwrap().used_current, 0);
    emu.destroy_pool(&pool).unwrap();
}

type SetDevice = unsafe extern "C" fn(i32) -> i32;
type Malloc = unsafe extern "C" fn(*mut *mut c_void, usize, i32) -> i32;
type Free = unsafe extern "C" fn(*mut c_void) -> i32;
type MemInfo = unsafe extern "C" fn(i32, *mut usize, *mut usize) -> i32;
type PoolCreate = unsafe extern "C" fn(*mut *mut c_void, *const mempool_ascend::sys::aclrtMemPoolProps) -> i32;
type PoolGetAttr = unsafe extern "C" fn(*mut c_void, i32, *mut c_void) -> i32;
type PoolDestroy = unsafe extern "C" fn(*mut c_void) -> i32;

/// One loaded copy of the drop-in library.
struct Instance(&'static libloading::Library);

impl Instance {
    fn load(path: &std::path::Path) -> Instance {
        // SAFETY: the drop-in library; loading it runs no initializer with preconditions.
        let lib = unsafe { libloading::Library::new(path) }.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // Never unloaded: a Rust library with thread-local destructors must stay mapped.
        Instance(Box::leak(Box::new(lib)))
    }

    fn get<T: Copy>(&self, name: &str) -> T {
        // SAFETY: the caller names the type of the export (contract §8 signatures).
        unsafe { *self.0.get::<T>(name.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}")) }
    }

    /// USED of the current device (total - free).
    fn used(&self) -> usize {
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out-pointers.
        assert_eq!(unsafe { self.get::<MemInfo>("aclrtGetMemInfo")(0, &mut free, &mut total) }, 0);
        total - free
    }
}

#[test]
fn the_library_loaded_twice_under_two_names_runs_two_independent_instances() {
    let dir = std::env::temp_dir().join(format!("mempool-shim-twice-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lib = mempool_tests::shim_library();
    // Copies, not links: the dynamic loader maps one file once, whatever its names.
    let (a_path, b_path) = (dir.join("libacl_rt.so"), dir.join("libascendcl.so"));
    std::fs::copy(&lib, &a_path).unwrap();
    std::fs::copy(&lib, &b_path).unwrap();
    let (a, b) = (Instance::load(&a_path), Instance::load(&b_path));
    assert_ne!(
        a.get::<SetDevice>("aclrtSetDevice") as usize,
        b.get::<SetDevice>("aclrtSetDevice") as usize,
        "two mappings"
    );

    // SAFETY: the exports' own signatures; valid out-pointers and props; handles and
    // addresses the same instance returned, or the other's, which it only looks up.
    unsafe {
        assert_eq!(a.get::<SetDevice>("aclrtSetDevice")(0), 0);
        // The current device is per instance: B has none on this thread yet.
        let mut p: *mut c_void = std::ptr::null_mut();
        assert_eq!(b.get::<Malloc>("aclrtMalloc")(&mut p, 100, 0), 107_002, "B has no current device");
        assert!(p.is_null());
        assert_eq!(b.get::<SetDevice>("aclrtSetDevice")(0), 0);

        let (a0, b0) = (a.used(), b.used());
        assert_eq!(a.get::<Malloc>("aclrtMalloc")(&mut p, 100, 0), 0);
        assert!(a.used() > a0, "A's device holds the allocation");
        assert_eq!(b.used(), b0, "B's device does not");
        assert_eq!(b.get::<Free>("aclrtFree")(p), 107_000, "B never allocated it");

        let props = mempool_ascend::sys::aclrtMemPoolProps {
            allocType: 0,
            handleType: 0,
            location: mempool_ascend::sys::aclrtMemLocation { id: 0, type_: 1 },
            maxSize: 64 << 20,
            reserved: [0; 32],
        };
        let mut pool: *mut c_void = std::ptr::null_mut();
        assert_eq!(a.get::<PoolCreate>("aclrtMemPoolCreate")(&mut pool, &props), 0);
        let mut v = 0u64;
        assert_eq!(a.get::<PoolGetAttr>("aclrtMemPoolGetAttr")(pool, 5, (&raw mut v).cast()), 0);
        assert_ne!(
            b.get::<PoolGetAttr>("aclrtMemPoolGetAttr")(pool, 5, (&raw mut v).cast()),
            0,
            "A's pool handle means nothing to B"
        );
        assert_eq!(a.get::<PoolDestroy>("aclrtMemPoolDestroy")(pool), 0);
        assert_eq!(a.get::<Free>("aclrtFree")(p), 0);
        assert_eq!(a.used(), a0, "aclrtFree gave A's memory back");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
