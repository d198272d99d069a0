//! The pluggable-allocator protocol of `libmempool_alloc.so`, as PyTorch's allocator wrapper
//! (and torch_npu's) drives it, from C and C++ (`tests/c/alloc/`): a framework stand-in that
//! links the drop-in runtime (the Ascend `libacl_rt.so`, or the CPU `libcuda.so.1`), makes
//! its own streams, then dlopens the library and calls it only through function pointers
//! typed as PyTorch casts them. The library finds the runtime already loaded, so the
//! framework's streams are ones it can use.
//!
//! Each program (`protocol.c` as C11, `protocol.cpp` as C++17, each built for both runtimes)
//! runs every variant in a child process of its own, with the stream-order checker on and
//! two devices:
//!
//! - `protocol` (with the small-block layer, and with `MEMPOOL_ALLOC_SMALL_THRESHOLD=0` so
//!   every request reaches the pool): alloc on stream A, use on B announced by record-stream,
//!   free with A, more allocations on A while B is held back (none may reuse the block), the
//!   data read back, the default stream, empty_cache, host threads on both devices, and
//!   statistics that end clean with no stream-order violation, the calling thread's device
//!   left as the program set it;
//! - `protocol-auto`: the same with `MEMPOOL_ALLOC_BACKEND=auto` and only the *other*
//!   runtime configured: the library must take the copy the process has loaded;
//! - `no-record`: the same without the record-stream call, with every free reaching the
//!   pool: the checker refuses the free, and the library must report it (one violation per
//!   device, a `mempool_last_error` text); `no-record-through-the-layer`: the same with
//!   the small-block layer, where the checker meets the free when the emptied block goes
//!   back to the pool;
//! - `fraction`: a quarter of a 1 GiB device, 32 MiB chunks until NULL, the out-of-memory
//!   observer, then everything freed and allocation working again;
//! - `hostile`: one row per bad input of every export (printed one per line).
//!
//! A trial passes when the program exits 0, its last line says `0 failed`, `mempool_backend()`
//! names the runtime the program loaded (its path), and the lines that variant must print are
//! there. Without a C or C++ compiler the trials are ignored
//! ("not run"), never passed.

use libtest_mimic::{Arguments, Failed, Trial};
use mempool_tests::ShimHome;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use xtask::c::{Build, Lang};

/// How long one program may run before it counts as hung.
const DEADLINE: Duration = Duration::from_secs(120);

/// The library's own variables, cleared in every child (then set per variant).
const ALLOC_VARS: [&str; 6] = [
    "MEMPOOL_ALLOC_BACKEND",
    "MEMPOOL_ALLOC_POOL_SIZE",
    "MEMPOOL_ALLOC_RELEASE_THRESHOLD",
    "MEMPOOL_ALLOC_SMALL_THRESHOLD",
    "MEMPOOL_ALLOC_REUSE",
    "MEMPOOL_ALLOC_MEMORY_FRACTION",
];

/// Where a runtime is found, cleared in every child (then set per flavour).
const LOADER_VARS: [&str; 3] = ["ASCEND_HOME_PATH", "MEMPOOL_CUDA_LIBRARY", "MEMPOOL_ALLOC_LIBRARY"];

/// The fewest rows the hostile variant must print.
const HOSTILE_ROWS_MIN: usize = 44;

/// The runtime a program is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flavour {
    /// The drop-in Ascend runtime, `libacl_rt.so` (`-DFLAVOUR_ACL`).
    Acl,
    /// The CPU CUDA driver, `libcuda.so.1` (`-DFLAVOUR_CUDA`).
    Cuda,
}

impl Flavour {
    const ALL: [Flavour; 2] = [Flavour::Acl, Flavour::Cuda];

    fn name(self) -> &'static str {
        match self {
            Flavour::Acl => "acl",
            Flavour::Cuda => "cuda",
        }
    }

    /// `MEMPOOL_ALLOC_BACKEND`, and the start of `mempool_backend()`'s answer.
    fn backend(self) -> &'static str {
        match self {
            Flavour::Acl => "ascend",
            Flavour::Cuda => "cuda",
        }
    }
}

