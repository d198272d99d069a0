//! The loader of the Ascend backend: search order, `Unavailable` listing every path
//! tried, link stubs, and `NotSupported` naming a missing symbol.
//!
//! The tests that load the drop-in library have one rstest case per profile of contract
//! §12 (`::case_1_documented`, `::case_2_cann_open`), each run in a child process of this
//! binary ([`mempool_tests::on_profile`]): the library reads `MEMPOOL_EMU_PROFILE` once
//! per process. So does the test of the first step of the search, a copy of the runtime
//! the process loaded already, which needs a process where nothing else loaded it. The
//! other tests load libraries of their own, in this process.

use mempool::prelude::*;
use mempool::{ErrorKind, PoolProps};
use mempool_ascend::{Ascend, LoadOptions};
use mempool_emu::Profile;
use rstest::rstest;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mempool-loader-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("a temp folder");
    d
}

/// Compiles `src` into `dir/lib64/<name>` with the system C compiler.
fn build_library(dir: &Path, name: &str, src: &str) -> PathBuf {
    let lib64 = dir.join("lib64");
    std::fs::create_dir_all(&lib64).unwrap();
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let out = lib64.join(name);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let st =
        Command::new(&cc).args(["-shared", "-fPIC", "-o"]).arg(&out).arg(&c).output().expect("the C compiler runs");
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    out
}

#[test]
fn search_order_follows_the_spec() {
    let env = |var: &str| -> Option<OsString> {
        match var {
            "MEMPOOL_ASCEND_LIBRARY" => Some("/explicit/env/libacl_rt.so".into()),
            "ASCEND_HOME_PATH" => Some("/home/cann".into()),
            "ASCEND_TOOLKIT_HOME" => Some("/toolkit".into()),
            _ => None,
        }
    };
    // Without the loaded copies, which other tests of this binary change as they load
    // their libraries (`a_runtime_the_process_loaded_first_is_the_one_found` tests them).
    let opts = LoadOptions { loaded: false, path: Some("/caller/dir".into()), ..LoadOptions::default() };
    let got: Vec<String> = opts.candidates_with(&env).iter().map(|p| p.display().to_string()).collect();
    let want = [
        "/caller/dir/libacl_rt.so",
        "/caller/dir/libascendcl.so",
        "/explicit/env/libacl_rt.so",
        "/home/cann/lib64/libacl_rt.so",
        "/home/cann/lib64/libascendcl.so",
        "/toolkit/lib64/libacl_rt.so",
        "/toolkit/lib64/libascendcl.so",
        "/usr/local/Ascend/cann/lib64/libacl_rt.so",
        "/usr/local/Ascend/cann/lib64/libascendcl.so",
        "/usr/local/Ascend/ascend-toolkit/latest/lib64/libacl_rt.so",
        "/usr/local/Ascend/ascend-toolkit/latest/lib64/libascendcl.so",
        "libacl_rt.so",
        "libascendcl.so",
    ];
    assert_eq!(got, want);
    assert!(LoadOptions::default().loaded && !LoadOptions::only("/x").loaded, "loaded copies: by default only");
}

