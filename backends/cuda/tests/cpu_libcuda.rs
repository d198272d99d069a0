//! What a pluggable allocator needs of the backend, over the project's CPU libcuda (the
//! `mempool-cuda-shim` dev-dependency's cdylib, `libcuda.so` next to this test binary):
//!
//! - streams other code created (a framework's), and the driver's default streams, are
//!   borrowed ([`Cuda::borrow_stream`]), work in every call and are never destroyed by the
//!   backend;
//! - a copy of the driver the process loaded before the backend is the one the default
//!   search takes;
//! - the library's own message of a failed call (a stream-order violation its checker
//!   refused, a setting `cuInit` could not parse) reaches the backend's error.
//!
//! The library reads its settings once per process, at `cuInit`, and the loaded-copy test
//! needs a process where nothing else loaded it: each test runs in a child process of this
//! binary, with `MEMPOOL_EMU_CHECKER=on`, a 1 GiB device and no other `MEMPOOL_EMU_*`
//! setting, and without `MEMPOOL_CUDA_LIBRARY`.

use mempool_cuda::sys::{self, CUresult, CUstream};
use mempool_cuda::{Cuda, CudaStream, LoadOptions};
use mempool_hal::{Device, DevicePtr, ErrorKind, HostBuffer, MemPool, PoolProps, StreamStatus, Vendor};
use std::ffi::c_uint;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Set in a child: the name of the test it runs.
const CHILD: &str = "MEMPOOL_TEST_CPU_LIBCUDA_CHILD";
const MIB: u64 = 1 << 20;

/// The CPU libcuda cargo built next to this test binary (in `target/<profile>/deps`).
fn cpu_libcuda() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let lib = exe.parent().expect("test binaries live in target/<profile>/deps").join("libcuda.so");
    assert!(lib.exists(), "{} is missing: the mempool-cuda-shim dev-dependency's cdylib was not built", lib.display());
    lib
}

