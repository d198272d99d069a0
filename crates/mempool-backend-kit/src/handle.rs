//! The liveness of a backend's handles (streams, events, pools): the raw value the driver
//! or runtime gave, the device instance it belongs to, and whether it was destroyed,
//! shared by the handle's clones, so that a destroyed handle is never passed to the driver
//! or runtime again (on hardware that would be undefined behaviour).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A handle's liveness, shared by its clones.
#[derive(Debug)]
pub struct Handle {
    raw: usize,
    instance: u64,
    alive: AtomicBool,
}

impl Handle {
    /// A live handle of `raw` (kept as an address) in device instance `instance`.
    pub fn new<T>(raw: *mut T, instance: u64) -> Arc<Handle> {
        Arc::new(Handle { raw: raw as usize, instance, alive: AtomicBool::new(true) })
    }

    /// The raw value, as an address.
    #[inline]
    pub fn raw(&self) -> usize {
        self.raw
    }

    /// Whether the handle belongs to device instance `instance` and is not destroyed.
    #[inline]
    pub fn is_live_in(&self, instance: u64) -> bool {
        self.instance == instance && self.alive.load(Ordering::Acquire)
    }

    /// Marks the handle destroyed if it is a live handle of device instance `instance`, so
    /// that no clone passes it on again; `false` if it was not (destroyed already, or
    /// foreign).
    #[inline]
    pub fn retire(&self, instance: u64) -> bool {
        self.instance == instance && self.alive.swap(false, Ordering::AcqRel)
    }
}

/// Implements identity equality and hashing for a handle newtype over `Arc<Handle>`:
/// clones name the same object, so two handles are equal when they name one object.
#[macro_export]
macro_rules! identity {
    ($t:ident) => {
        impl PartialEq for $t {
            fn eq(&self, other: &Self) -> bool {
                ::std::sync::Arc::ptr_eq(&self.0, &other.0)
            }
        }

        impl Eq for $t {}

        impl ::std::hash::Hash for $t {
            fn hash<H: ::std::hash::Hasher>(&self, state: &mut H) {
                (::std::sync::Arc::as_ptr(&self.0) as usize).hash(state);
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, RandomState};

    #[derive(Debug, Clone)]
    struct Thing(Arc<Handle>);

    identity!(Thing);

    #[test]
    fn liveness_and_retirement() {
        let h = Handle::new(std::ptr::null_mut::<u8>().wrapping_add(0x40), 7);
        assert_eq!(h.raw(), 0x40);
        assert!(h.is_live_in(7));
        assert!(!h.is_live_in(8));
        assert!(!h.retire(8), "a foreign instance cannot retire it");
        assert!(h.retire(7));
        assert!(!h.is_live_in(7));
        assert!(!h.retire(7), "retired once");
    }

    #[test]
    fn clones_are_one_handle() {
        let a = Thing(Handle::new(std::ptr::null_mut::<u8>().wrapping_add(0x40), 1));
        let b = Thing(Handle::new(std::ptr::null_mut::<u8>().wrapping_add(0x40), 1));
        assert_eq!(a, a.clone());
        assert_ne!(a, b, "the same raw value twice is two handles");
        let hasher = RandomState::new();
        assert_eq!(hasher.hash_one(&a), hasher.hash_one(a.clone()), "hashing agrees with equality");
    }
}
