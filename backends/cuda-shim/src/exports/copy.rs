//! Async copies (host to device, device to host, device to device) and the async memset,
//! with one body for the three copies.
//!
//! Device sides are pool addresses, checked by the emulator (a range outside one live
//! allocation, freed memory, or memory the stream is not ordered after:
//! `CUDA_ERROR_INVALID_VALUE`, nothing enqueued). A host side is either `cuMemAllocHost`
//! memory, copied in stream order and kept allocated until the copy has run, or pageable
//! memory (plain `malloc`, the stack), for which the call waits for the stream's earlier
//! work and copies before it returns, so the program may reuse its buffer at once (the
//! stream's work is observed by the host, but it is no synchronization: no pool releases
//! anything). A host side that lies in device memory is refused, never copied raw.
//!
//! On the legacy default stream and the blocking streams, a copy or memset (pageable
//! copies included) is ordered as the driver orders it: after the other side's earlier
//! work, and before its later work ([`stream`](super::stream)).

use super::prelude::*;

/// One side of a copy, as the call names it.
#[derive(Clone, Copy)]
enum Side {
    Host(*mut c_void),
    Device(CUdeviceptr),
}

/// The three copies: checks in the order of the module docs, then the copy. `count` 0
/// succeeds once the arguments and the stream are checked.
fn copy_async(dst: Side, src: Side, count: usize, stream: CUstream, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    for (what, side) in [("dst", dst), ("src", src)] {
        match side {
            Side::Host(p) => non_null(p, op, what)?,
            Side::Device(d) => non_zero(d, op, what)?,
        }
    }
    let e = s.stream(stream as usize, op)?;
    if count == 0 {
        return Ok(());
    }
    let mut pinned: Vec<Arc<HostBlock>> = Vec::new();
    let mut pageable = false;
    let mut resolve = |what: &str, side: Side| -> mempool_hal::Result<CopySide> {
        match side {
            Side::Device(d) => Ok(CopySide::Device(DevicePtr::from_addr(d))),
            Side::Host(p) => {
                if s.devices[0].is_pool_address(DevicePtr::from_addr(p as u64)) {
                    return Err(err(
                        CUDA_ERROR_INVALID_VALUE,
                        op,
                        format!("host {what} {p:p} lies in device memory (a pool's, live or freed)"),
                    ));
                }
                match s.host_memory(p as usize, count, op)? {
                    Some(b) => pinned.push(b),
                    None => pageable = true,
                }
                Ok(CopySide::Host(p.cast()))
            }
        }
    };
    let (d, sr) = (resolve("dst", dst)?, resolve("src", src)?);
    let dev = s.dev(e.device);
    if pageable {
        // The copy is an operation of the stream for the implicit order of the legacy
        // default stream (it waits for what the stream's next work would, and later work
        // on the other side waits for it); it runs here, once the stream's earlier work has.
        s.enqueue(&e, op, || Ok(()))?;
        // Wait for the stream's earlier work and let the host observe it (the copy is
        // ordered after it), without a synchronization's release.
        dev.run_pending(&e.stream).map_err(|e| e.with_op(op))?;
        if dev.query_stream(&e.stream).map_err(|e| e.with_op(op))? != StreamStatus::Complete {
            // Another thread queued more meanwhile: wait for that too.
            dev.synchronize_stream(&e.stream).map_err(|e| e.with_op(op))?;
        }
        // SAFETY: the C caller guarantees host sides are valid for `count` bytes during
        // the call (pageable) or until the copy has run (`cuMemAllocHost` memory, checked
        // to hold the whole range); device sides are checked by the emulator.
        return unsafe { dev.memcpy_raw(d, sr, count as u64) }.map_err(|e| e.with_op(op));
    }
    s.enqueue(&e, op, || {
        // SAFETY: every host side is `cuMemAllocHost` memory holding the whole range
        // (checked above), kept allocated until the copy has run by the hold enqueued after
        // it (while `pinned` still holds it); device sides are checked by the emulator.
        unsafe { dev.memcpy_raw_async(d, sr, count as u64, &e.stream) }.map_err(|e| e.with_op(op))?;
        if !pinned.is_empty() {
            dev.hold_until_reached(&e.stream, pinned).map_err(|e| e.with_op(op))?;
        }
        Ok(())
    })
}

