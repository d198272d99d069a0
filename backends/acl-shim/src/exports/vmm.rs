//! Virtual memory (contract §14): `aclrtReserveMemAddress`, `aclrtReleaseMemAddress`,
//! `aclrtMallocPhysical`, `aclrtFreePhysical`, `aclrtMapMem`, `aclrtUnmapMem`,
//! `aclrtMemSetAccess`, `aclrtMemGetAllocationGranularity`.
//!
//! Each call checks its arguments in CANN's order and answers CANN's codes, layer by
//! layer: the ACL layer's checks (null pointers, size 0, flags, property fields) answer
//! 100000; the runtime's device checks 107001 (and 107002 for a host-NUMA chunk without a
//! context); the driver library's checks (alignment, offset, `reserve`, a location it does
//! not know, a handle that is not live, an address that is not a reservation) 107000, or
//! 207000 for what it does not support; the kernel's (an address not reserved or already
//! mapped, a size not a multiple of the granularity, an unmap of an address that does not
//! start a mapping) 507899. The emulator keeps the reservations, chunks and mappings of the
//! whole platform: none of the calls needs a current context. A physical handle is the
//! emulator's chunk number, never dereferenced: a freed or made-up one answers 107000.

use super::prelude::*;
use mempool_ascend::sys::{aclrtDrvMemHandle, aclrtMemAccessDesc, aclrtMemGranularityOptions, aclrtPhysicalMemProp};
use mempool_hal::{Access, Granularity, Physical, VirtualMemory};

/// 1 GiB: the page size, and granularity, of the `HUGE1G` memory kinds.
const GIANT_PAGE: u64 = 1 << 30;

/// How `aclrtMallocPhysical` and `aclrtMemGetAllocationGranularity` read a property's
/// memory kind: `None` for the kinds CANN's table lacks (`ACL_DDR_MEM`, `ACL_HBM_MEM`, the
/// `ACL_HBM_MEM_P2P_*` kinds other than 1G and anything out of range), else whether its
/// pages are 1 GiB.
fn giant_pages(mem_attr: aclrtMemAttr) -> Option<bool> {
    match mem_attr {
        2..=7 | 12 | 13 | 15 | 16 => Some(false),
        10 | 14 | 17 => Some(true),
        _ => None,
    }
}

/// The DDR kinds (`ACL_DDR_MEM_HUGE` … `ACL_DDR_MEM_P2P_NORMAL`): host memory only.
fn is_ddr(mem_attr: aclrtMemAttr) -> bool {
    matches!(mem_attr, 2 | 3 | 6 | 7)
}

/// The ACL layer's checks of a property, shared by `aclrtMallocPhysical` and
/// `aclrtMemGetAllocationGranularity` (100000): a device location with a host (DDR) kind,
/// a kind CANN's table lacks. Answers whether its pages are 1 GiB.
fn mem_kind(p: &aclrtPhysicalMemProp, op: &'static str) -> mempool_hal::Result<bool> {
    if p.location.type_ == sys::ACL_MEM_LOCATION_TYPE_DEVICE && is_ddr(p.memAttr) {
        return Err(err(code::ACL_ERROR_INVALID_PARAM, op, format!("memAttr {} is host memory", p.memAttr)));
    }
    giant_pages(p.memAttr).ok_or_else(|| {
        err(code::ACL_ERROR_INVALID_PARAM, op, format!("memAttr {} is not a physical memory kind", p.memAttr))
    })
}

/// The runtime's and the driver library's checks of a chunk's location and `reserve`,
/// after the ACL layer's, in CANN's order: the device of a device location (107001 when it
/// does not exist); a context for a host-NUMA location (107002); a location type the
/// driver does not know, or `reserve` set (107000); then host and host-NUMA chunks, which
/// the emulator does not have (207000, as CANN's driver answers host memory).
fn chunk_device(s: &Shim, p: &aclrtPhysicalMemProp, op: &'static str) -> mempool_hal::Result<u32> {
    const HOST: i32 = 0;
    const HOST_NUMA: i32 = 4;
    let device = match p.location.type_ {
        sys::ACL_MEM_LOCATION_TYPE_DEVICE => Some(s.device_id(i64::from(p.location.id), op)?),
        HOST_NUMA => {
            current(op)?;
            None
        }
        HOST => None,
        t => {
            return Err(err(
                code::ACL_ERROR_RT_PARAM_INVALID,
                op,
                format!("location type {t} is not one the driver knows"),
            ));
        }
    };
    if p.reserve != 0 {
        return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, op, format!("reserve {} (it must be 0)", p.reserve)));
    }
    device.ok_or_else(|| err(code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT, op, "host physical memory is not supported"))
}

