//! Notifications (`aclrtCreateNotify`, `aclrtDestroyNotify`, `aclrtRecordNotify`,
//! `aclrtWaitAndResetNotify`) and value writes and waits on device memory
//! (`aclrtValueWrite`, `aclrtValueWait`): the waits whose end comes from outside the
//! waiting stream's order (contract §8; the emulator's `signal` module).

use super::prelude::*;
use mempool_ascend::sys::aclrtNotify;
use mempool_emu::ValueCompare;

/// The notification a handle names.
fn notify_of(s: &Shim, h: aclrtNotify, op: &'static str) -> mempool_hal::Result<mempool_emu::EmuNotify> {
    non_null(h, op, "notify")?;
    s.notifies.get(h as usize).ok_or_else(|| crate::ffi::stale(op, "notify", h as usize))
}

/// `aclError aclrtCreateNotify(aclrtNotify *notify, uint64_t flag)`: a notification of the
/// current device. `flag` is `ACL_NOTIFY_DEFAULT` or `ACL_NOTIFY_DEVICE_USE_ONLY` (stored
/// nowhere: it changes nothing a host program sees); another value: 107000.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateNotify(notify: *mut aclrtNotify, flag: u64) -> aclError {
    const OP: &str = "aclrtCreateNotify";
    ffi(OP, || {
        non_null(notify, OP, "notify")?;
        if flag > sys::ACL_NOTIFY_DEVICE_USE_ONLY {
            return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, OP, format!("flag {flag:#x} is neither 0 nor 1")));
        }
        let s = shim(OP)?;
        let d = current(OP)?;
        let h = s.notifies.insert(s.dev(d).create_notify());
        // SAFETY: non-null, and the caller passes a writable `aclrtNotify`.
        unsafe { notify.write(h as aclrtNotify) };
        Ok(())
    })
}

/// `aclError aclrtDestroyNotify(aclrtNotify notify)`: waits already queued on it still end
/// when their record runs (or time out).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDestroyNotify(notify: aclrtNotify) -> aclError {
    const OP: &str = "aclrtDestroyNotify";
    ffi(OP, || {
        let s = shim(OP)?;
        let n = notify_of(s, notify, OP)?;
        s.notifies.remove(notify as usize);
        s.devices[0].destroy_notify(&n)
    })
}

/// `aclError aclrtRecordNotify(aclrtNotify notify, aclrtStream stream)` (null stream: the
/// default stream): when the stream reaches it, the notification gains a record for one
/// wait to take.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtRecordNotify(notify: aclrtNotify, stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtRecordNotify";
    ffi(OP, || {
        let s = shim(OP)?;
        let n = notify_of(s, notify, OP)?;
        let e = s.stream(stream as usize, OP)?;
        s.dev(e.device).record_notify(&n, &e.stream)?;
        crate::state::note_task(s, &e);
        Ok(())
    })
}

/// `aclError aclrtWaitAndResetNotify(aclrtNotify notify, aclrtStream stream, uint32_t
/// timeout)` (null stream: the default stream): the stream waits until the notification
/// has a record to take, and takes it, even one recorded later or from another thread.
/// `timeout` is in seconds, as CANN's manual and runtime read it (0 or `UINT32_MAX`: no
/// limit of its own); a wait that runs out of time fails its task with 107020
/// (`ACL_ERROR_RT_TASK_TIMEOUT`), which the next synchronization reports.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtWaitAndResetNotify(notify: aclrtNotify, stream: aclrtStream, timeout: u32) -> aclError {
    const OP: &str = "aclrtWaitAndResetNotify";
    ffi(OP, || {
        let s = shim(OP)?;
        let n = notify_of(s, notify, OP)?;
        let e = s.stream(stream as usize, OP)?;
        let limit = (timeout != 0 && timeout != u32::MAX).then(|| std::time::Duration::from_secs(u64::from(timeout)));
        s.dev(e.device).wait_notify(&n, &e.stream, limit)?;
        crate::state::note_task(s, &e);
        Ok(())
    })
}

/// The device word a value write or wait names: device memory (host memory, registered
/// or not: 107000, as CANN refuses a location that is not the device's).
fn device_word(s: &Shim, addr: *mut c_void, op: &'static str) -> mempool_hal::Result<mempool_hal::DevicePtr> {
    non_null(addr, op, "devAddr")?;
    let p = dptr(addr);
    s.check_device_range(p.addr(), 8, op)?;
    if !s.devices[0].is_device_memory(p, 8) {
        return Err(err(
            code::ACL_ERROR_RT_PARAM_INVALID,
            op,
            format!("devAddr {addr:p} is not 8 bytes of device memory"),
        ));
    }
    Ok(p)
}

/// `aclError aclrtValueWrite(void *devAddr, uint64_t value, uint32_t flag, aclrtStream
/// stream)` (null stream: the default stream): writes the 64-bit `value` to the device
/// word at `devAddr` in stream order. `flag` must be 0 (107000).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtValueWrite(addr: *mut c_void, value: u64, flag: u32, stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtValueWrite";
    ffi(OP, || {
        if addr.is_null() {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, "devAddr is null"));
        }
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        if flag != 0 {
            return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, OP, format!("flag {flag} is reserved and must be 0")));
        }
        let p = device_word(s, addr, OP)?;
        s.dev(e.device).value_write(p, value, &e.stream)?;
        crate::state::note_task(s, &e);
        Ok(())
    })
}

/// `aclError aclrtValueWait(void *devAddr, uint64_t value, uint32_t flag, aclrtStream
/// stream)` (null stream: the default stream): the stream waits until the device word at
/// `devAddr` compares with `value` as `flag` asks: `ACL_STREAM_WAIT_VALUE_GEQ` (`>=`),
/// `_EQ` (`==`), `_AND` (`&` non-zero) or `_NOR` (`~(word | value)` non-zero); another
/// flag: 107000. The wait has no limit of its own; past the emulator's wait time-out it
/// fails its task with 107020.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtValueWait(addr: *mut c_void, value: u64, flag: u32, stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtValueWait";
    ffi(OP, || {
        if addr.is_null() {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, "devAddr is null"));
        }
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        let cmp = match flag {
            sys::ACL_STREAM_WAIT_VALUE_GEQ => ValueCompare::Geq,
            sys::ACL_STREAM_WAIT_VALUE_EQ => ValueCompare::Eq,
            sys::ACL_STREAM_WAIT_VALUE_AND => ValueCompare::And,
            sys::ACL_STREAM_WAIT_VALUE_NOR => ValueCompare::Nor,
            other => return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, OP, format!("flag {other} is not 0 to 3"))),
        };
        let p = device_word(s, addr, OP)?;
        s.dev(e.device).value_wait(p, value, cmp, &e.stream)?;
        crate::state::note_task(s, &e);
        Ok(())
    })
}
