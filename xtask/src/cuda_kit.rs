//! `cargo xtask cuda-kit`: the CUDA hardware trials (`tests/cuda_hardware.rs`) packed to
//! run on a machine with an NVIDIA driver and no Rust. Build the kit here, copy the folder
//! `target/cuda-kit/` to that machine, run `./run.sh` there and send back the
//! `cuda-report.md` it leaves next to itself.
//!
//! The task
//!
//! 1. builds the test binary of `tests/cuda_hardware.rs` in release and the CPU libcuda
//!    (`backends/cuda-shim`), and copies the binary to `bin/cuda_hardware`;
//! 2. compiles the C programs of `backends/cuda-shim/tests/c/` into `c/` with that binary's
//!    own compiler line (`MEMPOOL_TEST_CUDA_BUILD_PROGRAMS`), linked with `-l:libcuda.so.1`
//!    against the CPU library laid out as `libcuda.so.1` in a temporary folder, so each
//!    program needs `libcuda.so.1` by its soname and has no run-time path: on the target
//!    machine it finds NVIDIA's driver as any CUDA program does (the task checks both in
//!    the programs' dynamic sections);
//! 3. builds `backends/cuda-shim/tests/cudarc-0.19.4/` (cudarc 0.19.4, whose loader resolves
//!    every driver name at first use: a Cargo project of its own) in release into
//!    `bin/cudarc-0.19.4`, which `run.sh` runs after the trials on the machine's driver and
//!    appends to the report;
//! 4. strips the binaries (`strip`, or cargo's `profile.release.strip` where there is no
//!    `strip`);
//! 5. records in `GLIBC_REQUIRED` the highest `GLIBC_x.y` symbol version the binaries need,
//!    read from their ELF version-needs sections (`.gnu.version_r`);
//! 6. writes `run.sh`, and fails when the folder is not under [`MAX_KIT_BYTES`].
//!
//! It prints the folder, its size and the glibc version at the end.
//!
//! `run.sh` compares the machine's glibc (`getconf GNU_LIBC_VERSION`, else
//! `ldd --version`) with `GLIBC_REQUIRED` and stops when it is older; then runs the trials
//! with `MEMPOOL_TEST_CUDA=1` (NVIDIA's driver only; the project's CPU library is refused),
//! stopped after [`TIME_LIMIT_S`] seconds where `timeout` exists, and leaves
//! `cuda-report.md` beside itself (written after every trial, so a stopped run leaves what
//! it found). Its arguments go to the test binary (a trial name filter, `--list`).
//! `MEMPOOL_CUDA_LIBRARY` passes through to the trials: a driver file, or a folder holding
//! `libcuda.so.1`, tried before the system's. `MEMPOOL_TEST_CUDA=cpu` with
//! `MEMPOOL_CUDA_LIBRARY` set to the folder `cargo xtask shim --cuda` lays out
//! (`target/debug/cuda-shim/lib64`) runs the kit on the project's CPU library, to try it on
//! a machine without a GPU:
//!
//! ```sh
//! cargo xtask cuda-kit
//! cargo xtask shim --cuda
//! MEMPOOL_TEST_CUDA=cpu MEMPOOL_CUDA_LIBRARY=$PWD/target/debug/cuda-shim/lib64 target/cuda-kit/run.sh
//! ```

use crate::util::{cargo, target_dir, workspace_root};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The largest kit the task accepts: it must copy easily (a device machine takes 64 MiB).
const MAX_KIT_BYTES: u64 = 32 << 20;

/// How long `run.sh` lets the trials run, in seconds (under five minutes).
const TIME_LIMIT_S: u32 = 280;

/// The test binary's name in the kit, and its test target.
const TEST: &str = "cuda_hardware";

/// The variable that makes the test binary only compile the C programs into a folder.
const BUILD_VAR: &str = "MEMPOOL_TEST_CUDA_BUILD_PROGRAMS";

/// The cudarc 0.19.4 program's name in the kit.
const CUDARC: &str = "cudarc-0.19.4";

