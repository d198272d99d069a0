//! Virtual memory (contract §14): `cuMemAddressReserve`, `cuMemAddressFree`,
//! `cuMemCreate`, `cuMemRelease`, `cuMemMap`, `cuMemUnmap`, `cuMemSetAccess`,
//! `cuMemGetAccess`, `cuMemGetAllocationGranularity`, `cuMemRetainAllocationHandle` and
//! `cuMemGetAllocationPropertiesFromHandle`.
//!
//! The checks run in the library's order (module docs of [`exports`](super)): `cuInit`
//! first, then pointers, sizes, flags and property fields (`CUDA_ERROR_INVALID_VALUE`),
//! then device ordinals (`CUDA_ERROR_INVALID_DEVICE`, where the driver lists it). No call
//! needs a current context: the device comes from the properties and descriptors, and the
//! emulator keeps the reservations, chunks and mappings of the whole platform. An
//! allocation handle is the emulator's chunk number, never dereferenced: a released or
//! made-up one answers `CUDA_ERROR_INVALID_VALUE`, as the driver's documented codes for
//! these calls have no invalid-handle code. The emulator's refusals (an address outside a
//! reservation or over a mapping, an unmapping of part of a mapping, a reservation freed
//! while mapped) are `CUDA_ERROR_INVALID_VALUE`; out of device memory
//! `CUDA_ERROR_OUT_OF_MEMORY`.

use super::prelude::*;
use mempool_hal::{Access, Granularity, Physical, VirtualMemory};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// `CU_MEM_HANDLE_TYPE_FABRIC`: not supported here (`CUDA_ERROR_NOT_SUPPORTED`).
const HANDLE_FABRIC: c_int = 0x8;

/// What `cuMemCreate` was given, for `cuMemGetAllocationPropertiesFromHandle`: the
/// allocation type, the requested handle types, the location and the flags.
type Created = (c_int, c_int, CUmemLocation, CUmemAllocationProp_allocFlags);

/// The properties of the live chunks, by handle (dropped when the handle dies).
static CREATED: Mutex<Option<HashMap<u64, Created>>> = Mutex::new(None);

fn created<T>(f: impl FnOnce(&mut HashMap<u64, Created>) -> T) -> T {
    f(CREATED.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert_with(HashMap::new))
}

fn invalid(op: &'static str, what: String) -> mempool_hal::Error {
    err(CUDA_ERROR_INVALID_VALUE, op, what)
}

/// The emulator of device 0: the platform's virtual memory is one, whichever device asks.
fn platform(s: &Shim) -> &mempool_emu::Emulator {
    s.dev(0)
}

/// The live chunk `handle` and its device (`CUDA_ERROR_INVALID_VALUE` for any other).
fn live_chunk(
    s: &Shim,
    handle: CUmemGenericAllocationHandle,
    op: &'static str,
) -> mempool_hal::Result<(Physical, u32)> {
    platform(s)
        .physical(handle)
        .ok_or_else(|| invalid(op, format!("{handle:#x} is not a live allocation handle (never created, or released)")))
}

/// The device of a property (`type` PINNED and a device location): the checks shared by
/// `cuMemCreate` and `cuMemGetAllocationGranularity`. A device that does not exist is
/// `bad_device`'s code.
fn prop_device(s: &Shim, p: &CUmemAllocationProp, bad_device: CUresult, op: &'static str) -> mempool_hal::Result<u32> {
    if p.type_ != CU_MEM_ALLOCATION_TYPE_PINNED {
        return Err(invalid(op, format!("prop->type {} (only CU_MEM_ALLOCATION_TYPE_PINNED)", p.type_)));
    }
    if p.location.type_ != CU_MEM_LOCATION_TYPE_DEVICE {
        return Err(invalid(
            op,
            format!("prop->location.type {} (only CU_MEM_LOCATION_TYPE_DEVICE)", p.location.type_),
        ));
    }
    s.device_id(i64::from(p.location.id), op).map_err(|_| {
        err(bad_device, op, format!("device {} does not exist ({} device(s))", p.location.id, s.devices.len()))
    })
}

