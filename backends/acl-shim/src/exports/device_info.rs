//! What a program asks about a device: its attributes (`aclrtGetDeviceInfo`), status,
//! utilization, resource limits, stream priority range, and peer access between devices
//! (`aclrtDeviceCanAccessPeer`, `aclrtDeviceEnablePeerAccess`, `aclrtDeviceDisablePeerAccess`).
//!
//! Every answer comes from the emulated device's settings or from one documented device
//! profile ([`PROFILE`]), never invented per call.

use super::prelude::*;
use mempool_ascend::sys::{aclrtDevAttr, aclrtDevResLimitType, aclrtDeviceStatus, aclrtUtilizationInfo};

/// The emulated device's profile: what `aclrtGetDeviceInfo` answers, by attribute, for
/// every device. Core counts and sizes of an Atlas A2 training card (24 AI cores, each one
/// cube and two vector cores, 6 AI CPUs, 192 MiB of L2, 192 KiB of unified buffer per
/// vector core); the SIMT attributes (202, 203, 205-212) are not on that chip (207000).
/// `ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE` is the configured device memory
/// (`MEMPOOL_EMU_DEVICE_MEMORY`), `PHY_CHIP_ID` the device's id, `DEVICE_FORM_FACTOR` a PCIe
/// card (3).
pub const PROFILE: &[(aclrtDevAttr, i64)] = &[
    (1, 6),             // ACL_DEV_ATTR_AICPU_CORE_NUM
    (101, 24),          // ACL_DEV_ATTR_AICORE_CORE_NUM
    (102, 24),          // ACL_DEV_ATTR_CUBE_CORE_NUM
    (201, 48),          // ACL_DEV_ATTR_VECTOR_CORE_NUM
    (204, 196_608),     // ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE
    (302, 201_326_592), // ACL_DEV_ATTR_L2_CACHE_SIZE
    (401, 0),           // ACL_DEV_ATTR_SMP_ID
    (403, 0),           // ACL_DEV_ATTR_SUPER_POD_DEVICE_ID
    (404, 0),           // ACL_DEV_ATTR_SUPER_POD_SERVER_ID
    (405, 0),           // ACL_DEV_ATTR_SUPER_POD_ID
    (406, 0),           // ACL_DEV_ATTR_CUST_OP_PRIVILEGE
    (407, 0),           // ACL_DEV_ATTR_MAINBOARD_ID
    (408, 0),           // ACL_DEV_ATTR_HD_CONNECT_TYPE
    (409, 3),           // ACL_DEV_ATTR_DEVICE_FORM_FACTOR (PCIe card)
    (501, 0),           // ACL_DEV_ATTR_IS_VIRTUAL
    (601, 2201),        // ACL_DEV_ATTR_NPU_ARCH
];

/// The SIMT attributes, which the profile's chip lacks.
const SIMT: [aclrtDevAttr; 10] = [202, 203, 205, 206, 207, 208, 209, 210, 211, 212];

use crate::state::CORES;

/// `aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t *value)`: the
/// profile's value ([`PROFILE`]), the configured memory for `ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE`
/// (301), the device id for `ACL_DEV_ATTR_PHY_CHIP_ID` (402). The device need not be set. A
/// device out of range or an unknown attribute: 107000 (as CANN answers both); a SIMT
/// attribute: 207000; NULL `value`: 100000.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceInfo(device: u32, attr: aclrtDevAttr, value: *mut i64) -> aclError {
    const OP: &str = "aclrtGetDeviceInfo";
    ffi(OP, || {
        non_null(value, OP, "value")?;
        let s = shim(OP)?;
        if device as usize >= s.devices.len() {
            return Err(err(
                code::ACL_ERROR_RT_PARAM_INVALID,
                OP,
                format!("device {device} does not exist ({} device(s))", s.devices.len()),
            ));
        }
        let v = match attr {
            301 => s.devices[0].config().device_memory as i64,
            402 => i64::from(device),
            a if SIMT.contains(&a) => {
                return Err(err(
                    code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    OP,
                    format!("attribute {a} is a SIMT attribute, which the emulated chip lacks"),
                ));
            }
            a => PROFILE.iter().find(|(k, _)| *k == a).map(|(_, v)| *v).ok_or_else(|| {
                err(code::ACL_ERROR_RT_PARAM_INVALID, OP, format!("attribute {a} is not an aclrtDevAttr"))
            })?,
        };
        // SAFETY: non-null, and the caller passes a writable `int64_t`.
        unsafe { value.write(v) };
        Ok(())
    })
}

