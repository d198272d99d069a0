//! Pointer attributes (`cuPointerGetAttribute`, `cuPointerGetAttributes`): what a unified
//! address is (device memory of a pool or of `cuMemAlloc`, mapped virtual memory,
//! `cuMemAllocHost` or registered host memory), its device, its allocation's range and
//! pool.
//!
//! Each attribute is written with the width the driver gives it: handles, addresses and
//! 64-bit ids 8 bytes, `size_t` sizes 8, the memory type, the access flags and the RDMA
//! flag an `unsigned int`, the device ordinal an `int`, and the booleans (`SYNC_MEMOPS`,
//! `IS_MANAGED`, `IS_LEGACY_CUDA_IPC_CAPABLE`, `MAPPED`, `IS_HW_DECOMPRESS_CAPABLE`) one
//! byte, as NVIDIA's Python bindings read them. `P2P_TOKENS` is refused
//! (`CUDA_ERROR_NOT_SUPPORTED`: there is no peer-to-peer kernel interface here).

use super::prelude::*;

/// `CUmemorytype`: host memory.
const CU_MEMORYTYPE_HOST: c_uint = 1;
/// `CUmemorytype`: device memory.
const CU_MEMORYTYPE_DEVICE: c_uint = 2;

/// What the library knows of an address.
#[derive(Clone, Copy)]
struct Info {
    memory_type: c_uint,
    device: c_int,
    context: usize,
    device_ptr: u64,
    host_ptr: u64,
    range: Option<(u64, u64)>,
    pool: usize,
    /// `cuMemAlloc` memory (the only kind legacy CUDA IPC takes).
    plain: bool,
}

/// What `ptr` is, or `None` for an address the library did not hand out.
fn info(s: &Shim, ptr: u64) -> Option<Info> {
    let p = DevicePtr::from_addr(ptr);
    if let Some((start, len, base)) = s.devices[0].allocation_at(p) {
        let plain = s.plain_device(base.addr());
        let pool = s.pool_by_base(base.addr());
        let device = match (plain, pool.and_then(|h| s.pools.get(h))) {
            (Some(d), _) => d,
            (None, Some(e)) => e.device,
            (None, None) => 0,
        };
        return Some(Info {
            memory_type: CU_MEMORYTYPE_DEVICE,
            device: device as c_int,
            context: s.primary_context(device),
            device_ptr: ptr,
            host_ptr: 0,
            range: Some((start.addr(), len)),
            pool: pool.unwrap_or(0),
            plain: plain.is_some(),
        });
    }
    if s.devices[0].is_device_memory(p, 1) {
        // Mapped virtual memory: device memory without a pool allocation around it.
        return Some(Info {
            memory_type: CU_MEMORYTYPE_DEVICE,
            device: 0,
            context: s.primary_context(0),
            device_ptr: ptr,
            host_ptr: 0,
            range: None,
            pool: 0,
            plain: false,
        });
    }
    let host = s.host_memory(ptr as usize, 1, "cuPointerGetAttribute").ok().flatten()?;
    Some(Info {
        memory_type: CU_MEMORYTYPE_HOST,
        device: 0,
        context: current_context().unwrap_or_else(|| s.primary_context(0)),
        device_ptr: ptr,
        host_ptr: ptr,
        range: Some((host.addr() as u64, host.size() as u64)),
        pool: 0,
        plain: false,
    })
}

/// A value to write, with its width.
enum Value {
    U8(u8),
    U32(c_uint),
    I32(c_int),
    U64(u64),
}

