//! The conformance suite and the CUDA C programs against the installed NVIDIA driver,
//! behind a switch: with `MEMPOOL_TEST_CUDA=1` (on a machine with an NVIDIA driver and a
//! device with memory pools) this test binary finds the driver with the CUDA backend's
//! normal search (`MEMPOOL_CUDA_LIBRARY`, the system loader, the driver folders), and
//! runs the probe (`mempool_cuda::probe`), every conformance scenario through the backend
//! on device 0 (`mempool_tests::CudaHarness` on the `cuda` profile) and the C programs of
//! `backends/cuda-shim/tests/c/` linked against the driver by its soname (`libcuda.so.1`),
//! and writes `target/cuda-report.md`: the driver's path and version, device 0's memory,
//! the probe's table and every trial's result. Without the switch every trial is reported
//! as ignored (kind `not-run`), never as passed; so is every trial under `--list`, which
//! names them without opening the driver.
//!
//! ```sh
//! MEMPOOL_TEST_CUDA=1 cargo test -p mempool-tests --test cuda_hardware
//! ```
//!
//! `cargo xtask cuda-kit` builds this binary and the C programs into `target/cuda-kit/`,
//! whose `run.sh` runs them on a machine without Rust (see `xtask/src/cuda_kit.rs`).
//!
//! - **The driver, not the CPU library.** With `MEMPOOL_TEST_CUDA=1` the binary refuses to
//!   run (it writes the reason into the report and exits with 1) when the library found is
//!   the project's CPU `libcuda.so.1`, told by the symbol `mempool_cuda_shim_version` that
//!   only it exports. `MEMPOOL_TEST_CUDA=cpu` accepts it, to try the trials (or the kit)
//!   on a machine without a GPU: point `MEMPOOL_CUDA_LIBRARY` at the folder `cargo xtask
//!   shim --cuda` lays out. The emulator then runs on its `cuda` profile
//!   (`MEMPOOL_EMU_PROFILE`, unless set).
//! - **Free pointers.** The CPU library checks every pointer given to `cuMemFreeAsync`;
//!   NVIDIA's driver does not promise to, so on it the harness lacks
//!   `Capability::CheckedFree` and the two scenarios that free bad pointers on purpose
//!   (s20, s28) are reported as not run.
//! - **The probe** (`cuda_hw::probe`) measures which behaviour of contract §12 the driver's
//!   pools have; its table goes into the report, and the trial passes when the verdict is
//!   the `cuda` profile, the one the scenarios expect.
//! - **C programs.** Each source is compiled (C11 with `$CC` or `cc`, C++17 with `$CXX`
//!   or `c++`) against `backends/cuda-shim/include` and linked with `-l:libcuda.so.1`,
//!   without a run-time path: it finds the driver as any CUDA program does, the driver's
//!   folder first in `LD_LIBRARY_PATH`. Two names of that header belong to the CPU library,
//!   so each source is compiled through a wrapper that redefines them: `CUDA_VERSION` (the
//!   CPU library's 13.5) is the driver's own version on NVIDIA's driver, and
//!   `mempool_cuda_shim_version()` (which NVIDIA's driver does not export) names the
//!   library in use. A program passes when it exits 0 within two minutes; its last line
//!   goes into the report.
//!
//! Settings for the kit: `MEMPOOL_TEST_CUDA_PROGRAMS`, a folder of programs already built
//! (the C trials run those instead of compiling); `MEMPOOL_TEST_CUDA_REPORT`, the report's
//! path; `MEMPOOL_TEST_CUDA_BUILD_PROGRAMS`, which makes the binary only compile the
//! programs into that folder, linked against the `libcuda.so.1` in the folder
//! `MEMPOOL_CUDA_LIBRARY` names, and exit. The report is rewritten after each trial, so a
//! run that is stopped still leaves what it found.
//!
//! The rules it checks: contract §10 (`mempool_hal::contract::conformance`), §12 (`mempool_hal::contract::profiles`).