#[test]
fn nothing_found_is_unavailable_listing_every_path() {
    let dir = temp_dir("empty");
    let opts = LoadOptions {
        loaded: false,
        path: Some(dir.clone()),
        use_env: false,
        standard_dirs: true,
        system_loader: false,
    };
    let err = Ascend::open_with(&opts, 0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    for p in opts.candidates_with(&|_| None) {
        assert!(err.message().contains(&p.display().to_string()), "{} missing from:\n{}", p.display(), err.message());
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn devlib_folders_are_never_tried() {
    let top = temp_dir("devlib");
    let err = Ascend::open_with(&LoadOptions::only(top.join("devlib")), 0).unwrap_err();
    let _ = std::fs::remove_dir_all(&top);
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    assert!(err.message().contains("skipped (devlib link stubs)"), "{}", err.message());
}

const STUB: &str = r#"
int aclInit(const char *config) { (void)config; return 100039; }
"#;

#[test]
fn a_link_stub_is_unavailable() {
    let dir = temp_dir("stub");
    let lib = build_library(&dir, "libacl_rt.so", STUB);
    let err = Ascend::open_with(&LoadOptions::only(&lib), 0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    assert!(err.message().contains("a link stub (aclInit answered 100039)"), "{}", err.message());
    let _ = std::fs::remove_dir_all(dir);
}

/// An "older runtime": the device calls, but none of the pool calls.
const NO_POOL: &str = r#"
#include <stddef.h>
static int ctx_token;
int aclInit(const char *config) { (void)config; return 0; }
int aclrtCreateContext(void **ctx, int d) { if (d != 0) return 107001; *ctx = &ctx_token; return 0; }
int aclrtDestroyContext(void *ctx) { (void)ctx; return 0; }
int aclrtSetCurrentContext(void *ctx) { (void)ctx; return 0; }
int aclrtGetMemInfo(int attr, size_t *free_, size_t *total) { (void)attr; *free_ = 1u << 30; *total = 1u << 30; return 0; }
const char *aclGetRecentErrMsg(void) { return ""; }
"#;

#[test]
fn a_runtime_without_pool_calls_is_not_supported_naming_the_symbol() {
    let dir = temp_dir("nopool");
    let lib = build_library(&dir, "libascendcl.so", NO_POOL);
    let dev = Ascend::open_with(&LoadOptions::only(dir.join("lib64")), 0).expect("the device calls exist");
    assert_eq!(dev.runtime().path(), lib);
    assert_eq!(dev.mem_info().unwrap().total, 1 << 30);
    let err = dev.create_pool(&PoolProps::default()).unwrap_err();
    assert_eq!((err.kind(), err.code()), (ErrorKind::NotSupported, 207_000));
    assert!(err.message().contains("aclrtMemPoolCreate"), "{}", err.message());
    let err = dev.create_stream().unwrap_err();
    assert!(err.message().contains("aclrtCreateStream"), "{}", err.message());
    // Nor the virtual-memory calls (contract §14).
    use mempool_hal::{Granularity, VirtualMemory};
    for (err, symbol) in [
        (dev.granularity(Granularity::Minimum).unwrap_err(), "aclrtMemGetAllocationGranularity"),
        (dev.reserve(2 << 20, 0, None).unwrap_err(), "aclrtReserveMemAddress"),
        (dev.create_physical(2 << 20).unwrap_err(), "aclrtMallocPhysical"),
    ] {
        assert_eq!((err.kind(), err.code(), err.op()), (ErrorKind::NotSupported, 207_000, symbol));
    }
    assert_eq!(Ascend::open_with(&LoadOptions::only(&lib), 1).unwrap_err().code(), 107_001);
    let _ = std::fs::remove_dir_all(dir);
}

#[rstest]
#[case::documented(Profile::Documented)]
#[case::cann_open(Profile::CannOpen)]
fn auto_chooses_the_runtime_when_found_and_the_emulator_otherwise(#[case] profile: Profile) {
    mempool_tests::on_profile(profile, |_| auto_chooses());
}

/// `auto_from` with only the Ascend search set.
// The update fills the CUDA search when the facade's `cuda` is on.
#[allow(clippy::needless_update)]
fn auto_ascend(ascend: LoadOptions, device: u32) -> mempool::Result<mempool::Auto> {
    mempool::auto_from(&mempool::AutoOptions { ascend, ..Default::default() }, device)
}

fn auto_chooses() {
    let home = mempool_tests::shim_home();
    let chosen = auto_ascend(LoadOptions::only(home.path().join("lib64")), 0).unwrap();
    assert!(chosen.is_ascend(), "{chosen}");
    assert!(chosen.to_string().starts_with("Ascend runtime at "), "{chosen}");
    let total = mempool::with_auto_device!(chosen, |dev| dev.mem_info()).unwrap().total;
    assert!(total > 0);

    let missing = std::env::temp_dir().join("mempool-no-runtime-here");
    let chosen = auto_ascend(LoadOptions::only(&missing), 0).unwrap();
    assert!(!chosen.is_ascend());
    assert!(chosen.to_string().starts_with("CPU emulator (no Ascend runtime"), "{chosen}");
    let mempool::Auto::Emulator(_, why) = &chosen else { panic!("not the emulator: {chosen}") };
    assert!(why.message().contains(&missing.display().to_string()));
    // A runtime that is found but refuses the device is an error, not a silent fallback.
    let err = auto_ascend(LoadOptions::only(home.path().join("lib64")), 7).unwrap_err();
    assert_eq!(err.code(), 107_001);
}

/// A host program (a framework) loaded the runtime from a folder no step of the search
/// looks in: the default search takes that copy first, so the streams it hands over and
/// the backend's objects belong to one runtime. In a child process, where nothing else
/// loaded the library.
#[test]
fn a_runtime_the_process_loaded_first_is_the_one_found() {
    mempool_tests::on_profile(Profile::Documented, |_| loaded_first());
}

fn loaded_first() {
    type CreateStream = unsafe extern "C" fn(*mut mempool_ascend::sys::aclrtStream) -> i32;
    let dir = temp_dir("loaded-copy");
    // The second of the names, to show either is recognized; a copy, a library of its own.
    let copy = dir.join("libascendcl.so");
    std::fs::copy(mempool_tests::shim_library(), &copy).unwrap();
    // SAFETY: the drop-in library's initializers are sound to run.
    let framework = unsafe { libloading::Library::new(&copy) }.unwrap();
    let places = LoadOptions { loaded: false, ..LoadOptions::default() }.candidates();
    assert!(!places.contains(&copy), "the search proper does not look there: {places:?}");
    assert_eq!(LoadOptions::default().candidates().first(), Some(&copy), "the loaded copy comes first");
    assert!(LoadOptions::only(mempool_tests::shim_library()).candidates().iter().all(|p| p != &copy));

    let rt = mempool_ascend::load(&LoadOptions::default()).unwrap();
    assert_eq!(rt.path(), copy);
    // The same library by another path (a link to it) is the runtime already loaded, not
    // a second one initialized again.
    let link = dir.join("link");
    std::fs::create_dir_all(&link).unwrap();
    std::os::unix::fs::symlink(&copy, link.join("libacl_rt.so")).unwrap();
    let again = mempool_ascend::load(&LoadOptions::only(&link)).unwrap();
    assert!(std::sync::Arc::ptr_eq(&rt, &again), "{} is {}", link.display(), again.path().display());
    let dev = Ascend::open(0).unwrap();
    assert_eq!(dev.runtime().path(), copy);
    // A stream the host made in that copy is one the backend can borrow and use.
    dev.synchronize_device().unwrap();
    let mut raw = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; the symbol has this C signature (contract §8).
    assert_eq!(unsafe { framework.get::<CreateStream>(b"aclrtCreateStream").unwrap()(&mut raw) }, 0);
    // SAFETY: a live stream of the copy the device loaded, used only while it lives.
    let s = unsafe { dev.borrow_stream(raw) }.unwrap();
    let pool = dev.create_pool(&PoolProps::builder().max_size(8 << 20).build()).unwrap();
    let p = pool.malloc_async(1, &s).unwrap();
    // SAFETY: a live allocation of `pool` that nothing used.
    unsafe { pool.free_async(p, &s) }.unwrap();
    dev.synchronize_stream(&s).unwrap();
    dev.destroy_pool(&pool).unwrap();
    drop(dev);
    let _ = std::fs::remove_dir_all(dir);
}

#[rstest]
#[case::documented(Profile::Documented)]
#[case::cann_open(Profile::CannOpen)]
fn loading_initializes_once_per_process_and_finalize_runs_once(#[case] profile: Profile) {
    mempool_tests::on_profile(profile, |_| loading_once());
}

fn loading_once() {
    let home = mempool_tests::shim_home();
    let opts = LoadOptions::only(home.path().join("lib64"));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let opts = opts.clone();
            std::thread::spawn(move || mempool_ascend::load(&opts).map(|rt| std::sync::Arc::as_ptr(&rt) as usize))
        })
        .collect();
    let ptrs: Vec<usize> = threads.into_iter().map(|t| t.join().unwrap().unwrap()).collect();
    assert!(ptrs.windows(2).all(|w| w[0] == w[1]), "every thread got the same runtime: {ptrs:?}");
    assert!(mempool_ascend::finalize().is_ok());
    assert!(mempool_ascend::finalize().is_ok(), "nothing left to finalize");
}

/// `as_raw` hands out the runtime's own handles: an allocation made through them with the
/// library's C function is the pool's, and the backend frees it. A second allocation on the
/// stream after that free gets the first one's address back on `documented` and fresh address
/// space on `cann-open`, and the synchronization releases both granules on `documented`
/// (threshold 0) and neither on `cann-open`.
#[rstest]
#[case::documented(Profile::Documented)]
#[case::cann_open(Profile::CannOpen)]
fn raw_handles_name_the_runtime_objects(#[case] profile: Profile) {
    mempool_tests::on_profile(profile, raw_handles);
}

fn raw_handles(profile: Profile) {
    type Malloc = unsafe extern "C" fn(
        *mut *mut std::ffi::c_void,
        usize,
        mempool_ascend::sys::aclrtMemPool,
        mempool_ascend::sys::aclrtStream,
    ) -> i32;
    let home = mempool_tests::shim_home();
    let dev = Ascend::open_with(&LoadOptions::only(home.path().join("lib64")), 0).unwrap();
    let stream = dev.create_stream().unwrap();
    let pool = dev.create_pool(&PoolProps::builder().max_size(64 << 20).build()).unwrap();
    assert!(!stream.as_raw().is_null() && !pool.as_raw().is_null());
    // SAFETY: the library the backend loaded; the signature is that of contract §8 (`mempool_hal::contract::c_abi`).
    let lib = unsafe { libloading::Library::new(home.path().join("lib64").join("libacl_rt.so")) }.unwrap();
    // SAFETY: as above.
    let malloc = unsafe { *lib.get::<Malloc>(b"aclrtMemPoolMallocAsync").unwrap() };
    let raw_malloc = || {
        let mut p = std::ptr::null_mut();
        // SAFETY: a valid out-pointer and the live handles of this pool and stream.
        assert_eq!(unsafe { malloc(&mut p, 1 << 20, pool.as_raw(), stream.as_raw()) }, 0);
        assert!(!p.is_null());
        p
    };
    let p = raw_malloc();
    assert_eq!(pool.stats().unwrap().used_current, 2 << 20, "one granule, in the backend's pool");
    // SAFETY: `p` is a live allocation of this pool that nothing uses.
    unsafe { pool.free_async(mempool::DevicePtr::from_addr(p as u64), &stream) }.unwrap();
    let q = raw_malloc();
    assert_eq!(q == p, profile.reuses(), "on {profile}: the freed {p:?}, the next allocation {q:?}");
    // SAFETY: `q` is a live allocation of this pool that nothing uses.
    unsafe { pool.free_async(mempool::DevicePtr::from_addr(q as u64), &stream) }.unwrap();
    dev.synchronize_stream(&stream).unwrap();
    let stats = pool.stats().unwrap();
    assert_eq!(stats.used_current, 0);
    let kept = if profile.releases_at_sync() {
        0
    } else if profile.reuses() {
        2 << 20
    } else {
        4 << 20
    };
    assert_eq!(stats.reserved_current, kept, "on {profile}, after the synchronization");
    dev.destroy_pool(&pool).unwrap();
    dev.destroy_stream(&stream).unwrap();
}

/// An older runtime without `aclFinalizeReference`, whose `aclInit` answers `INIT_RC`
/// (100002: a host program initialized ACL first), counting `aclFinalize` calls.
fn finalize_counter(init_rc: i32) -> String {
    format!(
        r#"
static int finalized;
int aclInit(const char *config) {{ (void)config; return {init_rc}; }}
int aclFinalize(void) {{ finalized++; return 0; }}
int finalize_calls(void) {{ return finalized; }}
const char *aclGetRecentErrMsg(void) {{ return ""; }}
"#
    )
}

/// Without `aclFinalizeReference`, `finalize` calls `aclFinalize` only when the backend's
/// own `aclInit` initialized the runtime (it answered 0, not 100002). The cases run one
/// at a time: `finalize` is process-wide.
#[rstest]
#[case::host_initialized("hostinit", 100_002, 0)]
#[case::backend_initialized("owninit", 0, 1)]
fn without_the_counted_finalize_only_what_the_backend_initialized_is_finalized(
    #[case] tag: &str,
    #[case] init_rc: i32,
    #[case] want: i32,
) {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = temp_dir(tag);
    let lib = build_library(&dir, "libacl_rt.so", &finalize_counter(init_rc));
    mempool_ascend::load(&LoadOptions::only(&lib)).expect("the runtime loads");
    mempool_ascend::finalize().expect("finalize succeeds");
    // SAFETY: the library just built, with the signature written above.
    let calls = unsafe {
        let l = libloading::Library::new(&lib).unwrap();
        l.get::<unsafe extern "C" fn() -> i32>(b"finalize_calls").unwrap()()
    };
    assert_eq!(calls, want, "aclInit answered {init_rc}");
    let _ = std::fs::remove_dir_all(dir);
}
