//! What a C library on the emulator keeps for its callers, once for both drop-in libraries
//! (`libacl_rt.so`, the CPU `libcuda.so.1`): registries of C handles ([`Handles`]), and the
//! page-locked host memory the runtime hands out ([`HostAllocs`]: `aclrtMallocHost`,
//! `cuMemAllocHost`), which copies and memsets accept and queued work keeps alive. The C
//! boundary itself, the unwind guard and the per-thread last error that never panics, is
//! [`boundary`], shared by those two and `libmempool_alloc.so`.

pub mod boundary;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The kind of a C handle. Kinds live in separate ranges of values, so a handle of one kind
/// is never valid as another, and small garbage values (like 0x1234) are never valid at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandleKind {
    /// A stream.
    Stream = 1,
    /// An event.
    Event = 2,
    /// A pool.
    Pool = 3,
    /// A context.
    Context = 4,
    /// An external-allocator descriptor (`aclrtAllocatorDesc`).
    AllocatorDesc = 9,
    /// A notification (`aclrtNotify`).
    Notify = 10,
}

static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

/// The live C handles of one kind, each naming a `T`. Values are never reused: a stale
/// handle is an error, never another object.
#[derive(Debug)]
pub struct Handles<T> {
    kind: HandleKind,
    map: Mutex<HashMap<usize, T>>,
}

impl<T: Clone> Handles<T> {
    /// No handle yet.
    pub fn new(kind: HandleKind) -> Self {
        Handles { kind, map: Mutex::new(HashMap::new()) }
    }

    /// A new handle naming `v`.
    pub fn insert(&self, v: T) -> usize {
        let h = ((self.kind as usize) << 44) | (NEXT_ID.fetch_add(1, Ordering::Relaxed) << 4);
        lock(&self.map).insert(h, v);
        h
    }

    /// What live handle `h` names.
    pub fn get(&self, h: usize) -> Option<T> {
        lock(&self.map).get(&h).cloned()
    }

    /// Ends handle `h`; what it named, if it was live.
    pub fn remove(&self, h: usize) -> Option<T> {
        lock(&self.map).remove(&h)
    }
}

/// One page-locked host allocation (ordinary host memory here), or a host range the
/// program registered ([`Emulator::registered_host`](crate::Emulator::registered_host)).
/// Queued work that uses it holds a reference, so an allocation is deallocated only when
/// the program has freed it and that work has run; a registered range is the program's
/// memory and is never deallocated here.
#[derive(Debug)]
pub struct HostBlock {
    addr: usize,
    layout: std::alloc::Layout,
    /// Whether this block allocated its memory (and deallocates it when dropped).
    owned: bool,
}

impl HostBlock {
    /// Its start address.
    pub fn addr(&self) -> usize {
        self.addr
    }

    /// Its size in bytes.
    pub fn size(&self) -> usize {
        self.layout.size()
    }

    /// Whether it is a registered range of the program's own memory (not allocated here).
    pub fn is_registered(&self) -> bool {
        !self.owned
    }

    /// A registered range of `size` bytes at `addr`, the program's memory.
    pub(crate) fn registered(addr: usize, layout: std::alloc::Layout) -> HostBlock {
        HostBlock { addr, layout, owned: false }
    }
}

impl Drop for HostBlock {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        // SAFETY: `addr` was returned by `alloc` with `layout` (`HostAllocs::alloc`), and
        // this is the block's only deallocation (it runs once, when the last reference goes).
        unsafe { std::alloc::dealloc(self.addr as *mut u8, self.layout) };
    }
}

/// Why [`HostAllocs::alloc`] gave nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostAllocError {
    /// Size 0.
    Empty,
    /// A size no allocation can have (rounded to the alignment, it overflows).
    TooLarge,
    /// The host had no memory for it.
    NoMemory,
}

/// Where a host range lies ([`HostAllocs::lookup`]).
#[derive(Debug)]
pub enum HostRange {
    /// Inside one page-locked allocation, which the caller may keep alive for queued work.
    Pinned(Arc<HostBlock>),
    /// Not page-locked memory the runtime handed out (plain `malloc`, the stack...).
    Pageable,
    /// It starts inside a page-locked allocation and runs past its end.
    Overrun {
        /// The allocation's start.
        base: usize,
        /// Its size.
        size: usize,
    },
}

