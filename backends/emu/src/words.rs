//! The words of device memory that value writes and waits use (`signal.rs`), kept by the
//! platform.

use crate::stream::{Joined, StreamShared};
use crate::sync::{Arc, Condvar, Mutex};
use std::collections::{BTreeMap, HashMap};

/// What a word's watch knows of the value writes to it.
#[derive(Default)]
pub(crate) struct Word {
    /// Value writes enqueued.
    pub(crate) enqueued: u64,
    /// Value writes that have run, and the last one's value and order.
    pub(crate) done: u64,
    pub(crate) last: Option<(u64, Joined)>,
    /// Value writes enqueued that have not run: their value, stream, position and order.
    pub(crate) pending: BTreeMap<u64, (u64, Arc<StreamShared>, u64, Joined)>,
}

/// The words of memory value writes and waits use, by address.
pub(crate) struct Words {
    pub(crate) map: Mutex<HashMap<u64, Word>>,
    pub(crate) cv: Condvar,
}

impl Default for Words {
    fn default() -> Self {
        Words { map: Mutex::new(HashMap::new()), cv: Condvar::new() }
    }
}
