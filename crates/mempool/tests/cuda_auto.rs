//! `mempool::auto` with the `cuda` feature: which backend it takes among an NVIDIA driver,
//! an Ascend runtime, the project's CPU libcuda and the emulator, and what it says about
//! it. The NVIDIA driver and the Ascend runtime are tiny C stand-ins compiled here (`cc`);
//! the CPU libcuda is the real one, the cdylib of the `mempool-cuda-shim`
//! dev-dependency, and a stand-in that exports its marker symbol.
//! (Features `cuda`, `ascend` and `emu`; `cargo xtask features` runs it with all features.)

#![cfg(all(feature = "cuda", feature = "ascend", feature = "emu"))]

use mempool::backend::{AscendLoadOptions, CudaLoadOptions};
use mempool::prelude::*;
use mempool::{Auto, AutoOptions, ErrorKind, auto_from};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A stand-in for NVIDIA's driver: the calls `Cuda::open`, `mem_info` and the end of an
/// instance make. `POOLS` is the answer for CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED;
/// `MARKER` adds the symbol by which the project's CPU libcuda is known.
const FAKE_DRIVER: &str = r#"
#include <stddef.h>
#ifndef POOLS
#define POOLS 1
#endif
static int primary;
static void *current;
int cuInit(unsigned flags) { return flags ? 1 : 0; }
int cuDriverGetVersion(int *v) { *v = 12080; return 0; }
int cuDeviceGet(int *d, int ordinal) { if (ordinal != 0) return 101; *d = 0; return 0; }
int cuDeviceGetAttribute(int *v, int attr, int d) { (void)d; *v = attr == 115 ? POOLS : 0; return 0; }
int cuDevicePrimaryCtxRetain(void **ctx, int d) { (void)d; *ctx = &primary; return 0; }
int cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return 0; }
int cuCtxSetCurrent(void *ctx) { current = ctx; return 0; }
int cuCtxGetCurrent(void **ctx) { *ctx = current; return 0; }
int cuCtxSynchronize(void) { return 0; }
int cuMemGetInfo_v2(size_t *free_, size_t *total) { *free_ = 1ull << 30; *total = 1ull << 30; return 0; }
#ifdef MARKER
const char *mempool_cuda_shim_version(void) { return "mempool-emu-stand-in"; }
#endif
"#;

/// A stand-in for an Ascend runtime: the calls `Ascend::open` and `mem_info` make.
const FAKE_ASCEND: &str = r#"
#include <stddef.h>
static int context;
int aclInit(const char *config) { (void)config; return 0; }
int aclrtCreateContext(void **ctx, int d) { if (d != 0) return 107001; *ctx = &context; return 0; }
int aclrtDestroyContext(void *ctx) { (void)ctx; return 0; }
int aclrtSetCurrentContext(void *ctx) { (void)ctx; return 0; }
int aclrtGetMemInfo(int attr, size_t *free_, size_t *total) { (void)attr; *free_ = 2ull << 30; *total = 2ull << 30; return 0; }
const char *aclGetRecentErrMsg(void) { return ""; }
"#;

/// A fresh folder for one test.
fn temp_dir(tag: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mempool-auto-{}", std::process::id()))
        .join(format!("{tag}-{n}"));
    std::fs::create_dir_all(&d).expect("a scratch folder");
    d
}

/// Compiles `src` into the shared library `out` with the system C compiler (`$CC`, else
/// `cc`), with `-D` for each of `defines`.
fn compile(src: &str, out: &Path, defines: &[&str]) {
    let c = out.with_extension("c");
    std::fs::write(&c, src).expect("the C source is written");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let mut cmd = Command::new(&cc);
    cmd.args(["-shared", "-fPIC", "-o"]).arg(out).arg(&c);
    cmd.args(defines.iter().map(|d| format!("-D{d}")));
    let st = cmd.output().unwrap_or_else(|e| panic!("cannot run the C compiler {cc}: {e}"));
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
}

/// A stand-in driver built with `defines`, as `libcuda.so.1` in a folder of its own (its
/// own library for the dynamic loader); the file's path.
fn fake_driver(defines: &[&str]) -> PathBuf {
    let out = temp_dir("driver").join("libcuda.so.1");
    compile(FAKE_DRIVER, &out, defines);
    out
}

/// A stand-in Ascend runtime in `<dir>/lib64/libacl_rt.so`; the `lib64` folder.
fn fake_ascend() -> PathBuf {
    let lib64 = temp_dir("ascend").join("lib64");
    std::fs::create_dir_all(&lib64).unwrap();
    compile(FAKE_ASCEND, &lib64.join("libacl_rt.so"), &[]);
    lib64
}

