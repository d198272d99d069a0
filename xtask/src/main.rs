//! Project automation, in plain Rust: `cargo xtask <task>`, one module per task.
//!
//! - `alloc` ([`alloc`]): the pluggable-allocator library installed with its headers and
//!   pkg-config file.
//! - `ci` ([`ci`]): what `.ci/run` runs.
//! - `features` ([`features`]): the facade under every backend-feature combination, and the
//!   downstream example.
//! - `package` ([`package`]): every publishable crate packaged and built from its
//!   `.crate` file.
//! - `python` ([`python`]): the Python package `python/` built with maturin, installed in a
//!   virtual environment and tested with pytest.
//! - `shim` ([`shim`]): the drop-in ACL library (or, with `--cuda`, the CPU libcuda) laid
//!   out for loading; C and C++ programs compiled against the project's headers run on it.
//! - `soak` ([`soak`]): the model-based property test, 100,000 cases per profile and mode.
//! - `teardown` ([`teardown`]): the teardown patterns of CANN's programs on the drop-in
//!   library, 1,000 runs with random delays (`cargo test` runs 52).
//! - `loom` ([`loom`]): the model check of the emulator's concurrency core; a small
//!   configuration of it is also a test of this crate.
//! - `bench` ([`bench`], [`report`]): the benchmarks and their report.
//! - `tidy` ([`tidy`]): repository hygiene; also a test of this crate, so
//!   `cargo test --workspace` runs it.
//!
//! The library part of this package ([`xtask::c`]) is what the workspace's tests share
//! with these tasks: the one compiler line for C and C++ programs on the drop-in library.

use std::process::ExitCode;

mod alloc;
mod bench;
mod ci;
mod cuda_kit;
mod features;
mod loom;
mod package;
mod python;
mod report;
mod shim;
mod soak;
mod teardown;
mod tidy;
mod util;

const USAGE: &str = "usage: cargo xtask <task>

tasks:
  alloc     [--prefix DIR]: build libmempool_alloc.so (crates/mempool-alloc) optimized and
            install it with its headers and a pkg-config file under DIR (default
            target/mempool-alloc): DIR/lib, DIR/include, DIR/lib/pkgconfig/mempool_alloc.pc
  ci        the README's test command, the C smoke program and two C/C++ samples under
            valgrind memcheck, the feature combinations, fmt, clippy, docs, packaging, tidy
            and the python step (what .ci/run runs)
  cuda-kit  target/cuda-kit: the CUDA hardware trials (tests/cuda_hardware.rs) and the CUDA C
            programs built in release, with a run.sh for a machine with an NVIDIA driver and
            no Rust (copy the folder there, run ./run.sh, send back cuda-report.md)
  features  the facade under every backend-feature combination, and the downstream example
  package   every publishable crate packaged (cargo package --workspace, the crates with
            publish = false left out) and built from its .crate file
  python    the Python package (python/): a virtual environment in target/py-venv with maturin
            and pytest from the package registry, fmt and clippy on its crate, the wheel
            built (maturin build, into target/wheels) and installed, its exports checked
            with nm, pytest python/tests; without python3 it says not run
  shim      [--release] [--lib acl_rt|ascendcl] [PROGRAM|FILE.c|FILE.cpp [ARGS...]]:
            build and lay out the drop-in libacl_rt.so (also as libascendcl.so); run PROGRAM
            on it, a source file compiled first (C11 or C++17) against the project's headers
            (backends/acl-shim/include: #include <acl/acl.h>) and linked as -lacl_rt, or as
            -lascendcl with --lib ascendcl
            --cuda [--release] [PROGRAM|FILE.c|FILE.cpp [ARGS...]]: the same for the CPU
            libcuda, laid out as target/<profile>/cuda-shim/lib64/libcuda.so.1 (and
            libcuda.so); a source file is compiled against backends/cuda-shim/include
            (#include <cuda.h>) and linked as -lcuda; prints the MEMPOOL_CUDA_LIBRARY to export
  teardown  the teardown patterns of CANN's programs (tests/c/teardown), C and C++, both
            profiles, 1,000 runs with random worker delays (cargo test runs 52)
  soak      the reference model against the emulator, 100,000 cases per profile and mode (release)
  loom      the model check of the emulator's concurrency core: small programs in every
            interleaving with up to 3 preemptions (LOOM_MAX_PREEMPTIONS sets the bound;
            `none`: no bound), built with --cfg loom in target/loom (release)
  bench     the benchmarks against their baselines; writes target/bench-report.md
  tidy      repository hygiene: whitespace, unfinished code, manifests, .ci/run and the README's test command

environment:
  MEMPOOL_TRACES  the folder of real allocation traces that tests may read; when it is unset
                  and ../shared/traces exists beside the repository, ci and bench set it to
                  that folder for the steps they run";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("alloc") => alloc::run_all(&args[1..]),
        Some("ci") => ci::run_all(),
        Some("cuda-kit") => cuda_kit::run_all(&args[1..]),
        Some("features") => features::run_all(&[]),
        Some("package") => package::run_all(&[]),
        Some("python") => python::run_all(),
        Some("shim") => shim::run_all(&args[1..]),
        Some("soak") => soak::run_all(),
        Some("teardown") => teardown::run_all(),
        Some("loom") => loom::run_all(),
        Some("bench") => bench::run_all(),
        Some("tidy") => ci::tidy(),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}
