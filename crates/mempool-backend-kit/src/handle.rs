//! The liveness of a backend's handles (streams, events, pools): the raw value the driver
//! or runtime gave, the device instance it belongs to, and whether it was destroyed,
//! shared by the handle's clones, so that a destroyed handle is never passed to the driver
//! or runtime again (on hardware that would be undefined behaviour).
//!
//! A handle is *owned* (the backend created the object and destroys it) or *borrowed*
//! ([`Handle::borrowed`]: other code in the process created it, a framework's stream say,
//! and keeps it; the backend only uses it): a backend refuses to destroy a borrowed
//! handle ([`borrowed_not_destroyed`]) and leaves it usable.

use mempool_hal::{Error, ErrorKind, code};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A handle's liveness, shared by its clones.
#[derive(Debug)]
pub struct Handle {
    raw: usize,
    instance: u64,
    alive: AtomicBool,
    borrowed: bool,
}

impl Handle {
    /// A live handle of `raw` (kept as an address) in device instance `instance`, owned by
    /// the backend.
    pub fn new<T>(raw: *mut T, instance: u64) -> Arc<Handle> {
        Arc::new(Handle { raw: raw as usize, instance, alive: AtomicBool::new(true), borrowed: false })
    }

    /// A live handle of `raw` in device instance `instance` that the backend borrows:
    /// other code created the object and destroys it; the backend never does. Each call
    /// makes a handle of its own (equality of the backends' handle types is identity), even
    /// for the same `raw`.
    pub fn borrowed<T>(raw: *mut T, instance: u64) -> Arc<Handle> {
        Arc::new(Handle { raw: raw as usize, instance, alive: AtomicBool::new(true), borrowed: true })
    }

    /// Whether the handle is borrowed ([`Handle::borrowed`]): not the backend's to destroy.
    #[inline]
    pub fn is_borrowed(&self) -> bool {
        self.borrowed
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

/// The error of destroying a borrowed handle ([`Handle::borrowed`]): `InvalidHandle`,
/// the code of a stale handle (107017; a CUDA backend renumbers it by kind), and the
/// message "a borrowed `what` is not destroyed by the backend ...". The handle stays live.
#[cold]
pub fn borrowed_not_destroyed(op: &'static str, what: &str) -> Error {
    Error::new(
        ErrorKind::InvalidHandle,
        code::ACL_ERROR_RT_INVALID_HANDLE,
        op,
        format!(
            "a borrowed {what} is not destroyed by the backend: the code that created it destroys it (it stays usable)"
        ),
    )
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
    fn a_borrowed_handle_is_live_and_marked() {
        let raw = std::ptr::null_mut::<u8>().wrapping_add(0x80);
        let owned = Handle::new(raw, 3);
        let borrowed = Handle::borrowed(raw, 3);
        assert!(!owned.is_borrowed());
        assert!(borrowed.is_borrowed());
        assert_eq!(borrowed.raw(), 0x80);
        assert!(borrowed.is_live_in(3) && !borrowed.is_live_in(4));
        // Null is a value like any other here (CUDA's legacy default stream).
        let null = Handle::borrowed(std::ptr::null_mut::<u8>(), 3);
        assert_eq!(null.raw(), 0);
        assert!(null.is_live_in(3));
        let a = Thing(Handle::borrowed(raw, 3));
        let b = Thing(Handle::borrowed(raw, 3));
        assert_ne!(a, b, "each borrow is a handle of its own");
        assert_eq!(a, a.clone());
    }

    #[test]
    fn destroying_a_borrowed_handle_is_an_invalid_handle_error() {
        let e = borrowed_not_destroyed("aclrtDestroyStream", "stream");
        assert_eq!((e.kind(), e.code(), e.op()), (ErrorKind::InvalidHandle, 107_017, "aclrtDestroyStream"));
        assert!(e.message().starts_with("a borrowed stream is not destroyed by the backend"), "{e}");
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