/// The value of `attr` for `info` (`None` for an unknown address: the defaults of
/// `cuPointerGetAttributes`).
fn value(attr: c_int, info: Option<Info>, op: &'static str) -> mempool_hal::Result<Value> {
    let i = info;
    let flag = |b: bool| Value::U8(u8::from(b));
    Ok(match attr {
        1 => Value::U64(i.map_or(0, |i| i.context as u64)),
        2 => Value::U32(i.map_or(0, |i| i.memory_type)),
        3 => Value::U64(i.map_or(0, |i| i.device_ptr)),
        4 => Value::U64(i.map_or(0, |i| i.host_ptr)),
        5 => return Err(err(CUDA_ERROR_NOT_SUPPORTED, op, "CU_POINTER_ATTRIBUTE_P2P_TOKENS is not emulated")),
        6 => flag(false),
        // A process-wide id of the allocation: its start address.
        7 => Value::U64(i.and_then(|i| i.range).map_or(0, |r| r.0)),
        8 => flag(false),
        9 => Value::I32(i.map_or(-2, |i| i.device)),
        10 => flag(i.is_some_and(|i| i.plain)),
        11 => Value::U64(i.and_then(|i| i.range).map_or(0, |r| r.0)),
        12 => Value::U64(i.and_then(|i| i.range).map_or(0, |r| r.1)),
        13 => flag(i.is_some()),
        14 => Value::U64(0),
        15 => Value::U32(0),
        16 => Value::U32(if i.is_some() { CU_MEM_ACCESS_FLAGS_PROT_READWRITE as c_uint } else { 0 }),
        17 => Value::U64(i.map_or(0, |i| i.pool as u64)),
        18 => Value::U64(i.and_then(|i| i.range).map_or(0, |r| r.1)),
        19 => Value::U64(i.and_then(|i| i.range).map_or(0, |r| r.0)),
        20 => Value::U64(i.and_then(|i| i.range).map_or(0, |r| r.0)),
        21 => flag(false),
        22 => Value::I32(-1),
        _ => return Err(err(CUDA_ERROR_INVALID_VALUE, op, format!("{attr} is not a CUpointer_attribute"))),
    })
}

/// Writes `v` at `out` with its width.
///
/// # Safety
///
/// `out` is non-null and writable for the attribute's width.
unsafe fn write(out: *mut c_void, v: Value) {
    // SAFETY: the caller's guarantee, for each width (unaligned: the caller's buffer may
    // be any byte array).
    unsafe {
        match v {
            Value::U8(x) => out.cast::<u8>().write_unaligned(x),
            Value::U32(x) => out.cast::<c_uint>().write_unaligned(x),
            Value::I32(x) => out.cast::<c_int>().write_unaligned(x),
            Value::U64(x) => out.cast::<u64>().write_unaligned(x),
        }
    }
}

/// `CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr
/// ptr)`: one attribute of `ptr` (module docs). An address the library did not hand out:
/// `CUDA_ERROR_INVALID_VALUE`; the host pointer of device memory: `CUDA_ERROR_INVALID_VALUE`,
/// as on the driver; an id outside the enum: `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// See the module docs; `data` is writable for the attribute's width.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuPointerGetAttribute(data: *mut c_void, attribute: c_int, ptr: CUdeviceptr) -> CUresult {
    const OP: &str = "cuPointerGetAttribute";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(data, OP, "data")?;
        let i = info(s, ptr).ok_or_else(|| {
            err(CUDA_ERROR_INVALID_VALUE, OP, format!("{ptr:#x} is not memory this library handed out"))
        })?;
        if attribute == 4 && i.memory_type == CU_MEMORYTYPE_DEVICE {
            return Err(err(
                CUDA_ERROR_INVALID_VALUE,
                OP,
                format!("{ptr:#x} is device memory: it has no host pointer"),
            ));
        }
        let v = value(attribute, Some(i), OP)?;
        // SAFETY: non-null, and writable for the attribute's width (the caller's contract).
        unsafe { write(data, v) };
        Ok(())
    })
}

/// `CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute
/// *attributes, void **data, CUdeviceptr ptr)`: each attribute written where its `data`
/// entry points (a NULL entry is skipped). An address the library did not hand out is no
/// error: memory type 0, NULL handles and addresses, sizes 0, device ordinal -2. Null
/// arrays with a count, or an id outside the enum: `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// See the module docs; both arrays hold `numAttributes` entries, each non-null `data`
/// entry writable for its attribute's width.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuPointerGetAttributes(
    num: c_uint,
    attributes: *const c_int,
    data: *mut *mut c_void,
    ptr: CUdeviceptr,
) -> CUresult {
    const OP: &str = "cuPointerGetAttributes";
    ffi(OP, || {
        let s = shim(OP)?;
        if num == 0 {
            return Ok(());
        }
        non_null(attributes, OP, "attributes")?;
        non_null(data, OP, "data")?;
        let i = info(s, ptr);
        // SAFETY: non-null, `numAttributes` entries each (the caller's contract).
        let (attrs, outs) = unsafe {
            (std::slice::from_raw_parts(attributes, num as usize), std::slice::from_raw_parts(data, num as usize))
        };
        let values = attrs.iter().map(|&a| value(a, i, OP)).collect::<mempool_hal::Result<Vec<_>>>()?;
        for (v, &out) in values.into_iter().zip(outs) {
            if !out.is_null() {
                // SAFETY: non-null, and writable for the attribute's width.
                unsafe { write(out, v) };
            }
        }
        Ok(())
    })
}