/// `CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t
/// ByteCount, CUstream hStream)` (`cuMemcpyHtoDAsync` in `cuda.h`; NULL stream: the
/// current context's legacy default stream).
///
/// # Safety
///
/// See the module docs; `srcHost` must be valid for `ByteCount` bytes (during the call
/// for pageable memory).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(
    dst: CUdeviceptr,
    src: *const c_void,
    count: usize,
    stream: CUstream,
) -> CUresult {
    const OP: &str = "cuMemcpyHtoDAsync_v2";
    ffi(OP, || copy_async(Side::Device(dst), Side::Host(src.cast_mut()), count, stream, OP))
}

/// `CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
/// CUstream hStream)` (`cuMemcpyDtoHAsync` in `cuda.h`; NULL stream: the current
/// context's legacy default stream).
///
/// # Safety
///
/// See the module docs; `dstHost` must be writable for `ByteCount` bytes (during the call
/// for pageable memory).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(
    dst: *mut c_void,
    src: CUdeviceptr,
    count: usize,
    stream: CUstream,
) -> CUresult {
    const OP: &str = "cuMemcpyDtoHAsync_v2";
    ffi(OP, || copy_async(Side::Host(dst), Side::Device(src), count, stream, OP))
}

/// `CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t
/// ByteCount, CUstream hStream)` (`cuMemcpyDtoDAsync` in `cuda.h`; NULL stream: the
/// current context's legacy default stream).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoDAsync_v2(
    dst: CUdeviceptr,
    src: CUdeviceptr,
    count: usize,
    stream: CUstream,
) -> CUresult {
    const OP: &str = "cuMemcpyDtoDAsync_v2";
    ffi(OP, || copy_async(Side::Device(dst), Side::Device(src), count, stream, OP))
}

/// `CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream
/// hStream)` (NULL stream: the current context's legacy default stream): `N` bytes of device
/// memory, or of `cuMemAllocHost` memory, set in stream order. Pageable host memory, or
/// memory outside one live allocation: `CUDA_ERROR_INVALID_VALUE`. `N` 0 succeeds once the
/// arguments and the stream are checked.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemsetD8Async(dst: CUdeviceptr, uc: u8, n: usize, stream: CUstream) -> CUresult {
    const OP: &str = "cuMemsetD8Async";
    ffi(OP, || {
        let s = shim(OP)?;
        non_zero(dst, OP, "dstDevice")?;
        let e = s.stream(stream as usize, OP)?;
        if n == 0 {
            return Ok(());
        }
        let dev = s.dev(e.device);
        let (target, block) = if s.devices[0].is_pool_address(DevicePtr::from_addr(dst)) {
            (CopySide::Device(DevicePtr::from_addr(dst)), None)
        } else {
            match s.host_memory(dst as usize, n, OP)? {
                Some(b) => (CopySide::Host(dst as usize as *mut u8), Some(b)),
                None => {
                    return Err(err(
                        CUDA_ERROR_INVALID_VALUE,
                        OP,
                        format!("{dst:#x} is neither device memory nor cuMemAllocHost memory"),
                    ));
                }
            }
        };
        s.enqueue(&e, OP, || {
            // SAFETY: a host target lies inside one cuMemAllocHost allocation (checked
            // above), kept allocated until the memset has run by the hold enqueued after it
            // (while `block` holds it); a device target is checked by the emulator.
            unsafe { dev.memset_raw_async(target, uc, n as u64, &e.stream) }.map_err(|e| e.with_op(OP))?;
            if let Some(b) = block {
                dev.hold_until_reached(&e.stream, b).map_err(|e| e.with_op(OP))?;
            }
            Ok(())
        })
    })
}
