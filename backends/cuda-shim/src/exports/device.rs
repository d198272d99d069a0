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

/// The last valid `CUdevice_attribute` id of the driver table's CUDA version (13.5:
/// `CU_DEVICE_ATTRIBUTE_MAX` is 162).
const LAST_ATTRIBUTE: c_int = 161;

/// The device profile: the value of every valid attribute of `device` (ids 1 to
/// [`LAST_ATTRIBUTE`]). The emulator models memory and stream order, not a processor:
///
/// - the kernel limits of compute capability 9.0 (threads, block and grid dimensions,
///   shared memory, registers), so clients that size launches get the numbers they expect;
/// - what clients read to pick their paths: compute capability 9.0, one multiprocessor
///   (host functions of a device run one at a time), unified addressing, host mapping and
///   host registration, memory pools (POSIX file-descriptor handle type), virtual memory
///   management, two copy engines (copies and memsets run in stream order on every stream);
/// - the PCI location `0000:NN:00.0` with bus `NN` = 1 + the ordinal (attributes 33, 34,
///   50), as `cuDeviceGetPCIBusId` answers it;
/// - 0 for every feature absent here (managed memory, concurrent managed access, stream
///   priorities, cooperative and cluster launches, textures, peer access, IPC, multicast,
///   MPS, compression, host and host-NUMA pools), and for every hardware figure the
///   emulator has none of (clocks, caches, buses); -1 for the NUMA ids (no NUMA node).
fn attribute(id: c_int, device: u32) -> Option<c_int> {
    if !(1..=LAST_ATTRIBUTE).contains(&id) {
        return None;
    }
    Some(match id {
        // Threads per block; block dimensions x, y, z; grid dimensions x, y, z.
        1 => 1024,
        2 | 3 => 1024,
        4 => 64,
        5 => i32::MAX,
        6 | 7 => 65535,
        // Shared memory per block, constant memory, warp size, pitch, registers per block.
        8 => 49152,
        9 => 65536,
        10 => 32,
        11 => i32::MAX,
        12 => 65536,
        // Copies overlap work (15); one multiprocessor (16); host memory mappable (19).
        15 => 1,
        16 => 1,
        19 => 1,
        // Kernels of different streams run concurrently (31).
        31 => 1,
        // PCI bus id (33).
        33 => 1 + device as c_int,
        // Resident threads per multiprocessor (39); copy engines (40); unified addressing (41).
        39 => 2048,
        40 => 2,
        41 => 1,
        // Compute capability 9.0.
        75 => 9,
        76 => 0,
        // Shared memory and registers per multiprocessor.
        81 => 233_472,
        82 => 65536,
        // The host pointer of registered memory is its device pointer (91); host
        // registration (99); opt-in shared memory per block (97).
        91 => 1,
        97 => 232_448,
        99 => 1,
        // Virtual memory management (102); blocks per multiprocessor (106); reserved shared
        // memory per block (111).
        102 => 1,
        106 => 32,
        111 => 1024,
        // Memory pools (115) and their handle types (119): POSIX file descriptors.
        115 => 1,
        119 => CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
        // One memory synchronization domain (126).
        126 => 1,
        // No NUMA node (131: NUMA id, 134: host NUMA id).
        131 | 134 => -1,
        _ => 0,
    })
}

/// `CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)`: the
/// device profile (`attribute`): warp size (10) 32, multiprocessors (16) 1, host mapping
/// (19) 1, compute capability (75, 76) 9.0, unified addressing (41) 1, managed memory (83)
/// and concurrent managed access (89) 0, memory pools (115) 1, pool handle types (119) 1
/// (the POSIX file descriptor bit), and every other id of the enum as the profile says. An
/// id outside the enum (0, 162 and up, negative): `CUDA_ERROR_INVALID_VALUE`.
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
        if !(1..=LAST_ATTRIBUTE).contains(&attrib) {
            return Err(err(
                CUDA_ERROR_INVALID_VALUE,
                OP,
                format!("device attribute {attrib} is not a CUdevice_attribute (1 to {LAST_ATTRIBUTE})"),
            ));
        }
        let d = s.device_id(i64::from(dev), OP)?;
        let v = attribute(attrib, d).unwrap_or(0);
        // SAFETY: non-null, and the caller passes a writable `int`.
        unsafe { pi.write(v) };
        Ok(())
    })
}

