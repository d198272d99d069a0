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
    Ok(Step::new("the publishable crates packaged and built from their .crate files", &args))
}

/// `cargo xtask package`.
pub(crate) fn run_all(extra: &[(String, String)]) -> Result<(), String> {
    run(&[step()?], extra)
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
