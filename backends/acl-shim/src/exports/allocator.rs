//! The external-allocator registry (`acl/acl_rt_allocator.h`, contract §16): allocator
//! descriptors, their object and callbacks, and one registration per stream, which CANN's
//! operator layer fetches with `aclrtAllocatorGetByStream`.
//!
//! As CANN: every check answers 100000 (`ACL_ERROR_INVALID_PARAM`); no call needs a
//! current context; registering again on a stream replaces the registration (the last
//! wins); unregistering a stream with none succeeds; `aclrtAllocatorRegister` copies the
//! descriptor's fields, so later setters and destroying the descriptor do not change what
//! the stream has registered. Beyond CANN, which cannot check them: a descriptor is a
//! registry handle, so an unknown or destroyed one is 100000, never dereferenced; a
//! descriptor whose object, alloc, free or getAddrFromBlock callback was never set is
//! refused by `aclrtAllocatorRegister` (100000, in that order; the address-advised alloc
//! is optional); registering on a stream handle that is not a live stream is 107017; and
//! destroying a stream drops its registration (stream handles are never reused).

use super::prelude::*;
use crate::allocators::{DescFields, Registration};
use sys::{
    aclrtAllocator, aclrtAllocatorAllocAdviseFunc, aclrtAllocatorAllocFunc, aclrtAllocatorDesc, aclrtAllocatorFreeFunc,
    aclrtAllocatorGetAddrFromBlockFunc,
};

/// The fields of descriptor `desc` (checked non-null by the caller): 100000 when it is
/// not a live descriptor.
fn desc_fields(desc: aclrtAllocatorDesc, op: &'static str) -> mempool_hal::Result<Arc<std::sync::Mutex<DescFields>>> {
    let s = shim(op)?;
    s.allocators.descs.get(desc as usize).ok_or_else(|| {
        err(
            code::ACL_ERROR_INVALID_PARAM,
            op,
            format!("allocator descriptor {:#x} is unknown or destroyed", desc as usize),
        )
    })
}

/// Checks `desc` and a setter's argument (each NULL: 100000, in that order), then sets
/// one field of the descriptor.
fn set_field<T>(
    desc: aclrtAllocatorDesc,
    value: Option<T>,
    what: &str,
    op: &'static str,
    set: impl FnOnce(&mut DescFields, T),
) -> mempool_hal::Result<()> {
    non_null(desc, op, "allocatorDesc")?;
    let Some(v) = value else {
        return Err(err(code::ACL_ERROR_INVALID_PARAM, op, format!("{what} is null")));
    };
    let fields = desc_fields(desc, op)?;
    set(&mut fields.lock().unwrap_or_else(PoisonError::into_inner), v);
    Ok(())
}

/// `aclrtAllocatorDesc aclrtAllocatorCreateDesc(void)`: a new descriptor with nothing set;
/// NULL when the library cannot start (the message says why).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtAllocatorCreateDesc() -> aclrtAllocatorDesc {
    const OP: &str = "aclrtAllocatorCreateDesc";
    let mut h = 0usize;
    let rc = ffi(OP, || {
        let s = shim(OP)?;
        h = s.allocators.descs.insert(Arc::default());
        Ok(())
    });
    if rc == code::ACL_SUCCESS { h as aclrtAllocatorDesc } else { std::ptr::null_mut() }
}

/// `aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc)`: the
/// registrations made with it stay.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtAllocatorDestroyDesc(desc: aclrtAllocatorDesc) -> aclError {
    const OP: &str = "aclrtAllocatorDestroyDesc";
    ffi(OP, || {
        non_null(desc, OP, "allocatorDesc")?;
        desc_fields(desc, OP)?;
        shim(OP)?.allocators.descs.remove(desc as usize);
        Ok(())
    })
}

/// `aclError aclrtAllocatorSetObjToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocator
/// allocator)`: the object every callback receives.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtAllocatorSetObjToDesc(desc: aclrtAllocatorDesc, allocator: aclrtAllocator) -> aclError {
    const OP: &str = "aclrtAllocatorSetObjToDesc";
    ffi(OP, || set_field(desc, (!allocator.is_null()).then_some(allocator as usize), "allocator", OP, |f, v| f.obj = v))
}

/// `aclError aclrtAllocatorSetAllocFuncToDesc(aclrtAllocatorDesc allocatorDesc,
/// aclrtAllocatorAllocFunc func)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtAllocatorSetAllocFuncToDesc(
    desc: aclrtAllocatorDesc,
    func: aclrtAllocatorAllocFunc,
) -> aclError {
    const OP: &str = "aclrtAllocatorSetAllocFuncToDesc";
    ffi(OP, || set_field(desc, func, "func", OP, |f, v| f.alloc = Some(v)))
}

/// `aclError aclrtAllocatorSetFreeFuncToDesc(aclrtAllocatorDesc allocatorDesc,
/// aclrtAllocatorFreeFunc func)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtAllocatorSetFreeFuncToDesc(
    desc: aclrtAllocatorDesc,
    func: aclrtAllocatorFreeFunc,
) -> aclError {
    const OP: &str = "aclrtAllocatorSetFreeFuncToDesc";
    ffi(OP, || set_field(desc, func, "func", OP, |f, v| f.free = Some(v)))
}

/// `aclError aclrtAllocatorSetAllocAdviseFuncToDesc(aclrtAllocatorDesc allocatorDesc,
/// aclrtAllocatorAllocAdviseFunc func)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtAllocatorSetAllocAdviseFuncToDesc(
    desc: aclrtAllocatorDesc,
    func: aclrtAllocatorAllocAdviseFunc,
) -> aclError {
    const OP: &str = "aclrtAllocatorSetAllocAdviseFuncToDesc";
    ffi(OP, || set_field(desc, func, "func", OP, |f, v| f.advise = Some(v)))
}

