//! `Emulator`, `Stream` and `Pool`: the CPU emulator of `mempool_emu` for Python, so that
//! code using stream-ordered pools can be tested without a device. Every error of the
//! emulator (a bad pointer, a foreign stream, out of memory, a stream-order violation the
//! checker refuses) raises `MempoolError`.

use crate::error::hal_error;
use mempool_emu::{EmuPool, EmuStream, Emulator, ExecutionMode};
use mempool_hal::{Device, DevicePtr, MemPool, MemPoolExt, PoolProps, attr};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// An emulated platform: `devices` devices of `device_memory` bytes each, pools carved at
/// `granularity`. Streams really run concurrently (`threaded`) or only when the host
/// synchronizes; the stream-order checker (`checker`) refuses a free or access not ordered
/// after the memory's allocation and earlier uses.
#[pyclass(module = "mempool_hal", name = "Emulator", frozen)]
#[derive(Debug)]
pub(crate) struct PyEmulator {
    /// Device 0 of the platform.
    emu: Emulator,
}

impl PyEmulator {
    /// Device `device` of the platform.
    fn device(&self, device: u32) -> PyResult<Emulator> {
        self.emu.device(device).map_err(hal_error)
    }
}

#[pymethods]
impl PyEmulator {
    #[new]
    #[pyo3(signature = (devices = 1, device_memory = 16 << 30, granularity = 2 << 20, checker = true, threaded = true))]
    fn new(devices: u32, device_memory: u64, granularity: u64, checker: bool, threaded: bool) -> PyResult<Self> {
        let mode = if threaded { ExecutionMode::Threaded } else { ExecutionMode::Deferred };
        let emu = Emulator::builder()
            .devices(devices)
            .device_memory(device_memory)
            .granularity(granularity)
            .checker(checker)
            .mode(mode)
            .build()
            .map_err(hal_error)?;
        Ok(PyEmulator { emu })
    }

    /// The number of devices.
    #[getter]
    fn devices(&self) -> u32 {
        self.emu.config().devices
    }

    /// Each device's memory in bytes.
    #[getter]
    fn device_memory(&self) -> u64 {
        self.emu.config().device_memory
    }

    /// The pools' allocation granularity in bytes.
    #[getter]
    fn granularity(&self) -> u64 {
        self.emu.pool_granularity()
    }

    /// `(free, total)` bytes of `device`: what its pools may still reserve, and its memory.
    #[pyo3(signature = (device = 0))]
    fn mem_info(&self, device: u32) -> PyResult<(u64, u64)> {
        let m = self.device(device)?.mem_info().map_err(hal_error)?;
        Ok((m.free, m.total))
    }

    /// A new stream on `device`; destroyed when the object is.
    #[pyo3(signature = (device = 0))]
    fn create_stream(&self, device: u32) -> PyResult<PyStream> {
        let emu = self.device(device)?;
        let stream = emu.create_stream().map_err(hal_error)?;
        Ok(PyStream { emu, stream })
    }

    /// A new pool of `max_size` bytes on `device`, releasing down to `release_threshold`
    /// bytes at synchronizations (`None`: the emulator's default, 0); destroyed when the
    /// object is.
    #[pyo3(signature = (max_size, device = 0, release_threshold = None))]
    fn create_pool(&self, max_size: u64, device: u32, release_threshold: Option<u64>) -> PyResult<PyPool> {
        let emu = self.device(device)?;
        let props = PoolProps::builder().device(device).max_size(max_size).build();
        let pool = emu.create_pool(&props).map_err(hal_error)?;
        let pool = PyPool { emu, pool };
        if let Some(t) = release_threshold {
            pool.pool.set(attr::ReleaseThreshold, t).map_err(hal_error)?;
        }
        Ok(pool)
    }

    /// Waits until every device has run all its queued work; the pools then release their
    /// cached memory down to their thresholds.
    fn synchronize(&self, py: Python<'_>) -> PyResult<()> {
        let devices = (0..self.devices()).map(|d| self.device(d)).collect::<PyResult<Vec<_>>>()?;
        py.detach(|| devices.iter().try_for_each(|d| d.synchronize_device())).map_err(hal_error)
    }

    fn __repr__(&self) -> String {
        let c = self.emu.config();
        format!("Emulator(devices={}, device_memory={}, granularity={})", c.devices, c.device_memory, c.granularity)
    }
}

/// A stream of an emulated device, made by `Emulator.create_stream`.
#[pyclass(module = "mempool_hal", name = "Stream", frozen)]
#[derive(Debug)]
pub(crate) struct PyStream {
    /// Its device.
    emu: Emulator,
    stream: EmuStream,
}

#[pymethods]
impl PyStream {
    /// The stream's device.
    #[getter]
    fn device(&self) -> u32 {
        self.emu.id()
    }

    /// Waits until the stream has run all its queued work.
    fn synchronize(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.emu.synchronize_stream(&self.stream)).map_err(hal_error)
    }
}

impl Drop for PyStream {
    fn drop(&mut self) {
        // Nothing can report an error from a destructor; the platform goes on either way.
        let _ = self.emu.destroy_stream(&self.stream);
    }
}

/// A stream-ordered pool of an emulated device, made by `Emulator.create_pool`. Addresses
/// are plain integers (the emulator's device addresses are host addresses).
#[pyclass(module = "mempool_hal", name = "Pool", frozen)]
#[derive(Debug)]
pub(crate) struct PyPool {
    /// Its device.
    emu: Emulator,
    pool: EmuPool,
}

#[pymethods]
impl PyPool {
    /// The pool's size in bytes.
    #[getter]
    fn size(&self) -> u64 {
        self.pool.size()
    }

    /// `size` bytes in stream order on `stream`: the address.
    fn malloc(&self, size: u64, stream: PyRef<'_, PyStream>) -> PyResult<u64> {
        self.pool.malloc_async(size, &stream.stream).map(DevicePtr::addr).map_err(hal_error)
    }

    /// Frees the allocation at `ptr` in stream order on `stream`.
    fn free(&self, ptr: u64, stream: PyRef<'_, PyStream>) -> PyResult<()> {
        // SAFETY: the emulator checks the pointer (a live allocation of this pool), the
        // stream and the stream order, and answers anything else with an error; host
        // memory is never freed under a user here.
        unsafe { self.pool.free_async(DevicePtr::from_addr(ptr), &stream.stream) }.map_err(hal_error)
    }

    /// Releases cached memory now, keeping at least `bytes` reserved (at least USED).
    fn trim_to(&self, bytes: u64) -> PyResult<()> {
        self.pool.trim_to(bytes).map_err(hal_error)
    }

    /// `reserved_current`, `reserved_high`, `used_current` and `used_high`, read at once.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.pool.stats().map_err(hal_error)?;
        let d = PyDict::new(py);
        d.set_item("reserved_current", s.reserved_current)?;
        d.set_item("reserved_high", s.reserved_high)?;
        d.set_item("used_current", s.used_current)?;
        d.set_item("used_high", s.used_high)?;
        Ok(d)
    }
}

impl Drop for PyPool {
    fn drop(&mut self) {
        // As for streams: the pool's memory goes back to its device.
        let _ = self.emu.destroy_pool(&self.pool);
    }
}