/// Builds the cudarc 0.19.4 program (its own Cargo project and lockfile) in release.
fn build_cudarc_0194() -> Result<PathBuf, String> {
    let project = workspace_root().join("backends/cuda-shim/tests/cudarc-0.19.4");
    let target = target_dir().join("cudarc-0.19.4");
    let status = Command::new(cargo())
        .args(["build", "--release", "--locked", "--manifest-path"])
        .arg(project.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("building the cudarc 0.19.4 program failed ({status})"));
    }
    Ok(target.join("release/cudarc-0194-on-the-cpu-libcuda"))
}

/// The soname the C programs need.
const SONAME: &str = "libcuda.so.1";

/// Builds the kit in `target/cuda-kit`.
pub(crate) fn run_all(args: &[String]) -> Result<(), String> {
    if let Some(arg) = args.first() {
        return Err(format!("cuda-kit takes no arguments (got {arg})"));
    }
    let strip = has_strip();
    let test_exe = build_test_binary(!strip)?;
    let cpu_lib = build_cpu_library()?;

    let kit = target_dir().join("cuda-kit");
    if kit.exists() {
        std::fs::remove_dir_all(&kit).map_err(|e| format!("{}: {e}", kit.display()))?;
    }
    let (bin, c) = (kit.join("bin"), kit.join("c"));
    for dir in [&bin, &c] {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let exe = bin.join(TEST);
    std::fs::copy(&test_exe, &exe).map_err(|e| format!("copying {}: {e}", test_exe.display()))?;
    let cudarc = build_cudarc_0194()?;
    std::fs::copy(&cudarc, bin.join(CUDARC)).map_err(|e| format!("copying {}: {e}", cudarc.display()))?;

    // The CPU library as `libcuda.so.1`, only to link against: nothing points at it later.
    let link_dir = std::env::temp_dir().join(format!("mempool-cuda-kit-{}", std::process::id()));
    std::fs::create_dir_all(&link_dir).map_err(|e| format!("{}: {e}", link_dir.display()))?;
    let built = std::fs::copy(&cpu_lib, link_dir.join(SONAME))
        .map_err(|e| format!("copying {}: {e}", cpu_lib.display()))
        .and_then(|_| compile_programs(&exe, &c, &link_dir));
    let _ = std::fs::remove_dir_all(&link_dir);
    built?;

    let binaries = files(&kit)?;
    if strip {
        for file in &binaries {
            let status = Command::new("strip").arg(file).status().map_err(|e| format!("cannot run strip: {e}"))?;
            if !status.success() {
                return Err(format!("strip {} failed ({status})", file.display()));
            }
        }
    }
    let mut glibc: Vec<u32> = Vec::new();
    for file in &binaries {
        let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let elf = Elf::parse(&bytes).map_err(|e| format!("{}: {e}", file.display()))?;
        if file.starts_with(&c) {
            check_program(&elf).map_err(|e| format!("{}: {e}", file.display()))?;
        }
        if let Some(v) = elf.version_needs()?.iter().filter_map(|v| glibc_version(v)).max() {
            glibc = glibc.max(v);
        }
    }
    if glibc.is_empty() {
        return Err("no binary of the kit names a GLIBC_x.y symbol version".into());
    }
    let glibc = version_text(&glibc);
    write(&kit.join("GLIBC_REQUIRED"), &format!("{glibc}\n"))?;
    let run_sh = kit.join("run.sh");
    write(&run_sh, &run_script())?;
    set_executable(&run_sh)?;

    let size = folder_size(&kit)?;
    let mib = size as f64 / f64::from(1u32 << 20);
    if size >= MAX_KIT_BYTES {
        return Err(format!("the kit {} is {mib:.1} MiB, over the {} MiB limit", kit.display(), MAX_KIT_BYTES >> 20));
    }
    println!("cuda kit: {}", kit.display());
    println!("size: {mib:.1} MiB ({size} bytes)");
    println!("glibc required: {glibc}");
    println!("on a machine with an NVIDIA driver: copy the folder, run ./run.sh there, send back cuda-report.md");
    Ok(())
}

/// Whether a `strip` program runs here.
fn has_strip() -> bool {
    Command::new("strip").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok()
}

/// Builds the test binary in release (stripped by cargo when `cargo_strip`) and answers
/// its path, read from cargo's JSON messages.
fn build_test_binary(cargo_strip: bool) -> Result<PathBuf, String> {
    let mut args = vec!["test", "--release", "-p", "mempool-tests", "--test", TEST, "--no-run"];
    args.push("--message-format=json-render-diagnostics");
    if cargo_strip {
        args.extend(["--config", "profile.release.strip=true"]);
    }
    eprintln!("==> the trials' test binary: cargo {}", args.join(" "));
    let out = Command::new(cargo())
        .args(&args)
        .current_dir(workspace_root())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!("building the test binary failed ({})", out.status));
    }
    let messages = String::from_utf8_lossy(&out.stdout);
    messages
        .lines()
        .filter(|l| l.contains("\"reason\":\"compiler-artifact\"") && l.contains(&format!("\"name\":\"{TEST}\"")))
        .find_map(|l| json_string(l, "executable"))
        .map(PathBuf::from)
        .ok_or_else(|| format!("cargo named no executable for the test {TEST}"))
}