/// The page-locked host allocations of a C library, by start address.
#[derive(Debug, Default)]
pub struct HostAllocs {
    map: Mutex<BTreeMap<usize, Arc<HostBlock>>>,
}

impl HostAllocs {
    /// Allocates `size` bytes aligned to `align` (a power of two) and records them.
    ///
    /// # Errors
    ///
    /// Size 0, a size that overflows, or no host memory: [`HostAllocError`].
    pub fn alloc(&self, size: usize, align: usize) -> Result<usize, HostAllocError> {
        if size == 0 {
            return Err(HostAllocError::Empty);
        }
        let layout = std::alloc::Layout::from_size_align(size, align).map_err(|_| HostAllocError::TooLarge)?;
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc(layout) };
        if p.is_null() {
            return Err(HostAllocError::NoMemory);
        }
        let addr = p as usize;
        lock(&self.map).insert(addr, Arc::new(HostBlock { addr, layout, owned: true }));
        Ok(addr)
    }

    /// Forgets the allocation starting at `addr`; it is deallocated when the last queued
    /// work using it has run (now, if none). `None` when no allocation starts there.
    pub fn free(&self, addr: usize) -> Option<()> {
        lock(&self.map).remove(&addr).map(drop)
    }

    /// The allocation (start, size) that `[addr, addr + len)` overlaps, if any: a range
    /// registered over page-locked memory is refused (contract §15).
    pub fn overlapping(&self, addr: usize, len: usize) -> Option<(usize, usize)> {
        let end = addr.saturating_add(len);
        let map = lock(&self.map);
        let (_, b) = map.range(..end).next_back()?;
        (b.addr + b.size() > addr).then(|| (b.addr, b.size()))
    }

    /// Where `[addr, addr + len)` lies.
    pub fn lookup(&self, addr: usize, len: usize) -> HostRange {
        let map = lock(&self.map);
        let Some((_, b)) = map.range(..=addr).next_back() else { return HostRange::Pageable };
        let size = b.size();
        if addr - b.addr >= size {
            return HostRange::Pageable;
        }
        if len > size - (addr - b.addr) {
            return HostRange::Overrun { base: b.addr, size };
        }
        HostRange::Pinned(Arc::clone(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_kind_separated_and_never_reused() {
        let (s, e) = (Handles::new(HandleKind::Stream), Handles::<u32>::new(HandleKind::Event));
        let h = s.insert(7u32);
        assert_eq!(s.get(h), Some(7));
        assert_eq!(e.get(h), None, "a stream handle is no event");
        assert_eq!(s.remove(h), Some(7));
        assert_eq!(s.get(h), None);
        assert_ne!(s.insert(7), h, "a value is never handed out twice");
        assert_eq!(s.get(0x1234), None);
    }

    #[test]
    fn host_ranges_are_found_checked_and_freed() {
        let a = HostAllocs::default();
        assert_eq!(a.alloc(0, 64), Err(HostAllocError::Empty));
        assert_eq!(a.alloc(usize::MAX, 64), Err(HostAllocError::TooLarge));
        let p = a.alloc(4096, 64).expect("4 KiB");
        assert!(matches!(a.lookup(p + 8, 16), HostRange::Pinned(b) if b.addr() == p && b.size() == 4096));
        assert!(matches!(a.lookup(p + 4090, 16), HostRange::Overrun { base, size: 4096 } if base == p));
        assert!(matches!(a.lookup(p + 4096, 16), HostRange::Pageable));
        assert_eq!(a.overlapping(p - 8, 9), Some((p, 4096)), "its first byte");
        assert_eq!(a.overlapping(p + 4095, 1), Some((p, 4096)), "its last byte");
        assert_eq!(a.overlapping(p - 8, 8), None);
        assert_eq!(a.overlapping(p + 4096, 8), None);
        let kept = match a.lookup(p, 1) {
            HostRange::Pinned(b) => b,
            other => panic!("{other:?}"),
        };
        assert_eq!(a.free(p), Some(()));
        assert_eq!(a.free(p), None, "freed twice");
        assert!(matches!(a.lookup(p, 1), HostRange::Pageable));
        drop(kept);
    }
}
