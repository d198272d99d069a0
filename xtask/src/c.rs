//! C and C++ programs on the drop-in ACL library: the one compiler line, used by the tests
//! `tests/c_smoke.rs` (`tests/c/smoke.c`) and `tests/c_samples.rs` (`tests/c/samples/`)
//! and by `cargo xtask shim FILE.c|FILE.cpp`, and valgrind memcheck as `cargo xtask ci`
//! runs those tests under it.
//!
//! Programs include the project's CANN-compatible headers as CANN programs do
//! (`#include <acl/acl.h>`, `#include <acl/acl_rt_memory_soma.h>`), from [`headers`].

use std::path::{Path, PathBuf};
use std::process::Command;

/// When set (to anything), the tests `tests/c_smoke.rs` and `tests/c_samples.rs` run their
/// programs (the smoke program, and the samples of that test's valgrind list) under
/// [`memcheck`]; `cargo xtask ci` sets it for those tests' second run.
pub const VALGRIND_VAR: &str = "MEMPOOL_SMOKE_VALGRIND";

/// The workspace root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace root")
}

/// The include folder of the project's ACL headers, `backends/acl-shim/include` (it holds
/// `acl/acl.h`, `acl/acl_base.h`, `acl/acl_rt.h` and `acl/acl_rt_memory_soma.h`).
pub fn headers() -> PathBuf {
    root().join("backends/acl-shim/include")
}

/// The folder of the project's own C and C++ programs, `tests/c`: `smoke.c` and the
/// CANN-style samples in `samples/`.
pub fn programs() -> PathBuf {
    root().join("tests/c")
}

/// The language of a source file, from its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// `.c`: C11, compiled with `$CC` (or `cc`).
    C,
    /// `.cpp`, `.cc` or `.cxx`: C++17, compiled with `$CXX` (or `c++`).
    Cxx,
}

impl Lang {
    /// The language of `src`, or `None` when its extension names neither.
    pub fn of(src: &Path) -> Option<Lang> {
        match src.extension()?.to_str()? {
            "c" => Some(Lang::C),
            "cpp" | "cc" | "cxx" => Some(Lang::Cxx),
            _ => None,
        }
    }

    /// The compiler (from its variable, or the default) and the language standard.
    fn compiler(self) -> (String, &'static str) {
        let (var, default, std) = match self {
            Lang::C => ("CC", "cc", "-std=c11"),
            Lang::Cxx => ("CXX", "c++", "-std=c++17"),
        };
        (std::env::var(var).unwrap_or_else(|_| default.to_string()), std)
    }
}

/// The name a program links the drop-in library by: both lie in the laid-out
/// `lib64` folder of `cargo xtask shim`, as both lie in CANN's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Library {
    /// `-lacl_rt`: the runtime library.
    #[default]
    AclRt,
    /// `-lascendcl`: the name most CANN programs link by.
    AscendCl,
}

impl Library {
    /// The name after `-l`.
    pub fn link_name(self) -> &'static str {
        match self {
            Library::AclRt => "acl_rt",
            Library::AscendCl => "ascendcl",
        }
    }

    /// `acl_rt` or `ascendcl` (also as `libacl_rt.so` / `libascendcl.so`).
    pub fn parse(name: &str) -> Option<Library> {
        let bare = name.strip_prefix("lib").unwrap_or(name);
        match bare.strip_suffix(".so").unwrap_or(bare) {
            "acl_rt" => Some(Library::AclRt),
            "ascendcl" => Some(Library::AscendCl),
            _ => None,
        }
    }
}

/// Compiles the C or C++ program `src` (the language from its extension, see [`Lang`])
/// into `exe`, against the headers of [`headers`] and the drop-in library in `lib_dir`
/// (also its run-time search path), linked as `library`. `strict` adds
/// `-Wall -Wextra -Werror`, as for the project's own programs.
///
/// What the compiler prints goes to stderr when it succeeds (warnings), and into the error
/// when it fails.
///
/// # Errors
///
/// A message when the extension is neither C nor C++, or when the compiler cannot run or
/// fails, with what it printed.
pub fn compile(src: &Path, exe: &Path, lib_dir: &Path, library: Library, strict: bool) -> Result<(), String> {
    let build = Build {
        includes: vec![headers()],
        lib_dirs: vec![lib_dir.to_path_buf()],
        libs: vec![format!("-l{}", library.link_name())],
        defines: Vec::new(),
        strict,
    };
    build.compile(src, exe)
}

