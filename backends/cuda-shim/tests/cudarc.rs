//! cudarc, the crate most Rust CUDA code sits on, unmodified on this library: its driver
//! API with `dynamic-loading` (it opens `libcuda.so` by name and resolves each function at
//! its first call) and the CUDA 13.0 bindings, as a dependency from crates.io.
//!
//! `main` lays the built library out as `libcuda.so` and `libcuda.so.1` in a folder of its
//! own and runs this binary again as a child process whose `LD_LIBRARY_PATH` names that
//! folder, on the `cuda` profile with the stream-order checker on. The child checks that
//! the library cudarc opened is this one (its `mempool_cuda_shim_version`), then runs
//! cudarc's context and device queries, the default and new streams, `alloc` and
//! `alloc_zeros`, host↔device and device↔device copies, `fork`/`join`, events with timing,
//! many allocations and drops in stream order on a new stream, stream priorities, and an
//! allocation larger than the device, which must be an `Err` and never a panic.

use cudarc::driver::{CudaContext, CudaSlice, sys};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

/// Set in the child process.
const CHILD: &str = "MEMPOOL_CUDARC_CHILD";

fn main() {
    if std::env::var_os(CHILD).is_some() {
        child();
        println!("cudarc: every path passed");
        return;
    }
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let lib = exe.parent().expect("test binaries live in target/<profile>/deps").join("libcuda.so");
    assert!(lib.exists(), "{} is missing: the crate's cdylib was not built", lib.display());
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cudarc-lib-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp folder");
    for name in ["libcuda.so", "libcuda.so.1"] {
        let link = dir.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&lib, &link).expect("a link to the library");
    }
    let out = Command::new(&exe)
        .env(CHILD, "1")
        .env("LD_LIBRARY_PATH", &dir)
        .env("MEMPOOL_EMU_PROFILE", "cuda")
        .env("MEMPOOL_EMU_CHECKER", "on")
        .env("MEMPOOL_EMU_DEVICE_MEMORY", (4u64 << 30).to_string())
        .output()
        .expect("the child process runs");
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("cudarc: every path passed"),
        "cudarc on the library failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    println!("cudarc on the CPU libcuda.so.1: every path passed");
}

/// The library cudarc opened is this one, not a driver of the machine.
fn the_library_is_ours() {
    // SAFETY: opening the library cudarc opened by the same name runs no new initializers
    // (it is loaded already); the marker takes nothing and returns a static string.
    unsafe {
        let lib = libloading::Library::new("libcuda.so").expect("libcuda.so opens");
        let version: libloading::Symbol<'_, unsafe extern "C" fn() -> *const std::ffi::c_char> =
            lib.get(b"mempool_cuda_shim_version\0").expect("the library is the CPU libcuda.so.1");
        let text = std::ffi::CStr::from_ptr(version()).to_string_lossy().into_owned();
        assert!(text.starts_with("mempool-emu-"), "{text}");
    }
}

