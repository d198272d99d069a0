//! Copies and memsets, synchronous and async: argument checks in CANN's order, and where each side lies.

use super::prelude::*;

/// `ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE`: done as `ACL_MEMCPY_HOST_TO_DEVICE`, as CANN does.
const ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: aclrtMemcpyKind = 5;

/// Checks a copy's arguments in CANN's order; `false` when there is nothing to do.
///
/// `count == 0` succeeds before any other check; then null pointers and a kind outside
/// 0-5 are 100000, and `count > destMax` is 107000.
fn copy_args(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
    op: &'static str,
) -> mempool_hal::Result<bool> {
    if count == 0 {
        return Ok(false);
    }
    non_null(dst, op, "dst")?;
    non_null(src, op, "src")?;
    if !(ACL_MEMCPY_HOST_TO_HOST..=ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE).contains(&kind) {
        return Err(err(code::ACL_ERROR_INVALID_PARAM, op, format!("memcpy kind {kind} is not 0-5")));
    }
    if count > dest_max {
        return Err(err(
            code::ACL_ERROR_RT_PARAM_INVALID,
            op,
            format!("count {count} is larger than destMax {dest_max}"),
        ));
    }
    Ok(true)
}

/// Refuses a copy on device `on` with a side in another device's memory that `on` has no
/// peer access to (`aclrtDeviceEnablePeerAccess`): 507899, the driver's refusal on CANN.
fn peer_check(s: &Shim, on: u32, c: &Sides, op: &'static str) -> mempool_hal::Result<()> {
    for side in [c.dst, c.src] {
        let CopySide::Device(p) = side else { continue };
        if let Some(d) = s.devices[0].device_of(p)
            && d != on
            && !s.dev(on).peer_access_enabled(d)
        {
            return Err(err(
                code::ACL_ERROR_RT_DRV_INTERNAL_ERROR,
                op,
                format!(
                    "{p} is memory of device {d}, and device {on} has no peer access to it \
                     (aclrtDeviceEnablePeerAccess({d}, 0) with device {on} current)"
                ),
            ));
        }
    }
    Ok(())
}

/// A copy's sides, resolved from its kind and addresses.
struct Sides {
    dst: CopySide,
    src: CopySide,
    /// The `aclrtMallocHost` allocations of its host sides.
    pinned: Vec<Arc<HostBlock>>,
    /// Whether a host side is pageable memory (not from `aclrtMallocHost`).
    pageable: bool,
}

/// Whether a copy's kind is corrected from the addresses (async copies, as CANN's
/// `MemcpyAsyncCheckLocation` does) or taken as given (sync copies, which CANN leaves to
/// the driver).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Corrected,
    AsGiven,
}

