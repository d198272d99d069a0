//! The driver table: every function name of the CUDA driver API the library is written
//! from (CUDA 13.5, [`TABLE_VERSION`]), with every versioned variant, the CUDA version that
//! introduced it, and its stream flavour. `cuGetProcAddress` answers from it, and every
//! symbol of it is exported, so a loader that resolves every name of the driver at once
//! (cudarc up to 0.19.4) or through `cuGetProcAddress` (NVIDIA's `cuda-bindings`) starts.
//!
//! Each row is one of three kinds ([`Kind`]):
//!
//! - **implemented**: a function of [`crate::exports`]. Implementing a call means
//!   implementing every variant the table can hand out for it: its `_v2`, `_v3`, … and its
//!   `_ptds`/`_ptsz` twins, where the NULL stream is the calling thread's per-thread default
//!   stream (a unit test holds every implemented base name to that);
//! - **legacy**: the first variant of an implemented call whose prototype has 32-bit device
//!   pointers or sizes (`cuMemAlloc` before CUDA 3.2 became `cuMemAlloc_v2`). Device
//!   pointers here are host addresses, which do not fit 32 bits, so these answer
//!   `CUDA_ERROR_NOT_SUPPORTED` naming the variant to call. `cuGetProcAddress` hands one out
//!   only to a request for a CUDA version older than 3.2;
//! - **stub**: a function this library does not emulate (textures, modules and kernels,
//!   graphs, graphics interop, ...). It answers `CUDA_ERROR_NOT_SUPPORTED` (801), sets the
//!   calling thread's last message to its own name, and never reads its arguments (it is
//!   defined with none: under the C calling convention the caller's arguments are simply
//!   not looked at).
//!
//! The rows are in [`rows`](self) (one line per base name, sorted), written from the
//! driver's headers: facts of its ABI, not its code.

use crate::ffi::{CUDA_ERROR_NOT_SUPPORTED, CUresult, err, ffi};
use std::ffi::c_void;

/// The CUDA version the table is written from, which `cuDriverGetVersion` reports
/// (`1000 × major + 10 × minor`: 13.5).
pub const TABLE_VERSION: i32 = 13050;

/// What the library does with a variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A function of [`crate::exports`].
    Implemented,
    /// The 32-bit-pointer first variant of an implemented call: `CUDA_ERROR_NOT_SUPPORTED`.
    Legacy,
    /// A function this library does not emulate: `CUDA_ERROR_NOT_SUPPORTED`.
    Stub,
}

/// Which default stream a variant's NULL stream is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavour {
    /// The legacy default stream (the plain names).
    Default,
    /// `_ptds`: a call without a stream argument that works on the per-thread default
    /// stream (the synchronous copies and memsets).
    Ptds,
    /// `_ptsz`: a call with a stream argument whose NULL is the per-thread default stream.
    Ptsz,
}

impl Flavour {
    /// Whether this is one of the per-thread default-stream twins.
    pub fn per_thread(self) -> bool {
        !matches!(self, Flavour::Default)
    }
}

/// A function's address in this library, shareable between threads (it is never written).
#[derive(Clone, Copy, Debug)]
pub struct Address(*const c_void);

// SAFETY: the address of a function of this library: immutable, and valid for the
// library's lifetime on every thread.
unsafe impl Sync for Address {}
// SAFETY: as above.
unsafe impl Send for Address {}

impl Address {
    /// The address, as `cuGetProcAddress` writes it.
    pub fn get(self) -> *const c_void {
        self.0
    }
}

/// One variant of a driver function.
#[derive(Debug)]
pub struct Variant {
    /// The base name programs ask `cuGetProcAddress` for (`cuMemAlloc`).
    pub base: &'static str,
    /// The exported symbol (`cuMemAlloc_v2`).
    pub symbol: &'static str,
    /// The CUDA version that introduced it (`3020`).
    pub version: i32,
    /// Its stream flavour.
    pub flavour: Flavour,
    /// What the library does with it.
    pub kind: Kind,
    /// Its address in this library.
    pub address: Address,
}

