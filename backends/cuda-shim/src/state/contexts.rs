//! Contexts: the primary context of each device, counted by its retains, the contexts
//! programs create (`cuCtxCreate`), and the calling thread's context stack, whose top is
//! its current context. The stack is `Cell`s of plain data: they have no destructor, so
//! calls made at thread exit still read them.

use super::{Shim, lock};
use crate::ffi::{CUDA_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_VALUE, err};
use mempool_hal::Result;
use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// A context handle's target: its device and its flags (`CU_CTX_*`, read by
/// `cuCtxGetFlags`).
#[derive(Clone)]
pub(crate) struct ContextEntry {
    pub(crate) device: u32,
    pub(crate) flags: Arc<AtomicU32>,
}

impl ContextEntry {
    pub(crate) fn new(device: u32, flags: u32) -> ContextEntry {
        ContextEntry { device, flags: Arc::new(AtomicU32::new(flags)) }
    }

    /// The context's flags.
    pub(crate) fn flags(&self) -> u32 {
        self.flags.load(Ordering::Relaxed)
    }

    /// Replaces the context's flags.
    pub(crate) fn set_flags(&self, flags: u32) {
        self.flags.store(flags, Ordering::Relaxed);
    }
}

/// How many contexts a thread's stack holds below its current one.
const STACK: usize = 63;

impl Shim {
    /// The primary context handle of `device`.
    pub(crate) fn primary_context(&self, device: u32) -> usize {
        self.primary[device as usize]
    }

    /// Whether `h` is a device's primary context.
    pub(crate) fn is_primary(&self, h: usize) -> bool {
        self.primary.contains(&h)
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

    /// The context behind handle `h`, if it may be used: a retained primary context or a
    /// created context not destroyed. Otherwise `CUDA_ERROR_INVALID_CONTEXT`.
    pub(crate) fn context(&self, h: usize, op: &'static str) -> Result<ContextEntry> {
        let c = self.contexts.get(h).ok_or_else(|| {
            err(
                CUDA_ERROR_INVALID_CONTEXT,
                op,
                format!("{h:#x} is not a context (garbage, destroyed, or another kind of handle)"),
            )
        })?;
        if self.is_primary(h) && !self.is_active(c.device) {
            return Err(err(
                CUDA_ERROR_INVALID_CONTEXT,
                op,
                format!("the primary context of device {} is not retained (cuDevicePrimaryCtxRetain first)", c.device),
            ));
        }
        Ok(c)
    }

    /// `h`, or the current context where `h` is NULL (the calls that take an optional
    /// context), as (handle, entry).
    pub(crate) fn context_or_current(&self, h: usize, op: &'static str) -> Result<(usize, ContextEntry)> {
        let h = if h == 0 { self.current_handle(op)? } else { h };
        Ok((h, self.context(h, op)?))
    }

    /// The calling thread's current context handle, checked as [`Shim::context`] checks.
    pub(crate) fn current_handle(&self, op: &'static str) -> Result<usize> {
        let Some((_, h)) = CURRENT.with(Cell::get) else {
            return Err(err(
                CUDA_ERROR_INVALID_CONTEXT,
                op,
                "no current context on this thread (cuDevicePrimaryCtxRetain, then cuCtxSetCurrent)",
            ));
        };
        self.context(h, op).map_err(|e| {
            err(CUDA_ERROR_INVALID_CONTEXT, op, format!("the current context is not usable: {}", e.message()))
        })?;
        Ok(h)
    }

    /// The device of the calling thread's current context. No current context, one whose
    /// every retain was released, or one destroyed: `CUDA_ERROR_INVALID_CONTEXT`.
    pub(crate) fn current(&self, op: &'static str) -> Result<u32> {
        let Some((d, h)) = CURRENT.with(Cell::get) else {
            return Err(err(
                CUDA_ERROR_INVALID_CONTEXT,
                op,
                "no current context on this thread (cuDevicePrimaryCtxRetain, then cuCtxSetCurrent)",
            ));
        };
        let usable = if self.is_primary(h) { self.is_active(d) } else { self.contexts.get(h).is_some() };
        if !usable {
            let what = if self.is_primary(h) {
                format!("device {d}'s primary context, was released (retain it again)")
            } else {
                format!("{h:#x}, was destroyed")
            };
            return Err(err(CUDA_ERROR_INVALID_CONTEXT, op, format!("the current context, {what}")));
        }
        Ok(d)
    }
}

thread_local! {
    /// The current (device, context handle) of this thread: the top of its stack.
    static CURRENT: Cell<Option<(u32, usize)>> = const { Cell::new(None) };
    /// The contexts below the top of this thread's stack, and how many there are.
    static BELOW: Cell<([(u32, usize); STACK], usize)> = const { Cell::new(([(0, 0); STACK], 0)) };
}

/// The current context handle of this thread, if any (usable or not).
pub(crate) fn current_context() -> Option<usize> {
    CURRENT.with(Cell::get).map(|(_, c)| c)
}

/// Replaces the top of this thread's context stack with `(device, context)` (`cuCtxSetCurrent`;
/// on an empty stack this pushes it). `None` pops the top, as the driver does for a NULL
/// context.
pub(crate) fn set_current(v: Option<(u32, usize)>) {
    match v {
        Some(c) => CURRENT.with(|cur| cur.set(Some(c))),
        None => {
            pop_current();
        }
    }
}

/// Pushes `(device, context)` onto this thread's stack (`cuCtxPushCurrent`).
///
/// # Errors
///
/// The stack already holds 64 contexts: `CUDA_ERROR_INVALID_VALUE`.
pub(crate) fn push_current(c: (u32, usize), op: &'static str) -> Result<()> {
    if let Some(top) = CURRENT.with(Cell::get) {
        let (mut below, n) = BELOW.with(Cell::get);
        if n == STACK {
            return Err(err(
                CUDA_ERROR_INVALID_VALUE,
                op,
                format!("the thread's context stack holds {} contexts, the most this library keeps", STACK + 1),
            ));
        }
        below[n] = top;
        BELOW.with(|b| b.set((below, n + 1)));
    }
    CURRENT.with(|cur| cur.set(Some(c)));
    Ok(())
}

/// Pops the top of this thread's stack; returns it (`None`: the stack was empty).
pub(crate) fn pop_current() -> Option<(u32, usize)> {
    let top = CURRENT.with(Cell::get)?;
    let (below, n) = BELOW.with(Cell::get);
    let next = if n == 0 {
        None
    } else {
        BELOW.with(|b| b.set((below, n - 1)));
        Some(below[n - 1])
    };
    CURRENT.with(|cur| cur.set(next));
    Some(top)
}
