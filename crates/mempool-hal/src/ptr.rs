//! Device pointers and host buffers.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// An address in device memory, as handed out by a pool.
///
/// It is opaque to the host: host code never dereferences it (the emulator's checked
/// copies are the only readers). It is `Copy`, so it can be kept in framework tables;
/// keeping it does not keep the memory alive.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DevicePtr(u64);

impl DevicePtr {
    /// The null device address. No pool ever hands it out.
    pub const NULL: DevicePtr = DevicePtr(0);

    /// Wraps a raw device address (for FFI backends and tests). Making a pointer is safe;
    /// only freeing one is `unsafe`.
    pub const fn from_addr(addr: u64) -> Self {
        DevicePtr(addr)
    }

    /// The raw address.
    pub const fn addr(self) -> u64 {
        self.0
    }

    /// Whether this is [`DevicePtr::NULL`].
    pub const fn is_null(self) -> bool {
        self.0 == 0
    }

    /// The address `bytes` further on, or `None` on overflow.
    pub const fn checked_add(self, bytes: u64) -> Option<DevicePtr> {
        match self.0.checked_add(bytes) {
            Some(a) => Some(DevicePtr(a)),
            None => None,
        }
    }
}

impl fmt::Debug for DevicePtr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DevicePtr({:#x})", self.0)
    }
}

impl fmt::Display for DevicePtr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

/// A host buffer that an asynchronous device-to-host copy writes into.
///
/// The buffer is shared: the backend keeps a handle until the copy has run, so the
/// destination cannot disappear under queued work. Read it after synchronizing.
#[derive(Clone, Default)]
pub struct HostBuffer {
    inner: Arc<Mutex<Vec<u8>>>,
}

impl HostBuffer {
    /// A zero-filled buffer of `len` bytes.
    pub fn new(len: usize) -> Self {
        HostBuffer { inner: Arc::new(Mutex::new(vec![0; len])) }
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether it holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A copy of its current contents.
    pub fn to_vec(&self) -> Vec<u8> {
        self.lock().clone()
    }

    /// Locks the contents for reading or writing (backends write through this).
    pub fn lock(&self) -> MutexGuard<'_, Vec<u8>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl From<Vec<u8>> for HostBuffer {
    fn from(v: Vec<u8>) -> Self {
        HostBuffer { inner: Arc::new(Mutex::new(v)) }
    }
}

impl fmt::Debug for HostBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostBuffer").field("len", &self.len()).finish()
    }
}
