//! `aclrtResetDevice` and the calling thread's current context, as CANN has it: the
//! context stays current while `aclrtSetDevice` counts are left, and an explicit context
//! (`aclrtCreateContext`) stays current even when the count reaches 0; only the device's
//! default context, current when its count reaches 0, stops being current.
//!
//! A test binary of its own with one test: the counts are process-wide.

use acl_rt::exports::*;
use mempool_ascend::sys::*;
use std::ptr::null_mut;

#[allow(dead_code)] // this binary uses only part of the shared helpers
mod common;
use common::message;

#[test]
fn a_reset_keeps_the_current_context_as_cann_does() {
    // SAFETY: valid out-pointers and handles this test created.
    unsafe {
        let mut s: aclrtStream = null_mut();
        // Counts left: the default context stays current.
        assert_eq!(aclrtSetDevice(0), 0);
        assert_eq!(aclrtSetDevice(0), 0);
        assert_eq!(aclrtResetDevice(0), 0);
        assert_eq!(aclrtCreateStream(&mut s), 0, "one count left: {}", message());
        assert_eq!(aclrtDestroyStream(s), 0);
        // The count reaches 0 with an explicit context current: it stays current.
        let mut ctx: aclrtContext = null_mut();
        assert_eq!(aclrtCreateContext(&mut ctx, 0), 0);
        assert_eq!(aclrtResetDevice(0), 0);
        let mut cur: aclrtContext = null_mut();
        assert_eq!(aclrtGetCurrentContext(&mut cur), 0, "{}", message());
        assert_eq!(cur, ctx);
        assert_eq!(aclrtCreateStream(&mut s), 0, "the explicit context is current: {}", message());
        assert_eq!(aclrtDestroyStream(s), 0);
        assert_eq!(aclrtDestroyContext(ctx), 0);
        // The count reaches 0 with the default context current: none is current after.
        assert_eq!(aclrtSetDevice(0), 0);
        assert_eq!(aclrtResetDeviceForce(0), 0);
        assert_eq!(aclrtGetCurrentContext(&mut cur), mempool_hal::code::ACL_ERROR_RT_CONTEXT_NULL);
        assert_eq!(aclrtCreateStream(&mut s), mempool_hal::code::ACL_ERROR_RT_CONTEXT_NULL);
    }
}