/// Resolves a copy's sides (arguments checked by [`copy_args`]). A host side is
/// `aclrtMallocHost` memory or pageable memory; device sides are checked by the emulator,
/// so a device range that is freed, released or of a destroyed pool is refused, never
/// touched.
///
/// Device memory is any pool's, of any device (they share one platform), the hidden pool
/// of `aclrtMalloc` included, and a pool destroyed since. With [`Kind::Corrected`], each
/// side is where its address lies, as CANN corrects an async copy's kind: a side the kind
/// names as device but that lies in pageable memory is refused (107000) unless the kind
/// is DEFAULT, and a copy whose two sides are host memory answers 207000 (CANN does no
/// async host-to-host copy on a host). With [`Kind::AsGiven`], the kind decides, but a
/// side it names as host that lies in device memory is refused (107000): nothing is ever
/// copied raw through a device range, around the checker.
fn copy_sides(
    s: &Shim,
    (dst, src): (*mut c_void, *const c_void),
    count: usize,
    kind: aclrtMemcpyKind,
    how: Kind,
    op: &'static str,
) -> mempool_hal::Result<Sides> {
    // CANN corrects kinds 0-4 only: kind 5 is taken as given.
    let how = if kind == ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE { Kind::AsGiven } else { how };
    let is_dev = |p: *const c_void| s.devices[0].is_pool_address(dptr(p));
    let (dst_named, src_named) = match kind {
        ACL_MEMCPY_HOST_TO_HOST => (false, false),
        ACL_MEMCPY_HOST_TO_DEVICE | ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE => (true, false),
        ACL_MEMCPY_DEVICE_TO_HOST => (false, true),
        ACL_MEMCPY_DEVICE_TO_DEVICE => (true, true),
        ACL_MEMCPY_DEFAULT => (is_dev(dst), is_dev(src)),
        other => return Err(err(code::ACL_ERROR_INVALID_PARAM, op, format!("memcpy kind {other} is not 0-5"))),
    };
    let (dst_dev, src_dev) = (is_dev(dst), is_dev(src));
    let mut sides = Sides {
        dst: CopySide::Device(dptr(dst)),
        src: CopySide::Device(dptr(src)),
        pinned: Vec::new(),
        pageable: false,
    };
    let mut host_sides = 0;
    for (what, p, named, on_device, side) in [
        ("dst", dst.cast_const(), dst_named, dst_dev, &mut sides.dst),
        ("src", src, src_named, src_dev, &mut sides.src),
    ] {
        if on_device && !named && how == Kind::AsGiven {
            return Err(err(
                code::ACL_ERROR_RT_PARAM_INVALID,
                op,
                format!(
                    "memcpy kind {kind} names {what} {p:p} as host memory, but it lies in device memory the runtime \
                     handed out (aclrtMalloc or a pool, live or freed)"
                ),
            ));
        }
        let device = match how {
            Kind::AsGiven => named,
            Kind::Corrected => on_device,
        };
        if device {
            s.check_device_range(p as u64, count as u64, op)?;
            continue;
        }
        *side = CopySide::Host(p.cast_mut().cast());
        host_sides += 1;
        match s.host_memory(p as usize, count, op)? {
            Some(b) => sides.pinned.push(b),
            None => {
                if how == Kind::Corrected && named && kind != ACL_MEMCPY_DEFAULT {
                    return Err(err(
                        code::ACL_ERROR_RT_PARAM_INVALID,
                        op,
                        format!("memcpy kind {kind} names {what} {p:p} as device memory, but it is host memory"),
                    ));
                }
                sides.pageable = true;
            }
        }
    }
    if how == Kind::Corrected && host_sides == 2 {
        return Err(err(
            code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            op,
            "both sides are host memory: the runtime does no async host-to-host copy (use memcpy, or aclrtMemcpy)",
        ));
    }
    // CANN asks for a current context in every copy, host-to-host too.
    current(op)?;
    Ok(sides)
}

/// `aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
/// aclrtMemcpyKind kind)`: synchronous.
///
/// # Safety
///
/// See the module docs; host sides must be valid for `count` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpy(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
) -> aclError {
    const OP: &str = "aclrtMemcpy";
    ffi(OP, || {
        if !copy_args(dst, dest_max, src, count, kind, OP)? {
            return Ok(());
        }
        let sh = shim(OP)?;
        let c = copy_sides(sh, (dst, src), count, kind, Kind::AsGiven, OP)?;
        if let Ok(d) = current(OP) {
            peer_check(sh, d, &c, OP)?;
        }
        // SAFETY: the C caller guarantees host sides are valid for `count` bytes during
        // the call (the ACL contract); device sides are checked by the emulator.
        unsafe { sh.devices[0].memcpy_raw(c.dst, c.src, count as u64) }
    })
}

/// `aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
/// aclrtMemcpyKind kind, aclrtStream stream)`.
///
/// With every host side in `aclrtMallocHost` memory (or none), the copy runs in stream
/// order. A host side in pageable memory makes it what CANN makes it: the stream is
/// synchronized (the host observes it) and the copy is done before the call returns, so
/// the program may reuse that buffer at once.
///
/// # Safety
///
/// See the module docs; `aclrtMallocHost` sides must stay allocated until the copy has
/// run (the library keeps them so), pageable ones be valid during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpyAsync(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
    stream: aclrtStream,
) -> aclError {
    const OP: &str = "aclrtMemcpyAsync";
    ffi(OP, || {
        if !copy_args(dst, dest_max, src, count, kind, OP)? {
            return Ok(());
        }
        let sh = shim(OP)?;
        let e = sh.stream(stream as usize, OP)?;
        let c = copy_sides(sh, (dst, src), count, kind, Kind::Corrected, OP)?;
        peer_check(sh, e.device, &c, OP)?;
        let dev = sh.dev(e.device);
        if c.pageable {
            dev.synchronize_stream(&e.stream)?;
            // SAFETY: the C caller guarantees host sides are valid for `count` bytes during
            // the call; device sides are checked by the emulator.
            return unsafe { dev.memcpy_raw(c.dst, c.src, count as u64) };
        }
        // SAFETY: the host sides are `aclrtMallocHost` memory, valid for `count` bytes
        // (checked above) and kept allocated until the copy has run (the hold below,
        // enqueued after it, while `c.pinned` still holds them); device sides are checked
        // by the emulator.
        unsafe { dev.memcpy_raw_async(c.dst, c.src, count as u64, &e.stream)? };
        crate::state::note_task(sh, &e);
        if !c.pinned.is_empty() {
            dev.hold_until_reached(&e.stream, c.pinned)?;
        }
        Ok(())
    })
}

