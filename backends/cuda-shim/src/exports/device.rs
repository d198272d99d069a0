//! Devices: how many there are, a device by ordinal, and the attributes this library
//! answers.

use super::prelude::*;

/// `CUresult cuDeviceGetCount(int *count)`: the emulated devices (`MEMPOOL_EMU_DEVICES`).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut c_int) -> CUresult {
    const OP: &str = "cuDeviceGetCount";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(count, OP, "count")?;
        // SAFETY: non-null, and the caller passes a writable `int`.
        unsafe { count.write(s.devices.len() as c_int) };
        Ok(())
    })
}

/// `CUresult cuDeviceGet(CUdevice *device, int ordinal)`: the device handle is its
/// ordinal. An ordinal out of range: `CUDA_ERROR_INVALID_DEVICE`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int) -> CUresult {
    const OP: &str = "cuDeviceGet";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(device, OP, "device")?;
        let d = s.device_id(i64::from(ordinal), OP)?;
        // SAFETY: non-null, and the caller passes a writable `CUdevice`.
        unsafe { device.write(d as CUdevice) };
        Ok(())
    })
}

/// The attributes this library answers, and their values. The emulator models memory
/// and stream order, not a processor: attributes about kernels, clocks or caches would be
/// made up, so they are refused rather than answered.
const ATTRIBUTES: [(c_int, c_int); 3] = [
    // Device addresses are host addresses: one address space.
    (CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1),
    (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 1),
    // A bit mask of handle types: POSIX file descriptors are accepted at pool creation.
    (CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
];

/// `CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)`:
/// `CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED` (115) is 1,
/// `CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES` (119) is 1 (the POSIX file
/// descriptor bit: a pool may be created with that handle type, though this library
/// exports no call that shares it), `CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING` (41) is 1.
/// Every other attribute: `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetAttribute(pi: *mut c_int, attrib: c_int, dev: CUdevice) -> CUresult {
    const OP: &str = "cuDeviceGetAttribute";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(pi, OP, "pi")?;
        let Some(&(_, v)) = ATTRIBUTES.iter().find(|(a, _)| *a == attrib) else {
            return Err(err(
                CUDA_ERROR_INVALID_VALUE,
                OP,
                format!("device attribute {attrib} is not one this library answers (41, 115, 119)"),
            ));
        };
        s.device_id(i64::from(dev), OP)?;
        // SAFETY: non-null, and the caller passes a writable `int`.
        unsafe { pi.write(v) };
        Ok(())
    })
}