use libtest_mimic::{Arguments, Trial};
use mempool_conformance::{Capability, Harness};
use mempool_cuda::Cuda;
use mempool_emu::Profile;
use mempool_hal::Device;
use mempool_tests::CudaHarness;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The switch: `1` for NVIDIA's driver, `cpu` to accept the project's CPU library.
const SWITCH: &str = "MEMPOOL_TEST_CUDA";
const NOT_RUN: &str = "not run: set MEMPOOL_TEST_CUDA=1 on a machine with an NVIDIA driver and device";
/// A folder of C programs already built (the kit's `c/`): run them instead of compiling.
const PROGRAMS_VAR: &str = "MEMPOOL_TEST_CUDA_PROGRAMS";
/// Only compile the C programs into this folder, then exit.
const BUILD_VAR: &str = "MEMPOOL_TEST_CUDA_BUILD_PROGRAMS";
/// Where the report goes (default: `target/cuda-report.md`).
const REPORT_VAR: &str = "MEMPOOL_TEST_CUDA_REPORT";
/// The soname programs link the driver by.
const SONAME: &str = "libcuda.so.1";
/// How long one C program may run.
const PROGRAM_LIMIT: Duration = Duration::from_secs(120);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `MEMPOOL_TEST_CUDA=1`: NVIDIA's driver only.
    Nvidia,
    /// `MEMPOOL_TEST_CUDA=cpu`: the project's CPU library is accepted.
    Cpu,
}

fn mode() -> Option<Mode> {
    match std::env::var(SWITCH).as_deref() {
        Ok("1") => Some(Mode::Nvidia),
        Ok("cpu") => Some(Mode::Cpu),
        _ => None,
    }
}

/// [`CudaHarness`] with `Capability::CheckedFree` as the driver in use can promise it.
#[derive(Debug, Clone, Copy)]
struct HwHarness {
    cuda: CudaHarness,
    /// Whether the driver answers bad free pointers with an error (the CPU library does;
    /// NVIDIA's driver does not promise it).
    checked_free: bool,
}

impl Harness for HwHarness {
    type Device = Cuda;

    fn device(&self) -> mempool_hal::Result<Cuda> {
        self.cuda.device()
    }

    fn supports(&self, cap: Capability) -> bool {
        match cap {
            Capability::CheckedFree => self.checked_free,
            other => self.cuda.supports(other),
        }
    }

    fn profile(&self) -> Profile {
        self.cuda.profile()
    }

    fn let_run(&self, dev: &Cuda, stream: &<Cuda as Device>::Stream) -> mempool_hal::Result<()> {
        self.cuda.let_run(dev, stream)
    }
}

/// A C or C++ program of the trials: a source to compile, or a program the kit built.
#[derive(Debug, Clone)]
enum Program {
    Source(PathBuf),
    Built(PathBuf),
}

/// One trial: its name, and what it runs (`Ok` with a note for the report) or why not.
struct Planned {
    name: String,
    body: Result<Box<dyn FnOnce() -> Result<String, String> + Send>, String>,
}