/// `aclError aclrtQueryDeviceStatus(int32_t deviceId, aclrtDeviceStatus *deviceStatus)`:
/// `ACL_RT_DEVICE_STATUS_NORMAL` (an emulated device never fails). A device out of range:
/// 107001; NULL: 100000.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtQueryDeviceStatus(device: i32, status: *mut aclrtDeviceStatus) -> aclError {
    const OP: &str = "aclrtQueryDeviceStatus";
    ffi(OP, || {
        non_null(status, OP, "deviceStatus")?;
        shim(OP)?.device_id(i64::from(device), OP)?;
        // SAFETY: non-null, and the caller passes a writable status.
        unsafe { status.write(sys::ACL_RT_DEVICE_STATUS_NORMAL) };
        Ok(())
    })
}

/// `aclError aclrtGetDeviceUtilizationRate(int32_t deviceId, aclrtUtilizationInfo
/// *utilizationInfo)`: a documented constant: 0 for the cube, vector and AI CPU shares (the
/// emulator runs no cores), -1 for memory (CANN never measures it). As on CANN, a device that
/// cannot be asked (out of range, or not current on this thread) gives -1 in every field and
/// the call still succeeds. NULL, or a non-NULL `utilizationExtend`: 100000.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceUtilizationRate(device: i32, info: *mut aclrtUtilizationInfo) -> aclError {
    const OP: &str = "aclrtGetDeviceUtilizationRate";
    ffi(OP, || {
        non_null(info, OP, "utilizationInfo")?;
        // SAFETY: non-null, and the caller passes a readable `aclrtUtilizationInfo`.
        if !unsafe { (*info).utilizationExtend }.is_null() {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, "utilizationExtend is reserved and must be NULL"));
        }
        let s = shim(OP)?;
        let asked = s.device_id(i64::from(device), OP).ok().is_some_and(|d| current(OP).ok() == Some(d));
        let share = if asked { 0 } else { -1 };
        // SAFETY: non-null, and the caller passes a writable `aclrtUtilizationInfo`.
        unsafe {
            (*info).cubeUtilization = share;
            (*info).vectorUtilization = share;
            (*info).aicpuUtilization = share;
            (*info).memoryUtilization = -1;
        }
        Ok(())
    })
}

/// The index of a resource-limit type (cube 0, vector 1); another type: 107000.
fn core_kind(kind: aclrtDevResLimitType, op: &'static str) -> mempool_hal::Result<usize> {
    usize::try_from(kind).ok().filter(|&k| k < CORES.len()).ok_or_else(|| {
        err(
            code::ACL_ERROR_RT_PARAM_INVALID,
            op,
            format!("type {kind} is neither ACL_RT_DEV_RES_CUBE_CORE nor VECTOR_CORE"),
        )
    })
}

/// Checks a resource-limit call's type and device, as CANN does: a negative or unknown
/// device 107001, a type other than cube or vector 107000, a device not set (no
/// `aclrtSetDevice` count) 507033. Returns the device and the type's index.
fn limit_args(device: i32, kind: aclrtDevResLimitType, op: &'static str) -> mempool_hal::Result<(u32, usize)> {
    let s = shim(op)?;
    let d = s.device_id(i64::from(device), op)?;
    let k = core_kind(kind, op)?;
    if s.set_counts.lock().unwrap_or_else(PoisonError::into_inner)[d as usize] == 0 {
        return Err(err(
            sys::ACL_ERROR_RT_DEV_SETUP_ERROR,
            op,
            format!("device {d} is not set (aclrtSetDevice first)"),
        ));
    }
    Ok((d, k))
}

/// `aclError aclrtGetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t
/// *value)`: the limit set, or the total of that kind of core (24 cube, 48
/// vector). Checks as `limit_args`; NULL `value`: 100000.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceResLimit(device: i32, kind: aclrtDevResLimitType, value: *mut u32) -> aclError {
    const OP: &str = "aclrtGetDeviceResLimit";
    ffi(OP, || {
        non_null(value, OP, "value")?;
        let (d, k) = limit_args(device, kind, OP)?;
        let v = shim(OP)?.res_limits.lock().unwrap_or_else(PoisonError::into_inner)[d as usize][k];
        // SAFETY: non-null, and the caller passes a writable `uint32_t`.
        unsafe { value.write(v) };
        Ok(())
    })
}

/// `aclError aclrtSetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t
/// value)`: stores the limit (read back by the getters; the emulator runs no cores, so it
/// limits nothing it does). Above the total of that kind of core: 107000.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetDeviceResLimit(device: i32, kind: aclrtDevResLimitType, value: u32) -> aclError {
    const OP: &str = "aclrtSetDeviceResLimit";
    ffi(OP, || {
        let (d, k) = limit_args(device, kind, OP)?;
        if value > CORES[k] {
            return Err(err(
                code::ACL_ERROR_RT_PARAM_INVALID,
                OP,
                format!("value {value} is above the device's {} cores of that kind", CORES[k]),
            ));
        }
        shim(OP)?.res_limits.lock().unwrap_or_else(PoisonError::into_inner)[d as usize][k] = value;
        Ok(())
    })
}

