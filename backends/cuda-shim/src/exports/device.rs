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

/// The device profile: every attribute this library answers, and its value. The emulator
/// models memory and stream order, not a processor: it answers what clients read to pick
/// their paths (the compute capability, memory pools, host mapping, managed memory absent)
/// and refuses attributes about kernels, clocks or caches rather than make them up.
const ATTRIBUTES: [(c_int, c_int); 10] = [
    // What clients size their launches by; the value of every current architecture.
    (CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32),
    // Host functions of a device run one at a time, on one thread.
    (CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1),
    // Device addresses are host addresses: host memory is device-addressable.
    (CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 1),
    // A current architecture: clients that gate pools or features on it take them.
    (CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9),
    (CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0),
    (CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1),
    // No cuMemAllocManaged here.
    (CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 0),
    (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 0),
    (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 1),
    // A bit mask of handle types: POSIX file descriptors are accepted at pool creation.
    (CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
];

/// `CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)`: the
/// device profile (`ATTRIBUTES`): warp size (10) 32, multiprocessors (16) 1, host mapping (19) 1, compute
/// capability (75, 76) 9.0, unified addressing (41) 1, managed memory (83) and concurrent
/// managed access (89) 0, memory pools (115) 1, pool handle types (119) 1 (the POSIX file
/// descriptor bit: a pool may be created with it, though this library exports no call that
/// shares it). Every other attribute: `CUDA_ERROR_INVALID_VALUE`.
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
            let known: Vec<String> = ATTRIBUTES.iter().map(|(a, _)| a.to_string()).collect();
            return Err(err(
                CUDA_ERROR_INVALID_VALUE,
                OP,
                format!("device attribute {attrib} is not one this library answers ({})", known.join(", ")),
            ));
        };
        s.device_id(i64::from(dev), OP)?;
        // SAFETY: non-null, and the caller passes a writable `int`.
        unsafe { pi.write(v) };
        Ok(())
    })
}

/// The name every emulated device reports (with its ordinal).
fn device_name(device: u32) -> String {
    format!("mempool-emu CPU device {device}")
}

/// `CUresult cuDeviceGetName(char *name, int len, CUdevice dev)`: `"mempool-emu CPU device
/// N"`, NUL-terminated, cut to `len - 1` bytes where it is longer. A null `name` or a `len`
/// below 1: `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// See the module docs; `name` is writable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetName(name: *mut c_char, len: c_int, dev: CUdevice) -> CUresult {
    const OP: &str = "cuDeviceGetName";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(name, OP, "name")?;
        let cap = usize::try_from(len)
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| err(CUDA_ERROR_INVALID_VALUE, OP, format!("len {len} leaves no room for a name")))?;
        let d = s.device_id(i64::from(dev), OP)?;
        let text = device_name(d);
        let n = text.len().min(cap - 1);
        // SAFETY: non-null and writable for `len` bytes (the caller's contract); `n + 1`
        // is at most `len`.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr().cast::<c_char>(), name, n);
            name.add(n).write(0);
        }
        Ok(())
    })
}

/// `CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)` (`cuDeviceTotalMem` in
/// `cuda.h`): the device's memory (`MEMPOOL_EMU_DEVICE_MEMORY`).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, dev: CUdevice) -> CUresult {
    const OP: &str = "cuDeviceTotalMem_v2";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(bytes, OP, "bytes")?;
        let d = s.device_id(i64::from(dev), OP)?;
        let total = s.dev(d).mem_info().map_err(|e| e.with_op(OP))?.total;
        // SAFETY: non-null, and the caller passes a writable `size_t`.
        unsafe { bytes.write(usize::try_from(total).unwrap_or(usize::MAX)) };
        Ok(())
    })
}

/// Device `d`'s UUID: the bytes of `"mempool-emu\0"` and the ordinal (little-endian), the
/// same in every process.
fn device_uuid(d: u32) -> CUuuid {
    let mut bytes = [0 as c_char; 16];
    for (b, c) in bytes.iter_mut().zip(b"mempool-emu\0".iter().chain(&d.to_le_bytes())) {
        *b = *c as c_char;
    }
    CUuuid { bytes }
}

/// The body of both UUID calls.
fn get_uuid(uuid: *mut CUuuid, dev: CUdevice, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    non_null(uuid, op, "uuid")?;
    let d = s.device_id(i64::from(dev), op)?;
    // SAFETY: non-null, and the caller passes a writable `CUuuid`.
    unsafe { uuid.write(device_uuid(d)) };
    Ok(())
}

/// `CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)`: the device's UUID: the bytes of
/// `"mempool-emu"`, a NUL, and the ordinal as 4 little-endian bytes.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetUuid(uuid: *mut CUuuid, dev: CUdevice) -> CUresult {
    const OP: &str = "cuDeviceGetUuid";
    ffi(OP, || get_uuid(uuid, dev, OP))
}

/// `CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)`: as `cuDeviceGetUuid` (the
/// driver's two differ for MIG instances, which this library has none of).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetUuid_v2(uuid: *mut CUuuid, dev: CUdevice) -> CUresult {
    const OP: &str = "cuDeviceGetUuid_v2";
    ffi(OP, || get_uuid(uuid, dev, OP))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_differ_by_device_and_start_with_the_name() {
        let (a, b) = (device_uuid(0), device_uuid(1));
        assert_ne!(a, b);
        let text: Vec<u8> = a.bytes[..11].iter().map(|&c| c as u8).collect();
        assert_eq!(text, b"mempool-emu");
        assert_eq!(b.bytes[12], 1);
    }
}
