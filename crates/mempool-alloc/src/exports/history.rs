//! `mempool_record_history` and `mempool_dump_snapshot`: PyTorch's
//! `_record_memory_history` and `_dump_snapshot` for the library.

use crate::error::AllocError;
use crate::ffi::guard;
use crate::state::allocator;
use std::ffi::{CStr, c_char, c_int};
use std::path::Path;

/// `int mempool_record_history(size_t max_entries)`: records the allocation history of
/// every device from now on, keeping the last `max_entries` events of each (`alloc`,
/// `free_requested`, `free_completed`, `oom`, with address, size, stream and time); 0
/// stops recording and forgets what was recorded. Off (the default, unless
/// `MEMPOOL_ALLOC_HISTORY` sets a count), an allocation or free pays one relaxed atomic
/// load for it. Returns 0.
#[unsafe(no_mangle)]
pub extern "C" fn mempool_record_history(max_entries: usize) -> c_int {
    guard("mempool_record_history", -1, || {
        crate::history::set(max_entries);
        Ok::<c_int, AllocError>(0)
    })
}

/// `int mempool_dump_snapshot(const char *path)`: writes the recorded history to `path` as
/// a PyTorch memory snapshot (the pickle `torch.cuda.memory._dump_snapshot` writes:
/// `device_traces` with the events of each device, `segments` with the allocations live
/// now), for PyTorch's memory viewer and `mempool-trace import`. 0 on success; -1 for a NULL
/// or non-UTF-8 path or one that cannot be written, with the reason in
/// `mempool_last_error()`.
///
/// # Safety
///
/// `path` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mempool_dump_snapshot(path: *const c_char) -> c_int {
    guard("mempool_dump_snapshot", -1, || {
        if path.is_null() {
            return Err(AllocError::Invalid("path is NULL".into()));
        }
        // SAFETY: non-NULL and NUL-terminated (the caller's promise).
        let text = unsafe { CStr::from_ptr(path) };
        let text = text.to_str().map_err(|_| AllocError::Invalid("the path is not UTF-8".into()))?;
        let live = match allocator() {
            Ok(a) => a.opened().flat_map(|(_, d)| d.live()).collect(),
            Err(_) => Vec::new(),
        };
        crate::history::snapshot(live).write_file(Path::new(text)).map_err(AllocError::Invalid)?;
        Ok(0)
    })
}