/// Builds the rows' stubs and the table from `base { symbol version flavour kind, ... }`.
macro_rules! driver_table {
    ($( $base:ident { $( $sym:ident $version:literal $flavour:ident $kind:ident ),+ } )+) => {
        $( $( driver_table!(@function $kind $sym); )+ )+

        /// Every variant, sorted by base name (then flavour and version).
        pub(super) static ROWS: &[super::Variant] = &[
            $( $( super::Variant {
                base: stringify!($base),
                symbol: stringify!($sym),
                version: $version,
                flavour: driver_table!(@flavour $flavour),
                kind: driver_table!(@kind $kind),
                address: super::Address(driver_table!(@address $kind $sym)),
            }, )+ )+
        ];
    };
    (@function implemented $sym:ident) => {};
    (@function stub $sym:ident) => {
        /// A driver function this library does not emulate.
        #[unsafe(no_mangle)]
        #[allow(non_snake_case)]
        extern "C" fn $sym() -> super::CUresult {
            super::not_emulated(stringify!($sym))
        }
    };
    (@function legacy $sym:ident) => {
        /// A 32-bit-pointer variant of an implemented call.
        #[unsafe(no_mangle)]
        #[allow(non_snake_case)]
        extern "C" fn $sym() -> super::CUresult {
            super::legacy(stringify!($sym))
        }
    };
    (@flavour default) => { super::Flavour::Default };
    (@flavour ptds) => { super::Flavour::Ptds };
    (@flavour ptsz) => { super::Flavour::Ptsz };
    (@kind implemented) => { super::Kind::Implemented };
    (@kind stub) => { super::Kind::Stub };
    (@kind legacy) => { super::Kind::Legacy };
    (@address implemented $sym:ident) => { crate::exports::$sym as *const std::ffi::c_void };
    (@address $other:ident $sym:ident) => { $sym as *const std::ffi::c_void };
}

mod rows;

/// What every stub answers: `CUDA_ERROR_NOT_SUPPORTED`, with its name as the thread's
/// last message.
fn not_emulated(symbol: &'static str) -> CUresult {
    ffi(symbol, || {
        Err(err(CUDA_ERROR_NOT_SUPPORTED, symbol, "this driver function is not emulated by the CPU library"))
    })
}

/// What every legacy variant answers.
fn legacy(symbol: &'static str) -> CUresult {
    ffi(symbol, || {
        Err(err(
            CUDA_ERROR_NOT_SUPPORTED,
            symbol,
            format!(
                "the variant with 32-bit device pointers (before CUDA 3.2) is not supported: call {symbol}_v2 \
                 (cuda.h maps the name onto it)"
            ),
        ))
    })
}

/// Every variant of the table, sorted by base name, then flavour, then version.
pub fn variants() -> &'static [Variant] {
    rows::ROWS
}

