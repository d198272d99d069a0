//! Helpers of the integration tests: folders under Cargo's test scratch space, C
//! libraries compiled with the system compiler, and the fake driver of `tests/fake/`.

#![allow(dead_code)] // each test binary uses its own part

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

/// A fresh, empty folder for one test: under Cargo's scratch space for integration tests,
/// one per process, `tag` and call.
pub fn temp_dir(tag: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mempool-cuda-{}", std::process::id()))
        .join(format!("{tag}-{n}"));
    std::fs::create_dir_all(&d).expect("a scratch folder");
    d
}

/// Compiles the C file `src` into the shared library `out` with the system C compiler
/// (`$CC`, else `cc`), with `-D` for each of `defines`.
pub fn compile(src: &Path, out: &Path, defines: &[&str]) {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let mut cmd = Command::new(&cc);
    cmd.args(["-shared", "-fPIC", "-O1", "-pthread", "-o"]).arg(out).arg(src);
    for d in defines {
        cmd.arg(format!("-D{d}"));
    }
    let st = cmd.output().unwrap_or_else(|e| panic!("cannot run the C compiler {cc}: {e}"));
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
}

/// Compiles the C source text `src` into `dir/<name>`.
pub fn library_from(dir: &Path, name: &str, src: &str) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let out = dir.join(name);
    compile(&c, &out, &[]);
    out
}

/// A fresh copy of the fake driver built with `defines`, as `libcuda.so.1` in a folder of
/// its own: each copy is a library of its own for the dynamic loader (its own globals), so
/// tests running side by side do not share a device. The variant is compiled once per
/// process.
pub fn fake_driver(defines: &[&str]) -> PathBuf {
    static BUILT: Mutex<Option<HashMap<String, PathBuf>>> = Mutex::new(None);
    let key = defines.join(" ");
    let master = {
        let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
        let built = built.get_or_insert_with(HashMap::new);
        built
            .entry(key)
            .or_insert_with(|| {
                let dir = temp_dir("fake-build");
                let out = dir.join("libcuda.so.1");
                compile(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake/driver.c"), &out, defines);
                out
            })
            .clone()
    };
    let copy = temp_dir("fake").join("libcuda.so.1");
    std::fs::copy(&master, &copy).expect("a copy of the fake driver");
    copy
}

/// The fake driver's counters, read through the library the backend loaded.
pub struct Counters {
    lib: libloading::Library,
}

impl Counters {
    /// Opens `path` (already loaded by the backend: the same library, the same globals).
    pub fn of(path: &Path) -> Counters {
        // SAFETY: the fake driver's initializers are empty; it is loaded already.
        Counters { lib: unsafe { libloading::Library::new(path) }.expect("the fake driver loads") }
    }

    fn read<T>(&self, name: &str) -> T {
        // SAFETY: the fake driver exports these counters as functions without arguments
        // returning `int` or `long`, matching `T` at each call site.
        unsafe {
            let f = self.lib.get::<unsafe extern "C" fn() -> T>(name.as_bytes()).expect("the counter exists");
            f()
        }
    }

    /// Primary context references held.
    pub fn primary_refs(&self) -> i32 {
        self.read::<std::ffi::c_int>("fake_primary_refs")
    }

    /// Page-locked host buffers not freed.
    pub fn host_live(&self) -> i64 {
        self.read::<std::ffi::c_long>("fake_host_live")
    }

    /// Pools created and not destroyed (the default pool not counted).
    pub fn pools_live(&self) -> i64 {
        self.read::<std::ffi::c_long>("fake_pools_live")
    }
}