/// `CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp
/// *prop, CUmemAllocationGranularity_flags option)`: the emulator's granularity
/// (`MEMPOOL_EMU_GRANULARITY`, 2 MiB as the driver answers for both options). A null
/// pointer, a type other than PINNED, a location other than a device, a device that does
/// not exist or an option other than MINIMUM and RECOMMENDED: `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemGetAllocationGranularity(
    granularity: *mut usize,
    prop: *const CUmemAllocationProp,
    option: CUmemAllocationGranularity_flags,
) -> CUresult {
    const OP: &str = "cuMemGetAllocationGranularity";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(granularity, OP, "granularity")?;
        non_null(prop, OP, "prop")?;
        // SAFETY: non-null, and the caller passes a readable props struct; read unaligned
        // in case C placed it oddly.
        let p = unsafe { prop.read_unaligned() };
        let d = prop_device(s, &p, CUDA_ERROR_INVALID_VALUE, OP)?;
        let which = match option {
            CU_MEM_ALLOC_GRANULARITY_MINIMUM => Granularity::Minimum,
            CU_MEM_ALLOC_GRANULARITY_RECOMMENDED => Granularity::Recommended,
            o => return Err(invalid(OP, format!("option {o} is neither MINIMUM nor RECOMMENDED"))),
        };
        let g = s.dev(d).granularity(which).map_err(|e| e.with_op(OP))?;
        // SAFETY: non-null, and the caller passes a writable `size_t`.
        unsafe { granularity.write(g as usize) };
        Ok(())
    })
}

/// `CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
/// CUdeviceptr addr, unsigned long long flags)`: `size` bytes of addresses with nothing
/// behind them, aligned to `alignment` (0, or a power of two up to the granularity: the
/// granularity; a larger power of two: that), at `addr` when it is free and aligned to the
/// granularity (otherwise, or 0: anywhere). A null `ptr`, size 0 or not a multiple of the
/// granularity, a non-zero `flags`, an alignment that is not a power of two:
/// `CUDA_ERROR_INVALID_VALUE`; no address space left: `CUDA_ERROR_OUT_OF_MEMORY`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAddressReserve(
    ptr: *mut CUdeviceptr,
    size: usize,
    alignment: usize,
    addr: CUdeviceptr,
    flags: u64,
) -> CUresult {
    const OP: &str = "cuMemAddressReserve";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(ptr, OP, "ptr")?;
        if flags != 0 {
            return Err(invalid(OP, format!("flags {flags} (they must be 0)")));
        }
        let dev = platform(s);
        let gran = dev.granularity(Granularity::Minimum)?;
        if size == 0 || size as u64 % gran != 0 {
            return Err(invalid(OP, format!("size {size} is not a non-zero multiple of the granularity {gran}")));
        }
        if alignment != 0 && !alignment.is_power_of_two() {
            return Err(invalid(OP, format!("alignment {alignment} is not a power of two")));
        }
        let align = if (alignment as u64) <= gran { 0 } else { alignment as u64 };
        // A hint, as the driver takes it: one the emulator cannot use (unaligned) is dropped.
        let hint = (addr != 0 && addr % gran == 0).then(|| DevicePtr::from_addr(addr));
        let r = dev.reserve(size as u64, align, hint)?;
        // SAFETY: non-null, and the caller passes a writable `CUdeviceptr`.
        unsafe { ptr.write(r.base.addr()) };
        Ok(())
    })
}

