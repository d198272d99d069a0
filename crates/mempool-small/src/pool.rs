//! [`SmallBlocks`] as a [`MemPool`]: allocation (carved or passed through), the
//! stream-ordered free, trim and attributes (the pool's).

use crate::HOT;
use crate::layer::SmallBlocks;
use mempool_hal::{AttrId, Device, DevicePtr, Error, MemPool, PoolStats, RawAttrValue, Result};
use std::hash::Hash;

impl<D: Device> MemPool for SmallBlocks<'_, D>
where
    D::Stream: Eq + Hash,
{
    type Stream = D::Stream;

    /// Allocates `size` bytes on `stream`: carved from one of the stream's blocks when
    /// `size` is at most the threshold, else from the pool (see the [crate docs](crate)).
    ///
    /// # Errors
    ///
    /// `size == 0`: `InvalidParam` (107000). The pool's errors when it is asked for a
    /// block or a large request (out of memory only after the retry of the crate docs).
    fn malloc_async(&self, size: u64, stream: &D::Stream) -> Result<DevicePtr> {
        if size == 0 {
            return Err(Error::invalid_param("malloc_async", "size 0"));
        }
        if size > self.threshold {
            return self.malloc_direct(size, stream);
        }
        self.malloc_small(size, stream)
    }

    /// Frees `ptr` in stream order on `stream` (see the ordering rules in the
    /// [crate docs](crate)).
    ///
    /// # Safety
    ///
    /// As [`MemPool::free_async`]: every use of `ptr` must be ordered before this free.
    /// Pointers the layer did not hand out are refused with an error before they reach the
    /// pool.
    ///
    /// # Errors
    ///
    /// A pointer that is not the start of a live allocation of the layer (foreign, freed
    /// already, interior): `InvalidPointer` (107000). A cross-stream free whose event cannot
    /// be made or recorded (a destroyed stream): that error, with the allocation still live.
    /// The pool's errors for a passed-through allocation.
    unsafe fn free_async(&self, ptr: DevicePtr, stream: &D::Stream) -> Result<()> {
        let mut st = self.lock();
        if let Some(n) = st.live.remove(ptr.addr()) {
            let node = st.nodes[n as usize];
            let blk = st.blocks[node.block as usize];
            if st.arenas[blk.arena as usize].stream != *stream {
                let ev = match st.events.pop() {
                    Some(ev) => ev,
                    None => match self.dev.create_event() {
                        Ok(ev) => ev,
                        Err(e) => {
                            st.live.insert_new(ptr.addr(), n);
                            return Err(e);
                        }
                    },
                };
                if let Err(e) = self.dev.record_event(&ev, stream) {
                    st.events.push(ev);
                    st.live.insert_new(ptr.addr(), n);
                    return Err(e.with_op("free_async"));
                }
                st.pending.push((n, ev));
                let s = &mut st.stats;
                s.requested_current -= node.requested;
                s.live_ranges -= 1;
                s.pending_frees += 1;
                return Ok(());
            }
            let s = &mut st.stats;
            s.requested_current -= node.requested;
            s.live_ranges -= 1;
            st.nodes[n as usize].requested = 0;
            let n = if blk.small {
                let hot = &mut st.arenas[blk.arena as usize].hot;
                hot.push((n, node.size));
                if hot.len() <= HOT {
                    return Ok(());
                }
                hot.remove(0).0
            } else {
                n
            };
            if let Some(b) = st.free_node(n) {
                self.emptied(&mut st, b)?;
            }
            return Ok(());
        }
        let Some(&(requested, rounded)) = st.direct.get(&ptr.addr()) else {
            return Err(Error::invalid_pointer(
                "free_async",
                format!("{ptr} is not the start of a live allocation of this small-block layer"),
            ));
        };
        // SAFETY: `ptr` is a live allocation the layer passed through from `self.pool`; the
        // caller owes that its uses are ordered before this free.
        unsafe { self.pool.free_async(ptr, stream)? };
        st.direct.remove(&ptr.addr());
        let s = &mut st.stats;
        s.requested_current -= requested;
        s.held_current -= rounded;
        Ok(())
    }

    /// Gives the layer's empty blocks back to the pool, then trims the pool (see
    /// [`MemPool::trim_to`]).
    fn trim_to(&self, min_bytes_to_keep: u64) -> Result<()> {
        self.release_empty()?;
        self.pool.trim_to(min_bytes_to_keep)
    }

    fn get_attr_raw(&self, attr: AttrId) -> Result<RawAttrValue> {
        self.pool.get_attr_raw(attr)
    }

    fn set_attr_raw(&self, attr: AttrId, value: RawAttrValue) -> Result<()> {
        self.pool.set_attr_raw(attr, value)
    }

    fn size(&self) -> u64 {
        self.pool.size()
    }

    /// The pool's counters (the layer's own are [`SmallBlocks::small_stats`]).
    fn stats_snapshot(&self) -> Result<PoolStats> {
        self.pool.stats_snapshot()
    }
}
