//! `aclInit`, `aclFinalize` and `aclFinalizeReference`: the process's lifecycle.

use super::prelude::*;

/// `aclError aclInit(const char *configPath)`: NULL, an empty path or a readable file
/// (whose content is not read). Again before `aclFinalize`: 100002; a path that is not a
/// readable file: 100003.
///
/// # Safety
///
/// See the module docs; `configPath` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclInit(config: *const c_char) -> aclError {
    const OP: &str = "aclInit";
    ffi(OP, || {
        let mut l = lifecycle();
        if l.initialized {
            // CANN counts the repeat as one more reference (`aclFinalizeReference`).
            l.references += 1;
            return Err(err(
                sys::ACL_ERROR_REPEAT_INITIALIZE,
                OP,
                "aclInit was already called (call aclFinalize first)",
            ));
        }
        if !config.is_null() {
            // SAFETY: non-null, and the caller passes a NUL-terminated string.
            let path = unsafe { CStr::from_ptr(config) };
            let bytes = path.to_bytes();
            if !bytes.is_empty() {
                let p = std::path::Path::new(std::ffi::OsStr::from_bytes(bytes));
                if !p.is_file() || std::fs::File::open(p).is_err() {
                    return Err(err(
                        sys::ACL_ERROR_INVALID_FILE,
                        OP,
                        format!("the configuration path {} is not a readable file", p.display()),
                    ));
                }
            }
        }
        shim(OP)?;
        *l = Lifecycle { initialized: true, finalized: false, references: 1 };
        Ok(())
    })
}

/// `aclError aclFinalize(void)`: finalizes whatever the init reference count, and clears
/// it; again without an `aclInit` in between: 100037. The library keeps working
/// afterwards (every call works before `aclInit` too).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclFinalize() -> aclError {
    const OP: &str = "aclFinalize";
    ffi(OP, || {
        let mut l = lifecycle();
        if l.finalized {
            return Err(err(sys::ACL_ERROR_REPEAT_FINALIZE, OP, "aclFinalize was already called (no aclInit since)"));
        }
        shim(OP)?;
        *l = Lifecycle { initialized: false, finalized: true, references: 0 };
        Ok(())
    })
}

/// `aclError aclFinalizeReference(uint64_t *refCount)`: the counted finalize, as CANN
/// has it. Every `aclInit` (a repeat answering 100002 too) counts one reference; this
/// takes one away, and finalizes (as `aclFinalize`) when it takes the last. With no
/// reference left: 100037. `refCount`, when not NULL, receives the references left
/// (0 after the call that finalized, or after a refused one).
///
/// # Safety
///
/// See the module docs; `refCount` is NULL or writable for one `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclFinalizeReference(ref_count: *mut u64) -> aclError {
    const OP: &str = "aclFinalizeReference";
    ffi(OP, || {
        let mut l = lifecycle();
        let write = |n: u64| {
            if !ref_count.is_null() {
                // SAFETY: non-null, and the caller passes a writable `uint64_t`.
                unsafe { ref_count.write(n) };
            }
        };
        if l.references == 0 {
            write(0);
            return Err(err(
                sys::ACL_ERROR_REPEAT_FINALIZE,
                OP,
                "no aclInit reference is left (finalized already, or never initialized)",
            ));
        }
        if l.references > 1 {
            l.references -= 1;
            write(l.references);
            return Ok(());
        }
        shim(OP)?;
        *l = Lifecycle { initialized: false, finalized: true, references: 0 };
        write(0);
        Ok(())
    })
}
