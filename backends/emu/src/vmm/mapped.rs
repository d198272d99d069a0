//! A device range of virtual memory resolved for the work that touches it: the pieces of
//! chunks behind it when the work was enqueued (checked mapped, with the access the work
//! needs). The work moves its bytes through the chunks' views, so an unmapping after the
//! enqueue changes nothing for it: it still reaches the chunks it was queued on, which
//! its references keep alive (contract §14, rule 3).

use super::space::Part;
use mempool_hal::{Error, Result};
use std::time::Duration;

/// A resolved range `[addr, addr + len)` (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct MappedRange {
    addr: u64,
    parts: Vec<Part>,
    /// The longest a pinned access waits for an overlapping one.
    timeout: Duration,
}

impl MappedRange {
    pub(crate) fn new(addr: u64, parts: Vec<Part>, timeout: Duration) -> MappedRange {
        MappedRange { addr, parts, timeout }
    }

    /// Runs `f(done, ptr, n)` on each piece of `[addr, addr + len)`, a part of the resolved
    /// range, in address order: `n` bytes at `ptr`, the bytes from `done` on of the
    /// subrange (`write`: `f` writes them). Each piece is pinned while `f` runs on it.
    pub(crate) fn for_each_piece(
        &self,
        addr: u64,
        len: u64,
        write: bool,
        op: &'static str,
        mut f: impl FnMut(usize, *mut u8, usize),
    ) -> Result<()> {
        let total: u64 = self.parts.iter().map(|p| p.len).sum();
        let end = addr.checked_add(len);
        if addr < self.addr || end.is_none_or(|e| e > self.addr + total) {
            return Err(Error::invalid_pointer(op, format!("[{addr:#x}, +{len}) lies outside the range resolved")));
        }
        let (mut pos, mut done) = (self.addr, 0u64);
        for p in &self.parts {
            let (lo, hi) = (pos.max(addr), (pos + p.len).min(addr + len));
            if lo < hi {
                let n = hi - lo;
                p.chunk.with_view(p.off + (lo - pos), n, write, self.timeout, op, |ptr| {
                    f(done as usize, ptr, n as usize)
                })?;
                done += n;
            }
            pos += p.len;
        }
        Ok(())
    }
}