/// The emulator of device 0: the platform's virtual memory is one, whichever device asks.
fn platform(s: &Shim) -> &mempool_emu::Emulator {
    s.dev(0)
}

/// The live chunk `handle` and its device (107000 for a freed or made-up handle, as CANN's
/// driver answers a handle whose fields it does not accept).
fn live_chunk(s: &Shim, handle: aclrtDrvMemHandle, op: &'static str) -> mempool_hal::Result<(Physical, u32)> {
    platform(s).physical(handle as u64).ok_or_else(|| {
        err(code::ACL_ERROR_RT_PARAM_INVALID, op, format!("{handle:p} is not a live physical memory handle"))
    })
}

/// `aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment, void
/// *expectPtr, uint64_t flags)`: `size` bytes aligned to the granularity; a size below it
/// reserves one granule, as CANN's driver does, and a larger one must be a multiple of it
/// (107000). `alignment` must be 0 (107000); `expectPtr` NULL or an address aligned to the
/// granularity and, above it, to the next power of two of `size` (107000), taken when it
/// is free; `flags` 0, or 1 for huge pages (100000 otherwise).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtReserveMemAddress(
    virPtr: *mut *mut c_void,
    size: usize,
    alignment: usize,
    expectPtr: *mut c_void,
    flags: u64,
) -> aclError {
    const OP: &str = "aclrtReserveMemAddress";
    ffi(OP, || {
        non_null(virPtr, OP, "virPtr")?;
        if size == 0 {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, "size 0"));
        }
        if flags > 1 {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, format!("flags {flags} is neither 0 nor 1")));
        }
        let s = shim(OP)?;
        let dev = platform(s);
        let gran = dev.granularity(Granularity::Minimum)?;
        if alignment != 0 {
            return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, OP, format!("alignment {alignment} (it must be 0)")));
        }
        let size = size as u64;
        let want = expectPtr as u64;
        if want != 0 {
            // Above 2^63 there is no power of two to align to: no address is aligned.
            let align = if size > gran { size.checked_next_power_of_two() } else { Some(gran) };
            if align.is_none_or(|a| want % gran != 0 || want % a != 0) {
                return Err(err(
                    code::ACL_ERROR_RT_PARAM_INVALID,
                    OP,
                    format!("expectPtr {expectPtr:p} is not aligned to the next power of two of size {size}"),
                ));
            }
        }
        // CANN's driver reserves one granule for a smaller size; a larger size that is not a
        // multiple of the granularity is refused (contract §14, rule 1).
        let len = size.max(gran);
        if len % gran != 0 {
            return Err(err(
                code::ACL_ERROR_RT_PARAM_INVALID,
                OP,
                format!("size {size} is not a multiple of the granularity {gran}"),
            ));
        }
        let r = dev.reserve(len, 0, (want != 0).then(|| dptr(expectPtr)))?;
        // SAFETY: non-null, and the caller passes a writable `void *`.
        unsafe { virPtr.write(r.base.addr() as *mut c_void) };
        Ok(())
    })
}

/// `aclError aclrtReleaseMemAddress(void *virPtr)`: the start of a reservation with
/// nothing mapped in it; any other address: 107000.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtReleaseMemAddress(virPtr: *mut c_void) -> aclError {
    const OP: &str = "aclrtReleaseMemAddress";
    ffi(OP, || {
        non_null(virPtr, OP, "virPtr")?;
        let s = shim(OP)?;
        let dev = platform(s);
        let r = dev.reserved_at(dptr(virPtr)).filter(|r| r.base == dptr(virPtr)).ok_or_else(|| {
            err(code::ACL_ERROR_RT_PARAM_INVALID, OP, format!("{virPtr:p} is not the start of a reserved range"))
        })?;
        dev.release_reserved(r).map_err(|e| e.with_op(OP))
    })
}

