//! `mempool_init`, `mempool_empty_cache`, `mempool_empty_cache_checked`,
//! `mempool_set_memory_fraction` and `mempool_on_oom`: the optional hooks.

use crate::error::{AllocError, check_fraction};
use crate::ffi::guard;
use crate::state::{OomObserver, allocator};
use std::ffi::{c_int, c_void};

/// `void mempool_init(int device_count)`: PyTorch's and torch_npu's init hook. Starts the
/// library (which any first call does anyway) and bounds the devices to
/// `0..device_count`. A count below 1, above 64, or below a device in use already is
/// refused, with the reason in `mempool_last_error()`.
#[unsafe(no_mangle)]
pub extern "C" fn mempool_init(device_count: c_int) {
    guard("mempool_init", (), || allocator()?.set_count(device_count.into()));
}

/// `void mempool_empty_cache(void)`: PyTorch's reset hook (`torch.cuda.empty_cache`).
/// [`mempool_empty_cache_checked`] with `check_error` true.
#[unsafe(no_mangle)]
pub extern "C" fn mempool_empty_cache() {
    mempool_empty_cache_checked(true);
}

/// `void mempool_empty_cache_checked(bool check_error)`: torch_npu's reset hook. On each
/// device in use: waits for the device's work, frees what waited for streams named by
/// record-stream, gives the small-block layer's empty blocks back and trims the pool to
/// its USED, so that every cached byte no live allocation holds goes back to the device.
/// With `check_error` the first failing step stops it; without, the remaining steps and
/// devices still run. Failures are in `mempool_last_error()` either way.
#[unsafe(no_mangle)]
pub extern "C" fn mempool_empty_cache_checked(check_error: bool) {
    guard("mempool_empty_cache", (), || {
        let mut first: Option<AllocError> = None;
        for (_, dev) in allocator()?.opened() {
            match dev.empty_cache(check_error) {
                Err(e) if check_error => return Err(e),
                Err(e) => {
                    first.get_or_insert(e);
                }
                Ok(()) => {}
            }
        }
        first.map_or(Ok(()), Err)
    });
}

/// `void mempool_set_memory_fraction(double fraction, int device)`: caps `device`'s pool at
/// `fraction` of the device's memory (PyTorch's `set_per_process_memory_fraction`): an
/// allocation that would take the pool's RESERVED past the cap goes through the
/// out-of-memory path and fails if it still does not fit. A fraction that is NaN or
/// outside (0, 1], or an unknown device, changes nothing and is described by
/// `mempool_last_error()`.
#[unsafe(no_mangle)]
pub extern "C" fn mempool_set_memory_fraction(fraction: f64, device: c_int) {
    guard("mempool_set_memory_fraction", (), || {
        let f = check_fraction(fraction)?;
        allocator()?.device(device.into())?.set_fraction(f);
        Ok::<(), AllocError>(())
    });
}

/// `int mempool_on_oom(mempool_oom_observer observer, void *user_data)`: registers an
/// observer called (on the allocating thread, before `mempool_alloc` returns NULL) when an
/// allocation fails for lack of memory after the retry. 0 on success; -1 for NULL or when
/// 16 are registered already.
///
/// # Safety
///
/// `observer` is NULL or a function of the declared type that may be called from any
/// thread that allocates, with `user_data`; it must not unwind and must not allocate or
/// free through the library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mempool_on_oom(observer: Option<OomObserver>, user_data: *mut c_void) -> c_int {
    guard("mempool_on_oom", -1, || {
        let f = observer.ok_or_else(|| AllocError::Invalid("observer is NULL".into()))?;
        allocator()?.add_observer(f, user_data as usize)?;
        Ok::<c_int, AllocError>(0)
    })
}