/// `aclError aclrtResetDeviceResLimit(int32_t deviceId)`: both limits back to the totals.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtResetDeviceResLimit(device: i32) -> aclError {
    const OP: &str = "aclrtResetDeviceResLimit";
    ffi(OP, || {
        let (d, _) = limit_args(device, sys::ACL_RT_DEV_RES_CUBE_CORE, OP)?;
        shim(OP)?.res_limits.lock().unwrap_or_else(PoisonError::into_inner)[d as usize] = CORES;
        Ok(())
    })
}

/// `aclError aclrtGetResInCurrentThread(aclrtDevResLimitType type, uint32_t *value)`: the
/// current device's limit of that kind (no stream limits here). NULL: 100000; another type:
/// 107000; no current context: 107002.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetResInCurrentThread(kind: aclrtDevResLimitType, value: *mut u32) -> aclError {
    const OP: &str = "aclrtGetResInCurrentThread";
    ffi(OP, || {
        non_null(value, OP, "value")?;
        let k = core_kind(kind, OP)?;
        let s = shim(OP)?;
        let d = current(OP)?;
        let v = s.res_limits.lock().unwrap_or_else(PoisonError::into_inner)[d as usize][k];
        // SAFETY: non-null, and the caller passes a writable `uint32_t`.
        unsafe { value.write(v) };
        Ok(())
    })
}

/// `aclError aclrtDeviceGetStreamPriorityRange(int32_t *leastPriority, int32_t
/// *greatestPriority)`: 7 and 0 (a lower number is a higher priority); a NULL pointer is
/// not written.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceGetStreamPriorityRange(least: *mut i32, greatest: *mut i32) -> aclError {
    const OP: &str = "aclrtDeviceGetStreamPriorityRange";
    ffi(OP, || {
        shim(OP)?;
        if !least.is_null() {
            // SAFETY: non-null, and the caller passes a writable `int32_t`.
            unsafe { least.write(7) };
        }
        if !greatest.is_null() {
            // SAFETY: as above.
            unsafe { greatest.write(0) };
        }
        Ok(())
    })
}

/// The checks of a peer-access call for the pair (current device, `peer`): the peer is
/// another device that exists (itself: 100000; out of range: 107001), and a device is
/// current (107002). Returns (current, peer).
fn peer_pair(peer: i32, op: &'static str) -> mempool_hal::Result<(u32, u32)> {
    let s = shim(op)?;
    let cur = current(op)?;
    if i64::from(peer) == i64::from(cur) {
        return Err(err(code::ACL_ERROR_INVALID_PARAM, op, format!("peer device {peer} is the current device")));
    }
    Ok((cur, s.device_id(i64::from(peer), op)?))
}

/// `aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId, int32_t
/// peerDeviceId)`: 1 for two emulated devices. The same device twice: 100000 (checked
/// first, as on CANN); a device out of range: 107001; NULL: 107000; no device current on
/// this thread: 107002.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceCanAccessPeer(can: *mut i32, device: i32, peer: i32) -> aclError {
    const OP: &str = "aclrtDeviceCanAccessPeer";
    ffi(OP, || {
        if device == peer {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, format!("device {device} is its own peer")));
        }
        let s = shim(OP)?;
        s.device_id(i64::from(device), OP)?;
        s.device_id(i64::from(peer), OP)?;
        if can.is_null() {
            return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, OP, "canAccessPeer is null"));
        }
        current(OP)?;
        // SAFETY: non-null, and the caller passes a writable `int32_t`.
        unsafe { can.write(1) };
        Ok(())
    })
}

/// `aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags)`: the current
/// device may reach `peerDeviceId`'s memory (one direction, as on CANN): a device-to-device
/// copy between them is accepted from then on. `flags` other than 0: 200006 (checked
/// first); enabled already: 0 (the pair stays enabled).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceEnablePeerAccess(peer: i32, flags: u32) -> aclError {
    const OP: &str = "aclrtDeviceEnablePeerAccess";
    ffi(OP, || {
        if flags != 0 {
            return Err(err(
                sys::ACL_ERROR_FEATURE_UNSUPPORTED,
                OP,
                format!("flags {flags:#x} are reserved and must be 0"),
            ));
        }
        let (cur, peer) = peer_pair(peer, OP)?;
        shim(OP)?.dev(cur).enable_peer_access(peer)
    })
}

/// `aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId)`: ends what
/// `aclrtDeviceEnablePeerAccess` gave. Not enabled: 507899 (the driver's refusal).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceDisablePeerAccess(peer: i32) -> aclError {
    const OP: &str = "aclrtDeviceDisablePeerAccess";
    ffi(OP, || {
        let (cur, peer) = peer_pair(peer, OP)?;
        shim(OP)?.dev(cur).disable_peer_access(peer)
    })
}
