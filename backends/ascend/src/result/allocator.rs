//! The external-allocator registry (`acl/acl_rt_allocator.h`): descriptors, their
//! callbacks, and registration by stream. The symbols are optional: a runtime without
//! them answers `NotSupported` (207000) naming the call.

use crate::loader::Runtime;
use crate::sys;
use mempool_hal::{Error, ErrorKind, Result, code};

/// Resolves a registry call of the runtime by name: `Ok(fn pointer)` or `NotSupported`.
macro_rules! asym {
    ($rt:expr, $name:ident) => {
        $rt.resolve(&$rt.symbols().allocator.$name, stringify!($name))
    };
}

/// What a stream's registration holds (`aclrtAllocatorGetByStream`).
#[derive(Debug, Clone, Copy)]
pub struct Registered {
    /// The descriptor registered (the value passed to `aclrtAllocatorRegister`).
    pub desc: sys::aclrtAllocatorDesc,
    /// The allocator object the callbacks take.
    pub allocator: sys::aclrtAllocator,
    /// The alloc callback.
    pub alloc: sys::aclrtAllocatorAllocFunc,
    /// The free callback.
    pub free: sys::aclrtAllocatorFreeFunc,
    /// The optional address-advised alloc callback.
    pub alloc_advise: sys::aclrtAllocatorAllocAdviseFunc,
    /// The getAddrFromBlock callback.
    pub get_addr: sys::aclrtAllocatorGetAddrFromBlockFunc,
}

/// The callbacks to put in a descriptor.
pub(crate) struct Callbacks {
    pub(crate) allocator: sys::aclrtAllocator,
    pub(crate) alloc: sys::aclrtAllocatorAllocFunc,
    pub(crate) free: sys::aclrtAllocatorFreeFunc,
    pub(crate) get_addr: sys::aclrtAllocatorGetAddrFromBlockFunc,
}

/// `aclrtAllocatorCreateDesc` and the four setters: a descriptor holding `cb`, destroyed
/// again when a setter fails.
pub(crate) fn create_desc(rt: &Runtime, cb: &Callbacks) -> Result<sys::aclrtAllocatorDesc> {
    let create = asym!(rt, aclrtAllocatorCreateDesc)?;
    let set_obj = asym!(rt, aclrtAllocatorSetObjToDesc)?;
    let set_alloc = asym!(rt, aclrtAllocatorSetAllocFuncToDesc)?;
    let set_free = asym!(rt, aclrtAllocatorSetFreeFuncToDesc)?;
    let set_addr = asym!(rt, aclrtAllocatorSetGetAddrFromBlockFuncToDesc)?;
    asym!(rt, aclrtAllocatorDestroyDesc)?;
    // SAFETY: no arguments; the runtime returns a new descriptor or NULL.
    let desc = unsafe { create() };
    if desc.is_null() {
        return Err(Error::new(
            ErrorKind::HostAllocation,
            code::ACL_ERROR_RT_MEMORY_ALLOCATION,
            "aclrtAllocatorCreateDesc",
            "the runtime could not make an allocator descriptor",
        ));
    }
    // SAFETY: `desc` is the live descriptor just made; the object and functions are
    // plain values the runtime stores (the caller keeps the object alive while the
    // descriptor can be fetched).
    let steps = unsafe {
        [
            (set_obj(desc, cb.allocator), "aclrtAllocatorSetObjToDesc"),
            (set_alloc(desc, cb.alloc), "aclrtAllocatorSetAllocFuncToDesc"),
            (set_free(desc, cb.free), "aclrtAllocatorSetFreeFuncToDesc"),
            (set_addr(desc, cb.get_addr), "aclrtAllocatorSetGetAddrFromBlockFuncToDesc"),
        ]
    };
    for (rc, op) in steps {
        if let Err(e) = rt.check(rc, op) {
            let _ = destroy_desc(rt, desc);
            return Err(e);
        }
    }
    Ok(desc)
}

/// `aclrtAllocatorDestroyDesc`.
pub(crate) fn destroy_desc(rt: &Runtime, desc: sys::aclrtAllocatorDesc) -> Result<()> {
    let f = asym!(rt, aclrtAllocatorDestroyDesc)?;
    // SAFETY: the caller passes a descriptor it made and will not pass again.
    rt.check(unsafe { f(desc) }, "aclrtAllocatorDestroyDesc")
}

/// `aclrtAllocatorRegister`.
pub(crate) fn register(rt: &Runtime, stream: sys::aclrtStream, desc: sys::aclrtAllocatorDesc) -> Result<()> {
    let f = asym!(rt, aclrtAllocatorRegister)?;
    // SAFETY: a live stream and a live descriptor of this runtime.
    rt.check(unsafe { f(stream, desc) }, "aclrtAllocatorRegister")
}

/// `aclrtAllocatorUnregister`.
pub(crate) fn unregister(rt: &Runtime, stream: sys::aclrtStream) -> Result<()> {
    let f = asym!(rt, aclrtAllocatorUnregister)?;
    // SAFETY: a stream of this runtime (the call only drops the stream's registration).
    rt.check(unsafe { f(stream) }, "aclrtAllocatorUnregister")
}

/// `aclrtAllocatorGetByStream`: the stream's registration, `None` when it has none (the
/// runtime answers 100000 then, as for a bad argument, which the arguments here are not).
pub(crate) fn get_by_stream(rt: &Runtime, stream: sys::aclrtStream) -> Result<Option<Registered>> {
    let f = asym!(rt, aclrtAllocatorGetByStream)?;
    let mut r = Registered {
        desc: std::ptr::null_mut(),
        allocator: std::ptr::null_mut(),
        alloc: None,
        free: None,
        alloc_advise: None,
        get_addr: None,
    };
    // SAFETY: a non-null stream of this runtime and six valid out-pointers.
    let rc = unsafe {
        f(stream, &mut r.desc, &mut r.allocator, &mut r.alloc, &mut r.free, &mut r.alloc_advise, &mut r.get_addr)
    };
    if rc == code::ACL_ERROR_INVALID_PARAM {
        return Ok(None);
    }
    rt.check(rc, "aclrtAllocatorGetByStream")?;
    Ok(Some(r))
}