/// Checks a memset's arguments in CANN's order; `false` when there is nothing to do.
///
/// `count == 0` succeeds before any other check; then a null pointer is 100000 and
/// `count > maxCount` is 107000.
fn memset_args(ptr: *mut c_void, max_count: usize, count: usize, op: &'static str) -> mempool_hal::Result<bool> {
    if count == 0 {
        return Ok(false);
    }
    non_null(ptr, op, "devPtr")?;
    if count > max_count {
        return Err(err(
            code::ACL_ERROR_RT_PARAM_INVALID,
            op,
            format!("count {count} is larger than maxCount {max_count}"),
        ));
    }
    Ok(true)
}

/// Where a memset writes: device memory (checked by the emulator), or `aclrtMallocHost`
/// memory with its allocation.
fn memset_target(
    s: &Shim,
    ptr: *mut c_void,
    count: usize,
    op: &'static str,
) -> mempool_hal::Result<(CopySide, Option<Arc<HostBlock>>)> {
    if s.devices[0].is_pool_address(dptr(ptr)) {
        s.check_device_range(ptr as u64, count as u64, op)?;
        return Ok((CopySide::Device(dptr(ptr)), None));
    }
    match s.host_memory(ptr as usize, count, op)? {
        Some(b) => Ok((CopySide::Host(ptr.cast()), Some(b))),
        None => Err(err(
            code::ACL_ERROR_RT_PARAM_INVALID,
            op,
            format!("{ptr:p} is neither device memory nor aclrtMallocHost memory"),
        )),
    }
}

/// `aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)`:
/// device memory or `aclrtMallocHost` memory.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemset(ptr: *mut c_void, max_count: usize, value: i32, count: usize) -> aclError {
    const OP: &str = "aclrtMemset";
    ffi(OP, || {
        if !memset_args(ptr, max_count, count, OP)? {
            return Ok(());
        }
        let s = shim(OP)?;
        let device = current(OP)?;
        match memset_target(s, ptr, count, OP)? {
            (CopySide::Device(d), _) => s.dev(device).memset_now(d, value as u8, count as u64),
            (CopySide::Host(p), _block) => {
                // SAFETY: `[p, p + count)` lies inside one live aclrtMallocHost allocation
                // (checked above), kept allocated by `_block` during the write.
                unsafe { std::ptr::write_bytes(p, value as u8, count) };
                Ok(())
            }
        }
    })
}

/// `aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
/// aclrtStream stream)`: device memory or `aclrtMallocHost` memory, in stream order.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemsetAsync(
    ptr: *mut c_void,
    max_count: usize,
    value: i32,
    count: usize,
    stream: aclrtStream,
) -> aclError {
    const OP: &str = "aclrtMemsetAsync";
    ffi(OP, || {
        if !memset_args(ptr, max_count, count, OP)? {
            return Ok(());
        }
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        let dev = s.dev(e.device);
        let (target, block) = memset_target(s, ptr, count, OP)?;
        // SAFETY: a host target lies inside one aclrtMallocHost allocation (checked
        // above), kept allocated until the memset has run by the hold enqueued after it
        // (while `block` holds it); a device target is checked by the emulator.
        unsafe { dev.memset_raw_async(target, value as u8, count as u64, &e.stream)? };
        crate::state::note_task(s, &e);
        if let Some(b) = block {
            dev.hold_until_reached(&e.stream, b)?;
        }
        Ok(())
    })
}
