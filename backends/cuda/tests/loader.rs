//! The loader of the CUDA backend: the search order, `Unavailable` listing every path
//! tried, link stubs, files that are not libraries, libraries that are not drivers, and
//! `NotSupported` naming the first missing symbol (never a panic).

mod common;

use common::{library_from, temp_dir};
use mempool_cuda::{Cuda, LoadOptions};
use mempool_hal::{ErrorKind, Vendor};
use std::ffi::OsString;
use std::path::PathBuf;

#[test]
fn the_search_order_is_explicit_then_environment_then_system_loader_then_driver_folders() {
    let env = |var: &str| -> Option<OsString> { (var == "MEMPOOL_CUDA_LIBRARY").then(|| "/env/libcuda.so.550".into()) };
    // Without the loaded copies, which the other tests of this binary change as they load
    // their drivers (`loaded_copy.rs` tests that step in a process of its own).
    let opts = LoadOptions { loaded: false, path: Some("/caller/dir".into()), ..LoadOptions::default() };
    let got: Vec<String> = opts.candidates_with(&env).iter().map(|p| p.display().to_string()).collect();
    let want = [
        "/caller/dir/libcuda.so.1",
        "/caller/dir/libcuda.so",
        "/env/libcuda.so.550",
        "libcuda.so.1",
        "libcuda.so",
        "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
        "/usr/lib/x86_64-linux-gnu/libcuda.so",
        "/usr/lib64/libcuda.so.1",
        "/usr/lib64/libcuda.so",
        "/usr/lib/wsl/lib/libcuda.so.1",
        "/usr/lib/wsl/lib/libcuda.so",
        "/usr/local/cuda/compat/libcuda.so.1",
        "/usr/local/cuda/compat/libcuda.so",
    ];
    assert_eq!(got, want);
    // The public list is the default options' candidates: the loaded copies first (any
    // copy of the driver this process holds now), then the places.
    let order = mempool_cuda::search_order();
    let places = LoadOptions { loaded: false, ..LoadOptions::default() }.candidates();
    assert!(order.ends_with(&places), "{order:?} does not end with {places:?}");
    for copy in &order[..order.len() - places.len()] {
        assert!(copy.is_absolute(), "{}", copy.display());
        assert!(copy.file_name().unwrap().to_string_lossy().starts_with("libcuda.so"), "{}", copy.display());
    }
    assert!(LoadOptions::default().loaded, "the loaded copies are searched by default");
    let quiet = LoadOptions { use_env: false, loaded: false, ..LoadOptions::default() };
    assert!(quiet.candidates_with(&env).iter().all(|p| !p.starts_with("/env")));
}

#[test]
fn a_path_that_does_not_exist_is_unavailable_listing_every_path_tried() {
    let missing = temp_dir("missing").join("nothing-here");
    // The driver folders too, unless this machine has a driver there.
    let driver_dirs = LoadOptions { loaded: false, use_env: false, system_loader: false, ..LoadOptions::default() }
        .candidates_with(&|_| None)
        .iter()
        .all(|p| !p.exists());
    let opts =
        LoadOptions { loaded: false, path: Some(missing.clone()), use_env: false, system_loader: false, driver_dirs };
    let err = Cuda::open_with(&opts, 0).unwrap_err();
    assert_eq!((err.kind(), err.vendor(), err.op()), (ErrorKind::Unavailable, Vendor::Cuda, "load"));
    assert!(err.message().starts_with("no CUDA driver found; tried:"), "{}", err.message());
    for p in opts.candidates_with(&|_| None) {
        assert!(err.message().contains(&p.display().to_string()), "{} missing from:\n{}", p.display(), err.message());
    }
    assert!(err.message().contains(&format!("{}: not found", missing.join("libcuda.so.1").display())));
}