/// Device `d`'s PCI bus id (`domain:bus:device.function`, bus 1 + the ordinal).
fn pci_bus_id(d: u32) -> String {
    format!("0000:{:02x}:00.0", 1 + d)
}

/// `CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)`: `"0000:NN:00.0"`
/// (bus `NN` = 1 + the ordinal, in hexadecimal), NUL-terminated, cut to `len - 1` bytes
/// where it is longer. A null buffer or a `len` below 1: `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// See the module docs; `pciBusId` is writable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetPCIBusId(bus_id: *mut c_char, len: c_int, dev: CUdevice) -> CUresult {
    const OP: &str = "cuDeviceGetPCIBusId";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(bus_id, OP, "pciBusId")?;
        let d = s.device_id(i64::from(dev), OP)?;
        write_text(bus_id, len, &pci_bus_id(d), OP)
    })
}

/// `CUresult cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)`: the device at a
/// PCI bus id written `domain:bus:device.function`, `domain:bus:device` or `bus:device.function`
/// (hexadecimal, any case), as `cuDeviceGetPCIBusId` answers them. A string naming no
/// device: `CUDA_ERROR_INVALID_DEVICE`; null pointers: `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// See the module docs; `pciBusId` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetByPCIBusId(dev: *mut CUdevice, bus_id: *const c_char) -> CUresult {
    const OP: &str = "cuDeviceGetByPCIBusId";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(dev, OP, "dev")?;
        non_null(bus_id, OP, "pciBusId")?;
        // SAFETY: non-null, and the caller passes a NUL-terminated string.
        let text = unsafe { std::ffi::CStr::from_ptr(bus_id) }.to_string_lossy().to_ascii_lowercase();
        let found = (0..s.devices.len() as u32).find(|&d| {
            let full = pci_bus_id(d);
            text == full || text == full[..10] || text == full[5..]
        });
        let d =
            found.ok_or_else(|| err(CUDA_ERROR_INVALID_DEVICE, OP, format!("no device is at PCI bus id {text:?}")))?;
        // SAFETY: non-null, and the caller passes a writable `CUdevice`.
        unsafe { dev.write(d as CUdevice) };
        Ok(())
    })
}

/// Writes `text` NUL-terminated into `out` (`len` bytes), cut to `len - 1` bytes.
fn write_text(out: *mut c_char, len: c_int, text: &str, op: &'static str) -> mempool_hal::Result<()> {
    let cap = usize::try_from(len)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| err(CUDA_ERROR_INVALID_VALUE, op, format!("len {len} leaves no room for the text")))?;
    let n = text.len().min(cap - 1);
    // SAFETY: non-null and writable for `len` bytes (the caller's contract); `n + 1` is at
    // most `len`.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr().cast::<c_char>(), out, n);
        out.add(n).write(0);
    }
    Ok(())
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
        if len < 1 {
            return Err(err(CUDA_ERROR_INVALID_VALUE, OP, format!("len {len} leaves no room for a name")));
        }
        let d = s.device_id(i64::from(dev), OP)?;
        write_text(name, len, &device_name(d), OP)
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
    fn every_id_of_the_enum_has_a_value_and_none_outside() {
        assert!((1..=LAST_ATTRIBUTE).all(|id| attribute(id, 0).is_some()));
        for id in [0, -1, LAST_ATTRIBUTE + 1, c_int::MAX] {
            assert_eq!(attribute(id, 0), None);
        }
        assert_eq!((attribute(75, 0), attribute(76, 0), attribute(115, 0)), (Some(9), Some(0), Some(1)));
        assert_eq!((attribute(33, 0), attribute(33, 2)), (Some(1), Some(3)));
        assert_eq!(pci_bus_id(2), "0000:03:00.0");
    }

    #[test]
    fn uuids_differ_by_device_and_start_with_the_name() {
        let (a, b) = (device_uuid(0), device_uuid(1));
        assert_ne!(a, b);
        let text: Vec<u8> = a.bytes[..11].iter().map(|&c| c as u8).collect();
        assert_eq!(text, b"mempool-emu");
        assert_eq!(b.bytes[12], 1);
    }
}
