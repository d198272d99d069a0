//! Declarations of CANN's external-allocator registry (`acl/acl_rt_allocator.h`,
//! [contract §16](mempool_hal::contract::allocator_registry)): the handle types, the four
//! callback types and the ten calls. They are optional symbols: a runtime without them
//! still loads, and a call of a missing one answers `NotSupported` naming it.
//!
//! `aclrtAllocatorCreateDesc` returns the descriptor, not an `aclError`, so it stands
//! outside the table ([`fn_aclrtAllocatorCreateDesc`]); the other nine are in
//! [`for_each_acl_allocator_function!`].

use super::{aclError, aclrtStream};
use std::ffi::c_void;

/// `aclrtAllocatorDesc`: a descriptor of an allocator by its callbacks.
pub type aclrtAllocatorDesc = *mut c_void;
/// `aclrtAllocator`: the allocator object handed back to every callback.
pub type aclrtAllocator = *mut c_void;
/// `aclrtAllocatorBlock`: a block the allocator handed out.
pub type aclrtAllocatorBlock = *mut c_void;
/// `aclrtAllocatorAddr`: a device address.
pub type aclrtAllocatorAddr = *mut c_void;

/// `void *(*aclrtAllocatorAllocFunc)(aclrtAllocator allocator, size_t size)`: a block of
/// at least `size` bytes, or NULL.
pub type aclrtAllocatorAllocFunc = Option<unsafe extern "C" fn(allocator: aclrtAllocator, size: usize) -> *mut c_void>;
/// `void (*aclrtAllocatorFreeFunc)(aclrtAllocator allocator, aclrtAllocatorBlock block)`.
pub type aclrtAllocatorFreeFunc = Option<unsafe extern "C" fn(allocator: aclrtAllocator, block: aclrtAllocatorBlock)>;
/// `void *(*aclrtAllocatorAllocAdviseFunc)(aclrtAllocator allocator, size_t size,
/// aclrtAllocatorAddr addr)`: a block placed at `addr` if the allocator can, or NULL.
pub type aclrtAllocatorAllocAdviseFunc =
    Option<unsafe extern "C" fn(allocator: aclrtAllocator, size: usize, addr: aclrtAllocatorAddr) -> *mut c_void>;
/// `void *(*aclrtAllocatorGetAddrFromBlockFunc)(aclrtAllocatorBlock block)`: the device
/// address of a block.
pub type aclrtAllocatorGetAddrFromBlockFunc = Option<unsafe extern "C" fn(block: aclrtAllocatorBlock) -> *mut c_void>;

/// `aclrtAllocatorDesc aclrtAllocatorCreateDesc(void)` (it returns the descriptor, NULL
/// when it cannot be made).
pub type fn_aclrtAllocatorCreateDesc = unsafe extern "C" fn() -> aclrtAllocatorDesc;

/// The registry's calls that return an `aclError`, as [`for_each_acl_function!`](crate::sys::for_each_acl_function)
/// lists the others: calls `$callback! { NAME(arg: Type, ..); .. }`.
#[macro_export]
macro_rules! for_each_acl_allocator_function {
    ($callback:ident) => {
        $callback! {
            aclrtAllocatorDestroyDesc(desc: aclrtAllocatorDesc);
            aclrtAllocatorSetObjToDesc(desc: aclrtAllocatorDesc, allocator: aclrtAllocator);
            aclrtAllocatorSetAllocFuncToDesc(desc: aclrtAllocatorDesc, func: aclrtAllocatorAllocFunc);
            aclrtAllocatorSetFreeFuncToDesc(desc: aclrtAllocatorDesc, func: aclrtAllocatorFreeFunc);
            aclrtAllocatorSetAllocAdviseFuncToDesc(desc: aclrtAllocatorDesc, func: aclrtAllocatorAllocAdviseFunc);
            aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc: aclrtAllocatorDesc, func: aclrtAllocatorGetAddrFromBlockFunc);
            aclrtAllocatorRegister(stream: aclrtStream, desc: aclrtAllocatorDesc);
            aclrtAllocatorUnregister(stream: aclrtStream);
            aclrtAllocatorGetByStream(stream: aclrtStream, desc: *mut aclrtAllocatorDesc, allocator: *mut aclrtAllocator, alloc: *mut aclrtAllocatorAllocFunc, free: *mut aclrtAllocatorFreeFunc, advise: *mut aclrtAllocatorAllocAdviseFunc, get_addr: *mut aclrtAllocatorGetAddrFromBlockFunc);
        }
    };
}
pub use crate::for_each_acl_allocator_function;

/// Expands [`for_each_acl_allocator_function!`]: the function-pointer types
/// ([`allocator_fns`]), the names and the lazy symbol slots ([`AllocatorSymbols`]).
macro_rules! acl_allocator_functions {
    ($( $name:ident ( $($arg:ident : $ty:ty),* ) ; )*) => {
        /// Function-pointer types of the registry's calls, one per C function.
        pub mod allocator_fns {
            #![allow(non_camel_case_types)]
            use super::*;
            $(
                #[doc = concat!("`", stringify!($name), "`.")]
                pub type $name = unsafe extern "C" fn($($arg: $ty),*) -> aclError;
            )*
        }
        /// The names of the registry's calls, `aclrtAllocatorCreateDesc` first.
        pub const ALLOCATOR_FUNCTION_NAMES: &[&str] = &["aclrtAllocatorCreateDesc", $(stringify!($name)),*];

        /// One lazily resolved slot per registry call: `None` inside means the library
        /// lacks it.
        #[derive(Default, Debug)]
        pub struct AllocatorSymbols {
            /// `aclrtAllocatorCreateDesc`.
            pub aclrtAllocatorCreateDesc: std::sync::OnceLock<Option<fn_aclrtAllocatorCreateDesc>>,
            $(
                #[doc = concat!("`", stringify!($name), "`.")]
                pub $name: std::sync::OnceLock<Option<allocator_fns::$name>>,
            )*
        }
    };
}

for_each_acl_allocator_function!(acl_allocator_functions);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_calls_create_first() {
        assert_eq!(ALLOCATOR_FUNCTION_NAMES.len(), 10);
        assert_eq!(ALLOCATOR_FUNCTION_NAMES[0], "aclrtAllocatorCreateDesc");
        assert!(ALLOCATOR_FUNCTION_NAMES.contains(&"aclrtAllocatorGetByStream"));
    }
}
