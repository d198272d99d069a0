//! The allocator library's functions for Python: statistics, empty cache, the memory
//! fraction, history recording and snapshots, the backend and the last error. Each calls
//! the C function of the same name in this module's own library, so Python sees the state
//! the framework's allocator uses; a failure raises `MempoolError` with the library's
//! reason.

use crate::error::{error, library_error};
use mempool_alloc::Stats;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::ffi::{CStr, CString};
use std::path::PathBuf;

/// The optional hooks of each framework: the framework, then (the hook setter's name
/// without `set_`, the export it takes), as the README's recipes set them.
pub(crate) const HOOKS: [(&str, &[(&str, &str)]); 3] = [
    (
        "pytorch",
        &[
            ("init_fn", "mempool_init"),
            ("reset_fn", "mempool_empty_cache"),
            ("memory_fraction_fn", "mempool_set_memory_fraction"),
            ("record_stream_fn", "mempool_record_stream"),
        ],
    ),
    (
        "torch_npu",
        &[
            ("init_fn", "mempool_init"),
            ("reset_fn", "mempool_empty_cache_checked"),
            ("memory_fraction_fn", "mempool_set_memory_fraction"),
            ("record_stream_fn", "mempool_record_stream"),
            ("reset_peak_status_fn", "mempool_reset_peak_stats"),
        ],
    ),
    // MindSpore's PluggableAllocator takes the two functions alone.
    ("mindspore", &[]),
];

/// The optional hooks of each framework, `{"pytorch": {"init_fn": "mempool_init", ...},
/// "torch_npu": {...}, "mindspore": {}}`: each key is a hook setter of the framework's
/// allocator object without its `set_` (`alloc.allocator().set_init_fn(address)`), each
/// value the export to give it (`address(name)`).
#[pyfunction]
pub(crate) fn hooks(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let all = PyDict::new(py);
    for (framework, hooks) in HOOKS {
        let d = PyDict::new(py);
        for (setter, export) in hooks {
            d.set_item(setter, export)?;
        }
        all.set_item(framework, d)?;
    }
    Ok(all)
}

