//! The primary context of each device, counted by its retains, and the calling thread's
//! current context (a `Cell` of plain data: it has no destructor, so calls made at thread
//! exit still read it).

use super::{Shim, lock};
use crate::ffi::{CUDA_ERROR_INVALID_CONTEXT, err};
use mempool_hal::Result;
use std::cell::Cell;

impl Shim {
    /// The primary context handle of `device`.
    pub(crate) fn primary_context(&self, device: u32) -> usize {
        self.primary[device as usize]
    }

    /// Counts one retain of `device`'s primary context.
    pub(crate) fn retain(&self, device: u32) {
        lock(&self.retains)[device as usize] += 1;
    }

    /// Undoes one retain of `device`'s primary context; returns how many are left.
    /// None left to undo: `CUDA_ERROR_INVALID_CONTEXT`.
    pub(crate) fn release(&self, device: u32, op: &'static str) -> Result<u64> {
        let mut r = lock(&self.retains);
        let n = &mut r[device as usize];
        if *n == 0 {
            return Err(err(
                CUDA_ERROR_INVALID_CONTEXT,
                op,
                format!("the primary context of device {device} is not retained (every retain was released)"),
            ));
        }
        *n -= 1;
        Ok(*n)
    }

    /// Whether `device`'s primary context is retained (active).
    pub(crate) fn is_active(&self, device: u32) -> bool {
        lock(&self.retains)[device as usize] > 0
    }

    /// The device of the calling thread's current context. No current context, or one
    /// whose every retain was released: `CUDA_ERROR_INVALID_CONTEXT`.
    pub(crate) fn current(&self, op: &'static str) -> Result<u32> {
        let Some((d, _)) = CURRENT.with(Cell::get) else {
            return Err(err(
                CUDA_ERROR_INVALID_CONTEXT,
                op,
                "no current context on this thread (cuDevicePrimaryCtxRetain, then cuCtxSetCurrent)",
            ));
        };
        if !self.is_active(d) {
            return Err(err(
                CUDA_ERROR_INVALID_CONTEXT,
                op,
                format!("the current context (device {d}'s primary context) was released (retain it again)"),
            ));
        }
        Ok(d)
    }
}

thread_local! {
    /// The current (device, context handle) of this thread.
    static CURRENT: Cell<Option<(u32, usize)>> = const { Cell::new(None) };
}

/// The current context handle of this thread, if any (released or not).
pub(crate) fn current_context() -> Option<usize> {
    CURRENT.with(Cell::get).map(|(_, c)| c)
}

/// Makes `(device, context)` current on this thread (`None` clears it).
pub(crate) fn set_current(v: Option<(u32, usize)>) {
    CURRENT.with(|c| c.set(v));
}
