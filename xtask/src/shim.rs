//! `cargo xtask shim [--release] [--lib acl_rt|ascendcl] [PROGRAM [ARGS...]]`: builds the
//! drop-in ACL library and lays out `target/<profile>/acl-shim/lib64/` with `libacl_rt.so`
//! and `libascendcl.so`, so that `ASCEND_HOME_PATH=target/<profile>/acl-shim` makes a CANN
//! program or the Ascend backend use it. With a PROGRAM, runs it on the emulator: an
//! executable as it is, or a source file compiled first with [`xtask::c::compile`] (C11 for
//! `.c`, C++17 for `.cpp`, `.cc` and `.cxx`) against the project's CANN-compatible headers
//! in `backends/acl-shim/include` (`#include <acl/acl.h>`), linked as `-lacl_rt` or, with
//! `--lib ascendcl`, as `-lascendcl`.
//!
//! `cargo xtask shim --cuda [--release] [PROGRAM [ARGS...]]` does the same for the CPU
//! libcuda (`backends/cuda-shim`): it lays out `target/<profile>/cuda-shim/lib64/` with
//! `libcuda.so.1` and `libcuda.so`, so that `MEMPOOL_CUDA_LIBRARY` set to that
//! `libcuda.so.1` makes the CUDA backend use it, and compiles a source file against
//! `backends/cuda-shim/include` (`#include <cuda.h>`), linked as `-lcuda`.

use crate::util::{Step, run, target_dir, workspace_root};
use std::path::{Path, PathBuf};
use std::process::Command;
use xtask::c::{Lang, Library};

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
struct Options<'a> {
    release: bool,
    /// `--cuda`: the CPU libcuda instead of the ACL library.
    cuda: bool,
    /// Set by `--lib`; only for a source file.
    library: Option<Library>,
    /// The program and its arguments.
    program: &'a [String],
}

/// The options before the program; everything from the program on is its own.
fn parse(args: &[String]) -> Result<Options<'_>, String> {
    let mut opts = Options { release: false, cuda: false, library: None, program: &[] };
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match arg.as_str() {
            "--release" => opts.release = true,
            "--cuda" => opts.cuda = true,
            "--lib" => {
                let name = args.get(i + 1).ok_or("--lib needs a library name: acl_rt or ascendcl")?;
                let lib =
                    Library::parse(name).ok_or_else(|| format!("--lib {name}: the library is acl_rt or ascendcl"))?;
                opts.library = Some(lib);
                i += 1;
            }
            other if other.starts_with("--") => return Err(format!("unknown option {other}")),
            _ => break,
        }
        i += 1;
    }
    opts.program = &args[i..];
    if opts.cuda && opts.library.is_some() {
        return Err("--lib chooses the ACL library's name; with --cuda, programs link as -lcuda".into());
    }
    Ok(opts)
}

/// Builds the shim, lays out its folder, and runs the program if given.
pub(crate) fn run_all(args: &[String]) -> Result<(), String> {
    let opts = parse(args)?;
    if opts.cuda {
        return run_cuda(&opts);
    }
    let profile = if opts.release { "release" } else { "debug" };
    let mut build = vec!["build", "-p", "mempool-acl-shim"];
    if opts.release {
        build.push("--release");
    }
    run(&[Step::new("the drop-in ACL library", &build)], &[])?;
    let target = target_dir();
    let built = target.join(profile).join("libacl_rt.so");
    let home = target.join(profile).join("acl-shim");
    let lib64 = home.join("lib64");
    std::fs::create_dir_all(&lib64).map_err(|e| format!("{}: {e}", lib64.display()))?;
    for name in ["libacl_rt.so", "libascendcl.so"] {
        std::fs::copy(&built, lib64.join(name)).map_err(|e| format!("copying {}: {e}", built.display()))?;
    }
    eprintln!("laid out {}", lib64.display());
    let Some(program) = opts.program.first() else {
        println!("export ASCEND_HOME_PATH={}", home.display());
        println!("# a CANN program linked against libascendcl.so or libacl_rt.so then runs on the emulator with:");
        println!("#   LD_LIBRARY_PATH={} ./your_program", lib64.display());
        println!("# or compile one against the project's headers: -I {}", xtask::c::headers().display());
        return Ok(());
    };
    let src = Path::new(program);
    let exe = if Lang::of(src).is_some() {
        let exe = home.join(src.file_stem().unwrap_or_default());
        xtask::c::compile(src, &exe, &lib64, opts.library.unwrap_or_default(), false)?;
        exe
    } else if opts.library.is_some() {
        return Err(format!("--lib applies to a source file (.c, .cpp, .cc, .cxx); {program} is run as it is"));
    } else {
        PathBuf::from(program)
    };
    eprintln!("==> {} (ASCEND_HOME_PATH={})", exe.display(), home.display());
    run_program(&exe, &opts.program[1..], &lib64, ("ASCEND_HOME_PATH", &home))
}

/// Runs `exe` with `args`, `lib64` first in `LD_LIBRARY_PATH` and the variable `var` set.
fn run_program(exe: &Path, args: &[String], lib64: &Path, var: (&str, &Path)) -> Result<(), String> {
    let ld = match std::env::var_os("LD_LIBRARY_PATH") {
        Some(old) if !old.is_empty() => format!("{}:{}", lib64.display(), old.to_string_lossy()),
        _ => lib64.display().to_string(),
    };
    let status = Command::new(exe)
        .args(args)
        .env(var.0, var.1)
        .env("LD_LIBRARY_PATH", ld)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if status.success() { Ok(()) } else { Err(format!("{} failed ({status})", exe.display())) }
}

