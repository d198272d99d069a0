//! An expandable segment: one reserved address range that grows and shrinks by mapping
//! physical chunks at its end, the way PyTorch's and torch_npu's allocators grow memory
//! without fragmenting the address space.

use mempool_hal::{Access, DevicePtr, Error, Granularity, Mapping, Physical, Reserved, Result, VirtualMemory};
use std::fmt;

/// One reserved range of `capacity` bytes, of which the first [`len`](Self::len) bytes are
/// backed by physical chunks of [`chunk`](Self::chunk) bytes each, mapped read-write in
/// order. [`grow`](Self::grow) maps chunks at the end, [`shrink`](Self::shrink) unmaps and
/// frees them from the end; dropping the segment unmaps and frees every chunk and gives
/// the range back.
///
/// The addresses of the mapped part never move: a tensor at `base() + k` stays valid while
/// the segment grows. Work already queued on a chunk that [`shrink`](Self::shrink) unmaps
/// still sees it until that work has run (contract §14); work queued afterwards that
/// touches it is a fault the backend reports.
///
/// ```
/// # #[cfg(feature = "emu")] fn main() -> mempool::Result<()> {
/// use mempool::prelude::*;
/// use mempool::{ExpandableSegment, HostBuffer, Stream};
///
/// let dev = mempool::backend::Emulator::new();
/// let stream = Stream::new(&dev)?;
/// let mut seg = ExpandableSegment::new(&dev, 64 << 20, None)?;
/// let chunk = seg.chunk();
/// seg.grow(3 * chunk)?;
/// let last = seg.base().checked_add(2 * chunk).unwrap();
/// dev.memcpy_h2d_async(last, &[7; 16], stream.raw())?;
/// let out = HostBuffer::new(16);
/// dev.memcpy_d2h_async(&out, last, stream.raw())?;
/// stream.synchronize()?;
/// assert_eq!(out.to_vec(), vec![7; 16]);
/// seg.shrink(chunk)?;
/// assert_eq!(seg.len(), 2 * chunk);
/// # Ok(())
/// # }
/// # #[cfg(not(feature = "emu"))] fn main() {}
/// ```
pub struct ExpandableSegment<'d, D: VirtualMemory> {
    dev: &'d D,
    range: Reserved,
    chunk: u64,
    /// The mapped chunks, in address order from the base.
    chunks: Vec<(Physical, Mapping)>,
}

impl<'d, D: VirtualMemory> ExpandableSegment<'d, D> {
    /// Reserves `capacity` bytes (rounded up to whole chunks) on `dev`, with chunks of
    /// `chunk` bytes (`None`: the device's recommended granularity). Nothing is mapped yet.
    ///
    /// # Errors
    ///
    /// A chunk size that is 0 or not a multiple of the minimum granularity, a capacity of
    /// 0 or one that overflows when rounded, or what [`VirtualMemory::reserve`] answers.
    pub fn new(dev: &'d D, capacity: u64, chunk: Option<u64>) -> Result<Self> {
        const OP: &str = "ExpandableSegment::new";
        let min = dev.granularity(Granularity::Minimum)?;
        let chunk = match chunk {
            Some(c) => c,
            None => dev.granularity(Granularity::Recommended)?,
        };
        if chunk == 0 || min == 0 || chunk % min != 0 {
            return Err(Error::invalid_param(OP, format!("chunk {chunk} is not a multiple of the granularity {min}")));
        }
        if capacity == 0 {
            return Err(Error::invalid_param(OP, "capacity 0"));
        }
        let size = capacity
            .div_ceil(chunk)
            .checked_mul(chunk)
            .ok_or_else(|| Error::invalid_param(OP, format!("capacity {capacity} overflows when rounded")))?;
        let range = dev.reserve(size, 0, None)?;
        Ok(ExpandableSegment { dev, range, chunk, chunks: Vec::new() })
    }

    /// The first address of the segment.
    pub fn base(&self) -> DevicePtr {
        self.range.base
    }

    /// The reserved size: the most the segment can grow to.
    pub fn capacity(&self) -> u64 {
        self.range.size
    }

    /// The size of one chunk.
    pub fn chunk(&self) -> u64 {
        self.chunk
    }

    /// How many bytes are mapped (a whole number of chunks from the base).
    pub fn len(&self) -> u64 {
        self.chunks.len() as u64 * self.chunk
    }

    /// Whether nothing is mapped.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Maps chunks at the end until at least `bytes` more are mapped, each made
    /// read-write. On an error, the chunks mapped by this call are unmapped and freed
    /// again: the segment is as it was.
    ///
    /// # Errors
    ///
    /// More than the capacity left, or what the backend answers (out of memory, say).
    pub fn grow(&mut self, bytes: u64) -> Result<()> {
        let n = bytes.div_ceil(self.chunk);
        let left = (self.range.size - self.len()) / self.chunk;
        if n > left {
            return Err(Error::invalid_param(
                "ExpandableSegment::grow",
                format!("{bytes} bytes more do not fit: {} of {} bytes are mapped", self.len(), self.range.size),
            ));
        }
        let before = self.chunks.len();
        for _ in 0..n {
            if let Err(e) = self.map_one() {
                let _ = self.unmap_to(before);
                return Err(e);
            }
        }
        Ok(())
    }

    fn map_one(&mut self) -> Result<()> {
        let at = DevicePtr::from_addr(self.range.base.addr() + self.len());
        let phys = self.dev.create_physical(self.chunk)?;
        let mapping = match self.dev.map(at, self.chunk, 0, phys) {
            Ok(m) => m,
            Err(e) => {
                let _ = self.dev.release_physical(phys);
                return Err(e);
            }
        };
        if let Err(e) = self.dev.set_access(at, self.chunk, Access::ReadWrite) {
            let _ = self.dev.unmap(mapping);
            let _ = self.dev.release_physical(phys);
            return Err(e);
        }
        self.chunks.push((phys, mapping));
        Ok(())
    }

    /// Unmaps and frees chunks from the end until at most `len() - bytes` stay mapped
    /// (whole chunks: `bytes` is rounded down to a chunk).
    ///
    /// # Errors
    ///
    /// More than is mapped, or what the backend answers (the chunks before the failing one
    /// are gone).
    pub fn shrink(&mut self, bytes: u64) -> Result<()> {
        let n = bytes / self.chunk;
        if n > self.chunks.len() as u64 {
            return Err(Error::invalid_param(
                "ExpandableSegment::shrink",
                format!("{bytes} bytes to unmap, {} mapped", self.len()),
            ));
        }
        self.unmap_to(self.chunks.len() - n as usize)
    }

    fn unmap_to(&mut self, keep: usize) -> Result<()> {
        while self.chunks.len() > keep {
            let (phys, mapping) = *self.chunks.last().expect("more chunks than kept");
            self.dev.unmap(mapping)?;
            self.chunks.pop();
            self.dev.release_physical(phys)?;
        }
        Ok(())
    }
}

impl<D: VirtualMemory> Drop for ExpandableSegment<'_, D> {
    fn drop(&mut self) {
        let _ = self.unmap_to(0);
        let _ = self.dev.release_reserved(self.range);
    }
}

impl<D: VirtualMemory> fmt::Debug for ExpandableSegment<'_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExpandableSegment")
            .field("base", &self.range.base)
            .field("capacity", &self.range.size)
            .field("chunk", &self.chunk)
            .field("len", &self.len())
            .finish()
    }
}
