//! Unit tests of the library's own state, through the C entry points.

use crate::exports::*;
use crate::state::shim;
use mempool_ascend::sys;
use std::ffi::c_void;
use std::sync::PoisonError;

/// The twin destroys share one body: either form forgets what the library kept about
/// the stream (only the force form did before they shared it).
#[test]
fn both_destroy_forms_forget_the_streams_failure_mode_and_host_function_mark() {
    // SAFETY: valid out-pointers and handles this test created.
    unsafe {
        assert_eq!(aclrtSetDevice(0), 0);
        for force in [false, true] {
            let mut st: sys::aclrtStream = std::ptr::null_mut();
            assert_eq!(aclrtCreateStream(&mut st), 0);
            assert_eq!(aclrtSetStreamFailureMode(st, sys::ACL_STOP_ON_FAILURE), 0);
            extern "C" fn nothing(_: *mut c_void) {}
            assert_eq!(aclrtLaunchHostFunc(st, Some(nothing), std::ptr::null_mut()), 0);
            let s = shim("test").expect("the shim starts");
            let key = (0, st as usize);
            assert!(s.failure_modes.lock().unwrap_or_else(PoisonError::into_inner).contains_key(&key));
            let rc = if force { aclrtDestroyStreamForce(st) } else { aclrtDestroyStream(st) };
            assert_eq!(rc, 0, "force {force}");
            assert!(!s.failure_modes.lock().unwrap_or_else(PoisonError::into_inner).contains_key(&key));
            assert!(!s.host_func_streams.lock().unwrap_or_else(PoisonError::into_inner).contains(&(st as usize)));
        }
        assert_eq!(aclrtResetDevice(0), 0);
    }
}
