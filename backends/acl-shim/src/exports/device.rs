//! Devices: setting and resetting them (counted per device), and the queries about them (count, current device, run mode, version, SoC name, memory).

use super::prelude::*;

/// `aclError aclrtSetDevice(int32_t deviceId)`: makes the device's default context current
/// on this thread and counts one use of the device (process-wide).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetDevice(device: i32) -> aclError {
    const OP: &str = "aclrtSetDevice";
    ffi(OP, || {
        let s = shim(OP)?;
        let d = s.device_id(i64::from(device), OP)?;
        set_current(Some((d, s.default_context(d))));
        s.set_counts.lock().unwrap_or_else(std::sync::PoisonError::into_inner)[d as usize] += 1;
        Ok(())
    })
}

/// Undoes one `aclrtSetDevice` of `device` (all of them when `force`): 507007 when none is
/// left to undo. Waits for the device's work; the device stops being current on this
/// thread if it was.
fn reset_device(device: i32, force: bool, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    let d = s.device_id(i64::from(device), op)?;
    let left = {
        let mut counts = s.set_counts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = &mut counts[d as usize];
        if *n == 0 {
            return Err(err(
                sys::ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
                op,
                format!("device {d} is not set (every aclrtSetDevice of it was already reset)"),
            ));
        }
        *n = if force { 0 } else { *n - 1 };
        *n
    };
    s.dev(d).synchronize_device()?;
    // As CANN: the thread's current context stays, unless the count reached 0 (CANN tears
    // the device's primary context down then) and the primary context was current. An
    // explicit context (`aclrtCreateContext`) stays current either way.
    if left == 0 && current_context() == Some(s.default_context(d)) {
        set_current(None);
    }
    Ok(())
}

/// `aclError aclrtResetDevice(int32_t deviceId)`: undoes one `aclrtSetDevice` of the
/// device (507007 if none is left) and waits for the device's work.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtResetDevice(device: i32) -> aclError {
    const OP: &str = "aclrtResetDevice";
    ffi(OP, || reset_device(device, false, OP))
}

/// `aclError aclrtResetDeviceForce(int32_t deviceId)`: undoes every `aclrtSetDevice` of
/// the device (507007 if none is left) and waits for its work.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtResetDeviceForce(device: i32) -> aclError {
    const OP: &str = "aclrtResetDeviceForce";
    ffi(OP, || reset_device(device, true, OP))
}

/// `aclError aclrtGetDeviceCount(uint32_t *count)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceCount(count: *mut u32) -> aclError {
    const OP: &str = "aclrtGetDeviceCount";
    ffi(OP, || {
        non_null(count, OP, "count")?;
        let n = shim(OP)?.devices.len() as u32;
        // SAFETY: non-null, and the caller passes a writable `uint32_t`.
        unsafe { count.write(n) };
        Ok(())
    })
}

/// `aclError aclrtGetDevice(int32_t *deviceId)`: the calling thread's current device.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDevice(device: *mut i32) -> aclError {
    const OP: &str = "aclrtGetDevice";
    ffi(OP, || {
        non_null(device, OP, "deviceId")?;
        let d = current(OP)?;
        // SAFETY: non-null, and the caller passes a writable `int32_t`.
        unsafe { device.write(d as i32) };
        Ok(())
    })
}

/// `aclError aclrtGetRunMode(aclrtRunMode *runMode)`: always `ACL_HOST` (the program runs
/// on a host CPU). Needs neither `aclInit` nor a current device.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetRunMode(mode: *mut aclrtRunMode) -> aclError {
    const OP: &str = "aclrtGetRunMode";
    ffi(OP, || {
        non_null(mode, OP, "runMode")?;
        // SAFETY: non-null, and the caller passes a writable `aclrtRunMode`.
        unsafe { mode.write(sys::ACL_HOST) };
        Ok(())
    })
}

/// The ACL API version of the headers (`ACL_MAJOR_VERSION` and the others).
const ACL_API_VERSION: (i32, i32, i32) = (1, 17, 0);

/// `aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t
/// *patchVersion)`: the version of CANN's ACL API whose headers this library follows,
/// 1.17.0 (`ACL_MAJOR_VERSION`, `ACL_MINOR_VERSION`, `ACL_PATCH_VERSION`), as CANN answers;
/// the library's own version is in `aclrtGetSocName`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetVersion(major: *mut i32, minor: *mut i32, patch: *mut i32) -> aclError {
    const OP: &str = "aclrtGetVersion";
    ffi(OP, || {
        non_null(major, OP, "majorVersion")?;
        non_null(minor, OP, "minorVersion")?;
        non_null(patch, OP, "patchVersion")?;
        let (a, b, c) = ACL_API_VERSION;
        // SAFETY: all non-null, and the caller passes writable `int32_t`s.
        unsafe {
            major.write(a);
            minor.write(b);
            patch.write(c);
        }
        Ok(())
    })
}

/// What `aclrtGetSocName` answers: `mempool-emu-` and this library's version, which is
/// how a program (or the probe) tells the drop-in library from CANN and finds its
/// version (`aclrtGetVersion` answers CANN's API version).
const SOC_NAME: &std::ffi::CStr =
    match std::ffi::CStr::from_bytes_with_nul(concat!("mempool-emu-", env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(c) => c,
        Err(_) => c"mempool-emu",
    };

/// `const char *aclrtGetSocName(void)`: `"mempool-emu-"` and this library's version (for
/// example `mempool-emu-0.1.0`), a static string (never NULL).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetSocName() -> *const c_char {
    SOC_NAME.as_ptr()
}

/// `aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total)`: the
/// current device's memory (every attribute reports the same device memory). An attribute
/// outside `ACL_DDR_MEM` (0) to `ACL_MEM_P2P_HUGE1G` (17) answers 107016
/// (`ACL_ERROR_RT_INVALID_MEMORY_TYPE`), as CANN, before the context is needed.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetMemInfo(attr: aclrtMemAttr, free: *mut usize, total: *mut usize) -> aclError {
    const OP: &str = "aclrtGetMemInfo";
    ffi(OP, || {
        non_null(free, OP, "free")?;
        non_null(total, OP, "total")?;
        if !(0..=17).contains(&i64::from(attr)) {
            return Err(err(
                sys::ACL_ERROR_RT_INVALID_MEMORY_TYPE,
                OP,
                format!("memory attribute {attr} is not one of ACL_DDR_MEM (0) to ACL_MEM_P2P_HUGE1G (17)"),
            ));
        }
        let s = shim(OP)?;
        let info = s.dev(current(OP)?).mem_info()?;
        // SAFETY: both non-null, and the caller passes writable `size_t`s.
        unsafe {
            free.write(info.free as usize);
            total.write(info.total as usize);
        }
        Ok(())
    })
}
