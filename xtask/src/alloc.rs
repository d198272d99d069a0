//! `cargo xtask alloc [--prefix DIR]`: builds `libmempool_alloc.so` (the pluggable-allocator
//! library, `crates/mempool-alloc`) optimized and installs it with its headers and a
//! pkg-config file:
//!
//! ```text
//! DIR/lib/libmempool_alloc.so
//! DIR/lib/pkgconfig/mempool_alloc.pc
//! DIR/include/mempool_alloc.h
//! DIR/include/mempool_alloc.hpp
//! ```
//!
//! `DIR` defaults to `target/mempool-alloc`. Then `PKG_CONFIG_PATH=DIR/lib/pkgconfig
//! pkg-config --cflags --libs mempool_alloc` gives the compiler and linker flags, and the
//! frameworks load `DIR/lib/libmempool_alloc.so`.

use crate::util::{cargo, target_dir, workspace_root};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The library's file name.
const LIBRARY: &str = "libmempool_alloc.so";

/// The headers, in `crates/mempool-alloc/include`.
const HEADERS: [&str; 2] = ["mempool_alloc.h", "mempool_alloc.hpp"];

pub(crate) fn run_all(args: &[String]) -> Result<(), String> {
    let prefix = match args {
        [] => target_dir().join("mempool-alloc"),
        [flag, dir] if flag == "--prefix" => absolute(Path::new(dir))?,
        _ => return Err(format!("usage: cargo xtask alloc [--prefix DIR] (got {args:?})")),
    };
    let status = Command::new(cargo())
        .args(["build", "--release", "-p", "mempool-alloc"])
        .current_dir(workspace_root())
        .status()
        .map_err(|e| format!("cargo build: {e}"))?;
    if !status.success() {
        return Err("cargo build --release -p mempool-alloc failed".into());
    }
    let (lib, include, pc) = (prefix.join("lib"), prefix.join("include"), prefix.join("lib/pkgconfig"));
    for dir in [&lib, &include, &pc] {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let built = target_dir().join("release").join(LIBRARY);
    copy(&built, &lib.join(LIBRARY))?;
    for h in HEADERS {
        copy(&workspace_root().join("crates/mempool-alloc/include").join(h), &include.join(h))?;
    }
    let pc_path = pc.join("mempool_alloc.pc");
    std::fs::write(&pc_path, pc_file(&prefix, env!("CARGO_PKG_VERSION")))
        .map_err(|e| format!("{}: {e}", pc_path.display()))?;
    println!("installed {LIBRARY}, its headers and {} under {}", pc_path.display(), prefix.display());
    Ok(())
}

fn absolute(p: &Path) -> Result<PathBuf, String> {
    std::path::absolute(p).map_err(|e| format!("{}: {e}", p.display()))
}

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::copy(from, to).map(drop).map_err(|e| format!("copying {} to {}: {e}", from.display(), to.display()))
}

/// The pkg-config file for an installation under `prefix`.
pub(crate) fn pc_file(prefix: &Path, version: &str) -> String {
    format!(
        "prefix={}\n\
         libdir=${{prefix}}/lib\n\
         includedir=${{prefix}}/include\n\
         \n\
         Name: mempool_alloc\n\
         Description: Stream-ordered pool allocator for PyTorch, torch_npu and MindSpore (mempool-hal)\n\
         Version: {version}\n\
         Libs: -L${{libdir}} -Wl,-rpath,${{libdir}} -lmempool_alloc\n\
         Cflags: -I${{includedir}}\n",
        prefix.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pkg_config_file_names_the_library_and_headers() {
        let pc = pc_file(Path::new("/opt/mempool"), "0.1.0");
        assert!(pc.starts_with("prefix=/opt/mempool\n"));
        assert!(pc.contains("\nLibs: -L${libdir} -Wl,-rpath,${libdir} -lmempool_alloc\n"));
        assert!(pc.contains("\nCflags: -I${includedir}\n"));
        assert!(pc.contains("\nVersion: 0.1.0\n"));
        let dir = std::env::temp_dir().join(format!("mempool-alloc-pc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("mempool_alloc.pc"), &pc).unwrap();
        // pkg-config itself, when the machine has it, reads the file as written.
        if let Ok(out) = Command::new("pkg-config")
            .args(["--cflags", "--libs", "mempool_alloc"])
            .env("PKG_CONFIG_PATH", &dir)
            .output()
        {
            let flags = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            assert!(flags.contains("-I/opt/mempool/include") && flags.contains("-lmempool_alloc"), "{flags}");
        }
        let _ = std::fs::remove_dir_all(&dir);
        for h in HEADERS {
            assert!(workspace_root().join("crates/mempool-alloc/include").join(h).is_file(), "{h}");
        }
    }
}