/// `aclError aclrtAllocatorSetGetAddrFromBlockFuncToDesc(aclrtAllocatorDesc allocatorDesc,
/// aclrtAllocatorGetAddrFromBlockFunc func)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtAllocatorSetGetAddrFromBlockFuncToDesc(
    desc: aclrtAllocatorDesc,
    func: aclrtAllocatorGetAddrFromBlockFunc,
) -> aclError {
    const OP: &str = "aclrtAllocatorSetGetAddrFromBlockFuncToDesc";
    ffi(OP, || set_field(desc, func, "func", OP, |f, v| f.get_addr = Some(v)))
}

/// `aclError aclrtAllocatorRegister(aclrtStream stream, aclrtAllocatorDesc allocatorDesc)`:
/// the stream's allocator is now the descriptor's (a copy of its fields). Checks in
/// CANN's order: stream NULL, descriptor NULL, then the object, alloc, free and
/// getAddrFromBlock callbacks set (each 100000); then, beyond CANN, the descriptor live
/// (100000) and the stream a live stream handle (107017).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtAllocatorRegister(stream: aclrtStream, desc: aclrtAllocatorDesc) -> aclError {
    const OP: &str = "aclrtAllocatorRegister";
    ffi(OP, || {
        non_null(stream, OP, "stream")?;
        non_null(desc, OP, "allocatorDesc")?;
        let fields = *desc_fields(desc, OP)?.lock().unwrap_or_else(PoisonError::into_inner);
        for (missing, what) in [
            (fields.obj == 0, "the allocator object (aclrtAllocatorSetObjToDesc)"),
            (fields.alloc.is_none(), "the alloc callback (aclrtAllocatorSetAllocFuncToDesc)"),
            (fields.free.is_none(), "the free callback (aclrtAllocatorSetFreeFuncToDesc)"),
            (fields.get_addr.is_none(), "the getAddrFromBlock callback (aclrtAllocatorSetGetAddrFromBlockFuncToDesc)"),
        ] {
            if missing {
                return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, format!("the descriptor has no {what}")));
            }
        }
        let s = shim(OP)?;
        let mut regs = s.allocators.by_stream();
        // Checked under the registry's lock, which `aclrtDestroyStream` takes to drop the
        // registration: a stream destroyed meanwhile leaves nothing behind.
        if s.streams.get(stream as usize).is_none() {
            return Err(crate::ffi::stale(OP, "stream", stream as usize));
        }
        regs.insert(stream as usize, Registration { desc: desc as usize, fields });
        Ok(())
    })
}

/// `aclError aclrtAllocatorUnregister(aclrtStream stream)`: drops the stream's
/// registration; success when it has none (any non-NULL stream, as CANN).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtAllocatorUnregister(stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtAllocatorUnregister";
    ffi(OP, || {
        non_null(stream, OP, "stream")?;
        shim(OP)?.allocators.by_stream().remove(&(stream as usize));
        Ok(())
    })
}

/// Writes `v` through `out` when it is non-NULL.
///
/// # Safety
///
/// `out` is NULL or writable for one `T`.
unsafe fn write_opt<T>(out: *mut T, v: T) {
    if !out.is_null() {
        // SAFETY: non-null, and writable by the function's contract.
        unsafe { out.write(v) };
    }
}

/// `aclError aclrtAllocatorGetByStream(aclrtStream stream, aclrtAllocatorDesc
/// *allocatorDesc, aclrtAllocator *allocator, aclrtAllocatorAllocFunc *allocFunc,
/// aclrtAllocatorFreeFunc *freeFunc, aclrtAllocatorAllocAdviseFunc *allocAdviseFunc,
/// aclrtAllocatorGetAddrFromBlockFunc *getAddrFromBlockFunc)`: the stream's registration.
/// `allocatorDesc` NULL, then stream NULL, then a stream with no registration: 100000.
/// `*allocatorDesc` gets the descriptor as registered (destroyed since, perhaps); each
/// other output is written when its pointer is non-NULL.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtAllocatorGetByStream(
    stream: aclrtStream,
    desc: *mut aclrtAllocatorDesc,
    allocator: *mut aclrtAllocator,
    alloc: *mut aclrtAllocatorAllocFunc,
    free: *mut aclrtAllocatorFreeFunc,
    advise: *mut aclrtAllocatorAllocAdviseFunc,
    get_addr: *mut aclrtAllocatorGetAddrFromBlockFunc,
) -> aclError {
    const OP: &str = "aclrtAllocatorGetByStream";
    ffi(OP, || {
        non_null(desc, OP, "allocatorDesc")?;
        non_null(stream, OP, "stream")?;
        let s = shim(OP)?;
        let Some(r) = s.allocators.by_stream().get(&(stream as usize)).copied() else {
            return Err(err(
                code::ACL_ERROR_INVALID_PARAM,
                OP,
                format!("stream {:#x} has no registered allocator", stream as usize),
            ));
        };
        let f = r.fields;
        // SAFETY: `desc` is non-null; every pointer is NULL or writable for one value, as
        // the ACL API documents.
        unsafe {
            desc.write(r.desc as aclrtAllocatorDesc);
            write_opt(allocator, f.obj as aclrtAllocator);
            write_opt(alloc, f.alloc);
            write_opt(free, f.free);
            write_opt(advise, f.advise);
            write_opt(get_addr, f.get_addr);
        }
        Ok(())
    })
}
