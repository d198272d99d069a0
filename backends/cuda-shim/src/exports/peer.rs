//! Peer access between devices: `cuDeviceCanAccessPeer`, `cuCtxEnablePeerAccess`,
//! `cuCtxDisablePeerAccess`, answered with the driver's codes. The emulator keeps which
//! device reaches which (`Device::enable_peer_access`), shared with the Rust backends.

use super::prelude::*;

/// `CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED`.
const ALREADY_ENABLED: CUresult = 704;
/// `CUDA_ERROR_PEER_ACCESS_NOT_ENABLED`.
const NOT_ENABLED: CUresult = 705;

/// `CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)`: 1
/// for two emulated devices, 0 for a device and itself (as the driver answers). NULL:
/// `CUDA_ERROR_INVALID_VALUE`; a device out of range: `CUDA_ERROR_INVALID_DEVICE`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceCanAccessPeer(can: *mut c_int, dev: CUdevice, peer: CUdevice) -> CUresult {
    const OP: &str = "cuDeviceCanAccessPeer";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(can, OP, "canAccessPeer")?;
        let d = s.device_id(i64::from(dev), OP)?;
        let p = s.device_id(i64::from(peer), OP)?;
        // SAFETY: non-null, and the caller passes a writable `int`.
        unsafe { can.write(c_int::from(d != p)) };
        Ok(())
    })
}

/// The current context's device and `peer_ctx`'s, for the two context calls: no current
/// context or a `peer_ctx` that is not a live context: `CUDA_ERROR_INVALID_CONTEXT`; the
/// two on one device: `CUDA_ERROR_INVALID_DEVICE`.
fn pair(peer_ctx: CUcontext, op: &'static str) -> mempool_hal::Result<(u32, u32)> {
    let s = shim(op)?;
    let cur = s.current(op)?;
    let peer = s.context(peer_ctx as usize, op).map_err(|e| err(CUDA_ERROR_INVALID_CONTEXT, op, e.message()))?.device;
    if peer == cur {
        return Err(err(CUDA_ERROR_INVALID_DEVICE, op, format!("the peer context is of the current device ({cur})")));
    }
    Ok((cur, peer))
}

/// `CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags)`: the current
/// context's device may reach the memory of `peerContext`'s device from now on. Flags other
/// than 0: `CUDA_ERROR_INVALID_VALUE`; enabled already: 704
/// (`CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED`).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxEnablePeerAccess(peer_ctx: CUcontext, flags: c_uint) -> CUresult {
    const OP: &str = "cuCtxEnablePeerAccess";
    ffi(OP, || {
        if flags != 0 {
            return Err(err(CUDA_ERROR_INVALID_VALUE, OP, format!("flags {flags:#x} must be 0")));
        }
        let (cur, peer) = pair(peer_ctx, OP)?;
        let dev = shim(OP)?.dev(cur);
        if dev.peer_access_enabled(peer) {
            return Err(err(ALREADY_ENABLED, OP, format!("device {cur} has peer access to device {peer} already")));
        }
        dev.enable_peer_access(peer).map_err(|e| err(CUDA_ERROR_INVALID_VALUE, OP, e.message()))
    })
}

/// `CUresult cuCtxDisablePeerAccess(CUcontext peerContext)`: ends it; not enabled: 705
/// (`CUDA_ERROR_PEER_ACCESS_NOT_ENABLED`).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxDisablePeerAccess(peer_ctx: CUcontext) -> CUresult {
    const OP: &str = "cuCtxDisablePeerAccess";
    ffi(OP, || {
        let (cur, peer) = pair(peer_ctx, OP)?;
        let dev = shim(OP)?.dev(cur);
        if !dev.peer_access_enabled(peer) {
            return Err(err(NOT_ENABLED, OP, format!("device {cur} has no peer access to device {peer}")));
        }
        dev.disable_peer_access(peer).map_err(|e| err(CUDA_ERROR_INVALID_VALUE, OP, e.message()))
    })
}