/// The string value of `key` in one line of JSON (the first occurrence), unescaped.
fn json_string(line: &str, key: &str) -> Option<String> {
    let start = line.find(&format!("\"{key}\":\""))? + key.len() + 4;
    let mut out = String::new();
    let mut chars = line[start..].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

/// Builds the CPU libcuda in release: `target/release/libcuda.so`.
fn build_cpu_library() -> Result<PathBuf, String> {
    let args = ["build", "--release", "-p", "mempool-cuda-shim"];
    eprintln!("==> the CPU libcuda to link the C programs against: cargo {}", args.join(" "));
    let status = Command::new(cargo())
        .args(args)
        .current_dir(workspace_root())
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("building the CPU libcuda failed ({status})"));
    }
    Ok(target_dir().join("release").join("libcuda.so"))
}

/// Has the test binary `exe` compile its C programs into `out`, linked against the
/// `libcuda.so.1` in `link_dir`.
fn compile_programs(exe: &Path, out: &Path, link_dir: &Path) -> Result<(), String> {
    eprintln!("==> the C programs, linked by soname {SONAME}: {BUILD_VAR}={} {}", out.display(), exe.display());
    let status = Command::new(exe)
        .env(BUILD_VAR, out)
        .env("MEMPOOL_CUDA_LIBRARY", link_dir)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if !status.success() {
        return Err(format!("compiling the C programs failed ({status})"));
    }
    if files(out)?.is_empty() {
        return Err(format!("no C program was built into {}", out.display()));
    }
    Ok(())
}

/// A C program of the kit must need `libcuda.so.1` by its soname and have no run-time
/// path (the temporary folder it was linked in is gone).
fn check_program(elf: &Elf<'_>) -> Result<(), String> {
    let dynamic = elf.dynamic()?;
    if !dynamic.needed.iter().any(|n| n == SONAME) {
        return Err(format!("it does not need {SONAME} (needs {:?})", dynamic.needed));
    }
    if let Some(path) = dynamic.run_paths.first() {
        return Err(format!("it has a run-time path {path:?}"));
    }
    Ok(())
}