/// `aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size, const
/// aclrtPhysicalMemProp *prop, uint64_t flags)`: device memory of the device
/// `prop->location.id`. 100000 for a null pointer, size 0, flags, a handle type other than
/// NONE, an allocation type other than PINNED, an unregistered or managed location, a
/// device location with a host memory kind or a kind CANN does not take; 107001 for a
/// device that does not exist; 207000 for host memory; 107000 for `reserve` set or an
/// unknown location type; 507899 for a size that is not a multiple of the granularity (a
/// 1 GiB kind is rounded up to 1 GiB); 207001 when the device is out of memory.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocPhysical(
    handle: *mut aclrtDrvMemHandle,
    size: usize,
    prop: *const aclrtPhysicalMemProp,
    flags: u64,
) -> aclError {
    const OP: &str = "aclrtMallocPhysical";
    ffi(OP, || {
        non_null(handle, OP, "handle")?;
        non_null(prop, OP, "prop")?;
        if size == 0 {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, "size 0"));
        }
        if flags != 0 {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, format!("flags {flags} (it must be 0)")));
        }
        // SAFETY: non-null, and the caller passes a readable props struct; read unaligned
        // in case C placed it oddly.
        let p = unsafe { prop.read_unaligned() };
        let bad = |what: String| Err(err(code::ACL_ERROR_INVALID_PARAM, OP, what));
        if p.handleType != sys::ACL_MEM_HANDLE_TYPE_NONE {
            return bad(format!("handleType {} (only ACL_MEM_HANDLE_TYPE_NONE)", p.handleType));
        }
        if p.allocationType != sys::ACL_MEM_ALLOCATION_TYPE_PINNED {
            return bad(format!("allocationType {} (only ACL_MEM_ALLOCATION_TYPE_PINNED)", p.allocationType));
        }
        if matches!(p.location.type_, 2 | 3) {
            return bad(format!("location type {} (unregistered or managed memory)", p.location.type_));
        }
        let giant = mem_kind(&p, OP)?;
        let s = shim(OP)?;
        let d = chunk_device(s, &p, OP)?;
        let dev = s.dev(d);
        let size = size as u64;
        let size = if giant {
            size.checked_next_multiple_of(GIANT_PAGE).ok_or_else(|| {
                err(code::ACL_ERROR_RT_MEMORY_ALLOCATION, OP, format!("no {size} bytes of 1 GiB pages"))
            })?
        } else {
            size
        };
        let gran = dev.granularity(Granularity::Minimum)?;
        if size % gran != 0 {
            return Err(err(
                sys::ACL_ERROR_RT_DRV_INTERNAL_ERROR,
                OP,
                format!("size {size} is not a multiple of the granularity {gran}"),
            ));
        }
        let chunk = dev.create_physical(size).map_err(|e| e.with_op(OP))?;
        // SAFETY: non-null, and the caller passes a writable `aclrtDrvMemHandle`.
        unsafe { handle.write(chunk.handle as usize as aclrtDrvMemHandle) };
        Ok(())
    })
}

/// `aclError aclrtFreePhysical(aclrtDrvMemHandle handle)`: a live chunk (107000 for any
/// other). A chunk still mapped keeps its memory until its last mapping goes.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtFreePhysical(handle: aclrtDrvMemHandle) -> aclError {
    const OP: &str = "aclrtFreePhysical";
    ffi(OP, || {
        non_null(handle, OP, "handle")?;
        let s = shim(OP)?;
        let (chunk, d) = live_chunk(s, handle, OP)?;
        s.dev(d).release_physical(chunk).map_err(|e| e.with_op(OP))
    })
}

/// `aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle
/// handle, uint64_t flags)`: 100000 for a null pointer or handle, size 0 or flags; 107000
/// for an offset other than 0 or a handle that is not live; 507899 for an address outside
/// a reservation, over a mapping, or an address or size that is not a multiple of the
/// granularity or runs past the chunk. The mapping is read-write for its device at once.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMapMem(
    virPtr: *mut c_void,
    size: usize,
    offset: usize,
    handle: aclrtDrvMemHandle,
    flags: u64,
) -> aclError {
    const OP: &str = "aclrtMapMem";
    ffi(OP, || {
        non_null(virPtr, OP, "virPtr")?;
        non_null(handle, OP, "handle")?;
        if size == 0 {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, "size 0"));
        }
        if flags != 0 {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, format!("flags {flags} (it must be 0)")));
        }
        let s = shim(OP)?;
        if offset != 0 {
            return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, OP, format!("offset {offset} (it must be 0)")));
        }
        let (chunk, d) = live_chunk(s, handle, OP)?;
        s.dev(d).map(dptr(virPtr), size as u64, 0, chunk).map_err(|e| e.with_op(OP))?;
        Ok(())
    })
}

/// `aclError aclrtUnmapMem(void *virPtr)`: the start of a mapping (507899 for any other
/// address). Work queued on the range before the call still sees the chunk.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtUnmapMem(virPtr: *mut c_void) -> aclError {
    const OP: &str = "aclrtUnmapMem";
    ffi(OP, || {
        non_null(virPtr, OP, "virPtr")?;
        let s = shim(OP)?;
        let found = platform(s).mapping_at(dptr(virPtr)).filter(|(m, ..)| m.at == dptr(virPtr));
        let Some((mapping, chunk)) = found else {
            return Err(err(
                sys::ACL_ERROR_RT_DRV_INTERNAL_ERROR,
                OP,
                format!("{virPtr:p} is not the start of a mapping"),
            ));
        };
        let d = platform(s).physical(chunk.handle).map_or(0, |(_, d)| d);
        s.dev(d).unmap(mapping).map_err(|e| e.with_op(OP))
    })
}

