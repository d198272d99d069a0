//! The search for a backend's library: its candidates tried in order, and the record of
//! every path tried and why it was not taken, which the `Unavailable` error carries.
//!
//! The backend names the candidates and opens each one ([`first_to_open`]'s `open`); the
//! search passes over a path through the folder of the vendor's link stubs and an absolute
//! path that does not exist without opening them, and writes one line for each candidate
//! not taken: `  {path}: {why}`.

use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};

/// Every candidate a search did not take and why, one line each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchRecord {
    tried: String,
}

impl SearchRecord {
    /// Notes that `path` was not taken, because of `why`.
    pub fn note(&mut self, path: &Path, why: impl fmt::Display) {
        let _ = writeln!(self.tried, "  {}: {why}", path.display());
    }

    /// The lines so far, each ending in a newline.
    pub fn tried(&self) -> &str {
        &self.tried
    }

    /// The message of the `Unavailable` error: `no {what} found; tried:` and the lines.
    pub fn unavailable(&self, what: &str) -> String {
        format!("no {what} found; tried:\n{}", self.tried)
    }
}

/// The folder of the vendor's link stubs, never opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkStubs {
    /// The folder's name: a candidate with a path component of this name is skipped.
    pub folder: &'static str,
    /// What the record says of it: `skipped ({why})`.
    pub why: &'static str,
}

/// Tries `candidates` in order and answers the first that `open` takes: `open` answers the
/// loaded library, or why it was not taken, which goes into the record. A candidate under
/// `stubs.folder` is skipped and an absolute path that does not exist is not found, both
/// without calling `open`.
///
/// # Errors
///
/// The record of every candidate, when none was taken.
pub fn first_to_open<T>(
    candidates: impl IntoIterator<Item = PathBuf>,
    stubs: LinkStubs,
    mut open: impl FnMut(&Path) -> Result<T, String>,
) -> Result<T, SearchRecord> {
    let mut record = SearchRecord::default();
    for cand in candidates {
        if cand.components().any(|c| c.as_os_str() == stubs.folder) {
            record.note(&cand, format_args!("skipped ({})", stubs.why));
            continue;
        }
        if cand.is_absolute() && !cand.exists() {
            record.note(&cand, "not found");
            continue;
        }
        match open(&cand) {
            Ok(found) => return Ok(found),
            Err(why) => record.note(&cand, why),
        }
    }
    Err(record)
}

/// `names` in the folder `dir`, in order.
pub fn in_dir<'a>(dir: &'a Path, names: &'a [&str]) -> impl Iterator<Item = PathBuf> + 'a {
    names.iter().map(move |n| dir.join(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STUBS: LinkStubs = LinkStubs { folder: "stubs", why: "link stubs" };

    #[test]
    fn stubs_and_missing_paths_are_passed_over_and_recorded() {
        let missing = std::env::temp_dir().join("mempool-backend-kit-no-such-dir/lib.so");
        let cands = vec![PathBuf::from("/opt/x/stubs/lib.so"), missing.clone(), "lib.so".into(), "other.so".into()];
        let mut opened = Vec::new();
        let found = first_to_open(cands, STUBS, |p| {
            opened.push(p.to_path_buf());
            if p == Path::new("other.so") { Ok(7) } else { Err("no luck".into()) }
        });
        assert_eq!(found, Ok(7));
        assert_eq!(opened, [PathBuf::from("lib.so"), PathBuf::from("other.so")]);
    }

    #[test]
    fn the_record_lists_every_candidate_in_order() {
        let missing = std::env::temp_dir().join("mempool-backend-kit-no-such-dir/lib.so");
        let cands = vec![PathBuf::from("/opt/x/stubs/lib.so"), missing.clone(), "lib.so".into()];
        let record = first_to_open(cands, STUBS, |_| Err::<(), _>("no luck".into())).unwrap_err();
        let expected = format!(
            "  /opt/x/stubs/lib.so: skipped (link stubs)\n  {}: not found\n  lib.so: no luck\n",
            missing.display()
        );
        assert_eq!(record.tried(), expected);
        assert_eq!(record.unavailable("thing"), format!("no thing found; tried:\n{expected}"));
    }

    #[test]
    fn names_in_a_folder() {
        let got: Vec<PathBuf> = in_dir(Path::new("/d"), &["a.so", "b.so"]).collect();
        assert_eq!(got, [PathBuf::from("/d/a.so"), PathBuf::from("/d/b.so")]);
    }
}
