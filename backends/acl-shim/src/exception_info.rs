//! The exception information a task failure hands the program's exception callback
//! (`exports::exception`), and the emulator's failure hook that calls it: the bottom
//! layer, so the state can install the hook.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What the getters answer for an info pointer they do not know.
pub(crate) const INVALID_INFO: u32 = 0xFFFF_FFFF;

/// `aclrtExceptionInfo` as this library hands it out: the five 32-bit fields CANN's
/// `rtExceptionInfo` starts with, in its order. The rest of CANN's structure (kernel
/// details) has nothing to hold here.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct aclrtExceptionInfo {
    pub(crate) task: u32,
    pub(crate) stream: u32,
    pub(crate) thread: u32,
    pub(crate) device: u32,
    pub(crate) code: u32,
}

/// `aclrtExceptionInfoCallback`: `void (*)(aclrtExceptionInfo *)`.
#[allow(non_camel_case_types)]
pub type aclrtExceptionInfoCallback = Option<unsafe extern "C" fn(*mut aclrtExceptionInfo)>;

/// The exception callback, as an address; 0: none.
pub(crate) static CALLBACK: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// The info of the callback running on this thread (null when none).
    pub(crate) static RUNNING: Cell<*const aclrtExceptionInfo> = const { Cell::new(std::ptr::null()) };
}

/// The emulator's failure hook: hands the failure to the exception callback, if any.
pub(crate) fn dispatch(f: &mempool_emu::TaskFailure) {
    let cb = CALLBACK.load(Ordering::Acquire);
    if cb == 0 {
        return;
    }
    // SAFETY: only `aclrtSetExceptionInfoCallback` stores a non-zero value, the address of
    // a function of this type.
    let cb: unsafe extern "C" fn(*mut aclrtExceptionInfo) = unsafe { std::mem::transmute(cb) };
    let mut info = aclrtExceptionInfo {
        task: f.task as u32,
        stream: f.stream as u32,
        thread: 0,
        device: f.device,
        code: f.error.code() as u32,
    };
    RUNNING.with(|r| r.set(&raw const info));
    // SAFETY: the C program registered `cb` to be called with an exception info, valid
    // for the call.
    unsafe { cb(&raw mut info) };
    RUNNING.with(|r| r.set(std::ptr::null()));
}
