//! The device's small-block layer as a stream's external allocator (CANN's registry,
//! contract §16): `mempool_register_stream_allocator` and its unregister.

use super::{Backend, DevicePool};
use crate::error::AllocError;
use std::hash::Hash;
use std::sync::{Arc, PoisonError};

/// The answer of a backend without a registry.
pub(super) fn no_registry() -> AllocError {
    AllocError::Unsupported(
        "the backend has no external-allocator registry (only CANN's runtime has one: MEMPOOL_ALLOC_BACKEND=ascend)"
            .into(),
    )
}

impl<D: Backend> DevicePool<D>
where
    D::Stream: Eq + Hash,
{
    /// Registers the layer on the raw stream `raw` (not NULL: CANN's registry has no
    /// default stream). A registration the library made before on the stream is replaced.
    pub(super) fn register_allocator_here(&self, raw: usize) -> Result<(), AllocError> {
        if !D::ALLOCATOR_REGISTRY {
            return Err(no_registry());
        }
        if raw == 0 {
            return Err(AllocError::Invalid(
                "stream is NULL: CANN's allocator registry takes a stream the framework created".into(),
            ));
        }
        let s = {
            let mut inner = self.lock();
            self.stream(&mut inner, raw)?
        };
        let guard = self.dev.register_allocator(&s, Arc::clone(&self.layer))?;
        // The previous guard (if any) goes after the new registration replaced it: it no
        // longer unregisters anything, and only frees the blocks it still had.
        let old = self.registrations.lock().unwrap_or_else(PoisonError::into_inner).insert(raw, guard);
        drop(old);
        Ok(())
    }

    /// Drops the library's registration on `raw`; `false` when it has none.
    pub(super) fn unregister_allocator_here(&self, raw: usize) -> Result<bool, AllocError> {
        let guard = self.registrations.lock().unwrap_or_else(PoisonError::into_inner).remove(&raw);
        Ok(guard.is_some())
    }
}
