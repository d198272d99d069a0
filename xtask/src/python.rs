//! `cargo xtask python`: the Python package `python/` (`mempool_hal`, pyo3 and maturin),
//! a workspace of its own, checked the way a user installs it:
//!
//! 1. `python3` (3.9 or later) makes a virtual environment under `target/py-venv` (kept
//!    between runs) and pip installs maturin and pytest into it from the package registry;
//! 2. `cargo fmt --check` and `cargo clippy --all-targets -- -D warnings` on the package's
//!    crate (the root workspace's steps do not reach it);
//! 3. `pip install ./python` into a virtual environment made fresh for it (`target/py-install`):
//!    pip builds the wheel through maturin, the PEP 517 backend `pyproject.toml` names, as a
//!    user's install does; the installed wheel's `METADATA` must name the licence
//!    (`License-Expression`), `Requires-Python` and the classifiers ([`metadata_problems`]);
//! 4. `nm -D --defined-only` on the installed extension module must list every C function
//!    of the allocator library (`mempool_hal.EXPORTS`); without `nm` this check is left to
//!    the tests, which open the module with `ctypes`;
//! 5. `pytest python/tests` on that install: statistics, snapshots, a replay, the emulator,
//!    the exported names, all on the emulator backend; and NVIDIA's `cuda.core` on the CPU
//!    `libcuda.so.1` ([`CUDA_PYTHON`], wheels pinned and installed from the registry into the
//!    same environment; the built `mempool-cuda-shim` laid out as `libcuda.so` and
//!    `libcuda.so.1` in `target/cuda-shim-lib`, named by `MEMPOOL_CUDA_SHIM_DIR`);
//! 6. `maturin sdist` (into `target/py-dist`), the source distribution installed into another
//!    fresh environment (`target/py-sdist`), its metadata and exports checked there.
//!
//! Every build shares the repository's `target/` (`CARGO_TARGET_DIR`), so the crates under
//! the package compile once per profile.
//!
//! Without `python3` (or with one older than 3.9) the step is not run, and says so: never
//! passed. A `python3` without its `venv` module fails the step, naming the package to
//! install.

use crate::util::{cargo, target_dir, workspace_root};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// What the step came to.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Every part ran and passed.
    Passed,
    /// Not run, and why: not a pass.
    NotRun(String),
}

/// The interpreter the virtual environment is made from.
const PYTHON: &str = "python3";

/// The oldest Python the package supports (its abi3 floor).
const OLDEST: (u32, u32) = (3, 9);

/// What pip installs from the registry: maturin 1.9.4 is the first to tell pyo3 it builds an
/// extension module (`PYO3_BUILD_EXTENSION_MODULE`).
const TOOLS: [&str; 2] = ["maturin>=1.9.4,<2", "pytest>=7"];

/// NVIDIA's Python CUDA stack, pinned, that `python/tests/test_cuda_core.py` runs on the CPU
/// `libcuda.so.1` (wheels only: nothing is built; no `[cu13]` extra, which would pull in
/// NVIDIA's runtime libraries).
const CUDA_PYTHON: [&str; 4] = ["cuda-core==1.2.2", "cuda-bindings==13.5.0", "cuda-pathfinder==1.9.1", "numpy>=1.24"];

/// The package's folder.
fn package_dir() -> PathBuf {
    workspace_root().join("python")
}

/// `cargo xtask python`.
pub(crate) fn run_all() -> Result<(), String> {
    step().map(drop)
}