/// `CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)`: a whole reservation, its
/// start and its size, with nothing mapped in it; anything else:
/// `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAddressFree(ptr: CUdeviceptr, size: usize) -> CUresult {
    const OP: &str = "cuMemAddressFree";
    ffi(OP, || {
        let s = shim(OP)?;
        non_zero(ptr, OP, "ptr")?;
        let dev = platform(s);
        let at = DevicePtr::from_addr(ptr);
        let r = dev
            .reserved_at(at)
            .filter(|r| r.base == at && r.size == size as u64)
            .ok_or_else(|| invalid(OP, format!("[{ptr:#x}, +{size}) is not a reservation of cuMemAddressReserve")))?;
        dev.release_reserved(r).map_err(|e| e.with_op(OP))
    })
}

/// `CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const
/// CUmemAllocationProp *prop, unsigned long long flags)`: `size` bytes of device memory on
/// the device `prop->location.id`. A null pointer, size 0 or not a multiple of the
/// granularity, non-zero `flags`, a type other than PINNED, a location other than a
/// device, handle types other than none and a POSIX file descriptor, a non-null
/// `win32HandleMetaData`, compression, usage or reserved flags set:
/// `CUDA_ERROR_INVALID_VALUE`; a fabric handle: `CUDA_ERROR_NOT_SUPPORTED`; a device that
/// does not exist: `CUDA_ERROR_INVALID_DEVICE`; out of device memory:
/// `CUDA_ERROR_OUT_OF_MEMORY`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemCreate(
    handle: *mut CUmemGenericAllocationHandle,
    size: usize,
    prop: *const CUmemAllocationProp,
    flags: u64,
) -> CUresult {
    const OP: &str = "cuMemCreate";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(handle, OP, "handle")?;
        non_null(prop, OP, "prop")?;
        if size == 0 {
            return Err(invalid(OP, "size 0".to_string()));
        }
        if flags != 0 {
            return Err(invalid(OP, format!("flags {flags} (they must be 0)")));
        }
        // SAFETY: non-null, and the caller passes a readable props struct.
        let p = unsafe { prop.read_unaligned() };
        let types = p.requestedHandleTypes;
        if types & HANDLE_FABRIC != 0 {
            return Err(err(CUDA_ERROR_NOT_SUPPORTED, OP, "fabric handles are not supported"));
        }
        if types & !CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR != 0 {
            return Err(invalid(OP, format!("requestedHandleTypes {types:#x} (none or a POSIX file descriptor)")));
        }
        let f = p.allocFlags;
        if !p.win32HandleMetaData.is_null() || f.compressionType != 0 || f.usage != 0 || f.reserved != [0; 4] {
            return Err(invalid(OP, "win32HandleMetaData, compression, usage or reserved flags set".to_string()));
        }
        let d = prop_device(s, &p, CUDA_ERROR_INVALID_DEVICE, OP)?;
        let dev = s.dev(d);
        let gran = dev.granularity(Granularity::Minimum)?;
        if size as u64 % gran != 0 {
            return Err(invalid(OP, format!("size {size} is not a multiple of the granularity {gran}")));
        }
        let chunk = dev.create_physical(size as u64).map_err(|e| e.with_op(OP))?;
        created(|m| m.insert(chunk.handle, (p.type_, types, p.location, f)));
        // SAFETY: non-null, and the caller passes a writable handle.
        unsafe { handle.write(chunk.handle) };
        Ok(())
    })
}

/// `CUresult cuMemRelease(CUmemGenericAllocationHandle handle)`: drops one reference (the
/// creation's, or a retain's); the memory goes when no reference and no mapping is left.
/// A released or made-up handle: `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemRelease(handle: CUmemGenericAllocationHandle) -> CUresult {
    const OP: &str = "cuMemRelease";
    ffi(OP, || {
        let s = shim(OP)?;
        let (chunk, d) = live_chunk(s, handle, OP)?;
        s.dev(d).release_physical(chunk).map_err(|e| e.with_op(OP))?;
        if platform(s).physical(handle).is_none() {
            created(|m| m.remove(&handle));
        }
        Ok(())
    })
}