/// The backend the library runs on and where it was found, e.g.
/// `"emulator (1 device; ...)"` or `"cuda (/usr/lib/x86_64-linux-gnu/libcuda.so.1)"`. The
/// first call into the library starts it from the environment (`MEMPOOL_ALLOC_*`).
///
/// Raises `MempoolError` when the library could not start, with the reason.
#[pyfunction]
pub(crate) fn backend(py: Python<'_>) -> PyResult<String> {
    // The first call may load a runtime: other Python threads run meanwhile (the address
    // crosses as an integer; the string lives as long as the process).
    let p = py.detach(|| mempool_alloc::mempool_backend() as usize) as *const std::ffi::c_char;
    if p.is_null() {
        return Err(library_error("mempool_backend"));
    }
    // SAFETY: a non-null answer is a NUL-terminated string that lives as long as the process.
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// The statistics of `device` (`mempool_stats`), as a dict of the fields of
/// `mempool_alloc_stats` (every counter, in bytes or counts): `used_current`, `used_high`,
/// `reserved_current`, `reserved_high`, `requested_current`, `requested_high`,
/// `small_held_current`, `small_held_high`, `small_wasted`, `allocations`,
/// `pending_frees`, `oom_count`, `oom_retries`, `stream_order_violations`, `memory_limit`.
///
/// Raises `MempoolError` for an unknown device or a library that could not start.
#[pyfunction]
#[pyo3(signature = (device = 0))]
pub(crate) fn stats(py: Python<'_>, device: i32) -> PyResult<Bound<'_, PyDict>> {
    let mut s = Stats::default();
    // The call may wait for the device's lock (another thread's synchronization): other
    // Python threads run meanwhile.
    // SAFETY: `s` is a `Stats` with its version and size set, valid for writing its size.
    if py.detach(|| unsafe { mempool_alloc::mempool_stats(device, &mut s) }) != 0 {
        return Err(library_error("mempool_stats"));
    }
    let d = PyDict::new(py);
    for (k, v) in [
        ("used_current", s.used_current),
        ("used_high", s.used_high),
        ("reserved_current", s.reserved_current),
        ("reserved_high", s.reserved_high),
        ("requested_current", s.requested_current),
        ("requested_high", s.requested_high),
        ("small_held_current", s.small_held_current),
        ("small_held_high", s.small_held_high),
        ("small_wasted", s.small_wasted),
        ("allocations", s.allocations),
        ("pending_frees", s.pending_frees),
        ("oom_count", s.oom_count),
        ("oom_retries", s.oom_retries),
        ("stream_order_violations", s.stream_order_violations),
        ("memory_limit", s.memory_limit),
    ] {
        d.set_item(k, v)?;
    }
    Ok(d)
}

/// Gives every cached byte no live allocation holds back to the devices
/// (`mempool_empty_cache`, what `torch.cuda.empty_cache()` calls). Waits for the devices'
/// queued work.
///
/// Raises `MempoolError` when a step failed.
#[pyfunction]
pub(crate) fn empty_cache(py: Python<'_>) -> PyResult<()> {
    // The call waits for the devices: other Python threads run meanwhile. The library's
    // last error is per thread, and `detach` runs the closure on this one.
    py.detach(|| {
        mempool_alloc::mempool_empty_cache();
        mempool_alloc::last_error()
    })
    .map_or(Ok(()), |m| Err(error(m)))
}

/// Caps `device`'s pool at `fraction` of the device's memory
/// (`mempool_set_memory_fraction`, PyTorch's `set_per_process_memory_fraction`).
///
/// Raises `MempoolError` for a fraction outside (0, 1] or an unknown device.
#[pyfunction]
#[pyo3(signature = (fraction, device = 0))]
pub(crate) fn set_memory_fraction(py: Python<'_>, fraction: f64, device: i32) -> PyResult<()> {
    py.detach(|| {
        mempool_alloc::mempool_set_memory_fraction(fraction, device);
        mempool_alloc::last_error()
    })
    .map_or(Ok(()), |m| Err(error(m)))
}

/// Records the allocation history of every device from now on, keeping the last
/// `max_entries` events of each (`mempool_record_history`, as PyTorch's
/// `_record_memory_history`); 0 switches recording off and forgets what was recorded.
///
/// Raises `MempoolError` when the library refuses.
#[pyfunction]
pub(crate) fn record_history(max_entries: usize) -> PyResult<()> {
    if mempool_alloc::mempool_record_history(max_entries) != 0 {
        return Err(library_error("mempool_record_history"));
    }
    Ok(())
}

/// Writes a memory snapshot to `path` (`mempool_dump_snapshot`): a pickle in the format of
/// PyTorch's `torch.cuda.memory._snapshot()` (`segments`, `device_traces`), readable by
/// `pickle.load` and by PyTorch's memory viewer.
///
/// Raises `MempoolError` with the reason when it cannot be written, `ValueError` for a
/// path with a NUL character.
#[pyfunction]
pub(crate) fn dump_snapshot(py: Python<'_>, path: PathBuf) -> PyResult<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| pyo3::exceptions::PyValueError::new_err("the path contains a NUL character"))?;
    // SAFETY: `c` is a NUL-terminated path that lives across the call.
    let rc = py.detach(|| unsafe { mempool_alloc::mempool_dump_snapshot(c.as_ptr()) });
    if rc != 0 {
        return Err(library_error("mempool_dump_snapshot"));
    }
    Ok(())
}

/// The calling thread's last failure in the library (`mempool_last_error`), or `None` when
/// its last call into the library succeeded; through `ctypes` too, on the same thread.
#[pyfunction]
pub(crate) fn last_error() -> Option<String> {
    mempool_alloc::last_error()
}