/// The step, as `ci` runs it.
pub(crate) fn step() -> Result<Outcome, String> {
    eprintln!("==> the Python package (python/): virtual environment, fmt, clippy, maturin, nm, pytest");
    let version = python_version(PYTHON);
    let outcome = match version {
        None => Outcome::NotRun(format!("no {PYTHON}")),
        Some(v) if v < OLDEST => Outcome::NotRun(format!(
            "{PYTHON} is {}.{}, the package needs {}.{} or later",
            v.0, v.1, OLDEST.0, OLDEST.1
        )),
        Some(_) => {
            let start = Instant::now();
            build_and_test()?;
            eprintln!("==> python: passed in {:.0} s", start.elapsed().as_secs_f64());
            Outcome::Passed
        }
    };
    if let Outcome::NotRun(why) = &outcome {
        eprintln!("==> python: not run: {why}");
    }
    Ok(outcome)
}

fn build_and_test() -> Result<(), String> {
    let target = target_dir();
    let tools = target.join("py-venv");
    let tools_py = venv_python(&tools);
    if !tools_py.is_file() {
        make_venv(&tools)?;
    }
    pip(&tools_py, &TOOLS)?;

    // The package's own workspace: checked from its folder (where its `.cargo/config.toml`
    // is), against the environment's Python, in the repository's target folder.
    let in_package = |c: &mut Command| {
        c.current_dir(package_dir()).env("CARGO_TARGET_DIR", &target).env("PYO3_PYTHON", &tools_py);
    };
    let mut fmt = Command::new(cargo());
    fmt.args(["fmt", "--check"]);
    in_package(&mut fmt);
    run(&mut fmt, "cargo fmt --check (python/)")?;
    let mut clippy = Command::new(cargo());
    clippy.args(["clippy", "--all-targets", "--", "-D", "warnings"]);
    in_package(&mut clippy);
    run(&mut clippy, "cargo clippy --all-targets -- -D warnings (python/)")?;

    // 1. `pip install ./python`, the usual way: pip builds the wheel through maturin, the
    //    PEP 517 backend pyproject.toml names (fetched into pip's isolated build
    //    environment), in a virtual environment made fresh for it.
    let fresh = target.join("py-install");
    let py = make_venv(&fresh)?;
    pip(&py, &TOOLS[1..])?;
    let mut install = Command::new(&py);
    install.args(["-m", "pip", "install", "--disable-pip-version-check", "--quiet", "./python"]);
    install.current_dir(workspace_root()).env("CARGO_TARGET_DIR", &target);
    run(&mut install, "pip install ./python (a fresh virtual environment)")?;
    check_metadata(&py)?;
    check_exports(&py)?;
    let mut cuda = Command::new(&py);
    cuda.args(["-m", "pip", "install", "--disable-pip-version-check", "--quiet", "--only-binary=:all:"])
        .args(CUDA_PYTHON);
    run(&mut cuda, &format!("pip install {}", CUDA_PYTHON.join(" ")))?;
    let shim_dir = cuda_shim_dir(&target)?;
    let mut pytest = Command::new(&py);
    // No caches or bytecode written into the source tree.
    pytest.args(["-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "python/tests"]);
    pytest.current_dir(workspace_root()).env("PYTHONDONTWRITEBYTECODE", "1").env("MEMPOOL_CUDA_SHIM_DIR", &shim_dir);
    run(&mut pytest, "pytest python/tests")?;

    // 2. The source distribution: `maturin sdist` (the crates the package depends on
    //    travel in it), installed into another fresh environment, where it is imported.
    let dist = target.join("py-dist");
    for old in files_in(&dist, ".tar.gz") {
        std::fs::remove_file(&old).map_err(|e| format!("{}: {e}", old.display()))?;
    }
    let mut sdist = Command::new(tools.join("bin").join("maturin"));
    sdist.args(["sdist", "--out"]).arg(&dist);
    in_package(&mut sdist);
    run(&mut sdist, "maturin sdist (python/)")?;
    let archive = match files_in(&dist, ".tar.gz").as_slice() {
        [one] => one.clone(),
        other => return Err(format!("maturin sdist left {} mempool_hal archives in {}", other.len(), dist.display())),
    };
    let py = make_venv(&target.join("py-sdist"))?;
    let mut install = Command::new(&py);
    install.args(["-m", "pip", "install", "--disable-pip-version-check", "--quiet"]).arg(&archive);
    install.current_dir(&dist).env("CARGO_TARGET_DIR", &target);
    run(&mut install, &format!("pip install {} (a fresh virtual environment)", archive.display()))?;
    check_metadata(&py)?;
    check_exports(&py)
}

/// The interpreter of the virtual environment `venv`.
/// Builds the CPU `libcuda.so` and lays it out as `libcuda.so` and `libcuda.so.1` in a
/// folder of its own (`target/cuda-shim-lib`), for the `cuda.core` test.
fn cuda_shim_dir(target: &Path) -> Result<PathBuf, String> {
    let mut build = Command::new(cargo());
    build.args(["build", "-p", "mempool-cuda-shim"]).current_dir(workspace_root());
    run(&mut build, "cargo build -p mempool-cuda-shim")?;
    let lib = target.join("debug").join("libcuda.so");
    let dir = target.join("cuda-shim-lib");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for name in ["libcuda.so", "libcuda.so.1"] {
        let link = dir.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&lib, &link).map_err(|e| format!("{}: {e}", link.display()))?;
    }
    Ok(dir)
}

fn venv_python(venv: &Path) -> PathBuf {
    venv.join("bin").join("python")
}

/// Makes the virtual environment `venv` afresh (what was there is removed); its python.
fn make_venv(venv: &Path) -> Result<PathBuf, String> {
    if venv.exists() {
        std::fs::remove_dir_all(venv).map_err(|e| format!("{}: {e}", venv.display()))?;
    }
    let mut c = Command::new(PYTHON);
    c.args(["-m", "venv"]).arg(venv);
    run(&mut c, &format!("{PYTHON} -m venv {}", venv.display()))
        .map_err(|e| format!("{e} (on Debian and Ubuntu the venv module is the package python3-venv)"))?;
    Ok(venv_python(venv))
}

/// pip installs `what` from the package registry into the environment of `py`.
fn pip(py: &Path, what: &[&str]) -> Result<(), String> {
    let mut pip = Command::new(py);
    pip.args(["-m", "pip", "install", "--disable-pip-version-check", "--quiet"]).args(what);
    run(&mut pip, &format!("pip install {}", what.join(" ")))
}

/// What `py -c code` prints; `what` names it in errors.
fn python_says(py: &Path, code: &str, what: &str) -> Result<String, String> {
    let out = Command::new(py)
        .args(["-c", code])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .map_err(|e| format!("{what}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{what} failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The installed package's core metadata (its wheel's `METADATA`) names the licence, the
/// supported Pythons and the classifiers: see [`metadata_problems`].
fn check_metadata(py: &Path) -> Result<(), String> {
    let code = "import importlib.metadata as m; print(m.distribution('mempool_hal').read_text('METADATA'))";
    let metadata = python_says(py, code, "reading mempool_hal's metadata")?;
    match metadata_problems(&metadata).as_slice() {
        [] => {
            eprintln!("==> the installed wheel's METADATA: licence, Requires-Python and classifiers as declared");
            Ok(())
        }
        problems => Err(format!("mempool_hal's METADATA: {}", problems.join("; "))),
    }
}

/// What core metadata (`METADATA`, header lines up to the first blank one) lacks: the
/// licence as an SPDX expression (`License-Expression`, PEP 639) and no licence classifier
/// beside it, `Requires-Python` at [`OLDEST`], and classifiers for Python 3 only and each
/// minor version from [`OLDEST`] to 3.13.
fn metadata_problems(metadata: &str) -> Vec<String> {
    let headers: Vec<(&str, &str)> =
        metadata.lines().take_while(|l| !l.trim().is_empty()).filter_map(|l| l.split_once(": ")).collect();
    let all = |name: &str| headers.iter().filter(|(k, _)| *k == name).map(|(_, v)| *v).collect::<Vec<_>>();
    let mut problems = Vec::new();
    if all("License-Expression") != ["MIT OR Apache-2.0"] {
        problems.push(format!("License-Expression is {:?}, not MIT OR Apache-2.0", all("License-Expression")));
    }
    let requires = format!(">={}.{}", OLDEST.0, OLDEST.1);
    if all("Requires-Python") != [requires.as_str()] {
        problems.push(format!("Requires-Python is {:?}, not {requires}", all("Requires-Python")));
    }
    let classifiers = all("Classifier");
    let mut wanted = vec!["Programming Language :: Python :: 3 :: Only".to_string()];
    wanted.extend((OLDEST.1..=13).map(|minor| format!("Programming Language :: Python :: 3.{minor}")));
    for c in wanted {
        if !classifiers.contains(&c.as_str()) {
            problems.push(format!("no classifier {c:?}"));
        }
    }
    if let Some(c) = classifiers.iter().find(|c| c.starts_with("License ::")) {
        problems.push(format!("a licence classifier ({c}) beside License-Expression"));
    }
    problems
}

/// Runs `c`, described as `what`; fails unless it exits with 0.
fn run(c: &mut Command, what: &str) -> Result<(), String> {
    eprintln!("==> {what}");
    let status = c.status().map_err(|e| format!("{what}: cannot run {:?}: {e}", c.get_program()))?;
    if status.success() { Ok(()) } else { Err(format!("{what} failed ({status})")) }
}

/// The `(major, minor)` version of the interpreter `python`, or `None` when there is none.
fn python_version(python: &str) -> Option<(u32, u32)> {
    let out = Command::new(python)
        .args(["-c", "import sys; print(sys.version_info[0], sys.version_info[1])"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    parse_version(&String::from_utf8_lossy(&out.stdout))
}

/// `"3 11\n"` as `(3, 11)`.
fn parse_version(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.split_whitespace().map(str::parse::<u32>);
    match (parts.next(), parts.next(), parts.next()) {
        (Some(Ok(major)), Some(Ok(minor)), None) => Some((major, minor)),
        _ => None,
    }
}

/// The package's files in `dir` whose names end in `ending` (`mempool_hal-*.tar.gz`).
fn files_in(dir: &Path, ending: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("mempool_hal-") && n.ends_with(ending))
        })
        .collect();
    found.sort();
    found
}

/// `nm -D --defined-only` on the installed extension module lists every export the module
/// names (`mempool_hal.EXPORTS`); skipped, saying so, where `nm` is missing.
fn check_exports(py: &Path) -> Result<(), String> {
    let code = "import mempool_hal as m; print(m.library_path()); print(*m.EXPORTS)";
    let text = python_says(py, code, "importing mempool_hal")?;
    let mut lines = text.lines();
    let (Some(library), Some(names)) = (lines.next(), lines.next()) else {
        return Err(format!("mempool_hal printed no library path and exports: {text:?}"));
    };
    let names: Vec<&str> = names.split_whitespace().collect();
    eprintln!("==> nm -D --defined-only {library}: {} exports", names.len());
    let nm = match Command::new("nm").args(["-D", "--defined-only", library]).output() {
        Ok(nm) if nm.status.success() => nm,
        Ok(nm) => return Err(format!("nm failed: {}", String::from_utf8_lossy(&nm.stderr))),
        Err(e) => {
            eprintln!("    nm cannot run ({e}): the exports are checked by the tests only (ctypes)");
            return Ok(());
        }
    };
    match missing_exports(&String::from_utf8_lossy(&nm.stdout), &names).as_slice() {
        [] if !names.is_empty() => Ok(()),
        [] => Err("mempool_hal.EXPORTS is empty".into()),
        missing => Err(format!("{library} does not export {}", missing.join(", "))),
    }
}

/// The `names` that `nm` output does not list as defined functions (`<address> T <name>`).
fn missing_exports<'a>(nm: &str, names: &[&'a str]) -> Vec<&'a str> {
    let defined: Vec<&str> = nm
        .lines()
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>().as_slice() {
            [_, "T", name] => Some(*name),
            _ => None,
        })
        .collect();
    names.iter().copied().filter(|n| !defined.contains(n)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_compare() {
        assert_eq!(parse_version("3 11\n"), Some((3, 11)));
        assert_eq!(parse_version("3\n"), None);
        assert_eq!(parse_version("3 x"), None);
        assert!(parse_version("3 8").unwrap() < OLDEST && parse_version("3 10").unwrap() >= OLDEST);
        assert_eq!(python_version("mempool-no-such-python"), None);
    }

    #[test]
    fn nm_output_must_list_each_export_as_a_function() {
        let nm = "0000000000227510 T mempool_init\n\
                  00000000001b1310 T mempool_alloc\n\
                  0000000000001000 D mempool_free\n\
                  U mempool_stats\n";
        let names = ["mempool_alloc", "mempool_free", "mempool_init", "mempool_stats"];
        assert_eq!(missing_exports(nm, &names), ["mempool_free", "mempool_stats"]);
        assert!(missing_exports(nm, &["mempool_init"]).is_empty());
    }

    #[test]
    fn only_the_package_archives_are_found() {
        let dir = std::env::temp_dir().join(format!("xtask-dist-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for f in ["mempool_hal-0.1.0.tar.gz", "other-1.0.tar.gz", "mempool_hal-0.1.0-cp39-abi3-linux_x86_64.whl"] {
            std::fs::write(dir.join(f), "").unwrap();
        }
        assert_eq!(files_in(&dir, ".tar.gz"), [dir.join("mempool_hal-0.1.0.tar.gz")]);
        assert!(files_in(&dir.join("absent"), ".tar.gz").is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn metadata_must_name_the_licence_the_pythons_and_the_classifiers() {
        let mut good = String::from("Metadata-Version: 2.4\nName: mempool_hal\n");
        good.push_str("Classifier: Programming Language :: Python :: 3 :: Only\n");
        for minor in 9..=13 {
            good.push_str(&format!("Classifier: Programming Language :: Python :: 3.{minor}\n"));
        }
        good.push_str("License-Expression: MIT OR Apache-2.0\nRequires-Python: >=3.9\n\nThe description.\n");
        assert!(metadata_problems(&good).is_empty(), "{:?}", metadata_problems(&good));
        let p = metadata_problems("Name: mempool_hal\nLicense: MIT\nClassifier: License :: OSI Approved\n").join("\n");
        for what in ["License-Expression", "Requires-Python", "3 :: Only", "3.13", "licence classifier"] {
            assert!(p.contains(what), "{what} not reported: {p}");
        }
        // Headers end at the first blank line: the description cannot stand in for them.
        let late = "Name: mempool_hal\n\nLicense-Expression: MIT OR Apache-2.0\n";
        assert!(metadata_problems(late).join(" ").contains("License-Expression is []"));
    }

    #[test]
    fn the_package_is_laid_out_for_maturin() {
        let dir = package_dir();
        let pyproject = std::fs::read_to_string(dir.join("pyproject.toml")).unwrap();
        assert!(pyproject.contains("build-backend = \"maturin\""));
        assert!(pyproject.contains("module-name = \"mempool_hal\""));
        // The stub maturin ships as the package's `__init__.pyi`, with `py.typed`.
        assert!(dir.join("mempool_hal.pyi").is_file());
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(manifest.contains("crate-type = [\"cdylib\"]") && manifest.contains("[workspace]"));
        // Outside the root workspace, so that it builds without Python.
        let root = std::fs::read_to_string(workspace_root().join("Cargo.toml")).unwrap();
        assert!(root.contains("exclude = [\"python\"]"));
    }
}
