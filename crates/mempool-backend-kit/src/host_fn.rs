//! The host-function trampoline: a Rust closure queued on a stream through a C launch
//! call (`aclrtLaunchHostFunc`, `cuLaunchHostFunc`), both of which take a
//! `void (*)(void *)` and the pointer it is called with.

use mempool_hal::HostFn;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The C type both runtimes call a host function through: `void (*)(void *user_data)`
/// (CANN's `aclrtCallback`, CUDA's `CUhostFn`).
pub type Trampoline = unsafe extern "C" fn(user_data: *mut c_void);

/// Queues `f` through `launch`, which is given the trampoline and its argument and answers
/// the runtime's status code; `ok` is the code of success.
///
/// `f` runs once, when the stream reaches it. A panic in `f` is caught before it could
/// unwind into the runtime's C frames. A launch that answers anything but `ok` drops `f`
/// without running it (the runtime will never call the trampoline).
///
/// `launch` must hand the trampoline and the argument to a runtime that calls the
/// trampoline with that argument exactly once if, and only if, it answers `ok`.
pub fn launch<R: PartialEq>(f: HostFn, ok: R, launch: impl FnOnce(Trampoline, *mut c_void) -> R) -> R {
    unsafe extern "C" fn trampoline(user_data: *mut c_void) {
        // SAFETY: `user_data` is the `Box<HostFn>` leaked by `launch`, and the runtime
        // calls each host function exactly once.
        let f = unsafe { Box::from_raw(user_data.cast::<HostFn>()) };
        // A panic must not unwind into the runtime's C frames.
        let _ = catch_unwind(AssertUnwindSafe(f));
    }
    let user_data = Box::into_raw(Box::new(f));
    let rc = launch(trampoline, user_data.cast());
    if rc != ok {
        // SAFETY: the launch failed, so the runtime will never call the trampoline: the box
        // is still ours.
        drop(unsafe { Box::from_raw(user_data) });
    }
    rc
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn counted(ran: &Arc<AtomicU32>) -> HostFn {
        let ran = Arc::clone(ran);
        Box::new(move || {
            ran.fetch_add(1, Ordering::SeqCst);
        })
    }

    #[test]
    fn a_launched_function_runs_once_and_a_panic_stays_inside() {
        let ran = Arc::new(AtomicU32::new(0));
        let rc = launch(counted(&ran), 0, |tramp, arg| {
            // SAFETY: the trampoline is called once with its argument, as a runtime would.
            unsafe { tramp(arg) };
            0
        });
        assert_eq!((rc, ran.load(Ordering::SeqCst)), (0, 1));
        let rc = launch(Box::new(|| panic!("inside a host function")), 0, |tramp, arg| {
            // SAFETY: as above.
            unsafe { tramp(arg) };
            0
        });
        assert_eq!(rc, 0);
    }

    #[test]
    fn a_refused_launch_drops_the_function_unrun() {
        let ran = Arc::new(AtomicU32::new(0));
        let f = counted(&ran);
        assert_eq!(Arc::strong_count(&ran), 2);
        assert_eq!(launch(f, 0, |_, _| 7), 7);
        assert_eq!((ran.load(Ordering::SeqCst), Arc::strong_count(&ran)), (0, 1));
    }
}
