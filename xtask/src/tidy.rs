//! Repository hygiene that neither rustfmt nor clippy checks, in the manner of
//! rust-analyzer's tidy: `cargo xtask tidy` prints the problems, and the test
//! `the_repository_is_tidy` (in `ci.rs`) fails on them, so the README's test command runs
//! it too.
//!
//! - Text files: UTF-8, `\n` line endings, a final newline, no trailing whitespace, no tabs
//!   in Rust, Markdown and TOML. Generated data (`.svg`, `.csv`, `Cargo.lock`) is skipped:
//!   its tools write it byte for byte.
//! - Rust: no unfinished-code macros, and an ignored test says why (`#[ignore = "..."]`).
//! - Manifests: every crate inherits the workspace lints; a publishable one has a
//!   description and a license, and its crate root denies missing docs.
//! - `.ci/run` is `exec cargo xtask ci`, and the first step of that sequence is exactly the
//!   README's test command (the caller passes that step in: `ci` runs tidy, not the reverse).
//! - The modules of every crate (the `src/` folder beside each tracked `Cargo.toml`) form no
//!   import cycle: no module names a module of its crate (through `crate::` or `super::`
//!   paths, `use` groups included) that names it back, directly or not.
//! - The C boundary ([`C_BOUNDARY`]: the three C libraries and the emulator's C-ABI
//!   module): every `thread_local!` there either holds a `Cell` (plain data, no destructor)
//!   or is reached only through `try_with`, since an `extern "C"` entry point may be called
//!   from a thread-exit destructor after the storage is gone, where `with` panics.
//! - The maps ([`maps`]): every workspace member has a row in the README's Layout table,
//!   every contract page a row in the contract's index, and no README line carries a
//!   measured figure (a number with a time, rate or ratio unit).

mod maps;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Every problem in the repository at `root`, one line each; empty when tidy.
/// `first_ci_step` is the command line of the first step of `cargo xtask ci` (`None` when
/// that step is not a cargo command).
pub(crate) fn check(root: &Path, first_ci_step: Option<&str>) -> Vec<String> {
    let files = tracked_files(root);
    let mut problems = Vec::new();
    for rel in &files {
        // A tracked file deleted in the working tree has nothing to check.
        if let Ok(bytes) = std::fs::read(root.join(rel)) {
            problems.extend(text_problems(rel, &bytes));
        }
    }
    for rel in files.iter().filter(|f| f.ends_with("/Cargo.toml")) {
        let dir = Path::new(rel).parent().unwrap_or(Path::new(""));
        let manifest = std::fs::read_to_string(root.join(rel)).unwrap_or_default();
        let crate_root = ["src/lib.rs", "lib.rs", "src/main.rs"]
            .iter()
            .find_map(|f| std::fs::read_to_string(root.join(dir).join(f)).ok());
        problems.extend(manifest_problems(rel, &manifest, crate_root.as_deref()));
    }
    let read = |f: &str| std::fs::read_to_string(root.join(f)).unwrap_or_default();
    problems.extend(ci_problems(&read("README.md"), &read(".ci/run"), first_ci_step));
    problems.extend(crate_cycles(&files, &read));
    problems.extend(thread_local_problems(&files, read));
    let readme = read("README.md");
    problems.extend(maps::layout_problems(&readme, &read("Cargo.toml")));
    problems.extend(maps::contract_index_problems(&read("crates/mempool-hal/src/contract/mod.rs")));
    problems.extend(maps::figure_problems(&readme));
    problems
}

/// The folders (and files) whose `thread_local!`s `extern "C"` entry points reach: the
/// three C libraries and the emulator's C-ABI module.
pub(crate) const C_BOUNDARY: [&str; 5] = [
    "backends/acl-shim/src/",
    "backends/cuda-shim/src/",
    "crates/mempool-alloc/src/",
    "backends/emu/src/cabi.rs",
    "backends/emu/src/cabi/",
];

