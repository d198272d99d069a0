//! Copies (host to device, device to host, device to device, and between unified
//! addresses; asynchronous, synchronous, and their per-thread twins) and memsets (8-, 16-
//! and 32-bit; asynchronous and synchronous), with one body for every copy and one for
//! every memset.
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
fn copy(dst: Side, src: Side, count: usize, stream: CUstream, wait: Wait, op: &'static str) -> mempool_hal::Result<()> {
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
    let host_side = !pinned.is_empty();
    s.enqueue(&e, op, || {
        // SAFETY: every host side is `cuMemAllocHost` memory holding the whole range
        // (checked above), kept allocated until the copy has run by the hold enqueued after
        // it (while `pinned` still holds it); device sides are checked by the emulator.
        unsafe { dev.memcpy_raw_async(d, sr, count as u64, &e.stream) }.map_err(|e| e.with_op(op))?;
        if !pinned.is_empty() {
            dev.hold_until_reached(&e.stream, pinned).map_err(|e| e.with_op(op))?;
        }
        Ok(())
    })?;
    if wait == Wait::Host && host_side {
        observe(dev, &e.stream, op)?;
    }
    Ok(())
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
    ffi(OP, || copy(Side::Device(dst), Side::Host(src.cast_mut()), count, stream, Wait::No, OP))
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
    ffi(OP, || copy(Side::Host(dst), Side::Device(src), count, stream, Wait::No, OP))
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
    ffi(OP, || copy(Side::Device(dst), Side::Device(src), count, stream, Wait::No, OP))
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
    ffi(OP, || memset(dst, Pattern::D8(uc), n, stream, Wait::No, OP))
}

/// `CUresult cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N,
/// CUstream hStream)`: as `cuMemsetD8Async`, `N` 16-bit values; `dstDevice` must be 2-byte
/// aligned (`CUDA_ERROR_INVALID_VALUE`).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemsetD16Async(dst: CUdeviceptr, us: u16, n: usize, stream: CUstream) -> CUresult {
    const OP: &str = "cuMemsetD16Async";
    ffi(OP, || memset(dst, Pattern::D16(us), n, stream, Wait::No, OP))
}

/// `CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream
/// hStream)`: as `cuMemsetD8Async`, `N` 32-bit values; `dstDevice` must be 4-byte aligned
/// (`CUDA_ERROR_INVALID_VALUE`).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemsetD32Async(dst: CUdeviceptr, ui: c_uint, n: usize, stream: CUstream) -> CUresult {
    const OP: &str = "cuMemsetD32Async";
    ffi(OP, || memset(dst, Pattern::D32(ui), n, stream, Wait::No, OP))
}

per_thread_twin!(cuMemsetD8Async_ptsz = cuMemsetD8Async(dst: CUdeviceptr, uc: u8, n: usize, stream: CUstream) stream stream);
per_thread_twin!(cuMemsetD16Async_ptsz = cuMemsetD16Async(dst: CUdeviceptr, us: u16, n: usize, stream: CUstream) stream stream);
per_thread_twin!(cuMemsetD32Async_ptsz = cuMemsetD32Async(dst: CUdeviceptr, ui: c_uint, n: usize, stream: CUstream) stream stream);

/// Defines the synchronous memsets: the async body on the legacy default stream (`_v2`) or
/// the per-thread one (`_v2_ptds`). As on the driver, a memset of device memory is
/// asynchronous to the host (it runs in the stream's order); one of `cuMemAllocHost`
/// memory has run when the call returns.
macro_rules! sync_memset {
    ($($name:ident $ptds:ident ($value:ident: $ty:ty) $pattern:ident;)*) => {$(
        #[doc = concat!("`CUresult ", stringify!($name), "(CUdeviceptr dstDevice, ", stringify!($ty),
            " value, size_t N)`: the memset of the legacy default stream (see the module docs).")]
        ///
        /// # Safety
        ///
        /// See the module docs.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(dst: CUdeviceptr, $value: $ty, n: usize) -> CUresult {
            const OP: &str = stringify!($name);
            ffi(OP, || memset(dst, Pattern::$pattern($value), n, std::ptr::null_mut(), Wait::Host, OP))
        }

        #[doc = concat!("`", stringify!($ptds), "`: [`", stringify!($name),
            "`] on the calling thread's per-thread default stream.")]
        ///
        /// # Safety
        ///
        /// See the module docs.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $ptds(dst: CUdeviceptr, $value: $ty, n: usize) -> CUresult {
            const OP: &str = stringify!($ptds);
            ffi(OP, || memset(dst, Pattern::$pattern($value), n, CU_STREAM_PER_THREAD, Wait::Host, OP))
        }
    )*};
}

