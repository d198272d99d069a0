//! The memory of one device, shared by its pools (contract §2): RESERVED summed over every
//! pool of the device, the synchronous allocations' hidden pool included, never exceeds
//! it. One atomic counter per device, touched only where a pool's RESERVED changes: a
//! fresh carve (rule f), a release (at synchronization or by `trim_to`) and a destroy.
//! Reuse of a cached block (the same-stream cycle among others) reserves nothing and
//! never touches it.

use crate::sync::{AtomicU64, Ordering};

/// One device's memory and what its pools reserve of it.
#[derive(Debug)]
pub(crate) struct DeviceMemory {
    /// The device's memory (`Config::device_memory`).
    total: u64,
    /// RESERVED summed over the device's live pools.
    reserved: AtomicU64,
}

impl DeviceMemory {
    pub(crate) fn new(total: u64) -> DeviceMemory {
        DeviceMemory { total, reserved: AtomicU64::new(0) }
    }

    /// Reserves `len` bytes if the device has them; otherwise `Err` with what it has left.
    pub(crate) fn reserve(&self, len: u64) -> Result<(), u64> {
        self.reserved
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |r| r.checked_add(len).filter(|&n| n <= self.total))
            .map(|_| ())
            .map_err(|r| self.total.saturating_sub(r))
    }

    /// Gives back `len` bytes reserved earlier.
    pub(crate) fn unreserve(&self, len: u64) {
        let before = self.reserved.fetch_sub(len, Ordering::AcqRel);
        debug_assert!(before >= len, "a device gives back only what its pools reserved");
    }

    /// What the device can still reserve.
    pub(crate) fn free(&self) -> u64 {
        self.total.saturating_sub(self.reserved.load(Ordering::Acquire))
    }
}

#[cfg(test)]
mod tests {
    use super::DeviceMemory;

    #[test]
    fn reserves_up_to_the_total_and_no_further() {
        let m = DeviceMemory::new(10);
        assert_eq!(m.reserve(6), Ok(()));
        assert_eq!(m.reserve(5), Err(4));
        assert_eq!(m.reserve(4), Ok(()));
        assert_eq!((m.free(), m.reserve(1)), (0, Err(0)));
        assert_eq!(m.reserve(u64::MAX), Err(0));
        m.unreserve(6);
        assert_eq!(m.free(), 6);
    }
}