/// `CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
/// CUmemGenericAllocationHandle handle, unsigned long long flags)`: `size` bytes of the
/// chunk at `ptr`, inside one reservation and over nothing mapped, address and size
/// multiples of the granularity. Device work may use it once access is set
/// (`cuMemSetAccess`; on the Ascend profiles a mapping is read-write at once). A zero
/// `ptr` or size, `offset` or `flags` not 0, a released or made-up handle, and every
/// refusal of the emulator: `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemMap(
    ptr: CUdeviceptr,
    size: usize,
    offset: usize,
    handle: CUmemGenericAllocationHandle,
    flags: u64,
) -> CUresult {
    const OP: &str = "cuMemMap";
    ffi(OP, || {
        let s = shim(OP)?;
        non_zero(ptr, OP, "ptr")?;
        if size == 0 {
            return Err(invalid(OP, "size 0".to_string()));
        }
        if offset != 0 || flags != 0 {
            return Err(invalid(OP, format!("offset {offset} and flags {flags} (both must be 0)")));
        }
        let (chunk, d) = live_chunk(s, handle, OP)?;
        s.dev(d).map(DevicePtr::from_addr(ptr), size as u64, 0, chunk).map_err(|e| e.with_op(OP))?;
        Ok(())
    })
}

/// `CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)`: one or more whole mappings back to
/// back, exactly `[ptr, ptr + size)`; part of a mapping, or a range with a hole:
/// `CUDA_ERROR_INVALID_VALUE`. Work queued on the range before the call still sees the
/// chunks; the range has no access afterwards.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemUnmap(ptr: CUdeviceptr, size: usize) -> CUresult {
    const OP: &str = "cuMemUnmap";
    ffi(OP, || {
        let s = shim(OP)?;
        non_zero(ptr, OP, "ptr")?;
        if size == 0 {
            return Err(invalid(OP, "size 0".to_string()));
        }
        let at = DevicePtr::from_addr(ptr);
        let d = platform(s)
            .mapping_at(at)
            .and_then(|(_, chunk)| platform(s).physical(chunk.handle).map(|(_, d)| d))
            .unwrap_or(0);
        s.dev(d).unmap(mempool_hal::Mapping { at, size: size as u64 }).map_err(|e| e.with_op(OP))
    })
}

/// `CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
/// size_t count)`: the access of each descriptor's device over `[ptr, ptr + size)`, which
/// must be wholly mapped (it may span several mappings). A zero `ptr`, size or count, a
/// null `desc`, a location other than a device, flags other than none, read and
/// read-write, a range not wholly mapped: `CUDA_ERROR_INVALID_VALUE`; a device that does
/// not exist: `CUDA_ERROR_INVALID_DEVICE`. The emulator keeps one access per mapping:
/// with several descriptors the last one holds.
///
/// # Safety
///
/// See the module docs; `desc` must be readable for `count` descriptors.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemSetAccess(
    ptr: CUdeviceptr,
    size: usize,
    desc: *const CUmemAccessDesc,
    count: usize,
) -> CUresult {
    const OP: &str = "cuMemSetAccess";
    ffi(OP, || {
        let s = shim(OP)?;
        non_zero(ptr, OP, "ptr")?;
        non_null(desc, OP, "desc")?;
        if size == 0 || count == 0 {
            return Err(invalid(OP, format!("size {size} and count {count} (neither may be 0)")));
        }
        let mut wanted = Vec::with_capacity(count.min(64));
        for i in 0..count {
            // SAFETY: non-null, and the caller passes `count` readable descriptors; read
            // unaligned in case C placed them oddly.
            let d = unsafe { desc.add(i).read_unaligned() };
            if d.location.type_ != CU_MEM_LOCATION_TYPE_DEVICE {
                return Err(invalid(OP, format!("desc[{i}].location.type {} is not a device", d.location.type_)));
            }
            let access = match d.flags {
                CU_MEM_ACCESS_FLAGS_PROT_NONE => Access::None,
                CU_MEM_ACCESS_FLAGS_PROT_READ => Access::Read,
                CU_MEM_ACCESS_FLAGS_PROT_READWRITE => Access::ReadWrite,
                f => return Err(invalid(OP, format!("desc[{i}].flags {f} is not an access flag"))),
            };
            wanted.push((s.device_id(i64::from(d.location.id), OP)?, access));
        }
        for (d, access) in wanted {
            s.dev(d).set_access(DevicePtr::from_addr(ptr), size as u64, access).map_err(|e| e.with_op(OP))?;
        }
        Ok(())
    })
}

