//! The process-wide allocator: the backend chosen at the first call, the devices opened
//! at their first use, the device count `mempool_init` gave, and the out-of-memory
//! observers.

use crate::backend::{Opened, choose};
use crate::config::Settings;
use crate::device::Pool;
use crate::error::AllocError;
use crate::stats::Stats;
use std::ffi::{CString, c_int, c_void};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

/// The most devices the library serves (indexes 0 to 63).
pub const MAX_DEVICES: usize = 64;

/// The most out-of-memory observers.
pub const MAX_OBSERVERS: usize = 16;

/// `mempool_oom_observer`: `void (*)(int device, size_t size, const mempool_alloc_stats
/// *stats, void *user_data)`.
pub type OomObserver = unsafe extern "C" fn(device: c_int, size: usize, stats: *const Stats, user_data: *mut c_void);

/// The process-wide allocator.
pub(crate) struct Allocator {
    opened: Opened,
    /// `mempool_backend`'s answer.
    pub(crate) description: CString,
    settings: Settings,
    devices: Vec<OnceLock<Box<dyn Pool>>>,
    /// Serializes the opening of devices.
    opening: Mutex<()>,
    /// The device count `mempool_init` gave; -1: none.
    count: AtomicI64,
    observers: Mutex<Vec<(OomObserver, usize)>>,
}

static ALLOCATOR: OnceLock<Result<Allocator, String>> = OnceLock::new();

/// The allocator, started at the first call from the environment. A start that failed
/// fails every call with the same reason.
pub(crate) fn allocator() -> Result<&'static Allocator, AllocError> {
    ALLOCATOR
        .get_or_init(|| {
            start().map_err(|e| match e {
                AllocError::Start(why) => why,
                e => e.to_string(),
            })
        })
        .as_ref()
        .map_err(|why| AllocError::Start(why.clone()))
}

fn start() -> Result<Allocator, AllocError> {
    let settings = Settings::from_env()?;
    let (opened, description) = choose(&settings)?;
    if let Some(n) = settings.history {
        crate::history::set(n);
    }
    Ok(Allocator {
        opened,
        description: CString::new(description.replace('\0', " ")).unwrap_or_default(),
        settings,
        devices: (0..MAX_DEVICES).map(|_| OnceLock::new()).collect(),
        opening: Mutex::new(()),
        count: AtomicI64::new(-1),
        observers: Mutex::new(Vec::new()),
    })
}

impl Allocator {
    /// Device `device`, opened at its first use.
    pub(crate) fn device(&self, device: i64) -> Result<&dyn Pool, AllocError> {
        let count = self.count.load(Ordering::Relaxed);
        if device < 0 || device >= MAX_DEVICES as i64 || (count >= 0 && device >= count) {
            let why = if count >= 0 {
                format!("; mempool_init gave {count} devices")
            } else {
                format!("; the library serves devices 0 to {}", MAX_DEVICES - 1)
            };
            return Err(AllocError::UnknownDevice { device, why });
        }
        let slot = &self.devices[device as usize];
        if let Some(p) = slot.get() {
            return Ok(p.as_ref());
        }
        let _one = self.opening.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(p) = slot.get() {
            return Ok(p.as_ref());
        }
        let p = self.opened.open(device as u32, &self.settings)?;
        Ok(slot.get_or_init(|| p).as_ref())
    }

    /// The devices opened so far, with their indexes.
    pub(crate) fn opened(&self) -> impl Iterator<Item = (i64, &dyn Pool)> {
        self.devices.iter().enumerate().filter_map(|(i, s)| s.get().map(|p| (i as i64, p.as_ref())))
    }

    /// Records the device count of `mempool_init`.
    pub(crate) fn set_count(&self, count: i64) -> Result<(), AllocError> {
        if count <= 0 || count > MAX_DEVICES as i64 {
            return Err(AllocError::Invalid(format!("device count {count} is not in 1..={MAX_DEVICES}")));
        }
        if let Some((i, _)) = self.opened().find(|&(i, _)| i >= count) {
            return Err(AllocError::Invalid(format!("device count {count}, but device {i} is in use already")));
        }
        self.count.store(count, Ordering::Relaxed);
        Ok(())
    }

    /// Registers an out-of-memory observer.
    pub(crate) fn add_observer(&self, f: OomObserver, user: usize) -> Result<(), AllocError> {
        let mut o = self.observers.lock().unwrap_or_else(PoisonError::into_inner);
        if o.len() >= MAX_OBSERVERS {
            return Err(AllocError::Invalid(format!("{MAX_OBSERVERS} observers are registered already")));
        }
        o.push((f, user));
        Ok(())
    }

    /// Calls every observer for a failed allocation of `size` bytes on `device`.
    pub(crate) fn notify_oom(&self, device: i64, size: usize, stats: &Stats) {
        let observers = self.observers.lock().unwrap_or_else(PoisonError::into_inner).clone();
        for (f, user) in observers {
            // SAFETY: `f` was registered through `mempool_on_oom` as a function of this
            // type; `stats` lives across the call; `user` is the caller's own pointer.
            unsafe { f(device as c_int, size, stats, user as *mut c_void) };
        }
    }
}