/// The files under `dir`, in name order.
fn files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_dir() {
            out.extend(files(&path)?);
        } else {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// The bytes of every file under `dir`.
fn folder_size(dir: &Path) -> Result<u64, String> {
    let mut size = 0;
    for file in files(dir)? {
        size += std::fs::metadata(&file).map_err(|e| format!("{}: {e}", file.display()))?.len();
    }
    Ok(size)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

fn set_executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// `GLIBC_2.34` is `[2, 34]`; other names (`GLIBC_PRIVATE`, `GCC_3.0`) are `None`.
fn glibc_version(name: &str) -> Option<Vec<u32>> {
    name.strip_prefix("GLIBC_")?.split('.').map(|n| n.parse().ok()).collect::<Option<Vec<u32>>>()
}

fn version_text(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(".")
}

/// The kit's `run.sh`.
fn run_script() -> String {
    format!(
        r#"#!/bin/sh
# The CUDA hardware trials of mempool-hal (conformance suite through the CUDA backend, and
# C programs linked against libcuda.so.1), built by `cargo xtask cuda-kit`.
#
# On a machine with an NVIDIA driver (no Rust needed):   ./run.sh
# then send back cuda-report.md, written next to this file.
#
# Arguments go to the test binary (a trial name filter, --list, --nocapture).
# MEMPOOL_CUDA_LIBRARY passes through: a driver file, or a folder holding libcuda.so.1,
# tried before the system's driver.
# MEMPOOL_TEST_CUDA=cpu with MEMPOOL_CUDA_LIBRARY set to the folder `cargo xtask shim --cuda`
# lays out runs the same trials on the project's CPU libcuda, to try the kit without a GPU.
set -u
here=$(cd "$(dirname "$0")" && pwd)
required=$(cat "$here/GLIBC_REQUIRED")

have=$(getconf GNU_LIBC_VERSION 2>/dev/null | sed -n 's/^glibc \([0-9][0-9.]*\).*/\1/p')
if [ -z "$have" ]; then
    have=$(ldd --version 2>&1 | sed -n '1s/.* \([0-9][0-9]*\.[0-9][0-9.]*\)$/\1/p')
fi
if [ -z "$have" ]; then
    echo "run.sh: cannot tell this machine's glibc version; the kit needs glibc $required or newer" >&2
elif ! awk -v have="$have" -v need="$required" 'BEGIN {{
        n = split(have, h, "."); m = split(need, r, ".")
        for (i = 1; i <= (n > m ? n : m); i++) {{
            if (h[i] + 0 > r[i] + 0) exit 0
            if (h[i] + 0 < r[i] + 0) exit 1
        }}
        exit 0
    }}'; then
    echo "run.sh: this machine has glibc $have; the kit needs glibc $required or newer" >&2
    echo "run.sh: build the kit (cargo xtask cuda-kit) on a system with glibc $have or older" >&2
    exit 3
fi

mode=${{MEMPOOL_TEST_CUDA:-1}}
case "$mode" in
    1 | cpu) ;;
    *)
        echo "run.sh: MEMPOOL_TEST_CUDA is 1 (NVIDIA's driver, the default) or cpu, not '$mode'" >&2
        exit 2
        ;;
esac
export MEMPOOL_TEST_CUDA="$mode"
export MEMPOOL_TEST_CUDA_PROGRAMS="$here/c"
export MEMPOOL_TEST_CUDA_REPORT="$here/cuda-report.md"
unset {build}

echo "glibc $have (the kit needs $required); MEMPOOL_TEST_CUDA=$mode"
if command -v timeout >/dev/null 2>&1; then
    timeout -k 10 {limit} "$here/bin/{test}" "$@"
else
    "$here/bin/{test}" "$@"
fi
status=$?
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "run.sh: the trials ran past {limit} s and were stopped; the report has what they found" >&2
fi
# cudarc 0.19.4 (its loader resolves every driver name at first use) on this machine's driver.
if [ "$mode" = 1 ]; then
    {{
        echo
        echo '## cudarc 0.19.4 on the driver of this machine'
        echo
        echo '```'
        "$here/bin/{cudarc}" 2>&1
        echo "exit status $?"
        echo '```'
    }} >> "$here/cuda-report.md"
fi
echo "report: $here/cuda-report.md (please send it back)"
exit "$status"
"#,
        build = BUILD_VAR,
        cudarc = CUDARC,
        limit = TIME_LIMIT_S,
        test = TEST,
    )
}

/// A 64-bit little-endian ELF file, read as far as the kit needs: its dynamic section
/// (needed libraries, run-time paths) and its version-needs section (`.gnu.version_r`).
struct Elf<'a> {
    bytes: &'a [u8],
    sections: Vec<Section>,
}