fn main() {
    if let Some(out) = std::env::var_os(BUILD_VAR) {
        std::process::exit(build_programs(Path::new(&out)));
    }
    let args = Arguments::from_args();
    // `--list` names the trials without opening the driver.
    let Some(mode) = mode().filter(|_| !args.list) else {
        if !args.list {
            println!("{NOT_RUN}");
        }
        let harness = HwHarness { cuda: CudaHarness { profile: Profile::Cuda, device: 0 }, checked_free: false };
        let trials = trial_names(&harness)
            .into_iter()
            .map(|name| Trial::test(name, || Err(NOT_RUN.into())).with_ignored_flag(true).with_kind("not-run"))
            .collect();
        libtest_mimic::run(&args, trials).exit();
    };
    if mode == Mode::Cpu && std::env::var_os(mempool_emu::ENV_PROFILE).is_none() {
        // SAFETY: the first thing `main` does with the environment, before any thread of
        // this process is started and before the CPU library (which reads it) is loaded.
        unsafe { std::env::set_var(mempool_emu::ENV_PROFILE, Profile::Cuda.name()) };
    }
    let probe = ProbeTable::default();
    let mut report = Report { path: report_path(), header: host(), probe: Arc::clone(&probe), results: Vec::new() };
    let dev = match Cuda::open(0) {
        Ok(dev) => dev,
        Err(e) => report.refuse(&format!("{SWITCH} is set but device 0 cannot be opened:\n\n```text\n{e}\n```")),
    };
    let driver = Driver::of(&dev);
    report.header = driver.describe(&dev, mode) + &report.header;
    println!("{}", report.header);
    if mode == Mode::Nvidia {
        if let Some(version) = &driver.cpu_library {
            report.refuse(&format!(
                "{} is the project's CPU libcuda (`{}` answers `{version}`), not NVIDIA's driver: \
                 these trials are for the driver. Set {SWITCH}=cpu to run them on the CPU library.",
                driver.loaded.display(),
                mempool_cuda::probe::CPU_LIBCUDA_MARKER
            ));
        }
    }
    drop(dev);

    let harness = HwHarness {
        cuda: CudaHarness { profile: Profile::Cuda, device: 0 },
        checked_free: driver.cpu_library.is_some(),
    };
    let plan = plan(harness, &driver.folder, &probe);
    report.results =
        plan.iter().map(|p| (p.name.clone(), "not finished (stopped, or left out by a filter)".to_string())).collect();
    let report = Arc::new(Mutex::new(report));
    let mut trials = Vec::new();
    for Planned { name, body } in plan {
        let report = Arc::clone(&report);
        match body {
            Ok(body) => {
                let trial_name = name.clone();
                trials.push(Trial::test(name, move || {
                    let outcome = body();
                    let line = match &outcome {
                        Ok(note) if note.is_empty() => "ok".to_string(),
                        Ok(note) => format!("ok: {note}"),
                        Err(e) => format!("FAILED: {e}"),
                    };
                    report.lock().unwrap_or_else(PoisonError::into_inner).record(&trial_name, line);
                    outcome.map(drop).map_err(Into::into)
                }));
            }
            Err(why) => {
                report.lock().unwrap_or_else(PoisonError::into_inner).record(&name, why.clone());
                trials.push(Trial::test(name, move || Err(why.into())).with_ignored_flag(true).with_kind("not-run"));
            }
        }
    }
    let mut args = args;
    args.test_threads = Some(1); // one device, and statistics that other trials would move
    let conclusion = libtest_mimic::run(&args, trials);
    if let Some(e) = mempool_cuda::take_drop_error() {
        eprintln!("a device's end failed: {e}");
    }
    let report = report.lock().unwrap_or_else(PoisonError::into_inner);
    report.write();
    println!("report: {}", report.path.display());
    conclusion.exit()
}

/// Every trial's name, in order, as a run would have them.
fn trial_names(harness: &HwHarness) -> Vec<String> {
    plan(*harness, Path::new(""), &ProbeTable::default()).into_iter().map(|p| p.name).collect()
}

/// The trials: the probe (its table into `probe`), the conformance scenarios, then the C
/// programs (linked against the driver in `driver_dir`).
fn plan(harness: HwHarness, driver_dir: &Path, probe: &ProbeTable) -> Vec<Planned> {
    let table = Arc::clone(probe);
    let mut plan = vec![Planned { name: "cuda_hw::probe".into(), body: Ok(Box::new(move || run_probe(&table))) }];
    let harness = Arc::new(harness);
    for sc in mempool_conformance::scenarios::<HwHarness>() {
        let name = format!("cuda_hw::conformance::{}", sc.name);
        let missing = sc.missing(&harness);
        if !missing.is_empty() {
            let why = format!("not run: the driver does not promise {missing:?}");
            plan.push(Planned { name, body: Err(why) });
            continue;
        }
        let harness = Arc::clone(&harness);
        let body = move || {
            let partial = sc.missing_optional(&harness);
            sc.run_on(&harness).map_err(|f| f.to_string())?;
            Ok(if partial.is_empty() { String::new() } else { format!("without the checks of {partial:?}") })
        };
        plan.push(Planned { name, body: Ok(Box::new(body)) });
    }
    for (stem, program) in programs() {
        let dir = driver_dir.to_path_buf();
        let body = move || run_program(&program, &dir);
        plan.push(Planned { name: format!("cuda_hw::c::{stem}"), body: Ok(Box::new(body)) });
    }
    plan
}

/// The probe's table, once it has run.
type ProbeTable = Arc<Mutex<Option<String>>>;

/// Runs the probe on device 0 and keeps its table: it passes when the pools behave as the
/// `cuda` profile (contract §12), which the scenarios expect.
fn run_probe(table: &ProbeTable) -> Result<String, String> {
    let dev = Cuda::open(0).map_err(|e| e.to_string())?;
    let report = mempool_cuda::probe::run(&dev);
    drop(dev);
    *table.lock().unwrap_or_else(PoisonError::into_inner) = Some(report.to_string());
    match report.profile() {
        Some(Profile::Cuda) => Ok("profile cuda".to_string()),
        Some(other) => Err(format!("the pools behave as the {other} profile, not cuda (see the probe's table)")),
        None => Err("the pools match no profile of contract §12 (see the probe's table)".to_string()),
    }
}