#[test]
fn a_file_that_is_not_a_library_is_unavailable_with_the_loaders_reason() {
    let dir = temp_dir("text");
    let file = dir.join("libcuda.so.1");
    std::fs::write(&file, "this is not an ELF file\n").unwrap();
    let err = Cuda::open_with(&LoadOptions::only(&file), 0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    let line = err.message().lines().find(|l| l.contains(&file.display().to_string())).expect("the file is listed");
    assert!(!line.ends_with("not found"), "{line}");
    // The folder form tries both names: the second is missing.
    let err = Cuda::open_with(&LoadOptions::only(&dir), 0).unwrap_err();
    assert!(err.message().contains(&format!("{}: not found", dir.join("libcuda.so").display())), "{}", err.message());
}

#[test]
fn the_toolkits_stubs_folder_is_never_tried() {
    let stubs = temp_dir("toolkit").join("lib64").join("stubs");
    std::fs::create_dir_all(&stubs).unwrap();
    library_from(&stubs, "libcuda.so", "int cuInit(unsigned f) { (void)f; return 0; }\n");
    let err = Cuda::open_with(&LoadOptions::only(stubs.join("libcuda.so")), 0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    assert!(err.message().contains("skipped (the toolkit's link stubs)"), "{}", err.message());
}

#[test]
fn a_library_whose_cuinit_says_stub_is_no_driver() {
    let dir = temp_dir("stub");
    let lib = library_from(&dir, "libcuda.so.1", "int cuInit(unsigned f) { (void)f; return 34; }\n");
    let err = Cuda::open_with(&LoadOptions::only(&lib), 0).unwrap_err();
    assert_eq!((err.kind(), err.code()), (ErrorKind::Unavailable, 34));
    assert!(err.message().contains("a link stub (cuInit answered 34, CUDA_ERROR_STUB_LIBRARY)"), "{}", err.message());
}

#[test]
fn a_failing_cuinit_is_unavailable_with_its_code_and_name() {
    let dir = temp_dir("nodevice");
    let lib = library_from(&dir, "libcuda.so.1", "int cuInit(unsigned f) { (void)f; return 100; }\n");
    let err = Cuda::open_with(&LoadOptions::only(&lib), 0).unwrap_err();
    assert_eq!((err.kind(), err.code()), (ErrorKind::Unavailable, 100));
    // The library has no cuGetErrorName: the name comes from the crate's table.
    assert!(err.message().contains("cuInit failed with 100 (CUDA_ERROR_NO_DEVICE"), "{}", err.message());
}

#[test]
fn a_library_without_cuinit_is_not_a_driver() {
    // libc: a real shared library, without a single CUDA symbol.
    let err = Cuda::open_with(&LoadOptions::only(PathBuf::from("libc.so.6")), 0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    assert!(err.message().contains("loaded, but it has no cuInit (not a CUDA driver)"), "{}", err.message());
}

#[test]
fn a_library_with_only_cuinit_is_not_supported_naming_the_first_missing_symbol() {
    let dir = temp_dir("cuinit-only");
    library_from(&dir, "libcuda.so.1", "int cuInit(unsigned f) { (void)f; return 0; }\n");
    let err = Cuda::open_with(&LoadOptions::only(&dir), 0).unwrap_err();
    assert_eq!((err.kind(), err.code(), err.vendor()), (ErrorKind::NotSupported, 801, Vendor::Cuda));
    assert_eq!(err.op(), "cuDriverGetVersion");
    assert!(err.message().contains("has no symbol `cuDriverGetVersion`"), "{}", err.message());
    // Loading again finds the library loaded (cuInit is not called twice) and answers alike.
    let again = Cuda::open_with(&LoadOptions::only(&dir), 0).unwrap_err();
    assert_eq!(again, err);
}

#[test]
fn loading_once_per_library_whoever_asks() {
    let dir = temp_dir("once");
    let lib = library_from(
        &dir,
        "libcuda.so.1",
        "static int calls; int cuInit(unsigned f) { (void)f; calls++; return 0; }\nint init_calls(void) { return calls; }\n",
    );
    let opts = LoadOptions::only(&lib);
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let opts = opts.clone();
            std::thread::spawn(move || mempool_cuda::load(&opts).map(|rt| std::sync::Arc::as_ptr(&rt) as usize))
        })
        .collect();
    let ptrs: Vec<usize> = threads.into_iter().map(|t| t.join().unwrap().unwrap()).collect();
    assert!(ptrs.windows(2).all(|w| w[0] == w[1]), "every thread got the same driver: {ptrs:?}");
    // SAFETY: the library is loaded already; `init_calls` takes nothing and returns an int.
    let calls = unsafe {
        let l = libloading::Library::new(&lib).unwrap();
        let f = l.get::<unsafe extern "C" fn() -> std::ffi::c_int>(b"init_calls").unwrap();
        f()
    };
    assert_eq!(calls, 1);
}