sync_memset! {
    cuMemsetD8_v2 cuMemsetD8_v2_ptds (uc: u8) D8;
    cuMemsetD16_v2 cuMemsetD16_v2_ptds (us: u16) D16;
    cuMemsetD32_v2 cuMemsetD32_v2_ptds (ui: c_uint) D32;
}

/// The value a memset writes.
#[derive(Clone, Copy)]
enum Pattern {
    D8(u8),
    D16(u16),
    D32(u32),
}

impl Pattern {
    /// The width of one value in bytes.
    fn width(self) -> usize {
        match self {
            Pattern::D8(_) => 1,
            Pattern::D16(_) => 2,
            Pattern::D32(_) => 4,
        }
    }

    /// `len` bytes of the pattern (native byte order, as the device stores it).
    fn bytes(self, len: usize) -> Vec<u8> {
        match self {
            Pattern::D8(v) => vec![v; len],
            Pattern::D16(v) => v.to_ne_bytes().iter().copied().cycle().take(len).collect(),
            Pattern::D32(v) => v.to_ne_bytes().iter().copied().cycle().take(len).collect(),
        }
    }
}

/// Whether a call waits for its work before it returns.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// The asynchronous forms.
    No,
    /// The synchronous forms: the stream's work up to this one has run when the call
    /// returns where the host can see the result (host memory on either side).
    Host,
}

/// Every memset: `n` values of `pattern` at `dst` (device memory, or `cuMemAllocHost`
/// memory) in the order of `stream`. A byte count that overflows: `CUDA_ERROR_INVALID_VALUE`.
fn memset(
    dst: CUdeviceptr,
    pattern: Pattern,
    n: usize,
    stream: CUstream,
    wait: Wait,
    op: &'static str,
) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    non_zero(dst, op, "dstDevice")?;
    let width = pattern.width();
    if dst % width as u64 != 0 {
        return Err(err(CUDA_ERROR_INVALID_VALUE, op, format!("dstDevice {dst:#x} is not {width}-byte aligned")));
    }
    let len = n
        .checked_mul(width)
        .filter(|&l| dst.checked_add(l as u64).is_some())
        .ok_or_else(|| err(CUDA_ERROR_INVALID_VALUE, op, format!("{n} values of {width} bytes overflow")))?;
    let e = s.stream(stream as usize, op)?;
    if n == 0 {
        return Ok(());
    }
    let dev = s.dev(e.device);
    let target = DevicePtr::from_addr(dst);
    let block = if s.devices[0].is_pool_address(target) {
        None
    } else {
        match s.host_memory(dst as usize, len, op)? {
            Some(b) => Some(b),
            None => {
                return Err(err(
                    CUDA_ERROR_INVALID_VALUE,
                    op,
                    format!("{dst:#x} is neither device memory nor cuMemAllocHost memory"),
                ));
            }
        }
    };
    s.enqueue(&e, op, || {
        match (pattern, &block) {
            (Pattern::D8(v), _) => {
                let side =
                    if block.is_some() { CopySide::Host(dst as usize as *mut u8) } else { CopySide::Device(target) };
                // SAFETY: a host target lies inside one cuMemAllocHost allocation (checked
                // above), kept allocated until the memset has run by the hold enqueued after
                // it; a device target is checked by the emulator.
                unsafe { dev.memset_raw_async(side, v, len as u64, &e.stream) }.map_err(|e| e.with_op(op))?;
            }
            (_, None) => {
                let bytes = pattern.bytes(len);
                dev.launch_kernel(&e.stream, &[mempool_emu::KernelAccess::Write(target, len as u64)], move |mem| {
                    mem.write(target, &bytes)
                })
                .map_err(|e| e.with_op(op))?;
            }
            (_, Some(_)) => {
                let bytes = pattern.bytes(len);
                let at = dst as usize;
                dev.launch_host_func(
                    &e.stream,
                    Box::new(move || {
                        // SAFETY: the range lies inside one cuMemAllocHost allocation
                        // (checked above), kept allocated until this has run by the hold
                        // enqueued after it.
                        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), at as *mut u8, bytes.len()) }
                    }),
                )
                .map_err(|e| e.with_op(op))?;
            }
        }
        if let Some(b) = block.clone() {
            dev.hold_until_reached(&e.stream, b).map_err(|e| e.with_op(op))?;
        }
        Ok(())
    })?;
    if wait == Wait::Host && block.is_some() {
        observe(dev, &e.stream, op)?;
    }
    Ok(())
}

/// Waits for the stream's work queued so far and lets the host observe it, without a
/// synchronization's release.
fn observe(dev: &mempool_emu::Emulator, stream: &mempool_emu::EmuStream, op: &'static str) -> mempool_hal::Result<()> {
    dev.run_pending(stream).map_err(|e| e.with_op(op))?;
    if dev.query_stream(stream).map_err(|e| e.with_op(op))? != StreamStatus::Complete {
        dev.synchronize_stream(stream).map_err(|e| e.with_op(op))?;
    }
    Ok(())
}

