//! What the tasks share: the workspace's folders, and running cargo steps.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One step of a task: a description, a cargo command line and extra environment.
pub(crate) struct Step {
    pub(crate) what: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
}

impl Step {
    pub(crate) fn new(what: impl Into<String>, args: &[&str]) -> Self {
        Step { what: what.into(), args: args.iter().map(|a| a.to_string()).collect(), env: Vec::new() }
    }

    /// The step with `name=value` in its environment.
    pub(crate) fn env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.to_string(), value.to_string()));
        self
    }

    /// The command line as a person types it: `cargo test --workspace`.
    pub(crate) fn command_line(&self) -> String {
        format!("cargo {}", self.args.join(" "))
    }
}

/// The cargo that runs this task.
pub(crate) fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string())
}

pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace root").to_path_buf()
}

/// The target folder: `$CARGO_TARGET_DIR` (relative to the workspace root when relative),
/// or `target/`.
pub(crate) fn target_dir() -> PathBuf {
    let root = workspace_root();
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    if target.is_absolute() { target } else { root.join(target) }
}

/// `MEMPOOL_TRACES`, the folder of real allocation traces that tests may read: when it is
/// not set and a `shared/traces` folder lies beside the repository, the steps of `ci` and
/// `bench` get it set to that folder.
pub(crate) fn traces_env() -> Vec<(String, String)> {
    traces_env_for(&workspace_root(), std::env::var_os(TRACES_VAR).is_some())
}

pub(crate) const TRACES_VAR: &str = "MEMPOOL_TRACES";

fn traces_env_for(root: &Path, already_set: bool) -> Vec<(String, String)> {
    let dir = root.parent().map(|p| p.join("shared").join("traces"));
    match dir {
        Some(dir) if !already_set && dir.is_dir() => vec![(TRACES_VAR.to_string(), dir.display().to_string())],
        _ => Vec::new(),
    }
}

/// Runs `steps` in order from the workspace root, each with its own environment and
/// `extra`; stops at the first that fails.
pub(crate) fn run(steps: &[Step], extra: &[(String, String)]) -> Result<(), String> {
    for step in steps {
        eprintln!("==> {}: {}", step.what, step.command_line());
        let status = Command::new(cargo())
            .args(&step.args)
            .envs(extra.iter().chain(&step.env).map(|(k, v)| (k, v)))
            .current_dir(workspace_root())
            .status()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if !status.success() {
            return Err(format!("{} failed ({status})", step.what));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_are_found_beside_the_repository_unless_set() {
        let base = std::env::temp_dir().join(format!("xtask-traces-{}", std::process::id()));
        let root = base.join("repo");
        std::fs::create_dir_all(&root).unwrap();
        assert!(traces_env_for(&root, false).is_empty(), "no shared/traces folder");
        let traces = base.join("shared").join("traces");
        std::fs::create_dir_all(&traces).unwrap();
        assert_eq!(traces_env_for(&root, false), [(TRACES_VAR.to_string(), traces.display().to_string())]);
        assert!(traces_env_for(&root, true).is_empty(), "a MEMPOOL_TRACES already set is kept");
        let _ = std::fs::remove_dir_all(&base);
    }
}
