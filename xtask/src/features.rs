//! `cargo xtask features`: the facade `mempool` tested (and linted) with every combination
//! of its backend features (none, each alone, all), the downstream example `tensor-cache`
//! built without its dev-dependencies and tested with them, a check that its normal
//! dependency tree carries no mockall, and the pluggable-allocator library `mempool-alloc`
//! without its runtime backends (features `ascend`, `cuda` off: the emulator only).

use crate::util::{Step, cargo, run, workspace_root};
use std::process::Command;

/// The backend features of the facade: every feature of `crates/mempool/Cargo.toml`
/// except `default`, in the order written there. Reading the manifest means a new
/// backend feature is covered without touching this file.
fn backend_features(manifest: &str) -> Vec<String> {
    let mut in_features = false;
    let mut out = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_features = line == "[features]";
            continue;
        }
        if !in_features || line.starts_with('#') {
            continue;
        }
        if let Some((name, _)) = line.split_once('=') {
            let name = name.trim();
            if !name.is_empty() && name != "default" {
                out.push(name.to_string());
            }
        }
    }
    out
}

/// No feature, each feature alone, and all of them together.
fn combinations(features: &[String]) -> Vec<Vec<String>> {
    let mut sets = vec![Vec::new()];
    sets.extend(features.iter().map(|f| vec![f.clone()]));
    if features.len() > 1 {
        sets.push(features.to_vec());
    }
    sets
}

fn feature_steps(features: &[String]) -> Vec<Step> {
    let mut steps = Vec::new();
    for set in combinations(features) {
        let list = set.join(",");
        let mut selection = vec!["-p", "mempool", "--no-default-features"];
        if !set.is_empty() {
            selection.extend(["--features", &list]);
        }
        let mut test = vec!["test"];
        test.extend(&selection);
        steps.push(Step::new(format!("mempool with features [{list}]: tests"), &test));
        let mut clippy = vec!["clippy"];
        clippy.extend(&selection);
        clippy.extend(["--all-targets", "--", "-D", "warnings"]);
        steps.push(Step::new(format!("mempool with features [{list}]: clippy"), &clippy));
    }
    steps.push(Step::new(
        "tensor-cache without dev-dependencies (mempool with no backend)",
        &["build", "-p", "tensor-cache", "--lib"],
    ));
    steps.push(Step::new(
        "tensor-cache tests (unit tests on mocks, integration tests on the emulator)",
        &["test", "-p", "tensor-cache"],
    ));
    steps.push(Step::new(
        "mempool-alloc without its runtime backends (the emulator only): tests",
        &["test", "-p", "mempool-alloc", "--no-default-features"],
    ));
    steps.push(Step::new(
        "mempool-alloc without its runtime backends: clippy",
        &["clippy", "-p", "mempool-alloc", "--no-default-features", "--all-targets", "--", "-D", "warnings"],
    ));
    steps
}

/// The crates `cargo tree` prints for `args`, one name per line.
fn tree(args: &[&str]) -> Result<Vec<String>, String> {
    let out = Command::new(cargo())
        .arg("tree")
        .args(args)
        .args(["--prefix", "none", "--format", "{p}"])
        .current_dir(workspace_root())
        .output()
        .map_err(|e| format!("cannot run cargo tree: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo tree {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect())
}

/// The example's release build must not carry mockall: it is a dev-dependency feature.
/// The full tree (dev-dependencies included) must show it, or the check proves nothing.
fn check_no_mockall_in_normal_tree() -> Result<(), String> {
    eprintln!("==> tensor-cache: no mockall in `cargo tree -e normal`");
    let normal = tree(&["-e", "normal", "-p", "tensor-cache"])?;
    if let Some(m) = normal.iter().find(|c| c.starts_with("mockall")) {
        return Err(format!("tensor-cache's normal dependencies include {m}"));
    }
    let all = tree(&["-p", "tensor-cache"])?;
    if !all.iter().any(|c| c == "mockall") {
        return Err("mockall is missing from tensor-cache's dev-dependency tree: the check is broken".into());
    }
    eprintln!("    {} normal dependencies, none of them mockall (the dev tree has it)", normal.len());
    Ok(())
}

/// Runs every combination, with `extra` in each step's environment, then the mockall check.
pub(crate) fn run_all(extra: &[(String, String)]) -> Result<(), String> {
    let manifest = workspace_root().join("crates/mempool/Cargo.toml");
    let text = std::fs::read_to_string(&manifest).map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let features = backend_features(&text);
    if features.is_empty() {
        return Err(format!("no backend features found in {}", manifest.display()));
    }
    eprintln!("==> backend features of mempool: {}", features.join(", "));
    run(&feature_steps(&features), extra)?;
    check_no_mockall_in_normal_tree()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_facade_manifest_lists_the_backend_features() {
        let text = std::fs::read_to_string(workspace_root().join("crates/mempool/Cargo.toml")).unwrap();
        let features = backend_features(&text);
        assert!(features.contains(&"emu".to_string()) && features.contains(&"mock".to_string()), "{features:?}");
        assert!(!features.contains(&"default".to_string()));
    }

    #[test]
    fn features_are_read_from_the_features_table_only() {
        let manifest = "[package]\nname = \"x\"\n[features]\n# a comment\ndefault = [\"a\"]\na = []\nb = [\"dep:c\"]\n\n[dependencies]\nc = \"1\"\n";
        assert_eq!(backend_features(manifest), ["a", "b"]);
    }

    #[test]
    fn combinations_are_none_each_and_all() {
        let f = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(combinations(&f(&["emu", "mock"])), [f(&[]), f(&["emu"]), f(&["mock"]), f(&["emu", "mock"])]);
        assert_eq!(combinations(&f(&["emu"])), [f(&[]), f(&["emu"])]);
    }
}