per_thread_twin!(cuMemcpyHtoDAsync_v2_ptsz = cuMemcpyHtoDAsync_v2(dst: CUdeviceptr, src: *const c_void, count: usize, stream: CUstream) stream stream);
per_thread_twin!(cuMemcpyDtoHAsync_v2_ptsz = cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdeviceptr, count: usize, stream: CUstream) stream stream);
per_thread_twin!(cuMemcpyDtoDAsync_v2_ptsz = cuMemcpyDtoDAsync_v2(dst: CUdeviceptr, src: CUdeviceptr, count: usize, stream: CUstream) stream stream);
per_thread_twin!(cuMemcpyAsync_ptsz = cuMemcpyAsync(dst: CUdeviceptr, src: CUdeviceptr, count: usize, stream: CUstream) stream stream);

/// A unified address as a copy side: device memory (a pool's range, or reserved virtual
/// memory) or host memory.
fn unified(s: &Shim, addr: CUdeviceptr) -> Side {
    let p = DevicePtr::from_addr(addr);
    if s.devices[0].is_pool_address(p) || s.devices[0].is_device_memory(p, 1) {
        Side::Device(addr)
    } else {
        Side::Host(addr as usize as *mut c_void)
    }
}

/// `CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream
/// hStream)`: a copy between unified addresses, each side device memory or host memory as
/// the address says (device addresses are host addresses here, so the library looks them
/// up), with the rules of the typed copies.
///
/// # Safety
///
/// See the module docs; host sides must be valid for `ByteCount` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyAsync(dst: CUdeviceptr, src: CUdeviceptr, count: usize, stream: CUstream) -> CUresult {
    const OP: &str = "cuMemcpyAsync";
    ffi(OP, || {
        let s = shim(OP)?;
        copy(unified(s, dst), unified(s, src), count, stream, Wait::No, OP)
    })
}

/// Defines the synchronous copies: the async body on the legacy default stream (the plain
/// name) or the per-thread one (`_ptds`), then, where a host side is involved, a wait until
/// the copy has run. A device-to-device copy is asynchronous to the host, as on the driver.
macro_rules! sync_copy {
    ($($name:ident $ptds:ident ($dst:ident: $dty:ty => $dside:ident, $src:ident: $sty:ty => $sside:ident);)*) => {$(
        #[doc = concat!("`CUresult ", stringify!($name), "(", stringify!($dty), " dst, ", stringify!($sty),
            " src, size_t ByteCount)`: the copy of the legacy default stream (see the module docs).")]
        ///
        /// # Safety
        ///
        /// See the module docs; host sides must be valid for `ByteCount` bytes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($dst: $dty, $src: $sty, count: usize) -> CUresult {
            const OP: &str = stringify!($name);
            ffi(OP, || {
                let s = shim(OP)?;
                copy(sync_copy!(@side s $dside $dst), sync_copy!(@side s $sside $src), count, std::ptr::null_mut(), Wait::Host, OP)
            })
        }

        #[doc = concat!("`", stringify!($ptds), "`: [`", stringify!($name),
            "`] on the calling thread's per-thread default stream.")]
        ///
        /// # Safety
        ///
        /// See the module docs; host sides must be valid for `ByteCount` bytes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $ptds($dst: $dty, $src: $sty, count: usize) -> CUresult {
            const OP: &str = stringify!($ptds);
            ffi(OP, || {
                let s = shim(OP)?;
                copy(sync_copy!(@side s $dside $dst), sync_copy!(@side s $sside $src), count, CU_STREAM_PER_THREAD, Wait::Host, OP)
            })
        }
    )*};
    (@side $s:ident host $v:ident) => { { let _ = $s; Side::Host($v as *mut c_void) } };
    (@side $s:ident device $v:ident) => { { let _ = $s; Side::Device($v) } };
    (@side $s:ident unified $v:ident) => { unified($s, $v) };
}

sync_copy! {
    cuMemcpyHtoD_v2 cuMemcpyHtoD_v2_ptds (dst: CUdeviceptr => device, src: *const c_void => host);
    cuMemcpyDtoH_v2 cuMemcpyDtoH_v2_ptds (dst: *mut c_void => host, src: CUdeviceptr => device);
    cuMemcpyDtoD_v2 cuMemcpyDtoD_v2_ptds (dst: CUdeviceptr => device, src: CUdeviceptr => device);
    cuMemcpy cuMemcpy_ptds (dst: CUdeviceptr => unified, src: CUdeviceptr => unified);
}