#[derive(Debug, Clone, Copy)]
struct Section {
    kind: u32,
    offset: usize,
    size: usize,
    link: u32,
    info: u32,
}

/// What the dynamic section names.
#[derive(Debug, Default)]
struct Dynamic {
    needed: Vec<String>,
    /// `DT_RPATH` and `DT_RUNPATH`.
    run_paths: Vec<String>,
}

const SHT_DYNAMIC: u32 = 6;
const SHT_GNU_VERNEED: u32 = 0x6fff_fffe;
const DT_NEEDED: u64 = 1;
const DT_RPATH: u64 = 15;
const DT_RUNPATH: u64 = 29;

impl<'a> Elf<'a> {
    fn parse(bytes: &'a [u8]) -> Result<Elf<'a>, String> {
        if bytes.get(..4) != Some(b"\x7fELF".as_slice()) {
            return Err("not an ELF file".into());
        }
        if bytes.get(4..6) != Some([2u8, 1].as_slice()) {
            return Err("not a 64-bit little-endian ELF file".into());
        }
        let shoff = read_u64(bytes, 0x28)?;
        let (entsize, count) = (usize::from(read_u16(bytes, 0x3a)?), usize::from(read_u16(bytes, 0x3c)?));
        let mut sections = Vec::with_capacity(count);
        for i in 0..count {
            let at = shoff.checked_add(i * entsize).ok_or("section headers out of range")?;
            sections.push(Section {
                kind: read_u32(bytes, at + 4)?,
                offset: read_u64(bytes, at + 24)?,
                size: read_u64(bytes, at + 32)?,
                link: read_u32(bytes, at + 40)?,
                info: read_u32(bytes, at + 44)?,
            });
        }
        Ok(Elf { bytes, sections })
    }

    fn section(&self, index: u32) -> Result<Section, String> {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.sections.get(i).copied())
            .ok_or_else(|| format!("no section {index}"))
    }

    /// The NUL-terminated string at `at` of the string table `table`.
    fn string(&self, table: Section, at: usize) -> Result<String, String> {
        let start = table.offset.checked_add(at).ok_or("string out of range")?;
        let rest = self.bytes.get(start..table.offset + table.size).ok_or("string out of range")?;
        let end = rest.iter().position(|&b| b == 0).ok_or("unterminated string")?;
        Ok(String::from_utf8_lossy(&rest[..end]).into_owned())
    }

    /// Every version name the file needs of its libraries (`GLIBC_2.34`, ...).
    fn version_needs(&self) -> Result<Vec<String>, String> {
        let mut names = Vec::new();
        for sec in self.sections.iter().filter(|s| s.kind == SHT_GNU_VERNEED) {
            let strings = self.section(sec.link)?;
            let mut need = sec.offset;
            // `sh_info` is the number of entries.
            for _ in 0..sec.info {
                let (count, aux, next) = (
                    read_u16(self.bytes, need + 2)?,
                    read_u32(self.bytes, need + 8)?,
                    read_u32(self.bytes, need + 12)?,
                );
                let mut at = need + aux as usize;
                for _ in 0..count {
                    names.push(self.string(strings, read_u32(self.bytes, at + 8)? as usize)?);
                    at += read_u32(self.bytes, at + 12)? as usize;
                }
                if next == 0 {
                    break;
                }
                need += next as usize;
            }
        }
        Ok(names)
    }

    /// The libraries the file needs and its run-time paths.
    fn dynamic(&self) -> Result<Dynamic, String> {
        let mut out = Dynamic::default();
        for sec in self.sections.iter().filter(|s| s.kind == SHT_DYNAMIC) {
            let strings = self.section(sec.link)?;
            for entry in (sec.offset..sec.offset + sec.size).step_by(16) {
                let (tag, value) = (read_u64(self.bytes, entry)?, read_u64(self.bytes, entry + 8)?);
                match tag as u64 {
                    0 => break,
                    DT_NEEDED => out.needed.push(self.string(strings, value)?),
                    DT_RPATH | DT_RUNPATH => out.run_paths.push(self.string(strings, value)?),
                    _ => {}
                }
            }
        }
        Ok(out)
    }
}

