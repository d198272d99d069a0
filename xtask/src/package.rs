//! `cargo xtask package`: every publishable crate of the workspace packaged as a registry
//! would take it (`cargo package`, with its verification: each `.crate` file unpacked and
//! built on its own, its workspace dependencies taken from the packages beside it). The
//! crates that are not published (`publish = false`: the drop-in libraries, the test and
//! automation packages) are read from `cargo metadata` and left out, so a new crate is
//! packaged from the day it is added.

use crate::util::{Step, cargo, run, workspace_root};
use std::process::Command;

/// The names of the workspace's crates with `publish = false`, from `cargo metadata`.
pub(crate) fn unpublished() -> Result<Vec<String>, String> {
    let out = Command::new(cargo())
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(workspace_root())
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo metadata failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr)));
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata printed no JSON: {e}"))?;
    let packages = meta["packages"].as_array().ok_or("cargo metadata lists no packages")?;
    Ok(packages
        .iter()
        // `publish = false` reads as an empty list of registries; `null` is any registry.
        .filter(|p| p["publish"].as_array().is_some_and(Vec::is_empty))
        .filter_map(|p| p["name"].as_str().map(str::to_string))
        .collect())
}

/// The `cargo package` step. `--allow-dirty` so that a working tree with changes is
/// checked as it stands (CI's checkout is clean either way).
pub(crate) fn step() -> Result<Step, String> {
    let excluded = unpublished()?;
    let mut args = vec!["package", "--workspace", "--allow-dirty"];
    for name in &excluded {
        args.extend(["--exclude", name]);
    }
    let dir = verify_dir();
    Ok(Step::new("the publishable crates packaged and built from their .crate files", &args)
        .env("CARGO_TARGET_DIR", &dir.to_string_lossy()))
}

/// Where the packages are built to be verified: a folder of its own, emptied before every
/// run ([`forget_unpacked_workspace_crates`]), because cargo does not rebuild a registry
/// crate whose name and version it has built before, whatever its sources now say, so a
/// shared target folder would verify a crate against an earlier run's build of its
/// workspace dependencies.
fn verify_dir() -> std::path::PathBuf {
    crate::util::target_dir().join("package-verify")
}

/// `cargo xtask package`.
pub(crate) fn run_all(extra: &[(String, String)]) -> Result<(), String> {
    forget_unpacked_workspace_crates()?;
    run(&[step()?], extra)
}

/// Removes what an earlier `cargo package` of this workspace left unpacked in
/// `$CARGO_HOME/registry/src`: the verification unpacks each `.crate` file from a local
/// registry under `target/package`, whose folder name depends only on that path, and cargo
/// reuses an unpacked folder of the same name and version without unpacking again. A
/// second run at the same path would then verify a crate against the first run's sources
/// of its workspace dependencies. Only local registries' folders (named `-<hash>`) are
/// touched, and only this workspace's crates in them. The verification's build folder
/// ([`verify_dir`]) is emptied too.
fn forget_unpacked_workspace_crates() -> Result<(), String> {
    let built = verify_dir();
    if built.exists() {
        std::fs::remove_dir_all(&built).map_err(|e| format!("cannot remove {}: {e}", built.display()))?;
    }
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cargo")));
    let Some(src) = home.map(|h| h.join("registry").join("src")) else { return Ok(()) };
    let Ok(registries) = std::fs::read_dir(&src) else { return Ok(()) };
    let excluded = unpublished()?;
    for registry in registries.flatten().filter(|e| e.file_name().to_string_lossy().starts_with('-')) {
        let Ok(crates) = std::fs::read_dir(registry.path()) else { continue };
        for unpacked in crates.flatten() {
            let name = unpacked.file_name().to_string_lossy().into_owned();
            let ours = name.starts_with("mempool")
                && !excluded.iter().any(|x| name.strip_prefix(x.as_str()).is_some_and(|v| v.starts_with('-')));
            if ours {
                std::fs::remove_dir_all(unpacked.path()).map_err(|e| {
                    format!("cannot remove the stale unpacked crate {}: {e}", unpacked.path().display())
                })?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unpublished_crates_are_read_from_the_manifests() {
        let names = unpublished().unwrap();
        for private in ["xtask", "mempool-tests", "mempool-acl-shim", "mempool-cuda-shim", "mempool-hostile"] {
            assert!(names.iter().any(|n| n == private), "{private} is publish = false: {names:?}");
        }
        for public in ["mempool", "mempool-hal", "mempool-emu", "mempool-alloc", "mempool-backend-kit"] {
            assert!(!names.iter().any(|n| n == public), "{public} is published: {names:?}");
        }
        let line = step().unwrap().command_line();
        assert!(line.starts_with("cargo package --workspace"), "{line}");
        assert!(line.contains("--exclude xtask"), "{line}");
    }
}
