//! The exported functions, checked at compile time against the declaration table of
//! [`mempool_ascend::sys`]: every entry of
//! [`for_each_acl_function!`](mempool_ascend::sys::for_each_acl_function) becomes
//! `const _: sys::fns::NAME = exports::NAME;`, so an export whose signature drifts from
//! the table (or that is missing) fails to build, naming both types.

use crate::exports;

/// One `const` per table entry: the export coerces to the table's function-pointer type.
macro_rules! same_signature {
    ($( $name:ident ( $($params:tt)* ) ; )*) => {
        $( const _: mempool_ascend::sys::fns::$name = exports::$name; )*
    };
}

mempool_ascend::sys::for_each_acl_function!(same_signature);

// Outside the table: they return a string, not an `aclError`.
const _: mempool_ascend::sys::fn_aclGetRecentErrMsg = exports::aclGetRecentErrMsg;
const _: mempool_ascend::sys::fn_aclrtGetSocName = exports::aclrtGetSocName;

/// One `const` per entry of the external-allocator registry's table.
macro_rules! same_allocator_signature {
    ($( $name:ident ( $($params:tt)* ) ; )*) => {
        $( const _: mempool_ascend::sys::allocator_fns::$name = exports::$name; )*
    };
}

mempool_ascend::sys::for_each_acl_allocator_function!(same_allocator_signature);

// Outside the table: it returns the descriptor, not an `aclError`.
const _: mempool_ascend::sys::fn_aclrtAllocatorCreateDesc = exports::aclrtAllocatorCreateDesc;
