//! The search for a backend's library: its candidates tried in order, and the record of
//! every path tried and why it was not taken, which the `Unavailable` error carries.
//!
//! The backend names the candidates and opens each one ([`first_to_open`]'s `open`); the
//! search passes over a path through the folder of the vendor's link stubs and an absolute
//! path that does not exist without opening them, and writes one line for each candidate
//! not taken: `  {path}: {why}`.
//!
//! A backend's first candidates are the copies of its library that the process has
//! loaded already ([`loaded_copies`]): a framework that loaded the runtime before the
//! backend (PyTorch's `libcuda.so.1`, torch_npu's `libascendcl.so`) hands the backend its
//! stream handles, which mean something only to that copy. Opening such a path again
//! gives the copy already loaded (the dynamic loader counts one more reference; no
//! initializer runs again).

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

/// Whether a library file named `file` is one of `names`, or a versioned file of one: the
/// name followed by `.` and more (`libcuda.so.535.104.05` for `libcuda.so`).
pub fn is_named(file: &str, names: &[&str]) -> bool {
    names.iter().any(|n| file.strip_prefix(n).is_some_and(|rest| rest.is_empty() || rest.starts_with('.')))
}

/// The paths of the objects loaded in this process whose file name is one of `names` or a
/// versioned file of one ([`is_named`]), in the order they were loaded, each once. Only
/// absolute paths are given (the path the dynamic loader found for a bare name, or the
/// path a program passed to `dlopen`): a relative one would name another file once the
/// working directory changes.
///
/// On a platform without `dl_iterate_phdr` (Linux, Android and FreeBSD have it) the list
/// is empty.
pub fn loaded_copies(names: &[&str]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for path in phdr::loaded_objects() {
        let named = path.file_name().and_then(|f| f.to_str()).is_some_and(|f| is_named(f, names));
        if named && path.is_absolute() && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// The walk over the loaded objects: `dl_iterate_phdr`, declared here (the crate has no
/// `libc` dependency).
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
mod phdr {
    use std::ffi::{CStr, OsStr, c_char, c_int, c_void};
    use std::os::unix::ffi::OsStrExt;
    use std::path::PathBuf;

    /// The leading fields of `struct dl_phdr_info` (`<link.h>`): the object's load address
    /// (`ElfW(Addr)`, pointer-sized) and its path (empty for the main program). The fields
    /// after them are never read.
    #[repr(C)]
    struct DlPhdrInfo {
        addr: usize,
        name: *const c_char,
    }

    /// `int (*callback)(struct dl_phdr_info *info, size_t size, void *data)`.
    type Callback = unsafe extern "C" fn(info: *mut DlPhdrInfo, size: usize, data: *mut c_void) -> c_int;

    unsafe extern "C" {
        /// `int dl_iterate_phdr(callback, void *data)`: calls `callback` once per loaded
        /// object, in load order, until it returns non-zero; the loader's lock is held.
        fn dl_iterate_phdr(callback: Option<Callback>, data: *mut c_void) -> c_int;
    }

    /// Pushes the object's path, when it has one, onto the `Vec<PathBuf>` behind `data`;
    /// always asks for the next object.
    unsafe extern "C" fn collect(info: *mut DlPhdrInfo, size: usize, data: *mut c_void) -> c_int {
        if info.is_null() || data.is_null() || size < std::mem::size_of::<DlPhdrInfo>() {
            return 0;
        }
        // SAFETY: `loaded_objects` passes a `Vec<PathBuf>` it borrows mutably for the whole
        // walk as `data`, and the loader calls this function on that thread, one object at
        // a time.
        let paths = unsafe { &mut *data.cast::<Vec<PathBuf>>() };
        // SAFETY: the loader passes a valid `dl_phdr_info` of at least `size` bytes, which
        // covers the two leading fields read here.
        let name = unsafe { (*info).name };
        if !name.is_null() {
            // SAFETY: a non-null `dlpi_name` is a NUL-terminated string the loader owns, valid
            // during the call; it is copied at once.
            let bytes = unsafe { CStr::from_ptr(name) }.to_bytes();
            if !bytes.is_empty() {
                paths.push(PathBuf::from(OsStr::from_bytes(bytes)));
            }
        }
        0
    }

    /// The path of every loaded object that has one, in load order.
    pub(super) fn loaded_objects() -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = Vec::new();
        // SAFETY: `collect` has the callback's C signature, reads only the leading fields the
        // loader fills, never unwinds (it only copies strings), and calls nothing that takes
        // the loader's lock; `data` is `paths`, borrowed mutably until the call returns.
        unsafe { dl_iterate_phdr(Some(collect), (&raw mut paths).cast::<c_void>()) };
        paths
    }
}

/// No `dl_iterate_phdr`: no loaded copy is ever found.
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
mod phdr {
    use std::path::PathBuf;

    /// Nothing: the platform has no walk over its loaded objects that this crate knows.
    pub(super) fn loaded_objects() -> Vec<PathBuf> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_or_a_versioned_file_of_it_matches() {
        let names = ["libcuda.so.1", "libcuda.so"];
        for yes in ["libcuda.so.1", "libcuda.so", "libcuda.so.535.104.05", "libcuda.so.1.1"] {
            assert!(is_named(yes, &names), "{yes}");
        }
        for no in ["libcudart.so.12", "libcuda.so1", "xlibcuda.so", "libcuda", "libcuda.s", ""] {
            assert!(!is_named(no, &names), "{no}");
        }
        assert!(is_named("libascendcl.so", &["libacl_rt.so", "libascendcl.so"]));
        assert!(!is_named("libascendcl_impl.so", &["libacl_rt.so", "libascendcl.so"]));
    }

    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn the_c_library_of_this_process_is_a_loaded_copy() {
        // glibc's `libc.so.6` is loaded in every dynamically linked Rust program.
        let found = loaded_copies(&["libc.so"]);
        assert!(!found.is_empty(), "libc.so.6 is loaded: {:?}", phdr::loaded_objects());
        for p in &found {
            assert!(p.is_absolute(), "{}", p.display());
            assert!(p.file_name().unwrap().to_str().unwrap().starts_with("libc.so."), "{}", p.display());
            assert!(p.exists(), "{}", p.display());
        }
        let mut unique = found.clone();
        unique.dedup();
        assert_eq!(unique, found, "each path once");
    }

    #[test]
    fn a_library_nobody_loaded_has_no_copy() {
        assert_eq!(loaded_copies(&["libmempool-backend-kit-no-such-library.so"]), Vec::<PathBuf>::new());
        assert_eq!(loaded_copies(&[]), Vec::<PathBuf>::new());
    }

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