fn child() {
    let ctx: Arc<CudaContext> = CudaContext::new(0).expect("a context on device 0");
    the_library_is_ours();
    assert!(ctx.has_async_alloc(), "memory pools are supported");
    assert!(ctx.name().unwrap().starts_with("mempool-emu"));
    let total = ctx.total_mem().unwrap();
    assert_eq!(total, 4 << 30);
    let uuid = ctx.uuid().unwrap();
    assert_eq!(&uuid.bytes[..11].iter().map(|&b| b as u8).collect::<Vec<_>>(), b"mempool-emu");
    assert_eq!(ctx.compute_capability().unwrap(), (9, 0));
    use sys::CUdevice_attribute::*;
    assert_eq!(ctx.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED).unwrap(), 1);
    assert_eq!(ctx.attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE).unwrap(), 32);
    let (free, tot) = ctx.mem_get_info().unwrap();
    assert!(free <= tot && tot == total);

    // The default stream: allocations, copies both ways, device to device.
    let s0 = ctx.default_stream();
    let z: CudaSlice<u32> = s0.alloc_zeros(1024).unwrap();
    assert_eq!(s0.clone_dtoh(&z).unwrap(), vec![0u32; 1024]);
    // SAFETY: written in full before it is read.
    let mut a: CudaSlice<u64> = unsafe { s0.alloc(256) }.unwrap();
    let src: Vec<u64> = (0..256).collect();
    s0.memcpy_htod(&src, &mut a).unwrap();
    let mut back = vec![0u64; 256];
    s0.memcpy_dtoh(&a, &mut back).unwrap();
    s0.synchronize().unwrap();
    assert_eq!(back, src);
    let ints: Vec<i32> = (0..4096).map(|i| i * 3 - 7).collect();
    let d = s0.clone_htod(&ints).unwrap();
    let e = s0.clone_dtod(&d).unwrap();
    let mut f: CudaSlice<i32> = s0.alloc_zeros(4096).unwrap();
    s0.memcpy_dtod(&e, &mut f).unwrap();
    let mut half = f.slice_mut(0..2048);
    s0.memcpy_dtod(&d.slice(2048..4096), &mut half).unwrap();
    let vf = s0.clone_dtoh(&f).unwrap();
    assert_eq!((&vf[..2048], &vf[2048..]), (&ints[2048..], &ints[2048..]));

    // A new stream, data across streams, fork and join.
    let s1 = ctx.new_stream().unwrap();
    let shorts: Vec<u16> = (0..500).collect();
    let g = s0.clone_htod(&shorts).unwrap();
    assert_eq!(s1.clone_dtoh(&g).unwrap(), shorts);
    let s2 = s1.fork().unwrap();
    let words: Vec<u32> = (0..10_000).map(|i| i ^ 0x5a5a).collect();
    let h = s2.clone_htod(&words).unwrap();
    let mut k: CudaSlice<u32> = s2.alloc_zeros(10_000).unwrap();
    s2.memcpy_dtod(&h, &mut k).unwrap();
    s1.join(&s2).unwrap();
    assert_eq!(s1.clone_dtoh(&k).unwrap(), words);
    drop((h, k));

    // Events with timing.
    let start = s1.record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)).unwrap();
    let bytes = vec![7u8; 4 << 20];
    let m = s1.clone_htod(&bytes).unwrap();
    assert_eq!(s1.clone_dtoh(&m).unwrap(), bytes);
    let end = s1.record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)).unwrap();
    assert!(start.elapsed_ms(&end).unwrap() >= 0.0);
    assert!(end.is_complete());

    // Many allocations and drops in stream order on a new stream; the memory comes back.
    let s3 = ctx.new_stream().unwrap();
    for i in 0..200usize {
        let a: CudaSlice<u8> = s3.alloc_zeros(1 << 20).unwrap();
        let b: CudaSlice<u32> = s3.alloc_zeros(1000 + i).unwrap();
        drop((a, b));
    }
    let kept: Vec<CudaSlice<u8>> = (0..64usize).map(|i| s3.clone_htod(&vec![i as u8; 4096 + i]).unwrap()).collect();
    for (i, x) in kept.iter().enumerate() {
        let v = s3.clone_dtoh(x).unwrap();
        assert!(v.len() == 4096 + i && v.iter().all(|&b| b == i as u8));
    }
    drop(kept);
    s3.synchronize().unwrap();
    ctx.check_err().unwrap();

    // Stream priorities: one, and a stream made with it.
    let (least, greatest) = cudarc::driver::result::stream::get_priority_range().unwrap();
    assert_eq!((least, greatest), (0, 0));
    let s4 = ctx.new_stream_with_priority(greatest).unwrap();
    assert_eq!(s4.clone_dtoh(&s4.clone_htod(&[1u8, 2, 3]).unwrap()).unwrap(), [1, 2, 3]);

    // Larger than the device: an error, not a panic.
    // SAFETY: never read (the allocation fails).
    let too_big = unsafe { s0.alloc::<u8>(total + (1 << 30)) };
    assert!(too_big.is_err(), "an allocation larger than the device succeeded");
    ctx.synchronize().unwrap();
    ctx.check_err().unwrap();
}
