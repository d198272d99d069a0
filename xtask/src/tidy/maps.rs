//! The maps a reader finds things by, kept true: the README's Layout table names every
//! workspace member, the contract's index names every page, and the README carries no
//! measured figures (they live in `docs/benchmarks.md`, which a benchmark run rewrites).

/// The workspace members listed in the root manifest's `members = [...]`.
pub(super) fn workspace_members(manifest: &str) -> Vec<String> {
    let Some(start) = manifest.find("members = [") else { return Vec::new() };
    let rest = &manifest[start + "members = [".len()..];
    let list = &rest[..rest.find(']').unwrap_or(rest.len())];
    list.split(',').map(|m| m.trim().trim_matches('"').to_string()).filter(|m| !m.is_empty()).collect()
}

/// The paths of the rows of the README's `## Layout` table (the first cell, without its
/// backticks and a trailing `/`).
fn layout_rows(readme: &str) -> Vec<String> {
    let Some(at) = readme.find("\n## Layout\n") else { return Vec::new() };
    readme[at + 1..]
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(|p| p.trim_end_matches('/').to_string())
        .collect()
}

/// Every workspace member of `manifest` that has no row in the README's Layout table.
pub(super) fn layout_problems(readme: &str, manifest: &str) -> Vec<String> {
    let rows = layout_rows(readme);
    if rows.is_empty() {
        return vec!["README.md: no `## Layout` table".to_string()];
    }
    workspace_members(manifest)
        .into_iter()
        .filter(|m| !rows.contains(m))
        .map(|m| format!("README.md: the Layout table has no row for the workspace member `{m}`"))
        .collect()
}

/// Every page of the contract (`pub mod NAME {}` in `contract/mod.rs`) that has no row in
/// its index table (a row naming `` [`NAME`] ``).
pub(super) fn contract_index_problems(mod_rs: &str) -> Vec<String> {
    let pages = mod_rs
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .filter_map(|l| l.split([' ', '{', ';']).next())
        .filter(|n| !n.is_empty());
    let index: Vec<&str> = mod_rs.lines().filter(|l| l.starts_with("//! | ")).collect();
    pages
        .filter(|page| {
            let cell = format!("[`{page}`]");
            !index.iter().any(|row| row.contains(&cell))
        })
        .map(|page| format!("crates/mempool-hal/src/contract/mod.rs: the contract index has no row for `{page}`"))
        .collect()
}

/// The units a measured figure is given in: a time, a rate or a ratio.
const UNITS: [&str; 9] = ["ops/s", "M/s", "ns", "µs", "us", "ms", "s", "×", "x"];

/// Every README line with a number followed by a time, rate or ratio unit (`12 ns`,
/// `3.5 M/s`, `4×`, `2x`): measured figures belong in `docs/benchmarks.md`. A number that
/// is part of a word or a hex literal (`0x7f…`, `x86_64`) is not a figure.
pub(super) fn figure_problems(readme: &str) -> Vec<String> {
    readme
        .lines()
        .enumerate()
        .filter_map(|(i, line)| {
            figure_in(line)
                .map(|f| format!("README.md:{}: a measured figure (`{f}`) belongs in docs/benchmarks.md", i + 1))
        })
        .collect()
}

/// The first figure in `line`, if any.
fn figure_in(line: &str) -> Option<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let starts_number = chars[i].is_ascii_digit() && (i == 0 || !is_word(chars[i - 1]));
        if !starts_number {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && (chars[i].is_ascii_digit() || matches!(chars[i], '.' | ',' | '_')) {
            i += 1;
        }
        let mut j = i;
        if j < chars.len() && chars[j] == ' ' {
            j += 1;
        }
        let rest: String = chars[j..].iter().collect();
        for unit in UNITS {
            if let Some(after) = rest.strip_prefix(unit) {
                if !after.chars().next().is_some_and(is_word) {
                    return Some(chars[start..j + unit.chars().count()].iter().collect());
                }
            }
        }
    }
    None
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str =
        "[workspace]\nmembers = [\n    \"crates/a\",\n    \"backends/b\",\n]\nexclude = [\"python\"]\n";

    #[test]
    fn every_member_needs_a_layout_row() {
        assert_eq!(workspace_members(MANIFEST), ["crates/a", "backends/b"]);
        let readme = "# X\n\n## Layout\n\n| path | what |\n|---|---|\n| `crates/a` | a |\n| `python/` | py |\n\n## Next\n| `backends/b` | not in the table |\n";
        let p = layout_problems(readme, MANIFEST);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("`backends/b`"), "{p:?}");
        let readme = readme.replace("| `python/` | py |", "| `backends/b/` | b |");
        assert!(layout_problems(&readme, MANIFEST).is_empty());
        assert_eq!(layout_problems("# no layout\n", MANIFEST).len(), 1);
    }

    #[test]
    fn every_contract_page_needs_an_index_row() {
        let mod_rs = "//! | 1 | [`objects`] | o |\n#[doc = \"\"]\npub mod objects {}\npub mod vmm {}\n";
        let p = contract_index_problems(mod_rs);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("`vmm`"), "{p:?}");
        assert!(contract_index_problems(&format!("//! | 14 | [`vmm`] | v |\n{mod_rs}")).is_empty());
    }

    #[test]
    fn figures_with_units_are_found_and_other_numbers_are_not() {
        for figure in ["free in 12 ns", "3.5 M/s", "4× slower", "a 2x gain", "1,200 ops/s", "took 9 s.", "(40 µs)"] {
            assert!(figure_in(figure).is_some(), "{figure}");
        }
        for plain in [
            "at 0x7fccb3e00000",
            "64 MiB, 2 cores",
            "1.85 or later",
            "30 scenarios",
            "x86_64",
            "100,000 cases",
            "§14 and 3 preemptions",
            "v2 of sm_90",
        ] {
            assert_eq!(figure_in(plain), None, "{plain}");
        }
        let p = figure_problems("# X\nok line\nnow 5 ms faster\n");
        assert_eq!(p, ["README.md:3: a measured figure (`5 ms`) belongs in docs/benchmarks.md"]);
    }
}
