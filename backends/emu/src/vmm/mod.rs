//! Virtual memory ([contract §14](mempool_hal::contract::vmm)): reserved address ranges,
//! physical chunks, and chunks mapped into ranges, with
//! [`VirtualMemory`](mempool_hal::VirtualMemory) implemented by [`Emulator`](crate::Emulator).
//!
//! - `space.rs`: the bookkeeping and every call's checks and codes;
//! - `chunk.rs`: a physical chunk, real memory (`memfd`) counted against its device;
//! - `range.rs`: the system calls on a reserved range's host addresses;
//! - `mapped.rs`: a device range resolved to the chunks behind it, for queued work;
//! - `emulator.rs`: the trait and the lookups the drop-in libraries need.
//!
//! Like a pool's range, a reserved range is host address space (`PROT_NONE`,
//! `MAP_NORESERVE`), so device addresses stay host addresses: a chunk mapped there is its
//! file's pages at that address, and two mappings of one chunk show the same bytes.
//! Copies, memsets and kernels resolve a range of virtual memory when they are enqueued:
//! a range reserved but not mapped, or mapped without the access the work needs, is
//! refused there (with the checker, as a stream-order violation naming the address); the
//! work then moves its bytes through the chunks' own views, so an unmapping never pulls
//! memory from under it. The pages also stay at the unmapped address until the work
//! queued before the unmapping has run on every stream (as the drop-in ACL library keeps
//! memory that `aclrtFree` freed), so a host function queued earlier that reads the range
//! through a raw pointer does not fault.

pub(crate) mod chunk;
mod emulator;
pub(crate) mod mapped;
mod range;
pub(crate) mod space;

pub(crate) use space::VmmSpace;