/// What a child runs (the program's first argument) and with which settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// The protocol; `pool_only`: `MEMPOOL_ALLOC_SMALL_THRESHOLD=0`.
    Protocol { pool_only: bool },
    /// The protocol with `MEMPOOL_ALLOC_BACKEND=auto`, where only the other runtime is
    /// configured: the library must take the runtime the process has loaded.
    Auto,
    /// Without record-stream; `pool_only`: every free reaching the pool
    /// (`MEMPOOL_ALLOC_SMALL_THRESHOLD=0`), else through the layer, whose emptied block's
    /// return to the pool meets the checker.
    NoRecord { pool_only: bool },
    /// A memory fraction reached.
    Fraction,
    /// Bad inputs.
    Hostile,
}

impl Variant {
    const ALL: [Variant; 7] = [
        Variant::Protocol { pool_only: false },
        Variant::Protocol { pool_only: true },
        Variant::Auto,
        Variant::NoRecord { pool_only: true },
        Variant::NoRecord { pool_only: false },
        Variant::Fraction,
        Variant::Hostile,
    ];

    fn arg(self) -> &'static str {
        match self {
            Variant::Protocol { .. } | Variant::Auto => "protocol",
            Variant::NoRecord { .. } => "no-record",
            Variant::Fraction => "fraction",
            Variant::Hostile => "hostile",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Variant::Protocol { pool_only: true } => "protocol-small-threshold-0",
            Variant::Auto => "protocol-auto",
            Variant::NoRecord { pool_only: false } => "no-record-through-the-layer",
            other => other.arg(),
        }
    }

    /// The variant's own settings.
    fn env(self) -> Vec<(&'static str, &'static str)> {
        let memory = ("MEMPOOL_EMU_DEVICE_MEMORY", if self == Variant::Fraction { "1G" } else { "4G" });
        match self {
            Variant::Protocol { pool_only: true } | Variant::NoRecord { pool_only: true } => {
                vec![memory, ("MEMPOOL_ALLOC_SMALL_THRESHOLD", "0")]
            }
            _ => vec![memory],
        }
    }
}

/// What the trials share.
struct Setup {
    /// `libmempool_alloc.so`, as cargo built it.
    library: PathBuf,
    /// `lib64/libacl_rt.so` for the ACL programs (linked and found there).
    acl_home: ShimHome,
    /// `libcuda.so.1` for the CUDA programs (linked and found there).
    cuda_home: ShimHome,
    /// Executables and program output.
    out: PathBuf,
}

