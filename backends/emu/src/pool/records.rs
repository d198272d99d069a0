//! What the pool records about a block, for the reuse rules and the stream-order checker
//! (contract §1, §11): a cached block's free tags ([`Cached`]), a live allocation's origin
//! ([`Live`]) and the accesses enqueued on it ([`Access`]). Pure data; `blocks.rs` keeps
//! them with the nodes.

use crate::clock::{Clock, HostClock};
use std::sync::Arc;

/// A freed block's tags: where its free is ordered.
#[derive(Debug, Clone)]
pub(crate) struct Cached {
    /// The freeing stream's id (its bin holds the stream).
    pub(crate) stream: u64,
    /// The free's position on that stream (the later one for merged blocks).
    pub(crate) pos: u64,
    /// The last real operation before the free: the free has executed once it completed.
    pub(crate) dep_real: u64,
    /// What the free is ordered after on other streams (the freeing stream's clock at
    /// the free), so an inserted dependency orders the allocating stream after all of it.
    pub(crate) clock: Arc<Clock>,
}

/// A live allocation: where it was allocated.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Live {
    /// The allocating stream; [`SYNC_OWNER`] for a synchronous allocation.
    pub(crate) owner: u64,
    /// The last position of that stream before the allocation: the allocation comes
    /// right after it, so work is ordered after the allocation when it is ordered after
    /// a later position.
    pub(crate) pos: u64,
}

impl Live {
    /// Whether a call now on stream `on` whose clock is `clock` (`None`, `None`: a
    /// synchronous call of the host) is ordered after this allocation (contract §1):
    /// a synchronous allocation, the same stream, or a later point of the allocating
    /// stream that the stream's clock or the host's observations cover.
    pub(crate) fn ordered_before(&self, on: Option<u64>, clock: Option<&Clock>, host: &HostClock) -> bool {
        self.owner == SYNC_OWNER
            || on == Some(self.owner)
            || clock.is_some_and(|c| c.get(self.owner) > self.pos)
            || host.get(self.owner) > self.pos
    }
}

/// The owner of a synchronous allocation (no stream has id 0): complete when the call
/// returned, so ordered before everything enqueued afterwards.
pub(crate) const SYNC_OWNER: u64 = 0;

/// An access enqueued on a live allocation (for the stream-order checker), whether or not
/// it has run: executed work orders nothing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Access {
    /// The stream and the position of the operation.
    pub(crate) stream: u64,
    pub(crate) pos: u64,
    /// The operation's name.
    pub(crate) op: &'static str,
    /// The range it touches and whether it writes.
    pub(crate) addr: u64,
    pub(crate) len: u64,
    pub(crate) write: bool,
}

impl Access {
    /// Whether this access covers `other` (same stream, a range at least as large, and a
    /// write when `other` writes): later accesses on a stream are ordered after earlier
    /// ones, so the checker needs only the last one of each.
    pub(crate) fn covers(&self, other: &Access) -> bool {
        self.stream == other.stream
            && self.addr <= other.addr
            && other.addr + other.len <= self.addr + self.len
            && (self.write || !other.write)
    }
}