/// The folder of the C programs' sources, `backends/cuda-shim/tests/c`.
fn sources_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../backends/cuda-shim/tests/c")
}

/// The folder of the project's `cuda.h`.
fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../backends/cuda-shim/include")
}

/// The programs, by name: the kit's built ones when [`PROGRAMS_VAR`] is set, else the
/// sources (`.c`, `.cpp`, `.cc`, `.cxx`) of [`sources_dir`], in name order.
fn programs() -> Vec<(String, Program)> {
    let built = std::env::var_os(PROGRAMS_VAR).map(PathBuf::from);
    let dir = built.clone().unwrap_or_else(sources_dir);
    let mut found: Vec<(String, Program)> = std::fs::read_dir(&dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p.is_file())
        .filter_map(|p| {
            let stem = p.file_stem()?.to_string_lossy().into_owned();
            match built {
                Some(_) => Some((stem, Program::Built(p))),
                None => xtask::c::Lang::of(&p).map(|_| (stem, Program::Source(p))),
            }
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

/// `MEMPOOL_TEST_CUDA_BUILD_PROGRAMS=<out>`: compiles every source into `out`, linked
/// against the `libcuda.so.1` of the folder `MEMPOOL_CUDA_LIBRARY` names. The exit status.
fn build_programs(out: &Path) -> i32 {
    let Some(lib_dir) = std::env::var_os(mempool_cuda::ENV_LIBRARY).map(PathBuf::from) else {
        eprintln!("{BUILD_VAR} needs {} set to the folder of a {SONAME} to link against", mempool_cuda::ENV_LIBRARY);
        return 2;
    };
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("{}: {e}", out.display());
        return 1;
    }
    let mut status = 0;
    for (stem, program) in programs() {
        let Program::Source(src) = program else { continue };
        let exe = out.join(&stem);
        match compile(&src, &exe, &lib_dir) {
            Ok(()) => println!("built {}", exe.display()),
            Err(e) => {
                eprintln!("{e}");
                status = 1;
            }
        }
    }
    status
}

/// The source the compiler sees for `src`: the project's `cuda.h`, then the two names of
/// it that belong to the CPU library redefined for whichever library the program runs on,
/// then `src` itself.
fn wrapper(src: &Path) -> String {
    let path = src.display().to_string().replace('\\', "\\\\").replace('"', "\\\"");
    format!(
        r#"/* {path}, compiled by the CUDA hardware trials (tests/cuda_hardware.rs) for the
   installed driver. mempool_cuda_shim_version is the CPU library's own symbol, absent from
   NVIDIA's driver: here it names the library in use. CUDA_VERSION is the CPU library's
   version: here it is the driver's own on NVIDIA's driver. */
#include <cuda.h>

#pragma weak mempool_cuda_shim_version

static __attribute__((unused)) int mempool_hw_driver_version(void) {{
    int version = -1;
    if (mempool_cuda_shim_version) {{
        return CUDA_VERSION;
    }}
    return cuDriverGetVersion(&version) == CUDA_SUCCESS ? version : -1;
}}

static __attribute__((unused)) const char *mempool_hw_library_name(void) {{
    return mempool_cuda_shim_version ? mempool_cuda_shim_version() : "NVIDIA's driver";
}}

#undef CUDA_VERSION
#define CUDA_VERSION mempool_hw_driver_version()
#define mempool_cuda_shim_version mempool_hw_library_name

#include "{path}"
"#
    )
}

/// Compiles `src` into `exe` through its [`wrapper`], against the project's `cuda.h`,
/// linked with `-l:libcuda.so.1` from `lib_dir` and no run-time path.
fn compile(src: &Path, exe: &Path, lib_dir: &Path) -> Result<(), String> {
    let (var, default, std, ext) = match xtask::c::Lang::of(src) {
        Some(xtask::c::Lang::C) => ("CC", "cc", "-std=c11", "c"),
        Some(xtask::c::Lang::Cxx) => ("CXX", "c++", "-std=c++17", "cpp"),
        None => return Err(format!("{}: not a C or C++ source", src.display())),
    };
    if !lib_dir.join(SONAME).exists() {
        return Err(format!("{} has no {SONAME} to link against", lib_dir.display()));
    }
    let src = src.canonicalize().map_err(|e| format!("{}: {e}", src.display()))?;
    let scratch = std::env::temp_dir().join(format!("mempool-cuda-hw-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let stem = src.file_stem().unwrap_or_default().to_string_lossy().into_owned();
    let wrapped = scratch.join(format!("{stem}.hw.{ext}"));
    std::fs::write(&wrapped, wrapper(&src)).map_err(|e| format!("{}: {e}", wrapped.display()))?;
    let compiler = std::env::var(var).unwrap_or_else(|_| default.to_string());
    let out = Command::new(&compiler)
        .args([std, "-O1", "-pthread", "-I"])
        .arg(include_dir())
        .arg(&wrapped)
        .arg("-o")
        .arg(exe)
        .arg(format!("-L{}", lib_dir.display()))
        .arg(format!("-l:{SONAME}"))
        .output()
        .map_err(|e| format!("the compiler `{compiler}` could not run: {e}"))?;
    let _ = std::fs::remove_dir_all(&scratch);
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "compiling {} failed ({}): {}",
            src.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim_end()
        ))
    }
}

/// Runs a program (a source compiled first) with `driver_dir` first in `LD_LIBRARY_PATH`:
/// it passes when it exits 0 within [`PROGRAM_LIMIT`]; the note is its last line.
fn run_program(program: &Program, driver_dir: &Path) -> Result<String, String> {
    let scratch = std::env::temp_dir().join(format!("mempool-cuda-hw-run-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let exe = match program {
        Program::Built(exe) => exe.clone(),
        Program::Source(src) => {
            let exe = scratch.join(src.file_stem().unwrap_or_default());
            compile(src, &exe, driver_dir)?;
            exe
        }
    };
    let ld = match std::env::var_os("LD_LIBRARY_PATH") {
        Some(old) if !old.is_empty() => format!("{}:{}", driver_dir.display(), old.to_string_lossy()),
        _ => driver_dir.display().to_string(),
    };
    let (out_path, err_path) = (scratch.join("stdout"), scratch.join("stderr"));
    let file = |p: &Path| std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()));
    let mut child = Command::new(&exe)
        .env("LD_LIBRARY_PATH", ld)
        .stdin(Stdio::null())
        .stdout(file(&out_path)?)
        .stderr(file(&err_path)?)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() > PROGRAM_LIMIT => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("waiting for {}: {e}", exe.display())),
        }
    };
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&scratch);
    let last = stdout.lines().last().unwrap_or_default().to_string();
    match status {
        Some(status) if status.success() => Ok(last),
        Some(status) => {
            Err(format!("{} ({status}); last line: {last:?}; stderr: {}", exe.display(), stderr.trim_end()))
        }
        None => {
            let limit = PROGRAM_LIMIT.as_secs();
            Err(format!("{} ran past {limit} s and was stopped; stderr: {}", exe.display(), stderr.trim_end()))
        }
    }
}