/// The names the CPU libcuda is laid out under: the driver's, which programs and the CUDA
/// backend load, and the link name of `-lcuda`.
const CUDA_NAMES: [&str; 2] = ["libcuda.so.1", "libcuda.so"];

/// The variable that points the CUDA backend at a driver library.
const CUDA_LIBRARY_VAR: &str = "MEMPOOL_CUDA_LIBRARY";

/// `--cuda`: builds the CPU libcuda, lays out its folder, and runs the program if given.
fn run_cuda(opts: &Options<'_>) -> Result<(), String> {
    let profile = if opts.release { "release" } else { "debug" };
    let mut build = vec!["build", "-p", "mempool-cuda-shim"];
    if opts.release {
        build.push("--release");
    }
    run(&[Step::new("the CPU libcuda", &build)], &[])?;
    let target = target_dir();
    let built = target.join(profile).join("libcuda.so");
    let lib64 = target.join(profile).join("cuda-shim").join("lib64");
    std::fs::create_dir_all(&lib64).map_err(|e| format!("{}: {e}", lib64.display()))?;
    for name in CUDA_NAMES {
        std::fs::copy(&built, lib64.join(name)).map_err(|e| format!("copying {}: {e}", built.display()))?;
    }
    let driver = lib64.join(CUDA_NAMES[0]);
    eprintln!("laid out {}", lib64.display());
    let Some(program) = opts.program.first() else {
        println!("export {CUDA_LIBRARY_VAR}={}", driver.display());
        println!("# a program linked against libcuda.so.1 then runs on the emulator with:");
        println!("#   LD_LIBRARY_PATH={} ./your_program", lib64.display());
        println!("# or compile one against the project's header: -I {}", cuda_headers().display());
        return Ok(());
    };
    let src = Path::new(program);
    let exe = match Lang::of(src) {
        Some(lang) => {
            let exe = lib64.parent().unwrap_or(&lib64).join(src.file_stem().unwrap_or_default());
            compile_cuda(lang, src, &exe, &lib64)?;
            exe
        }
        None => PathBuf::from(program),
    };
    eprintln!("==> {} ({CUDA_LIBRARY_VAR}={})", exe.display(), driver.display());
    run_program(&exe, &opts.program[1..], &lib64, (CUDA_LIBRARY_VAR, &driver))
}

/// The include folder of the project's `cuda.h`.
fn cuda_headers() -> PathBuf {
    workspace_root().join("backends/cuda-shim/include")
}

/// Compiles the C or C++ program `src` into `exe` against [`cuda_headers`], linked as
/// `-lcuda` from `lib_dir` (also its run-time search path): C11 with `$CC` (or `cc`),
/// C++17 with `$CXX` (or `c++`), as for the ACL library's programs.
fn compile_cuda(lang: Lang, src: &Path, exe: &Path, lib_dir: &Path) -> Result<(), String> {
    let (var, default, std) = match lang {
        Lang::C => ("CC", "cc", "-std=c11"),
        Lang::Cxx => ("CXX", "c++", "-std=c++17"),
    };
    let compiler = std::env::var(var).unwrap_or_else(|_| default.to_string());
    let out = Command::new(&compiler)
        .args([std, "-O1", "-pthread", "-I"])
        .arg(cuda_headers())
        .arg(src)
        .arg("-o")
        .arg(exe)
        .arg(format!("-L{}", lib_dir.display()))
        .arg("-lcuda")
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .output()
        .map_err(|e| format!("the compiler `{compiler}` could not run: {e}"))?;
    // Warnings when it succeeds, the whole output when it fails.
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    if out.status.success() { Ok(()) } else { Err(format!("compiling {} failed ({})", src.display(), out.status)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options_come_before_the_program_and_its_arguments_are_its_own() {
        let a = args("--release --lib ascendcl prog.cpp --lib x --release");
        let o = parse(&a).unwrap();
        assert!(o.release);
        assert_eq!(o.library, Some(Library::AscendCl));
        assert_eq!(o.program, &a[3..]);
        let a = args("--lib acl_rt --release");
        let o = parse(&a).unwrap();
        assert_eq!((o.release, o.library, o.program.len()), (true, Some(Library::AclRt), 0));
        assert_eq!(parse(&[]).unwrap(), Options { release: false, cuda: false, library: None, program: &[] });
    }

    #[test]
    fn cuda_is_an_option_before_the_program() {
        let a = args("--cuda --release pool.c --cuda");
        let o = parse(&a).unwrap();
        assert_eq!((o.cuda, o.release, o.library), (true, true, None));
        assert_eq!(o.program, &a[2..]);
        assert!(!parse(&args("prog --cuda")).unwrap().cuda);
        assert!(parse(&args("--cuda --lib ascendcl p.c")).unwrap_err().contains("-lcuda"));
    }

    #[test]
    fn a_bad_option_is_refused() {
        assert!(parse(&args("--lib")).unwrap_err().contains("needs a library name"));
        assert!(parse(&args("--lib cudart p.c")).unwrap_err().contains("acl_rt or ascendcl"));
        assert!(parse(&args("--debug p.c")).unwrap_err().contains("unknown option --debug"));
    }
}