/// The thread-local rule of the C boundary over the tracked `files` ([`C_BOUNDARY`]): each
/// `thread_local!` static whose type is not a `Cell` is named only with `try_with` (or
/// by reference, as an `ErrorStore` names its key), never `NAME.with(`. A file's
/// `#[cfg(test)] mod tests` is not an entry point's and is skipped.
fn thread_local_problems(files: &[String], read: impl Fn(&str) -> String) -> Vec<String> {
    let sources: Vec<(&String, String)> = files
        .iter()
        .filter(|f| f.ends_with(".rs") && C_BOUNDARY.iter().any(|b| f.starts_with(b)))
        .map(|f| {
            let text = read(f);
            let product = text.find("#[cfg(test)]\nmod tests").map_or(text.as_str(), |at| &text[..at]).to_string();
            (f, product)
        })
        .collect();
    let mut problems = Vec::new();
    for (file, text) in &sources {
        for name in destructor_thread_locals(text) {
            for (other, src) in &sources {
                for (line, l) in src.lines().enumerate() {
                    if l.contains(&format!("{name}.with(")) {
                        problems.push(format!(
                            "{other}:{}: thread-local `{name}` (declared in {file}) has a destructor and is reached with \
                             `with`, which panics at thread exit; use `try_with` or a `Cell` of plain data",
                            line + 1
                        ));
                    }
                }
            }
        }
    }
    problems
}

/// The names of the `thread_local!` statics in `src` whose type is not a `Cell` (which may
/// have a destructor).
fn destructor_thread_locals(src: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (at, _) in src.match_indices("thread_local!") {
        let body = &src[at..];
        let end = body.find("\n}").unwrap_or(body.len());
        for decl in body[..end].split("static ").skip(1) {
            let Some((name, rest)) = decl.split_once(':') else { continue };
            let ty = rest.trim_start();
            let plain = ty.starts_with("Cell<") || ty.starts_with("std::cell::Cell<");
            if !plain {
                names.push(name.trim().to_string());
            }
        }
    }
    names
}

/// The import cycles of every crate among the tracked `files`, whose text `read` gives: the
/// crates are the folders with a `Cargo.toml` (the root's included), each with the modules
/// of the Rust files under its `src/`; a crate's modules name only its own.
fn crate_cycles(files: &[String], read: &impl Fn(&str) -> String) -> Vec<String> {
    let mut problems = Vec::new();
    for manifest in files.iter().filter(|f| *f == "Cargo.toml" || f.ends_with("/Cargo.toml")) {
        let src = format!("{}src", manifest.trim_end_matches("Cargo.toml"));
        let modules: Vec<(String, String)> = files
            .iter()
            .filter_map(|f| f.strip_prefix(&src)?.strip_prefix('/').filter(|m| m.ends_with(".rs")).map(|m| (m, f)))
            .map(|(m, f)| (module_of(m), read(f)))
            .collect();
        problems.extend(import_cycles(&src, &modules));
    }
    problems
}

/// The module path of a file under a crate's `src/`: `pool/mod.rs` is `pool`,
/// `pool/access.rs` is `pool::access`, a crate root (`lib.rs`, or a binary's `main.rs`)
/// is `crate`.
fn module_of(file: &str) -> String {
    let m = file.trim_end_matches(".rs").trim_end_matches("/mod").replace('/', "::");
    if m == "lib" || m == "main" { "crate".to_string() } else { m }
}

