//! Host registration ([contract §15](mempool_hal::contract::host_register)): the host
//! ranges the program registered, per platform, and [`HostRegistration`] for the
//! [`Emulator`].
//!
//! - **The table.** Each registration is the pair (start, length) the program gave, kept
//!   by start address; ranges never overlap: a registration that overlaps one already
//!   there (the same range, a part of it, or one around it) is refused with 507910
//!   (`ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED`). Two registrations of disjoint byte
//!   ranges that share a page both succeed, as CUDA's driver judges overlap by bytes.
//!   Unregistering names the start: an interior address, an address never registered and
//!   a second unregister are refused with 507911 (`ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED`).
//! - **The device address.** Emulator memory is host memory, so the device address of a
//!   registered range is its host address: [`HostRegistration::register_host`] answers the
//!   pointer itself.
//! - **Copies.** A registered range is pinned memory. A raw copy whose device side names a
//!   registered range ([`Emulator::memcpy_raw_async`], the trait's device-to-device copy)
//!   reads or writes the host bytes, queued in stream order like any copy; the drop-in
//!   libraries treat a host side inside a registered range as they treat their own
//!   page-locked memory (the copy is queued, not done before the call returns), through
//!   [`Emulator::registered_host`]. Once unregistered, the range is pageable again, and its
//!   address is no device address any more.
//! - **Unregistering under queued work.** The memory is the program's: unregistering takes
//!   the range out of the table at once and succeeds, and a copy already queued on it still
//!   runs on the same bytes (the emulator never maps or unmaps anything for a
//!   registration, so nothing is pulled from under the copy). The program must keep the
//!   memory valid until that copy has run (the trait's safety rule); the runtimes document
//!   nothing else.
//! - **Read-only.** A range registered read-only may be a copy's source through its device
//!   address, never its destination (107000).

mod emulator;

use crate::cabi::HostBlock;
use crate::sync::{Arc, PoisonError, RwLock};
use std::collections::BTreeMap;

/// One registered range.
struct Entry {
    block: Arc<HostBlock>,
    read_only: bool,
}

/// The registered host ranges of one platform, by start address (disjoint).
#[derive(Default)]
pub(crate) struct HostRegistrations {
    map: RwLock<BTreeMap<usize, Entry>>,
}

/// A registered range found by address ([`HostRegistrations::find`]).
pub(crate) struct Found {
    pub(crate) block: Arc<HostBlock>,
    pub(crate) read_only: bool,
    /// Whether the range asked for runs past the registration's end.
    pub(crate) overrun: bool,
}

impl HostRegistrations {
    /// The registration holding `addr`, and whether `[addr, addr + len)` runs past its end.
    pub(crate) fn find(&self, addr: usize, len: usize) -> Option<Found> {
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        let (_, e) = map.range(..=addr).next_back()?;
        let (base, size) = (e.block.addr(), e.block.size());
        let into = addr - base;
        (into < size).then(|| Found { block: Arc::clone(&e.block), read_only: e.read_only, overrun: len > size - into })
    }

    /// Registers `[addr, addr + len)`; the start and length of the registration it
    /// overlaps, if any (then nothing changes).
    fn insert(
        &self,
        addr: usize,
        layout: std::alloc::Layout,
        read_only: bool,
    ) -> std::result::Result<(), (usize, usize)> {
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        let end = addr + layout.size();
        let below = map.range(..end).next_back().map(|(_, e)| (e.block.addr(), e.block.size()));
        if let Some((b, n)) = below.filter(|&(b, n)| b + n > addr) {
            return Err((b, n));
        }
        map.insert(addr, Entry { block: Arc::new(HostBlock::registered(addr, layout)), read_only });
        Ok(())
    }

    /// Unregisters the range starting at `addr`; `Err` with the start of the range
    /// `addr` lies inside, if any, when none starts there.
    fn remove(&self, addr: usize) -> std::result::Result<(), Option<usize>> {
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        if map.remove(&addr).is_some() {
            return Ok(());
        }
        let inside = map.range(..addr).next_back().filter(|(_, e)| addr - e.block.addr() < e.block.size());
        Err(inside.map(|(b, _)| *b))
    }
}