/// What the trials know of the driver in use.
#[derive(Debug)]
struct Driver {
    /// The path the backend loaded (a bare name when the system loader found it).
    loaded: PathBuf,
    /// The file mapped into this process, from `/proc/self/maps`.
    file: Option<PathBuf>,
    /// The folder the C programs link against and find the driver in.
    folder: PathBuf,
    /// `mempool_cuda_shim_version`'s answer when the library is the project's CPU libcuda.
    cpu_library: Option<String>,
}

impl Driver {
    fn of(dev: &Cuda) -> Driver {
        let loaded = dev.runtime().path().to_path_buf();
        let file = mapped_driver();
        let folder = if loaded.is_absolute() { loaded.parent() } else { file.as_deref().and_then(Path::parent) }
            .map_or_else(PathBuf::new, Path::to_path_buf);
        Driver { cpu_library: mempool_cuda::probe::cpu_libcuda_version(dev.runtime()), loaded, file, folder }
    }

    /// The report's first lines.
    fn describe(&self, dev: &Cuda, mode: Mode) -> String {
        let mut md = String::new();
        let _ = write!(md, "Driver: `{}`", self.loaded.display());
        match &self.file {
            Some(file) if *file != self.loaded => {
                let _ = writeln!(md, " (the file `{}`)", file.display());
            }
            _ => md.push('\n'),
        }
        let v = dev.driver_version();
        let _ = writeln!(md, "\nDriver version: {}.{} ({v})", v / 1000, v % 1000 / 10);
        let library = match (&self.cpu_library, mode) {
            (Some(version), Mode::Cpu) => format!("the project's CPU libcuda (`{version}`), accepted by {SWITCH}=cpu"),
            (Some(version), Mode::Nvidia) => format!("the project's CPU libcuda (`{version}`)"),
            (None, Mode::Cpu) => format!("NVIDIA's driver ({SWITCH}=cpu)"),
            (None, Mode::Nvidia) => "NVIDIA's driver".to_string(),
        };
        let _ = writeln!(md, "\nLibrary: {library}");
        match dev.mem_info() {
            Ok(info) => {
                let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
                let _ = writeln!(md, "\nDevice 0 memory: {:.2} GiB, {:.2} GiB free", gib(info.total), gib(info.free));
            }
            Err(e) => {
                let _ = writeln!(md, "\nDevice 0 memory: unknown ({})", first_line_of(&e.to_string()));
            }
        }
        let limits = if dev.driver_limits_pool_size() { "the driver" } else { "the backend (driver before 12.2)" };
        let _ = writeln!(md, "\nPool size limit enforced by: {limits}");
        let checked = if self.cpu_library.is_some() {
            "checked by the library"
        } else {
            "not promised by the driver (s20 and s28 are not run)"
        };
        let _ = writeln!(md, "\nBad free pointers: {checked}\n");
        md
    }
}

