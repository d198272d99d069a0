//! A page-locked host buffer, owned, over whichever call a backend allocates and frees
//! such memory with (`aclrtMallocHost`/`aclrtFreeHost`, `cuMemAllocHost_v2`/
//! `cuMemFreeHost`): the staging cache's [`PinnedBuffer`].

use crate::staging::{HostBytes, PinnedBuffer};
use mempool_hal::Result;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;

/// How a backend allocates and frees page-locked host memory.
pub trait PageLockedHost {
    /// What the calls need (the loaded runtime).
    type Host: ?Sized;

    /// Allocates `len` bytes of page-locked host memory (the caller has made a context
    /// current where the runtime needs one).
    ///
    /// # Errors
    ///
    /// The backend's error for the failed call (`HostAllocation` when host memory is
    /// exhausted).
    fn alloc(host: &Self::Host, len: usize) -> Result<*mut c_void>;

    /// Frees memory [`alloc`](Self::alloc) returned, on a user thread (never inside a
    /// host function: both runtimes forbid it there).
    ///
    /// # Safety
    ///
    /// `ptr` came from `alloc` of this `host`, no queued copy uses it any more, and it is
    /// freed once.
    ///
    /// # Errors
    ///
    /// The backend's error for the failed call.
    unsafe fn free(host: &Self::Host, ptr: *mut c_void) -> Result<()>;
}

/// A page-locked host buffer from `A`'s allocation call, owned: whoever holds it may read
/// and write it, and a copy queued on it keeps it (moved into the host function ordered
/// after the copy) until that copy has run.
///
/// Dropping it leaks it: freeing needs the runtime, and both runtimes forbid their calls
/// inside a host function, where buffers come back. Give it to [`PinnedBuffer::free`] on
/// a user thread.
pub struct PinnedHost<A> {
    addr: usize,
    len: usize,
    api: PhantomData<fn() -> A>,
}

impl<A> fmt::Debug for PinnedHost<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PinnedHost").field("addr", &format_args!("{:#x}", self.addr)).field("len", &self.len).finish()
    }
}

impl<A> PinnedHost<A> {
    /// Its address, for a copy's host side.
    #[inline]
    pub fn as_ptr(&self) -> *mut c_void {
        self.addr as *mut c_void
    }
}

impl<A> HostBytes for PinnedHost<A> {
    /// Copies `src` into the start of the buffer (at most its length).
    #[inline]
    fn fill_from(&mut self, src: &[u8]) {
        let n = src.len().min(self.len);
        // SAFETY: `addr` is `len` bytes of host memory from `A::alloc`, owned by `self`
        // (no queued copy uses it: a copy keeps the buffer until it has run), and `src`
        // cannot overlap it.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.addr as *mut u8, n) };
    }

    /// Copies the start of the buffer into `dst` (at most its length).
    #[inline]
    fn copy_to(&self, dst: &mut [u8]) {
        let n = dst.len().min(self.len);
        // SAFETY: as in `fill_from`; the copy that wrote the buffer has run.
        unsafe { std::ptr::copy_nonoverlapping(self.addr as *const u8, dst.as_mut_ptr(), n) };
    }
}

impl<A: PageLockedHost> PinnedBuffer for PinnedHost<A> {
    type Host = A::Host;
    type Error = mempool_hal::Error;

    #[inline]
    fn alloc(host: &A::Host, len: usize) -> Result<Self> {
        let p = A::alloc(host, len)?;
        Ok(PinnedHost { addr: p as usize, len, api: PhantomData })
    }

    #[inline]
    fn free(self, host: &A::Host) -> Result<()> {
        // SAFETY: the buffer came from `A::alloc` of this host and is owned, so no queued
        // copy uses it any more; it is consumed, so it is freed once.
        unsafe { A::free(host, self.as_ptr()) }
    }

    #[inline]
    fn size(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Page-locked memory from the global allocator, with a record of what is live.
    struct Heap;
    static LIVE: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

    impl PageLockedHost for Heap {
        type Host = ();
        fn alloc((): &(), len: usize) -> Result<*mut c_void> {
            let p = Box::into_raw(vec![0u8; len].into_boxed_slice()).cast::<u8>();
            LIVE.lock().unwrap().push((p as usize, len));
            Ok(p.cast())
        }
        unsafe fn free((): &(), ptr: *mut c_void) -> Result<()> {
            let mut live = LIVE.lock().unwrap();
            let at = live.iter().position(|&(a, _)| a == ptr as usize).expect("a live buffer");
            let (_, len) = live.remove(at);
            // SAFETY: `ptr` is a boxed slice of `len` bytes from `alloc`, freed once.
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr.cast::<u8>(), len)) });
            Ok(())
        }
    }

    #[test]
    fn a_buffer_holds_what_is_written_and_is_freed_through_its_host() {
        let mut b = <PinnedHost<Heap> as PinnedBuffer>::alloc(&(), 8).unwrap();
        assert_eq!(b.size(), 8);
        b.fill_from(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        let mut out = [0u8; 4];
        b.copy_to(&mut out);
        assert_eq!(out, [1, 2, 3, 4]);
        let addr = b.as_ptr() as usize;
        assert!(LIVE.lock().unwrap().iter().any(|&(a, _)| a == addr));
        b.free(&()).unwrap();
        assert!(!LIVE.lock().unwrap().iter().any(|&(a, _)| a == addr));
    }
}