/// `aclError aclrtMemSetAccess(void *virPtr, size_t size, aclrtMemAccessDesc *desc, size_t
/// count)`: CANN's ACL layer checks nothing here, so a null pointer or count 0 answers the
/// driver's 107000. For each descriptor: flags NONE or READ answer 207000 (only read-write
/// is granted, as on Atlas A2/A3), other flags but READWRITE 107000; a host location with
/// an id other than 0, a device that does not exist, any other location type, 107000. The
/// range must be exactly one mapping (a mapping is read-write from the start; asking again
/// with another size answers 507899, as CANN's driver does).
///
/// # Safety
///
/// See the module docs; `desc` must be readable for `count` descriptors.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemSetAccess(
    virPtr: *mut c_void,
    size: usize,
    desc: *mut aclrtMemAccessDesc,
    count: usize,
) -> aclError {
    const OP: &str = "aclrtMemSetAccess";
    ffi(OP, || {
        let invalid = |what: String| err(code::ACL_ERROR_RT_PARAM_INVALID, OP, what);
        if virPtr.is_null() {
            return Err(invalid("virPtr is null".to_string()));
        }
        if desc.is_null() {
            return Err(invalid("desc is null".to_string()));
        }
        if count == 0 {
            return Err(invalid("count 0".to_string()));
        }
        let s = shim(OP)?;
        let n = s.devices.len();
        for i in 0..count {
            // SAFETY: non-null, and the caller passes `count` readable descriptors; read
            // unaligned in case C placed them oddly.
            let d = unsafe { desc.add(i).read_unaligned() };
            match d.flags {
                sys::ACL_RT_MEM_ACCESS_FLAGS_READWRITE => {}
                sys::ACL_RT_MEM_ACCESS_FLAGS_NONE | sys::ACL_RT_MEM_ACCESS_FLAGS_READ => {
                    return Err(err(
                        code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                        OP,
                        format!("desc[{i}].flags {} (only ACL_RT_MEM_ACCESS_FLAGS_READWRITE is granted)", d.flags),
                    ));
                }
                f => return Err(invalid(format!("desc[{i}].flags {f} is not an access flag"))),
            }
            let ok = match d.location.type_ {
                0 => d.location.id == 0,
                sys::ACL_MEM_LOCATION_TYPE_DEVICE => (d.location.id as usize) < n,
                _ => false,
            };
            if !ok {
                return Err(invalid(format!(
                    "desc[{i}].location (type {}, id {}) is neither the host (id 0) nor a device",
                    d.location.type_, d.location.id
                )));
            }
        }
        platform(s).set_access(dptr(virPtr), size as u64, Access::ReadWrite).map_err(|e| e.with_op(OP))
    })
}

/// `aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
/// aclrtMemGranularityOptions option, size_t *granularity)`: the emulator's granularity
/// (2 MiB, as CANN answers for both options), 1 GiB for the `HUGE1G` kinds. 100000 for a
/// null pointer, a device location with a host kind, a kind CANN does not take; 107001 for
/// a device that does not exist; 207000 for an option other than MINIMUM and RECOMMENDED;
/// 107000 for `reserve` set or a location type the driver does not know.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemGetAllocationGranularity(
    prop: *mut aclrtPhysicalMemProp,
    option: aclrtMemGranularityOptions,
    granularity: *mut usize,
) -> aclError {
    const OP: &str = "aclrtMemGetAllocationGranularity";
    ffi(OP, || {
        non_null(prop, OP, "prop")?;
        non_null(granularity, OP, "granularity")?;
        // SAFETY: non-null, and the caller passes a readable props struct.
        let p = unsafe { prop.read_unaligned() };
        let giant = mem_kind(&p, OP)?;
        let s = shim(OP)?;
        if p.location.type_ == sys::ACL_MEM_LOCATION_TYPE_DEVICE {
            s.device_id(i64::from(p.location.id), OP)?;
        }
        let which = match option {
            sys::ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM => Granularity::Minimum,
            sys::ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED => Granularity::Recommended,
            o => {
                return Err(err(code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT, OP, format!("option {o} is not supported")));
            }
        };
        // The driver's sides are host 0, device 1 and host-NUMA (type 2 or 4); it refuses
        // the rest.
        if !matches!(p.location.type_, 0 | 1 | 2 | 4) || p.reserve != 0 {
            return Err(err(
                code::ACL_ERROR_RT_PARAM_INVALID,
                OP,
                format!(
                    "location type {} with reserve {} is not a property the driver takes",
                    p.location.type_, p.reserve
                ),
            ));
        }
        let g = if giant { GIANT_PAGE } else { platform(s).granularity(which)? };
        // SAFETY: non-null, and the caller passes a writable `size_t`.
        unsafe { granularity.write(g as usize) };
        Ok(())
    })
}
