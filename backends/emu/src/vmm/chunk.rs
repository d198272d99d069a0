//! A physical chunk: real memory with no device address, shared by every mapping of it.
//!
//! The memory is a `memfd` of the chunk's size: a mapping puts the file's pages at an
//! address of a reserved range (`MAP_SHARED | MAP_FIXED`, in `range.rs`), so two mappings
//! of one chunk show the same bytes. The chunk also keeps a *view* of its own, the whole
//! file mapped read-write at an address of the kernel's choosing: the emulator's copies,
//! memsets and kernels move bytes through it, never through the device address, so work
//! queued before an unmapping still reaches the chunk it was queued on, whatever the
//! range holds by the time it runs (contract §14, rule 3).
//!
//! The chunk's size counts against its device's memory ([`DeviceMemory`]) from its
//! creation until the last reference goes: its handle, a mapping, an unmapping whose
//! queued work has not run yet, or queued work itself.

use crate::pool::budget::DeviceMemory;
use crate::pool::pins::Pins;
use crate::sync::{Arc, Condvar, Instant, Mutex, PoisonError};
use mempool_hal::{Error, ErrorKind, Result, code};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::mm::{MapFlags, ProtFlags};
use std::ffi::c_void;
use std::fmt;
use std::time::Duration;

/// One physical chunk (see the module docs).
pub(crate) struct Chunk {
    /// The handle it was created with (the runtime's `aclrtDrvMemHandle` or
    /// `CUmemGenericAllocationHandle`).
    pub(crate) handle: u64,
    /// The device whose memory it is.
    pub(crate) device: u32,
    /// Its size in bytes.
    pub(crate) size: u64,
    /// The memory.
    fd: OwnedFd,
    /// The whole chunk, mapped read-write for the emulator's own accesses.
    view: *mut c_void,
    /// What its size was reserved from.
    memory: Arc<DeviceMemory>,
    /// The ranges of the view that copies are touching now (offsets in the chunk).
    pins: Mutex<Pins>,
    unpinned: Condvar,
}

// SAFETY: `view` is a mapping owned by this value and only handed out to code that pins
// the bytes it touches (`with_view`), so threads never race on it through the chunk; the
// file descriptor is an ordinary owned one.
unsafe impl Send for Chunk {}
// SAFETY: as above: shared access goes through the pins, under the chunk's lock.
unsafe impl Sync for Chunk {}

impl fmt::Debug for Chunk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Chunk")
            .field("handle", &self.handle)
            .field("device", &self.device)
            .field("size", &self.size)
            .finish()
    }
}

impl Chunk {
    /// Creates a chunk of `size` bytes (a multiple of the page size, checked by the
    /// caller) of `device`, reserving them from `memory`.
    pub(crate) fn create(handle: u64, device: u32, size: u64, memory: &Arc<DeviceMemory>) -> Result<Chunk> {
        const OP: &str = "create_physical";
        let oom = |why: String| Error::new(ErrorKind::OutOfMemory, code::ACL_ERROR_RT_MEMORY_ALLOCATION, OP, why);
        let len = usize::try_from(size).map_err(|_| oom(format!("{size} bytes do not fit in the address space")))?;
        if let Err(left) = memory.reserve(size) {
            return Err(oom(format!(
                "device {device} is full: {size} bytes requested, {left} bytes of device memory left"
            )));
        }
        let made = (|| -> std::io::Result<(OwnedFd, *mut c_void)> {
            let fd = rustix::fs::memfd_create("mempool-emu-chunk", rustix::fs::MemfdFlags::CLOEXEC)?;
            rustix::fs::ftruncate(&fd, size)?;
            // SAFETY: a fresh shared mapping of the whole file at an address of the
            // kernel's choosing aliases no Rust object.
            let view = unsafe {
                rustix::mm::mmap(
                    std::ptr::null_mut(),
                    len,
                    ProtFlags::READ | ProtFlags::WRITE,
                    MapFlags::SHARED | MapFlags::NORESERVE,
                    &fd,
                    0,
                )
            }?;
            Ok((fd, view))
        })();
        match made {
            Ok((fd, view)) => Ok(Chunk {
                handle,
                device,
                size,
                fd,
                view,
                memory: Arc::clone(memory),
                pins: Mutex::new(Pins::default()),
                unpinned: Condvar::new(),
            }),
            Err(e) => {
                memory.unreserve(size);
                Err(oom(format!("the host has no {size} bytes for the chunk: {e}")))
            }
        }
    }

    /// The file holding the memory, for mappings of it.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Runs `f` on the view of `[off, off + len)` of the chunk (`write`: `f` writes it),
    /// pinned: a pin that overlaps another one, either writing, waits for it first (at
    /// most `timeout`).
    pub(crate) fn with_view<R>(
        &self,
        off: u64,
        len: u64,
        write: bool,
        timeout: Duration,
        op: &'static str,
        f: impl FnOnce(*mut u8) -> R,
    ) -> Result<R> {
        debug_assert!(off.checked_add(len).is_some_and(|end| end <= self.size));
        let mut pins = self.pins.lock().unwrap_or_else(PoisonError::into_inner);
        let deadline = Instant::now() + timeout;
        while pins.conflicts(off, len, write) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::new(
                    ErrorKind::Internal,
                    code::ACL_ERROR_RT_INTERNAL_ERROR,
                    op,
                    format!("chunk {:#x} stayed busy with another copy for {timeout:?}", self.handle),
                ));
            }
            pins.waiters += 1;
            pins = self.unpinned.wait_timeout(pins, left).unwrap_or_else(PoisonError::into_inner).0;
            pins.waiters -= 1;
        }
        let pin = pins.pin(off, len, write);
        drop(pins);
        let _unpin = Unpin { chunk: self, pin };
        // The view maps the whole chunk, and `off + len` lies inside it.
        Ok(f(self.view.cast::<u8>().wrapping_add(off as usize)))
    }
}

/// Unpins a range of a chunk's view when dropped.
struct Unpin<'a> {
    chunk: &'a Chunk,
    pin: u64,
}

impl Drop for Unpin<'_> {
    fn drop(&mut self) {
        let mut pins = self.chunk.pins.lock().unwrap_or_else(PoisonError::into_inner);
        pins.unpin(self.pin);
        if pins.waiters > 0 {
            self.chunk.unpinned.notify_all();
        }
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        // SAFETY: `view` and the size are what mmap returned, and this is the last owner:
        // every access through the view held a reference to the chunk.
        let _ = unsafe { rustix::mm::munmap(self.view, self.size as usize) };
        self.memory.unreserve(self.size);
    }
}