/// The report's lines on the machine: its glibc, its kernel and the NVIDIA kernel
/// module's version, where there is one.
fn host() -> String {
    let glibc = Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "glibc unknown".to_string());
    let kernel = first_line("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".to_string());
    let mut md = format!("Host: {glibc}, Linux {kernel}\n");
    if let Some(module) = first_line("/proc/driver/nvidia/version") {
        let _ = writeln!(md, "\nKernel module: {module}");
    }
    md
}

fn first_line(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| first_line_of(&s)).filter(|s| !s.is_empty())
}

fn first_line_of(s: &str) -> String {
    s.lines().next().unwrap_or_default().trim().to_string()
}

/// The driver file mapped into this process (the target of any link), if one is.
fn mapped_driver() -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .map(PathBuf::from)
        .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("libcuda.so")))
}

/// The report: written after every result, so a run that is stopped leaves what it found.
#[derive(Debug)]
struct Report {
    path: PathBuf,
    header: String,
    probe: ProbeTable,
    /// Every trial and its result, in order.
    results: Vec<(String, String)>,
}

impl Report {
    fn record(&mut self, name: &str, line: String) {
        let line = line.replace('\n', " ");
        match self.results.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = line,
            None => self.results.push((name.to_string(), line)),
        }
        self.write();
    }

    /// Writes why nothing ran, and exits with 1.
    fn refuse(&mut self, why: &str) -> ! {
        let _ = writeln!(self.header, "\n## Not run\n\n{why}");
        eprintln!("{why}");
        self.write();
        eprintln!("report: {}", self.path.display());
        std::process::exit(1)
    }

    fn write(&self) {
        let mut md = String::from("# CUDA hardware report\n\n");
        md.push_str(&self.header);
        if !self.results.is_empty() {
            md.push_str("\n## Probe\n\n");
            match &*self.probe.lock().unwrap_or_else(PoisonError::into_inner) {
                Some(table) => md.push_str(table),
                None => md.push_str("Not run, or it did not finish (see `cuda_hw::probe` below).\n"),
            }
            let count = |f: &dyn Fn(&str) -> bool| self.results.iter().filter(|(_, r)| f(r)).count();
            let passed = count(&|r| r == "ok" || r.starts_with("ok: "));
            let failed = count(&|r| r.starts_with("FAILED"));
            let not_run = count(&|r| r.starts_with("not run"));
            let unfinished = self.results.len() - passed - failed - not_run;
            let _ = writeln!(
                md,
                "\n## Results\n\n{passed} passed, {failed} failed, {not_run} not run, {unfinished} not finished\n\n\
                 | trial | result |\n|---|---|"
            );
            for (name, line) in &self.results {
                let _ = writeln!(md, "| {name} | {} |", line.replace('|', "\\|"));
            }
        }
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Err(e) = std::fs::write(&self.path, md) {
            eprintln!("cannot write {}: {e}", self.path.display());
        }
    }
}

/// [`REPORT_VAR`], else `target/cuda-report.md` (this binary is `target/<profile>/deps/<name>`).
fn report_path() -> PathBuf {
    if let Some(path) = std::env::var_os(REPORT_VAR).filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().unwrap_or_default();
    exe.ancestors().nth(3).map_or_else(|| PathBuf::from("target"), Path::to_path_buf).join("cuda-report.md")
}
