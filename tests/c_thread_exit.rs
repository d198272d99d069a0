//! Calls made from thread-exit destructors (`tests/c/thread_exit/`), on each of the three C
//! libraries: `libacl_rt.so`, the CPU `libcuda.so.1` and `libmempool_alloc.so` (on the
//! emulator). A framework's per-thread cache (a C++ `thread_local` object, a
//! `pthread_key_create` destructor) frees its memory and events as its thread ends, after
//! the library's own thread-local storage is gone: the calls that must fail there (garbage
//! handles, a bad pointer) return their error code, the calls that must succeed (freeing
//! the thread's memory, synchronizing and destroying its stream) return success, and the
//! process exits normally.
//!
//! Each program runs 20 threads; a trial passes when the program exits 0 and its last
//! line is `<file>: 20 of 20 threads passed`. The C program runs its calls from a pthread
//! key's destructor, the C++ one from a `thread_local` object's. Without a C or C++
//! compiler the trials are ignored ("not run"), never passed.

use libtest_mimic::{Arguments, Failed, Trial};
use mempool_tests::ShimHome;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use xtask::c::{Build, Lang};

/// The threads each program runs (`THREADS` in `thread_exit.h`).
const THREADS: u32 = 20;

/// The library a program is built for.
#[derive(Debug, Clone, Copy)]
enum Flavour {
    /// `libacl_rt.so` (`-DFLAVOUR_ACL`).
    Acl,
    /// The CPU `libcuda.so.1` (`-DFLAVOUR_CUDA`).
    Cuda,
    /// `libmempool_alloc.so` on the emulator (`-DFLAVOUR_ALLOC`).
    Alloc,
}

impl Flavour {
    const ALL: [Flavour; 3] = [Flavour::Acl, Flavour::Cuda, Flavour::Alloc];

    fn name(self) -> &'static str {
        match self {
            Flavour::Acl => "acl",
            Flavour::Cuda => "cuda",
            Flavour::Alloc => "alloc",
        }
    }
}

/// What the trials share: where each library lies, and a folder for the executables.
struct Setup {
    acl_home: ShimHome,
    cuda_home: ShimHome,
    alloc_dir: PathBuf,
    out: PathBuf,
}

fn main() {
    let args = Arguments::from_args();
    let out = std::env::temp_dir().join(format!("mempool-c-thread-exit-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("a temp folder");
    let alloc = mempool_tests::alloc_library();
    let setup = Arc::new(Setup {
        acl_home: mempool_tests::shim_home(),
        cuda_home: mempool_tests::cuda_shim_home(),
        alloc_dir: alloc.parent().expect("the library has a folder").to_path_buf(),
        out: out.clone(),
    });
    let dir = xtask::c::programs().join("thread_exit");
    let mut trials = Vec::new();
    for file in ["thread_exit.c", "thread_exit.cpp"] {
        let src = dir.join(file);
        let lang = Lang::of(&src).expect("a C or C++ file");
        let missing = xtask::c::compiler_missing(lang);
        if let Some(why) = &missing {
            println!("not run: {file}: {why}");
        }
        for flavour in Flavour::ALL {
            let (setup, src, missing) = (Arc::clone(&setup), src.clone(), missing.clone());
            let ignored = missing.is_some();
            let trial = Trial::test(format!("{}::{file}", flavour.name()), move || {
                if let Some(why) = missing {
                    return Err(format!("not run: {why}").into());
                }
                trial(&src, flavour, &setup)
            });
            trials.push(trial.with_ignored_flag(ignored));
        }
    }
    let conclusion = libtest_mimic::run(&args, trials);
    drop(setup); // `exit` skips destructors: the library folders go now.
    let _ = std::fs::remove_dir_all(&out);
    conclusion.exit()
}

/// Compiles `src` for `flavour`, runs it once, and checks its exit and last line.
fn trial(src: &Path, flavour: Flavour, setup: &Setup) -> Result<(), Failed> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ lies in the workspace root");
    let (include, lib_dir, lib) = match flavour {
        Flavour::Acl => (xtask::c::headers(), setup.acl_home.path().join("lib64"), "-lacl_rt"),
        Flavour::Cuda => {
            (root.join("backends/cuda-shim/include"), setup.cuda_home.path().to_path_buf(), "-l:libcuda.so.1")
        }
        Flavour::Alloc => (root.join("crates/mempool-alloc/include"), setup.alloc_dir.clone(), "-lmempool_alloc"),
    };
    let file = src.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let exe = setup.out.join(format!("{}-{}", flavour.name(), file.replace('.', "-")));
    let build = Build {
        includes: vec![include],
        lib_dirs: vec![lib_dir],
        libs: vec![lib.to_string()],
        defines: vec![format!("FLAVOUR_{}", flavour.name().to_uppercase())],
        strict: true,
    };
    build.compile(src, &exe)?;
    let mut cmd = Command::new(&exe);
    for var in mempool_emu::ENV_ALL {
        cmd.env_remove(var);
    }
    // cargo's library path holds other copies of the libraries: the program takes its own
    // from its run-time search path.
    cmd.env_remove("LD_LIBRARY_PATH")
        .env("MEMPOOL_ALLOC_BACKEND", "emulator")
        .env(mempool_emu::ENV_DEVICES, "1")
        .env(mempool_emu::ENV_WAIT_TIMEOUT, "20s")
        .stdin(Stdio::null());
    let out = cmd.output().map_err(|e| format!("{} did not start: {e}", exe.display()))?;
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let want = format!("{file}: {THREADS} of {THREADS} threads passed");
    let last = stdout.lines().last().unwrap_or_default();
    if out.status.success() && last == want {
        return Ok(());
    }
    Err(format!(
        "{file} on {}: {} (expected exit 0 and the last line {want:?})\n--- stdout\n{stdout}--- stderr\n{stderr}",
        flavour.name(),
        out.status
    )
    .into())
}
