//! Helpers shared by the C ABI test binaries.

use acl_rt::exports::aclGetRecentErrMsg;
use mempool_ascend::sys::{aclrtMemLocation, aclrtMemPoolProps};
use std::ffi::CStr;

/// This thread's last error message.
pub fn message() -> String {
    // SAFETY: the shim returns a NUL-terminated per-thread string that stays valid until
    // the next failing call on this thread; it is copied at once.
    unsafe { CStr::from_ptr(aclGetRecentErrMsg()) }.to_string_lossy().into_owned()
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