/// A compiler line for a program on any of the project's C libraries: the one
/// [`compile`] uses for the drop-in ACL library, with the include folders, libraries and
/// macros the caller names.
#[derive(Debug, Clone, Default)]
pub struct Build {
    /// `-I` folders.
    pub includes: Vec<PathBuf>,
    /// `-L` folders, each also a run-time search path (`-Wl,-rpath`).
    pub lib_dirs: Vec<PathBuf>,
    /// Library arguments, as given (`-lacl_rt`, `-l:libcuda.so.1`).
    pub libs: Vec<String>,
    /// `-D` macros (`FLAVOUR_ACL`, `NAME=value`).
    pub defines: Vec<String>,
    /// `-Wall -Wextra -Werror`.
    pub strict: bool,
}

impl Build {
    /// Compiles `src` (the language from its extension) into `exe`.
    ///
    /// # Errors
    ///
    /// As [`compile`].
    pub fn compile(&self, src: &Path, exe: &Path) -> Result<(), String> {
        let lang = Lang::of(src)
            .ok_or_else(|| format!("{}: not a C (.c) or C++ (.cpp, .cc, .cxx) source file", src.display()))?;
        let (compiler, std) = lang.compiler();
        let mut cmd = Command::new(&compiler);
        cmd.arg(std);
        if self.strict {
            cmd.args(["-Wall", "-Wextra", "-Werror"]);
        }
        cmd.args(["-O1", "-pthread"]);
        for d in &self.defines {
            cmd.arg(format!("-D{d}"));
        }
        for i in &self.includes {
            cmd.arg("-I").arg(i);
        }
        cmd.arg(src).arg("-o").arg(exe);
        for l in &self.lib_dirs {
            cmd.arg(format!("-L{}", l.display())).arg(format!("-Wl,-rpath,{}", l.display()));
        }
        let out = cmd.args(&self.libs).output().map_err(|e| format!("the compiler `{compiler}` could not run: {e}"))?;
        if out.status.success() {
            // Warnings, when not strict.
            eprint!("{}", String::from_utf8_lossy(&out.stderr));
            Ok(())
        } else {
            Err(format!(
                "compiling {} failed ({}):\n{}",
                src.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }
}

/// Why the compiler of `lang` cannot be used here (`$CC`/`cc`, `$CXX`/`c++`), or `None`
/// when its `--version` runs.
pub fn compiler_missing(lang: Lang) -> Option<String> {
    let (compiler, _) = lang.compiler();
    match Command::new(&compiler).arg("--version").stdin(std::process::Stdio::null()).output() {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!("the compiler `{compiler}` answers {} to --version", o.status)),
        Err(e) => Some(format!("no compiler `{compiler}`: {e}")),
    }
}

/// Whether `valgrind` runs here.
pub fn valgrind_installed() -> bool {
    Command::new("valgrind").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// `exe` under valgrind memcheck: any memcheck error (invalid read or write, use of
/// uninitialised memory, bad free) and any definitely lost block make it exit with 1.
/// Other leak kinds are not errors: the drop-in library keeps process-wide state until
/// exit by design (the emulator, its registries, the worker threads of default streams,
/// whose stacks show as "possibly lost"), and the Rust runtime has its own thread-local
/// and static allocations.
pub fn memcheck(exe: &Path) -> Command {
    let mut cmd = Command::new("valgrind");
    cmd.args(["--error-exitcode=1", "--leak-check=full", "--show-leak-kinds=definite"])
        .args(["--errors-for-leak-kinds=definite", "-q"])
        .arg(exe);
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_language_follows_the_extension() {
        assert_eq!(Lang::of(Path::new("a/smoke.c")), Some(Lang::C));
        for cxx in ["x.cpp", "x.cc", "x.cxx"] {
            assert_eq!(Lang::of(Path::new(cxx)), Some(Lang::Cxx), "{cxx}");
        }
        for other in ["x.h", "x", "x.C.txt", "prog"] {
            assert_eq!(Lang::of(Path::new(other)), None, "{other}");
        }
    }

    #[test]
    fn both_library_names_parse() {
        assert_eq!(Library::parse("ascendcl"), Some(Library::AscendCl));
        assert_eq!(Library::parse("libascendcl.so"), Some(Library::AscendCl));
        assert_eq!(Library::parse("acl_rt"), Some(Library::AclRt));
        assert_eq!(Library::parse("cudart"), None);
        assert_eq!(Library::default().link_name(), "acl_rt");
    }

    #[test]
    fn the_headers_are_the_shims() {
        for h in ["acl.h", "acl_base.h", "acl_rt.h", "acl_rt_memory_soma.h"] {
            assert!(headers().join("acl").join(h).is_file(), "{h} is missing from {}", headers().display());
        }
        assert!(programs().join("smoke.c").is_file());
    }

    #[test]
    fn a_file_of_another_language_is_refused_before_any_compiler_runs() {
        let e = compile(Path::new("prog.rs"), Path::new("prog"), Path::new("."), Library::AclRt, true).unwrap_err();
        assert!(e.contains("not a C (.c) or C++"), "{e}");
    }
}