fn main() {
    let args = Arguments::from_args();
    let out = std::env::temp_dir().join(format!("mempool-alloc-protocol-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("a temp folder");
    let setup = Arc::new(Setup {
        library: mempool_tests::alloc_library(),
        acl_home: mempool_tests::shim_home(),
        cuda_home: mempool_tests::cuda_shim_home(),
        out: out.clone(),
    });
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("c/alloc");
    let mut trials = Vec::new();
    for file in ["protocol.c", "protocol.cpp"] {
        let missing = xtask::c::compiler_missing(Lang::of(Path::new(file)).expect("a C or C++ file"));
        if let Some(why) = &missing {
            println!("not run: {file}: {why}");
        }
        for flavour in Flavour::ALL {
            let compiled = Arc::new(OnceLock::new());
            for variant in Variant::ALL {
                let (setup, compiled, src) = (Arc::clone(&setup), Arc::clone(&compiled), dir.join(file));
                let (missing, ignored) = (missing.clone(), missing.is_some());
                let name = format!("{}::{file}::{}", flavour.name(), variant.name());
                let trial = Trial::test(name, move || {
                    if let Some(why) = missing {
                        return Err(format!("not run: {why}").into());
                    }
                    let exe = compiled
                        .get_or_init(|| {
                            let exe = setup.out.join(format!("{}-{}", flavour.name(), file.replace('.', "-")));
                            compile(&src, &exe, flavour, &setup).map(|()| exe)
                        })
                        .clone()?;
                    run(&exe, file, flavour, variant, &setup)
                });
                trials.push(trial.with_ignored_flag(ignored));
            }
        }
    }
    let conclusion = libtest_mimic::run(&args, trials);
    drop(setup); // `exit` skips destructors: the runtime folders go now.
    let _ = std::fs::remove_dir_all(&out);
    conclusion.exit()
}

/// Builds `src` for `flavour` into `exe` (the language from its extension), with
/// `-Wall -Wextra -Werror`, linked against the laid-out runtime (also its run-time search
/// path) and libdl; the allocator library is not linked: the program dlopens it.
fn compile(src: &Path, exe: &Path, flavour: Flavour, setup: &Setup) -> Result<(), String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ lies in the workspace root");
    let (headers, lib_dir, link, define) = match flavour {
        Flavour::Acl => (xtask::c::headers(), setup.acl_home.path().join("lib64"), "-lacl_rt", "FLAVOUR_ACL"),
        Flavour::Cuda => (
            root.join("backends/cuda-shim/include"),
            setup.cuda_home.path().to_path_buf(),
            "-l:libcuda.so.1",
            "FLAVOUR_CUDA",
        ),
    };
    let build = Build {
        includes: vec![headers, root.join("crates/mempool-alloc/include")],
        lib_dirs: vec![lib_dir],
        libs: vec![link.to_string(), "-ldl".to_string()],
        defines: vec![define.to_string()],
        strict: true,
    };
    build.compile(src, exe).map_err(|e| format!("{} build: {e}", flavour.name()))
}

/// One variant of one program in a child process of its own, checked.
fn run(exe: &Path, file: &str, flavour: Flavour, variant: Variant, setup: &Setup) -> Result<(), Failed> {
    let mut cmd = Command::new(exe);
    cmd.arg(variant.arg()).arg(&setup.library);
    for var in mempool_emu::ENV_ALL.iter().chain(&ALLOC_VARS).chain(&LOADER_VARS) {
        cmd.env_remove(var);
    }
    // cargo's library path holds other copies of the runtimes: the program takes its own from
    // its run-time search path.
    cmd.env_remove("LD_LIBRARY_PATH");
    cmd.env(mempool_emu::ENV_CHECKER, "on")
        .env(mempool_emu::ENV_DEVICES, "2")
        // A stuck wait fails within seconds instead of a minute.
        .env(mempool_emu::ENV_WAIT_TIMEOUT, "20s");
    // Where each runtime is found: the program's own, and the other one.
    let acl = ("ASCEND_HOME_PATH", setup.acl_home.path());
    let cuda = (mempool_cuda::ENV_LIBRARY, setup.cuda_home.path());
    let (own, other) = match flavour {
        Flavour::Acl => (acl, cuda),
        Flavour::Cuda => (cuda, acl),
    };
    if variant == Variant::Auto {
        // The other runtime could be found; the program's own only as the loaded copy.
        cmd.env("MEMPOOL_ALLOC_BACKEND", "auto").env(other.0, other.1);
    } else {
        cmd.env("MEMPOOL_ALLOC_BACKEND", flavour.backend()).env(own.0, own.1);
    }
    if flavour == Flavour::Cuda {
        // The 2 MiB granularity the CUDA backend assumes for pools.
        cmd.env(mempool_emu::ENV_GRANULARITY, (2u64 << 20).to_string());
    }
    for (var, value) in variant.env() {
        cmd.env(var, value);
    }
    let tag = format!("{}-{}-{}", flavour.name(), file.replace('.', "-"), variant.name());
    let (status, stdout, stderr) = run_bounded(cmd, &setup.out.join(tag))?;
    let fail = |why: String| -> Result<(), Failed> {
        Err(format!(
            "{file} {} on {}: {why} ({status})\n--- stdout\n{stdout}--- stderr\n{stderr}",
            variant.name(),
            flavour.name()
        )
        .into())
    };
    let lines: Vec<&str> = stdout.lines().collect();
    let last = lines.last().copied().unwrap_or_default();
    let summary = last
        .strip_prefix(&format!("{file} {}: ", variant.arg()))
        .and_then(|rest| rest.strip_suffix(" failed"))
        .and_then(|rest| rest.split_once(" passed, "))
        .and_then(|(p, f)| Some((p.parse::<u32>().ok()?, f.parse::<u32>().ok()?)));
    let Some((passed, failed)) = summary.filter(|&(p, _)| p > 0) else {
        return fail(format!("no summary line; last line: {last:?}"));
    };
    // The library runs on the runtime the program loaded (the program prints its file).
    let after = |prefix: &str| lines.iter().find_map(|l| l.strip_prefix(prefix)).unwrap_or_default();
    let (runtime, backend) = (Path::new(after("runtime: ")), after("backend: "));
    let loaded = match flavour {
        Flavour::Acl => setup.acl_home.path().join("lib64/libacl_rt.so"),
        Flavour::Cuda => setup.cuda_home.path().join("libcuda.so.1"),
    };
    if !same_file(runtime, &loaded) {
        return fail(format!("the program loaded its runtime from {runtime:?}, not {}", loaded.display()));
    }
    let named = backend.split_once(" (").and_then(|(_, rest)| rest.strip_suffix(')')).map(Path::new);
    if !backend.starts_with(flavour.backend()) || !named.is_some_and(|p| same_file(p, runtime)) {
        return fail(format!(
            "mempool_backend() is {backend:?}, not the {} runtime the program loaded ({})",
            flavour.backend(),
            runtime.display()
        ));
    }
    if !status.success() || failed > 0 {
        return fail(format!("{passed} checks passed, {failed} failed"));
    }
    let mut report = vec![format!("backend: {backend}")];
    match variant {
        Variant::Protocol { .. } | Variant::Auto => {
            let Some(threads) = lines.iter().find(|l| l.starts_with("threads: ")) else {
                return fail("the host threads did not run".into());
            };
            report.push((*threads).to_string());
        }
        Variant::NoRecord { .. } => {
            for dev in 0..2 {
                let prefix = format!("reported on device {dev}: ");
                let Some(why) = lines.iter().find_map(|l| l.strip_prefix(prefix.as_str())) else {
                    return fail(format!("no report of the violation on device {dev}"));
                };
                if why == "(nothing)" || why.is_empty() {
                    return fail(format!("mempool_last_error() was NULL after the refused free on device {dev}"));
                }
                report.push(format!("device {dev}: {why}"));
            }
        }
        Variant::Fraction => {
            for prefix in ["fraction: ", "observer: "] {
                let Some(line) = lines.iter().find(|l| l.starts_with(prefix)) else {
                    return fail(format!("no {prefix:?} line"));
                };
                report.push((*line).to_string());
            }
        }
        Variant::Hostile => {
            let rows: Vec<&str> = lines.iter().copied().filter(|l| l.starts_with("row ")).collect();
            let bad: Vec<&str> = rows.iter().copied().filter(|l| !l.contains(": ok")).collect();
            let total = lines
                .iter()
                .find_map(|l| l.strip_prefix("hostile: "))
                .and_then(|r| r.split_once(" rows, 0 failed"))
                .and_then(|(n, _)| n.parse::<usize>().ok());
            if !bad.is_empty() || total != Some(rows.len()) || rows.len() < HOSTILE_ROWS_MIN {
                return fail(format!(
                    "{} rows printed (at least {HOSTILE_ROWS_MIN} expected; the program counted {total:?}); failed: {bad:#?}",
                    rows.len()
                ));
            }
            report.extend(rows.iter().map(|r| (*r).to_string()));
        }
    }
    println!("{file} {} on {}: {last}\n  {}", variant.name(), flavour.name(), report.join("\n  "));
    Ok(())
}

/// Whether `a` and `b` are the same file (through links: cargo hard-links the libraries it
/// builds into `target/<profile>`).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

/// Runs `cmd` with its output in `<tag>.stdout` and `<tag>.stderr`, killed after
/// [`DEADLINE`]: its exit status and output.
fn run_bounded(mut cmd: Command, tag: &Path) -> Result<(ExitStatus, String, String), Failed> {
    let paths = [tag.with_extension("stdout"), tag.with_extension("stderr")];
    let open = |p: &Path| std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()));
    cmd.stdin(Stdio::null()).stdout(open(&paths[0])?).stderr(open(&paths[1])?);
    let mut child = cmd.spawn().map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
    let started = Instant::now();
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| format!("waiting for {cmd:?}: {e}"))? {
            return Ok((status, read(&paths[0]), read(&paths[1])));
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "{cmd:?} still ran after {DEADLINE:?}: killed\n--- stdout\n{}--- stderr\n{}",
                read(&paths[0]),
                read(&paths[1])
            )
            .into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