fn field<const N: usize>(bytes: &[u8], at: usize) -> Result<[u8; N], String> {
    at.checked_add(N)
        .and_then(|end| bytes.get(at..end))
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| format!("the file ends before offset {at:#x}"))
}

fn read_u16(bytes: &[u8], at: usize) -> Result<u16, String> {
    field(bytes, at).map(u16::from_le_bytes)
}

fn read_u32(bytes: &[u8], at: usize) -> Result<u32, String> {
    field(bytes, at).map(u32::from_le_bytes)
}

/// A 64-bit field, as an offset or size of this file.
fn read_u64(bytes: &[u8], at: usize) -> Result<usize, String> {
    let v = field(bytes, at).map(u64::from_le_bytes)?;
    usize::try_from(v).map_err(|_| format!("a field at {at:#x} is out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_versions_are_read_and_ordered_by_number() {
        assert_eq!(glibc_version("GLIBC_2.34"), Some(vec![2, 34]));
        assert_eq!(glibc_version("GLIBC_2.2.5"), Some(vec![2, 2, 5]));
        assert_eq!(glibc_version("GLIBC_PRIVATE"), None);
        assert_eq!(glibc_version("GCC_3.0"), None);
        let max =
            ["GLIBC_2.2.5", "GLIBC_2.9", "GLIBC_2.34", "GLIBC_2.17"].iter().filter_map(|v| glibc_version(v)).max();
        assert_eq!(max.as_deref().map(version_text), Some("2.34".to_string()));
    }

    #[test]
    fn the_version_needs_of_this_binary_match_objdump() {
        let exe = std::env::current_exe().unwrap();
        let bytes = std::fs::read(&exe).unwrap();
        let elf = Elf::parse(&bytes).unwrap();
        let ours = elf.version_needs().unwrap().iter().filter_map(|v| glibc_version(v)).max();
        assert!(ours.as_ref().is_some_and(|v| *v >= vec![2, 2, 5]), "{ours:?}");
        let dynamic = elf.dynamic().unwrap();
        assert!(dynamic.needed.iter().any(|n| n.starts_with("libc.so")), "{:?}", dynamic.needed);
        // objdump, where installed, reads the same versions.
        let Ok(out) = Command::new("objdump").arg("-T").arg(&exe).output() else { return };
        let text = String::from_utf8_lossy(&out.stdout);
        let theirs = text.split(|c: char| c.is_whitespace() || c == '(' || c == ')').filter_map(glibc_version).max();
        assert_eq!(ours, theirs);
    }

    #[test]
    fn json_strings_are_read_with_their_escapes() {
        let line = r#"{"reason":"compiler-artifact","executable":"/t/a\"b\\c","fresh":true}"#;
        assert_eq!(json_string(line, "executable").as_deref(), Some("/t/a\"b\\c"));
        assert_eq!(json_string(r#"{"executable":null}"#, "executable"), None);
    }

    #[test]
    fn a_file_that_is_not_elf_is_refused() {
        assert!(Elf::parse(b"#!/bin/sh\n").is_err());
        assert!(Elf::parse(b"\x7fELF").is_err());
    }

    #[test]
    fn the_run_script_checks_glibc_and_passes_the_driver_through() {
        let s = run_script();
        assert!(s.starts_with("#!/bin/sh\n"));
        assert!(s.contains("getconf GNU_LIBC_VERSION") && s.contains("GLIBC_REQUIRED"));
        assert!(s.contains("MEMPOOL_CUDA_LIBRARY passes through"));
        assert!(s.contains(&format!("timeout -k 10 {TIME_LIMIT_S} \"$here/bin/{TEST}\"")));
        assert!(!s.contains("{{") && !s.contains("}}"), "format braces left in the script");
    }
}