/// What [`resolve`] finds for a base name.
#[derive(Clone, Copy, Debug)]
pub enum Lookup {
    /// The variant to hand out.
    Found(&'static Variant),
    /// The name is known, but its first variant is newer than the version asked for
    /// (`CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT`).
    VersionNotSufficient,
    /// No driver function has that base name (`CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND`).
    NotFound,
}

/// The variant of `base` that a client written for CUDA `version` gets, as the driver's
/// `cuGetProcAddress` chooses it: the newest variant not newer than `version`; with
/// `per_thread`, the newest per-thread twin not newer than `version` where the function
/// has one (otherwise the plain variant, as for a call without a stream).
pub fn resolve(base: &[u8], version: i32, per_thread: bool) -> Lookup {
    let rows = variants();
    let start = rows.partition_point(|v| v.base.as_bytes() < base);
    let end = start + rows[start..].partition_point(|v| v.base.as_bytes() == base);
    let of = &rows[start..end];
    if of.is_empty() {
        return Lookup::NotFound;
    }
    let newest =
        |pt: bool| of.iter().filter(|v| v.flavour.per_thread() == pt && v.version <= version).max_by_key(|v| v.version);
    let found = if per_thread { newest(true).or_else(|| newest(false)) } else { newest(false) };
    found.map_or(Lookup::VersionNotSufficient, Lookup::Found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn symbol(base: &str, version: i32, per_thread: bool) -> Option<&'static str> {
        match resolve(base.as_bytes(), version, per_thread) {
            Lookup::Found(v) => Some(v.symbol),
            Lookup::VersionNotSufficient | Lookup::NotFound => None,
        }
    }

    #[test]
    fn the_rows_are_sorted_and_each_symbol_is_there_once() {
        let rows = variants();
        assert!(rows.len() > 700, "{} rows", rows.len());
        for w in rows.windows(2) {
            assert!(w[0].base <= w[1].base, "{} before {}", w[0].base, w[1].base);
        }
        let mut names: Vec<&str> = rows.iter().map(|v| v.symbol).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "a symbol is listed twice");
        assert!(rows.iter().all(|v| v.version <= TABLE_VERSION && v.version >= 2000));
        assert!(rows.iter().all(|v| v.symbol.starts_with(v.base)));
    }

    #[test]
    fn an_implemented_call_implements_every_variant_it_can_be_handed_out_as() {
        let rows = variants();
        for v in rows.iter().filter(|v| v.kind == Kind::Implemented) {
            for other in rows.iter().filter(|o| o.base == v.base) {
                assert_ne!(other.kind, Kind::Stub, "{} is implemented but {} is a stub", v.symbol, other.symbol);
                if other.kind == Kind::Legacy {
                    assert!(
                        other.version < 3020 && other.symbol == other.base,
                        "{} is not a legacy variant",
                        other.symbol
                    );
                }
            }
        }
    }

    #[test]
    fn the_newest_variant_not_newer_than_the_request_is_handed_out() {
        assert_eq!(symbol("cuMemAlloc", 3020, false), Some("cuMemAlloc_v2"));
        assert_eq!(symbol("cuMemAlloc", 3010, false), Some("cuMemAlloc"));
        assert_eq!(symbol("cuMemAlloc", 13050, true), Some("cuMemAlloc_v2"), "no per-thread twin: the plain one");
        assert_eq!(symbol("cuCtxSynchronize", 12080, false), Some("cuCtxSynchronize"));
        assert_eq!(symbol("cuCtxSynchronize", 13000, false), Some("cuCtxSynchronize_v2"));
        assert_eq!(symbol("cuStreamSynchronize", 13000, true), Some("cuStreamSynchronize_ptsz"));
        assert_eq!(symbol("cuStreamSynchronize", 6050, true), Some("cuStreamSynchronize"), "no twin before 7.0");
        assert_eq!(symbol("cuMemcpyHtoD", 12000, true), Some("cuMemcpyHtoD_v2_ptds"));
        assert_eq!(symbol("cuStreamGetCtx", 12000, true), Some("cuStreamGetCtx_ptsz"));
        assert_eq!(symbol("cuStreamGetCtx", 12050, true), Some("cuStreamGetCtx_v2_ptsz"));
        assert_eq!(symbol("cuGetProcAddress", 12000, false), Some("cuGetProcAddress_v2"));
        assert_eq!(symbol("cuEventElapsedTime", 12080, false), Some("cuEventElapsedTime_v2"));
        assert!(matches!(resolve(b"cuMemAllocAsync", 11000, false), Lookup::VersionNotSufficient));
        assert!(matches!(resolve(b"cuMemAlloc_v2", 13000, false), Lookup::NotFound), "symbols are not base names");
        assert!(matches!(resolve(b"cuNoSuchCall", 13000, false), Lookup::NotFound));
        assert!(matches!(resolve(b"", 13000, false), Lookup::NotFound));
    }
}