/// The project's CPU libcuda that cargo built next to this test binary.
fn cpu_libcuda() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let lib = exe.parent().expect("test binaries live in target/<profile>/deps").join("libcuda.so");
    assert!(lib.exists(), "{} is missing: the CUDA shim crate's cdylib was not built", lib.display());
    lib
}

/// A path where nothing is.
fn nowhere(tag: &str) -> PathBuf {
    temp_dir(tag).join("nothing-here")
}

fn options(cuda: &Path, ascend: &Path) -> AutoOptions {
    AutoOptions { cuda: CudaLoadOptions::only(cuda), ascend: AscendLoadOptions::only(ascend) }
}

fn total_memory(chosen: Auto) -> u64 {
    mempool::with_auto_device!(chosen, |dev| dev.mem_info()).expect("mem_info").total
}

#[test]
fn an_nvidia_device_is_preferred_over_an_ascend_runtime() {
    let driver = fake_driver(&[]);
    let chosen = auto_from(&options(&driver, &fake_ascend()), 0).unwrap();
    assert!(matches!(chosen, Auto::Cuda(_, None)), "{chosen}");
    assert!(chosen.is_nvidia() && !chosen.is_ascend());
    assert_eq!(chosen.to_string(), format!("NVIDIA device 0 through the CUDA driver at {}", driver.display()));
    assert_eq!(total_memory(chosen), 1 << 30);
}

#[test]
fn the_cpu_libcuda_is_not_preferred_over_an_ascend_runtime() {
    let chosen = auto_from(&options(&fake_driver(&["MARKER"]), &fake_ascend()), 0).unwrap();
    assert!(chosen.is_ascend(), "{chosen}");
    assert!(chosen.to_string().starts_with("Ascend runtime at "), "{chosen}");
    assert_eq!(total_memory(chosen), 2 << 30);
}

#[test]
fn without_hardware_the_real_cpu_libcuda_is_taken_and_named_as_such() {
    let lib = cpu_libcuda();
    let missing = nowhere("no-ascend");
    let chosen = auto_from(&options(&lib, &missing), 0).unwrap();
    assert!(!chosen.is_nvidia() && !chosen.is_ascend(), "{chosen}");
    let shown = chosen.to_string();
    assert!(shown.starts_with("CPU libcuda, the emulator behind CUDA's calls (no NVIDIA device: "), "{shown}");
    assert!(shown.contains("is the project's CPU libcuda (it exports `mempool_cuda_shim_version`)"), "{shown}");
    assert!(shown.contains("; no Ascend runtime: "), "{shown}");
    match &chosen {
        Auto::Cuda(dev, Some(why)) => {
            assert_eq!(dev.runtime().path(), lib);
            assert_eq!(why.kind(), ErrorKind::Unavailable);
            assert!(why.message().contains(&missing.display().to_string()), "{}", why.message());
        }
        other => panic!("expected the CPU libcuda, got {other}"),
    }
    assert!(total_memory(chosen) > 0);
}

#[test]
fn nothing_found_is_the_emulator_with_every_reason() {
    let (no_cuda, no_ascend) = (nowhere("no-cuda"), nowhere("no-ascend"));
    let chosen = auto_from(&options(&no_cuda, &no_ascend), 0).unwrap();
    assert!(!chosen.is_nvidia() && !chosen.is_ascend());
    let shown = chosen.to_string();
    assert!(shown.starts_with("CPU emulator (no NVIDIA device: no CUDA driver found"), "{shown}");
    assert!(shown.contains("; no Ascend runtime: no Ascend runtime found"), "{shown}");
    match &chosen {
        Auto::Emulator(_, why) => {
            assert_eq!(why.kind(), ErrorKind::Unavailable);
            for path in [&no_cuda, &no_ascend] {
                assert!(why.message().contains(&path.display().to_string()), "{}", why.message());
            }
        }
        other => panic!("expected the emulator, got {other}"),
    }
    assert!(total_memory(chosen) > 0);
}

#[test]
fn a_driver_without_pools_is_passed_over() {
    let driver = fake_driver(&["POOLS=0"]);
    let chosen = auto_from(&options(&driver, &fake_ascend()), 0).unwrap();
    assert!(chosen.is_ascend(), "{chosen}");
    let chosen = auto_from(&options(&driver, &nowhere("no-ascend")), 0).unwrap();
    let shown = chosen.to_string();
    assert!(shown.starts_with("CPU emulator (no NVIDIA device: device 0 does not support"), "{shown}");
}

#[test]
fn a_driver_that_refuses_the_device_is_an_error_not_a_fallback() {
    let err = auto_from(&options(&fake_driver(&[]), &fake_ascend()), 3).unwrap_err();
    assert_eq!((err.kind(), err.code(), err.vendor()), (ErrorKind::InvalidDevice, 101, mempool::hal::Vendor::Cuda));
}