/// The modules of `files` (module path, source) that `src` names through `crate::` and
/// `super::` paths, `use` groups included, written as module paths of `files`.
fn imports(module: &str, src: &str, files: &[(String, String)]) -> Vec<String> {
    let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
    let mut found = Vec::new();
    for (prefix, base) in [("crate::", String::new()), ("super::", parent.to_string())] {
        for path in src.match_indices(prefix).flat_map(|(at, _)| named_paths(&src[at + prefix.len()..])) {
            let mut target = base.clone();
            for seg in path.split("::").filter(|s| !s.is_empty()) {
                let next = if target.is_empty() { seg.to_string() } else { format!("{target}::{seg}") };
                if !files.iter().any(|(m, _)| *m == next) {
                    break;
                }
                target = next;
            }
            // A path to a module's own child (pool -> pool::shared) is a declaration, not
            // an import back.
            if !target.is_empty() && target != module && !target.starts_with(&format!("{module}::")) {
                found.push(target);
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// The paths that `rest` (the text after a `crate::` or `super::`) starts with: one path, or
/// one for each member of a `use` group: `{a::X, b::{c, d}}` names `a::X`, `b::c` and `b::d`.
fn named_paths(rest: &str) -> Vec<String> {
    let head: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
    let Some(group) = rest[head.len()..].strip_prefix('{') else {
        return vec![head];
    };
    let (mut members, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth > 0 => depth -= 1,
            '}' | ',' if depth == 0 => {
                members.push(&group[start..i]);
                if c == '}' {
                    break;
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    members.iter().flat_map(|m| named_paths(m.trim())).map(|p| format!("{head}{p}")).collect()
}

/// One problem for each cycle of imports among `files` (module path, source), found by a
/// depth-first search from every module. The crate root (`crate`: `lib.rs`, `main.rs`) is
/// left out: it only declares and re-exports.
fn import_cycles(dir: &str, files: &[(String, String)]) -> Vec<String> {
    let graph: Vec<(String, Vec<String>)> =
        files.iter().filter(|(m, _)| m != "crate").map(|(m, src)| (m.clone(), imports(m, src, files))).collect();
    let edges = |m: &str| graph.iter().find(|(n, _)| n == m).map(|(_, e)| e.clone()).unwrap_or_default();
    let mut problems = Vec::new();
    for (start, _) in &graph {
        let mut stack = vec![vec![start.clone()]];
        let mut seen = vec![start.clone()];
        while let Some(path) = stack.pop() {
            for next in edges(path.last().expect("a path is never empty")) {
                if next == *start {
                    let cycle = format!("{dir}: import cycle {} -> {start}", path.join(" -> "));
                    // Report each cycle once, from its smallest module.
                    if path.iter().all(|m| m >= start) && !problems.contains(&cycle) {
                        problems.push(cycle);
                    }
                } else if !seen.contains(&next) {
                    seen.push(next.clone());
                    let mut longer = path.clone();
                    longer.push(next);
                    stack.push(longer);
                }
            }
        }
    }
    problems
}

/// The files git tracks under `root` (relative paths); without git, every file outside
/// `target/` and hidden folders.
fn tracked_files(root: &Path) -> Vec<String> {
    let out = Command::new("git").arg("-C").arg(root).args(["ls-files", "-z"]).output();
    if let Some(out) = out.ok().filter(|o| o.status.success()) {
        return String::from_utf8_lossy(&out.stdout).split('\0').filter(|f| !f.is_empty()).map(String::from).collect();
    }
    let mut files = Vec::new();
    let mut dirs = vec![PathBuf::new()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&dir)) else { continue };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let rel = dir.join(&name);
            match e.file_type() {
                Ok(t) if t.is_dir() && name != "target" && !name.starts_with('.') => dirs.push(rel),
                Ok(t) if t.is_file() => files.push(rel.to_string_lossy().into_owned()),
                _ => {}
            }
        }
    }
    files
}

/// The problems of one text file at `rel` with contents `bytes`.
fn text_problems(rel: &str, bytes: &[u8]) -> Vec<String> {
    let ext = rel.rsplit_once('.').map_or("", |(_, e)| e);
    if matches!(ext, "svg" | "csv" | "lock") {
        return Vec::new();
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return vec![format!("{rel}: not UTF-8 text")];
    };
    let mut problems = Vec::new();
    if text.contains('\r') {
        problems.push(format!("{rel}: CR line endings (use \\n)"));
    }
    if !text.is_empty() && !text.ends_with('\n') {
        problems.push(format!("{rel}: no newline at the end"));
    }
    let no_tabs = matches!(ext, "rs" | "md" | "toml");
    // Spelled in two pieces, so that this file does not match itself.
    let unfinished = [concat!("tod", "o!("), concat!("unimplemente", "d!(")];
    let bare_ignore = concat!("#[ignor", "e]");
    for (i, line) in text.lines().enumerate() {
        let at = format!("{rel}:{}", i + 1);
        if line.trim_end() != line {
            problems.push(format!("{at}: trailing whitespace"));
        }
        if no_tabs && line.contains('\t') {
            problems.push(format!("{at}: a tab (indent with spaces)"));
        }
        if ext == "rs" {
            if let Some(m) = unfinished.iter().find(|m| line.contains(*m)) {
                problems.push(format!("{at}: unfinished code ({m}...)"));
            }
            if line.contains(bare_ignore) {
                problems.push(format!("{at}: an ignored test says why: #[ignore = \"...\"]"));
            }
        }
    }
    problems
}

/// The problems of the crate manifest at `rel`, given its text and its crate root's.
fn manifest_problems(rel: &str, manifest: &str, crate_root: Option<&str>) -> Vec<String> {
    let lines: Vec<&str> = manifest.lines().map(str::trim).collect();
    let has = |line: &str| lines.contains(&line);
    let in_lints =
        lines.iter().position(|l| *l == "[lints]").is_some_and(|i| lines.get(i + 1) == Some(&"workspace = true"));
    let mut problems = Vec::new();
    if !in_lints {
        problems.push(format!("{rel}: does not inherit the workspace lints ([lints] workspace = true)"));
    }
    if has("publish = false") {
        return problems;
    }
    if !lines.iter().any(|l| l.starts_with("description =")) {
        problems.push(format!("{rel}: a publishable crate needs a description"));
    }
    if !lines.iter().any(|l| l.starts_with("license =") || *l == "license.workspace = true") {
        problems.push(format!("{rel}: a publishable crate needs a license"));
    }
    if !crate_root.is_some_and(|src| src.contains("#![deny(missing_docs)]")) {
        problems.push(format!("{rel}: the crate root of a publishable crate denies missing docs"));
    }
    problems
}

/// The README's test command: the `cargo test` line of its first code block.
fn readme_test_command(readme: &str) -> Option<&str> {
    let block = readme.split("```").nth(1)?;
    block.lines().map(|l| l.split('#').next().unwrap_or("").trim()).find(|l| l.starts_with("cargo test"))
}

/// Whether `.ci/run` hands over to `cargo xtask ci` (a line `exec cargo xtask ci`), and
/// whether that sequence starts with the README's test command (`first_ci_step`).
fn ci_problems(readme: &str, ci_script: &str, first_ci_step: Option<&str>) -> Vec<String> {
    let mut problems = Vec::new();
    if !ci_script.lines().any(|l| l.trim() == "exec cargo xtask ci") {
        problems.push(".ci/run does not `exec cargo xtask ci`".to_string());
    }
    match readme_test_command(readme) {
        None => problems.push("README.md: its first code block has no `cargo test` command".to_string()),
        Some(cmd) if first_ci_step != Some(cmd) => problems.push(format!(
            "xtask/src/ci.rs: the first step of `cargo xtask ci` ({}) is not the README's test command `{cmd}`",
            first_ci_step.unwrap_or("not a cargo command")
        )),
        Some(_) => {}
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_checks_name_each_problem_and_its_line() {
        assert!(text_problems("a.rs", b"fn main() {}\n").is_empty());
        let (unfinished, bare_ignore) = (concat!("tod", "o!("), concat!("#[ignor", "e]"));
        let bad = format!("fn f() {{ {unfinished}) }}  \n\tlet x = 1;\r\n{bare_ignore}\nfn g() {{}}");
        let p = text_problems("src/a.rs", bad.as_bytes()).join("\n");
        for want in [
            "src/a.rs:1: trailing whitespace",
            "src/a.rs:1: unfinished code",
            "src/a.rs:2: a tab",
            "src/a.rs: CR line endings",
            "src/a.rs:3: an ignored test says why",
            "src/a.rs: no newline at the end",
        ] {
            assert!(p.contains(want), "{want} missing from:\n{p}");
        }
        assert!(text_problems("a.rs", b"#[ignore = \"needs a device\"]\n").is_empty());
        // Tabs are allowed in C, generated data is not checked at all, bytes must be UTF-8.
        assert!(text_problems("smoke.c", b"\tint x;\n").is_empty());
        assert!(text_problems("plot.svg", b"<svg> \r").is_empty());
        assert_eq!(text_problems("x.md", &[0xff, b'\n']), ["x.md: not UTF-8 text"]);
    }

    #[test]
    fn manifest_checks_follow_publishability() {
        let good = "[package]\ndescription = \"d\"\nlicense.workspace = true\n\n[lints]\nworkspace = true\n";
        assert!(manifest_problems("a/Cargo.toml", good, Some("#![deny(missing_docs)]\n")).is_empty());
        let p = manifest_problems("a/Cargo.toml", "[package]\nname = \"a\"\n", Some("")).join("\n");
        for want in ["workspace lints", "needs a description", "needs a license", "denies missing docs"] {
            assert!(p.contains(want), "{want} missing from:\n{p}");
        }
        // An unpublished crate only needs the lints.
        let private = "[package]\npublish = false\n[lints]\nworkspace = true\n";
        assert!(manifest_problems("t/Cargo.toml", private, None).is_empty());
    }

    #[test]
    fn import_cycles_are_found_and_named() {
        let files = |list: &[(&str, &str)]| -> Vec<(String, String)> {
            list.iter().map(|(m, s)| (m.to_string(), s.to_string())).collect()
        };
        let circle = files(&[
            ("crate", "mod a; mod pool;"),
            ("a", "use crate::pool::shared::X;"),
            ("pool", "mod shared; use shared::Y;"),
            ("pool::shared", "use crate::a::Z;"),
        ]);
        assert_eq!(import_cycles("src", &circle), vec!["src: import cycle a -> pool::shared -> a".to_string()]);
        let layered = files(&[
            ("a", "use crate::pool::shared::X;"),
            ("pool", "use self::shared::Y; use crate::pool::shared::Q;"),
            ("pool::shared", "use super::reuse::R;"),
            ("pool::reuse", "use crate::b::S;"),
            ("b", ""),
        ]);
        assert!(import_cycles("src", &layered).is_empty(), "{:?}", import_cycles("src", &layered));
        assert_eq!(module_of("pool/mod.rs"), "pool");
        assert_eq!(module_of("pool/access.rs"), "pool::access");
        assert_eq!(module_of("lib.rs"), "crate");
        assert_eq!(module_of("main.rs"), "crate");
        // A `use` group names each of its members.
        assert_eq!(named_paths("{a::X, b::{self, c}};"), ["a::X", "b::self", "b::c"]);
        assert_eq!(named_paths("pool::shared::X;"), ["pool::shared::X"]);
    }

    #[test]
    fn every_crate_is_checked_for_cycles() {
        let sources = [
            ("Cargo.toml", "[workspace]\n"),
            // Two modules that name each other.
            ("made-up/Cargo.toml", "[package]\n"),
            ("made-up/src/lib.rs", "mod left; mod right;"),
            ("made-up/src/left.rs", "use crate::right::R;"),
            ("made-up/src/right.rs", "use super::left::L;"),
            // Three modules in a circle, through `use` groups, in a package with a library
            // and a binary (both crate roots, left out of the graph).
            ("tool/Cargo.toml", "[package]\n"),
            ("tool/src/main.rs", "mod x; mod y; mod z; use crate::x::run;"),
            ("tool/src/lib.rs", "pub mod shared;"),
            ("tool/src/shared.rs", ""),
            ("tool/src/x.rs", "use crate::{shared, y::Y};"),
            ("tool/src/y.rs", "use crate::z::{self, Z};"),
            ("tool/src/z/mod.rs", "use crate::x::X;"),
            // Each crate's modules are its own: `one::a -> one::b` and `two::b -> two::a`
            // are no cycle.
            ("one/Cargo.toml", "[package]\n"),
            ("one/src/a.rs", "use crate::b::B;"),
            ("one/src/b.rs", ""),
            ("two/Cargo.toml", "[package]\n"),
            ("two/src/a.rs", ""),
            ("two/src/b.rs", "use crate::a::A;"),
            // Files outside a crate's `src/` are not its modules.
            ("two/tests/a.rs", "use crate::b::B;"),
            ("two/srcs/a.rs", "use crate::b::B;"),
        ];
        let files: Vec<String> = sources.iter().map(|(f, _)| f.to_string()).collect();
        let read = |f: &str| sources.iter().find(|(g, _)| *g == f).map_or(String::new(), |(_, s)| s.to_string());
        assert_eq!(
            crate_cycles(&files, &read),
            ["made-up/src: import cycle left -> right -> left", "tool/src: import cycle x -> y -> z -> x"]
        );
    }

    #[test]
    fn a_thread_local_with_a_destructor_is_reached_only_with_try_with() {
        let decls = "thread_local! {\n    static LAST: RefCell<Option<CString>> = const { RefCell::new(None) };\n    \
                     static CURRENT: Cell<u64> = const { Cell::new(0) };\n}\n";
        let good = format!("{decls}fn a() {{ LAST.try_with(|l| ()); CURRENT.with(|c| c.get()); }}\n");
        let bad = format!(
            "{good}fn b() {{ LAST.with(|l| ()); }}\n#[cfg(test)]\nmod tests {{ fn t() {{ LAST.with(|l| ()); }} }}\n"
        );
        let outside = format!("{decls}fn c() {{ LAST.with(|l| ()); }}\n");
        let files = ["backends/acl-shim/src/ffi.rs".to_string(), "crates/mempool-small/src/x.rs".to_string()];
        let run = |ffi: &str| {
            thread_local_problems(
                &files,
                |f: &str| if f.ends_with("ffi.rs") { ffi.to_string() } else { outside.clone() },
            )
        };
        assert!(run(&good).is_empty(), "try_with, a Cell, and a file outside the C boundary pass");
        let problems = run(&bad);
        assert_eq!(problems.len(), 1, "only the product code's `with`: {problems:?}");
        assert!(problems[0].starts_with("backends/acl-shim/src/ffi.rs:6: thread-local `LAST`"), "{problems:?}");
    }

    #[test]
    fn ci_must_start_with_the_readme_test_command() {
        let readme = "# X\n\n```sh\ncargo run --example quickstart   # demo\ncargo test --workspace   # all\n```\n";
        let script = "#!/usr/bin/env bash\nset -euo pipefail\nexec cargo xtask ci\n";
        assert_eq!(readme_test_command(readme), Some("cargo test --workspace"));
        assert!(ci_problems(readme, script, Some("cargo test --workspace")).is_empty());
        assert!(ci_problems(readme, script, Some("cargo test -p one"))[0].contains("`cargo test --workspace`"));
        assert!(ci_problems(readme, script, None)[0].contains("not a cargo command"));
        assert!(ci_problems(readme, "cargo test --workspace\n", Some("cargo test --workspace"))[0].contains("exec"));
        assert!(ci_problems("no code\n", script, Some("cargo test"))[0].contains("no `cargo test` command"));
    }
}
