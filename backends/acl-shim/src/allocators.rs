//! The external-allocator registry's state: descriptors as checked registry handles, and
//! the registration of each stream handle (contract §16).

use mempool_ascend::sys::{
    aclrtAllocatorAllocAdviseFunc, aclrtAllocatorAllocFunc, aclrtAllocatorFreeFunc, aclrtAllocatorGetAddrFromBlockFunc,
};
use mempool_emu::cabi::{HandleKind, Handles};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// What a descriptor holds; a field never set is `None` (CANN leaves it uninitialized).
#[derive(Clone, Copy, Default)]
pub(crate) struct DescFields {
    /// The allocator object, as an address (0: not set).
    pub(crate) obj: usize,
    pub(crate) alloc: aclrtAllocatorAllocFunc,
    pub(crate) free: aclrtAllocatorFreeFunc,
    pub(crate) advise: aclrtAllocatorAllocAdviseFunc,
    pub(crate) get_addr: aclrtAllocatorGetAddrFromBlockFunc,
}

/// A stream's registration: the descriptor handle as passed, and the fields copied from
/// it at `aclrtAllocatorRegister` (later setters do not change them, as on CANN).
#[derive(Clone, Copy)]
pub(crate) struct Registration {
    pub(crate) desc: usize,
    pub(crate) fields: DescFields,
}

/// The descriptors and the registrations by stream handle.
pub(crate) struct Allocators {
    pub(crate) descs: Handles<Arc<Mutex<DescFields>>>,
    by_stream: Mutex<HashMap<usize, Registration>>,
}

impl Allocators {
    pub(crate) fn new() -> Self {
        Allocators { descs: Handles::new(HandleKind::AllocatorDesc), by_stream: Mutex::new(HashMap::new()) }
    }

    /// The registrations, locked.
    pub(crate) fn by_stream(&self) -> MutexGuard<'_, HashMap<usize, Registration>> {
        self.by_stream.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