/// `CUresult cuMemGetAccess(unsigned long long *flags, const CUmemLocation *location,
/// CUdeviceptr ptr)`: the access flags of the mapping holding `ptr` (0 until set on the
/// `cuda` profile). A null pointer, a zero or unmapped `ptr`, a location other than a
/// device: `CUDA_ERROR_INVALID_VALUE`; a device that does not exist:
/// `CUDA_ERROR_INVALID_DEVICE`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemGetAccess(flags: *mut u64, location: *const CUmemLocation, ptr: CUdeviceptr) -> CUresult {
    const OP: &str = "cuMemGetAccess";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(flags, OP, "flags")?;
        non_null(location, OP, "location")?;
        non_zero(ptr, OP, "ptr")?;
        // SAFETY: non-null, and the caller passes a readable location.
        let l = unsafe { location.read_unaligned() };
        if l.type_ != CU_MEM_LOCATION_TYPE_DEVICE {
            return Err(invalid(OP, format!("location.type {} is not a device", l.type_)));
        }
        s.device_id(i64::from(l.id), OP)?;
        let Some(access) = platform(s).access_at(DevicePtr::from_addr(ptr)) else {
            return Err(invalid(OP, format!("{ptr:#x} is not mapped")));
        };
        let f = match access {
            Access::None => CU_MEM_ACCESS_FLAGS_PROT_NONE,
            Access::Read => CU_MEM_ACCESS_FLAGS_PROT_READ,
            Access::ReadWrite => CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: non-null, and the caller passes a writable `unsigned long long`.
        unsafe { flags.write(f as u64) };
        Ok(())
    })
}

/// `CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void
/// *addr)`: the handle of the chunk mapped at `addr` (any address of the mapping), with
/// one more reference to release (live again if it was released while mapped). A null
/// pointer, an address not mapped: `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemRetainAllocationHandle(
    handle: *mut CUmemGenericAllocationHandle,
    addr: *mut c_void,
) -> CUresult {
    const OP: &str = "cuMemRetainAllocationHandle";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(handle, OP, "handle")?;
        non_null(addr, OP, "addr")?;
        let chunk = platform(s).retain_physical_at(DevicePtr::from_addr(addr as u64)).map_err(|e| e.with_op(OP))?;
        // SAFETY: non-null, and the caller passes a writable handle.
        unsafe { handle.write(chunk.handle) };
        Ok(())
    })
}

/// `CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
/// CUmemGenericAllocationHandle handle)`: the properties the chunk was created with
/// (compression never granted, `win32HandleMetaData` NULL). A null `prop`, a released or
/// made-up handle: `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemGetAllocationPropertiesFromHandle(
    prop: *mut CUmemAllocationProp,
    handle: CUmemGenericAllocationHandle,
) -> CUresult {
    const OP: &str = "cuMemGetAllocationPropertiesFromHandle";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(prop, OP, "prop")?;
        let (_, d) = live_chunk(s, handle, OP)?;
        let mut out = CUmemAllocationProp::device(d as CUdevice);
        if let Some((ty, types, location, flags)) = created(|m| m.get(&handle).copied()) {
            out.type_ = ty;
            out.requestedHandleTypes = types;
            out.location = location;
            out.allocFlags = CUmemAllocationProp_allocFlags { compressionType: 0, ..flags };
        }
        // SAFETY: non-null, and the caller passes a writable props struct.
        unsafe { prop.write_unaligned(out) };
        Ok(())
    })
}