/// `true` in the child, which runs the test's body. In the parent, runs the test `name` in
/// a child process of this binary, with `env` on top of the settings of the module docs,
/// and checks that it passed; `false`.
fn in_child(name: &str, env: &[(&str, &str)]) -> bool {
    if std::env::var_os(CHILD).is_some() {
        return true;
    }
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary"));
    cmd.args([name, "--exact", "--nocapture", "--test-threads", "1"]);
    for (var, _) in std::env::vars_os() {
        if var.to_string_lossy().starts_with("MEMPOOL_EMU_") {
            cmd.env_remove(var);
        }
    }
    let out = cmd
        .env_remove(mempool_cuda::ENV_LIBRARY)
        .env("MEMPOOL_EMU_DEVICE_MEMORY", "1G")
        .env("MEMPOOL_EMU_CHECKER", "on")
        .envs(env.iter().copied())
        .env(CHILD, name)
        .output()
        .expect("the child runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("1 passed"), "{name}: the child failed ({})\n{text}", out.status);
    false
}

type StreamCreate = unsafe extern "C" fn(*mut CUstream, c_uint) -> CUresult;
type StreamDestroy = unsafe extern "C" fn(CUstream) -> CUresult;

/// The library's own C functions, called as a framework around the backend would.
struct Driver(libloading::Library);

impl Driver {
    /// Opens `path` again (the backend loaded it: the same copy).
    fn of(path: &Path) -> Driver {
        // SAFETY: the library is loaded already; opening it again runs no initializer.
        Driver(unsafe { libloading::Library::new(path) }.expect("the library opens"))
    }

    fn get<T: Copy>(&self, name: &str) -> T {
        // SAFETY: each caller names a driver function with the type `T` of its C prototype.
        unsafe { *self.0.get::<T>(name.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}")) }
    }

    /// A non-blocking stream made by `cuStreamCreate` in the current context.
    fn create_stream(&self) -> CUstream {
        let mut s: CUstream = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the caller has made a context current.
        let rc = unsafe { self.get::<StreamCreate>("cuStreamCreate")(&mut s, sys::CU_STREAM_NON_BLOCKING) };
        assert_eq!(rc, sys::CUDA_SUCCESS, "cuStreamCreate");
        s
    }

    /// `cuStreamDestroy_v2`'s answer.
    fn destroy_stream(&self, s: CUstream) -> CUresult {
        // SAFETY: the caller passes a stream it created and uses no more.
        unsafe { self.get::<StreamDestroy>("cuStreamDestroy_v2")(s) }
    }
}

/// Allocates, writes, reads back, orders another stream after it with an event, and frees
/// on `s`: every kind of call a pluggable allocator and its framework make on a stream.
fn round_trip(dev: &Cuda, s: &CudaStream) {
    let pool = dev.create_pool(&PoolProps::builder().device(0).max_size(64 * MIB).build()).unwrap();
    let p = pool.malloc_async(MIB, s).unwrap();
    dev.memset_async(p, 0x5a, MIB, s).unwrap();
    dev.memcpy_h2d_async(p, b"borrowed", s).unwrap();
    let back = HostBuffer::new(16);
    dev.memcpy_d2h_async(&back, p, s).unwrap();
    let q = pool.malloc_async(MIB, s).unwrap();
    dev.memcpy_d2d_async(q, p, MIB, s).unwrap();
    let done = dev.create_event().unwrap();
    dev.record_event(&done, s).unwrap();
    let other = dev.create_stream().unwrap();
    dev.stream_wait_event(&other, &done).unwrap();
    dev.stream_wait_event(s, &done).unwrap();
    // SAFETY: live allocations of `pool`, used only on `s` before these frees.
    unsafe {
        pool.free_async(p, s).unwrap();
        pool.free_async(q, s).unwrap();
    }
    dev.synchronize_stream(s).unwrap();
    assert_eq!(dev.query_stream(s).unwrap(), StreamStatus::Complete);
    dev.synchronize_event(&done).unwrap();
    assert_eq!(&back.to_vec()[..], b"borrowed\x5a\x5a\x5a\x5a\x5a\x5a\x5a\x5a");
    dev.synchronize_stream(&other).unwrap();
    dev.destroy_stream(&other).unwrap();
    dev.destroy_event(&done).unwrap();
    dev.destroy_pool(&pool).unwrap();
}

/// Destroying a borrowed stream through the backend is refused, and the stream still works.
fn refused_and_still_usable(dev: &Cuda, s: &CudaStream) {
    let err = dev.destroy_stream(s).unwrap_err();
    assert_eq!((err.kind(), err.code(), err.vendor()), (ErrorKind::InvalidHandle, 400, Vendor::Cuda), "{err}");
    assert_eq!(err.op(), "cuStreamDestroy_v2");
    assert!(err.message().starts_with("a borrowed stream is not destroyed by the backend"), "{err}");
    let pool = dev.create_pool(&PoolProps::builder().device(0).max_size(8 * MIB).build()).unwrap();
    let p = pool.malloc_async(4096, s).unwrap();
    // SAFETY: a live allocation of `pool` that nothing used.
    unsafe { pool.free_async(p, s) }.unwrap();
    dev.synchronize_stream(s).unwrap();
    dev.destroy_pool(&pool).unwrap();
}

#[test]
fn a_stream_other_code_created_is_borrowed_used_and_never_destroyed() {
    if !in_child("a_stream_other_code_created_is_borrowed_used_and_never_destroyed", &[]) {
        return;
    }
    let lib = cpu_libcuda();
    let dev = Cuda::open_with(&LoadOptions::only(&lib), 0).unwrap();
    // The framework's stream: the driver's own call, in the context `open` made current.
    let driver = Driver::of(&lib);
    let raw = driver.create_stream();
    // SAFETY: a live stream of the library the device loaded, destroyed below only after
    // its last use.
    let s = unsafe { dev.borrow_stream(raw) }.unwrap();
    assert!(s.is_borrowed() && !dev.create_stream().unwrap().is_borrowed());
    assert_eq!(s.as_raw(), raw);
    round_trip(&dev, &s);
    refused_and_still_usable(&dev, &s);
    // Each borrow is a handle of its own, naming the same stream.
    // SAFETY: as above.
    let again = unsafe { dev.borrow_stream(raw) }.unwrap();
    assert!(again != s && again.as_raw() == s.as_raw());
    let e = dev.create_event().unwrap();
    dev.record_event(&e, &again).unwrap();
    dev.synchronize_event(&e).unwrap();
    // Its owner destroys it: the backend had not.
    assert_eq!(driver.destroy_stream(raw), sys::CUDA_SUCCESS);
}

#[test]
fn the_drivers_default_streams_are_borrowed_too() {
    if !in_child("the_drivers_default_streams_are_borrowed_too", &[]) {
        return;
    }
    let dev = Cuda::open_with(&LoadOptions::only(cpu_libcuda()), 0).unwrap();
    for (what, raw) in [
        ("NULL", std::ptr::null_mut()),
        ("CU_STREAM_LEGACY", sys::CU_STREAM_LEGACY),
        ("CU_STREAM_PER_THREAD", sys::CU_STREAM_PER_THREAD),
    ] {
        // SAFETY: the driver's default streams live as long as the context.
        let s = unsafe { dev.borrow_stream(raw) }.unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(s.is_borrowed() && s.as_raw() == raw, "{what}");
        round_trip(&dev, &s);
        refused_and_still_usable(&dev, &s);
    }
}

#[test]
fn a_copy_of_the_driver_the_process_loaded_first_is_the_one_found() {
    if !in_child("a_copy_of_the_driver_the_process_loaded_first_is_the_one_found", &[]) {
        return;
    }
    // A framework loaded its driver from a folder no step of the search looks in (and no
    // MEMPOOL_CUDA_LIBRARY is set): a copy of the CPU libcuda, a library of its own.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cpu-libcuda-loaded-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("libcuda.so.1");
    std::fs::copy(cpu_libcuda(), &copy).unwrap();
    let framework = Driver::of(&copy);
    let places = LoadOptions { loaded: false, ..LoadOptions::default() }.candidates();
    assert!(!places.contains(&copy), "the search proper does not look there: {places:?}");
    assert_eq!(LoadOptions::default().candidates().first(), Some(&copy), "the loaded copy comes first");
    assert!(!LoadOptions::only(cpu_libcuda()).candidates().contains(&copy), "`only` takes no loaded copy");

    let rt = mempool_cuda::load(&LoadOptions::default()).unwrap();
    assert_eq!(rt.path(), copy);
    // The same library by another path (a link to it) is the runtime already loaded, not
    // a second one initialized again.
    let link = dir.join("link");
    std::fs::create_dir_all(&link).unwrap();
    std::os::unix::fs::symlink(&copy, link.join("libcuda.so.1")).unwrap();
    let again = mempool_cuda::load(&LoadOptions::only(&link)).unwrap();
    assert!(std::sync::Arc::ptr_eq(&rt, &again), "{} is {}", link.display(), again.path().display());
    // The backend's objects and the framework's live in that one copy: a stream the
    // framework made there is borrowed and works.
    let dev = Cuda::open(0).unwrap();
    assert_eq!(dev.runtime().path(), copy);
    let raw = framework.create_stream();
    // SAFETY: a live stream of the copy the device loaded, destroyed after its last use.
    let s = unsafe { dev.borrow_stream(raw) }.unwrap();
    round_trip(&dev, &s);
    assert_eq!(framework.destroy_stream(raw), sys::CUDA_SUCCESS);
    drop(dev);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_stream_order_violation_reads_with_the_librarys_description() {
    if !in_child("a_stream_order_violation_reads_with_the_librarys_description", &[]) {
        return;
    }
    let dev = Cuda::open_with(&LoadOptions::only(cpu_libcuda()), 0).unwrap();
    let (a, b) = (dev.create_stream().unwrap(), dev.create_stream().unwrap());
    let pool = dev.create_pool(&PoolProps::builder().device(0).max_size(64 * MIB).build()).unwrap();
    let p = pool.malloc_async(MIB, &a).unwrap();
    // `b` is ordered after the allocation, and writes the block...
    let allocated = dev.create_event().unwrap();
    dev.record_event(&allocated, &a).unwrap();
    dev.stream_wait_event(&b, &allocated).unwrap();
    dev.memset_async(p, 0, MIB, &b).unwrap();
    // ... but `a` frees it without waiting for that write.
    // SAFETY: deliberately wrong stream order, which the library's checker refuses before
    // anything runs (the block stays allocated).
    let err = unsafe { pool.free_async(p, &a) }.unwrap_err();
    assert_eq!((err.code(), err.vendor(), err.op()), (1, Vendor::Cuda, "cuMemFreeAsync"), "{err}");
    let m = err.message();
    assert!(m.starts_with("CUDA_ERROR_INVALID_VALUE: "), "the driver's name of the code first: {m}");
    assert!(m.contains("; the library says: free_async on stream "), "{m}");
    assert!(m.contains("races with memset_async on stream"), "{m}");
    assert!(m.contains("not ordered before the free"), "{m}");
    assert!(m.contains("(stream-order violation)"), "{m}");
    // Ordered, the same free is taken; a failure that is no library message's has none.
    let written = dev.create_event().unwrap();
    dev.record_event(&written, &b).unwrap();
    dev.stream_wait_event(&a, &written).unwrap();
    // SAFETY: the block's every use is now ordered before the free.
    unsafe { pool.free_async(p, &a) }.unwrap();
    dev.synchronize_stream(&a).unwrap();
    let stale = pool.malloc_async(0, &a).unwrap_err();
    assert!(!stale.message().contains("the library says"), "the backend refused it itself: {stale}");
    let unknown = DevicePtr::from_addr(0x10);
    // SAFETY: an address no allocation has; the library refuses it without touching it.
    let bad = unsafe { pool.free_async(unknown, &a) }.unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::InvalidPointer, "{bad}");
    assert!(bad.message().contains("; the library says: "), "{bad}");
    assert!(bad.message().contains("0x10 is not an address of any pool"), "{bad}");
    assert!(!bad.message().contains("races with"), "the message is this failure's, not the last one's: {bad}");
    dev.destroy_pool(&pool).unwrap();
}

#[test]
fn a_cu_init_failure_reads_with_the_setting_the_library_names() {
    if !in_child("a_cu_init_failure_reads_with_the_setting_the_library_names", &[("MEMPOOL_EMU_DEVICES", "banana")]) {
        return;
    }
    let err = mempool_cuda::load(&LoadOptions::only(cpu_libcuda())).unwrap_err();
    assert_eq!((err.kind(), err.code()), (ErrorKind::Unavailable, 999), "{err}");
    assert!(err.message().contains("cuInit failed with 999 (CUDA_ERROR_UNKNOWN: "), "{err}");
    assert!(err.message().contains("; the library says: "), "{err}");
    assert!(err.message().contains("MEMPOOL_EMU_DEVICES"), "the library names the setting: {err}");
}
