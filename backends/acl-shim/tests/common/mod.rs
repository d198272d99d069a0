//! Helpers shared by the C ABI test binaries.

use acl_rt::exports::aclGetRecentErrMsg;
use mempool_ascend::sys::{aclrtMemLocation, aclrtMemPoolProps};
use std::ffi::CStr;

/// Takes this thread's last error message (`aclGetRecentErrMsg` clears it, as on CANN):
/// `""` when there is nothing to report (the library returns NULL then).
pub fn message() -> String {
    let p = aclGetRecentErrMsg_();
    if p.is_null() {
        return String::new();
    }
    // SAFETY: non-null: a NUL-terminated per-thread string that stays valid until the
    // next `aclGetRecentErrMsg` on this thread; it is copied at once.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

#[allow(non_snake_case)]
fn aclGetRecentErrMsg_() -> *const std::ffi::c_char {
    // SAFETY: takes no arguments and only reads this thread's message.
    unsafe { aclGetRecentErrMsg() }
}

/// The properties of a pool of `max_size` bytes on `device`.
pub fn props(device: u32, max_size: usize) -> aclrtMemPoolProps {
    aclrtMemPoolProps {
        allocType: 0,
        handleType: 0,
        location: aclrtMemLocation { id: device, type_: 1 },
        maxSize: max_size,
        reserved: [0; 32],
    }
}
