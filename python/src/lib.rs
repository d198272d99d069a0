//! `mempool_hal` for Python (pyo3): the pluggable allocator of `libmempool_alloc.so` as an
//! extension module, its statistics, history and snapshots, and the CPU emulator and trace
//! replay for tests without a device.
//!
//! The extension module is the allocator library: it exports every C function of
//! `mempool_alloc::exports::EXPORTS` (`src/exports.rs` keeps them in the linked file), so
//! `mempool_hal.library_path()` is the file a framework loads
//! (`torch.cuda.memory.CUDAPluggableAllocator(path, "mempool_alloc", "mempool_free")`), and
//! the statistics Python reads are those of the allocator the framework uses: one state.
//!
//! Build and test with `cargo xtask python` (a virtual environment under `target/`,
//! maturin, pytest); `mempool_hal.pyi` beside this crate's manifest is the module's type
//! stub.

#![deny(missing_docs)]

mod allocator;
mod emulator;
mod error;
mod exports;
mod replay;

pub use error::MempoolError;

use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// The file a framework loads as its allocator: this extension module, which exports the
/// allocator's C functions (`EXPORTS`).
///
/// Raises `MempoolError` when the dynamic loader cannot say (never on Linux).
#[pyfunction]
fn library_path() -> PyResult<String> {
    exports::library_path()
        .map(|p| p.to_string_lossy().into_owned())
        .ok_or_else(|| error::error("the dynamic loader does not know the extension module's file"))
}

/// The address of the exported C function `name` (one of `EXPORTS`) in this library, for
/// the frameworks' hook setters (`alloc.allocator().set_init_fn(address("mempool_init"))`);
/// the same as `ctypes.cast(getattr(ctypes.CDLL(library_path()), name), ctypes.c_void_p)`.
///
/// Raises `MempoolError` for a name that is not an export.
#[pyfunction]
fn address(name: &str) -> PyResult<usize> {
    exports::address(name).ok_or_else(|| error::error(format!("{name} is not an export of the library")))
}

/// Stream-ordered device memory pools: the pluggable allocator for PyTorch, torch_npu and
/// MindSpore (this module is the library they load: `library_path()`, `ALLOC_FN`,
/// `FREE_FN`, `hooks()`), its per-device statistics, history recording and memory
/// snapshots, and a CPU emulator (`Emulator`) and trace replay (`replay`) for tests
/// without a device.
#[pymodule]
#[pyo3(name = "mempool_hal")]
fn init_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("MempoolError", py.get_type::<MempoolError>())?;
    m.add("ALLOC_FN", "mempool_alloc")?;
    m.add("FREE_FN", "mempool_free")?;
    m.add("EXPORTS", PyTuple::new(py, exports::names())?)?;
    m.add_function(wrap_pyfunction!(library_path, m)?)?;
    m.add_function(wrap_pyfunction!(address, m)?)?;
    m.add_function(wrap_pyfunction!(allocator::hooks, m)?)?;
    m.add_function(wrap_pyfunction!(allocator::backend, m)?)?;
    m.add_function(wrap_pyfunction!(allocator::stats, m)?)?;
    m.add_function(wrap_pyfunction!(allocator::empty_cache, m)?)?;
    m.add_function(wrap_pyfunction!(allocator::set_memory_fraction, m)?)?;
    m.add_function(wrap_pyfunction!(allocator::record_history, m)?)?;
    m.add_function(wrap_pyfunction!(allocator::dump_snapshot, m)?)?;
    m.add_function(wrap_pyfunction!(allocator::last_error, m)?)?;
    m.add_class::<emulator::PyEmulator>()?;
    m.add_class::<emulator::PyStream>()?;
    m.add_class::<emulator::PyPool>()?;
    m.add_function(wrap_pyfunction!(replay::replay, m)?)?;
    Ok(())
}
