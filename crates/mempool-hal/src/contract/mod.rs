//! The behaviour contract: what every backend of the project does, rule by rule.
//!
//! These pages are the project's specification of stream-ordered memory pools: the
//! behaviour of CANN's `aclrtMemPool*` API, compared rule by rule with CUDA's `cuMemPool*`
//! / `cudaMemPool*`, with a decision wherever CANN and CUDA, or CANN's documentation and
//! its code, disagree.
//! The emulator reproduces it, the Ascend and CUDA backends rely on it (each page says where
//! a runtime differs), the two drop-in libraries export it (CANN's `libacl_rt.so`, CUDA's
//! `libcuda.so.1`), and the traits of this crate ([`Device`](crate::Device),
//! [`MemPool`](crate::MemPool)) link to the page that holds each rule.
//!
//! # How to read it
//!
//! - Sections 1 to 7 are the portable contract, the same for every backend. Start with
//!   [`objects`]: its definition of *ordered after* is used on every other page.
//! - Section 8 is the C ABI of the drop-in `libacl_rt.so`, section 9 how the Ascend and CUDA
//!   backends find the real runtimes, section 10 the scenarios the conformance suite runs
//!   against every backend, section 11 the emulator's stream-order checker, and section 12
//!   the profiles: how the project copes with runtimes that do less than CANN documents, and
//!   where CUDA's rules differ. Section 13 is the C ABI of the CPU `libcuda.so.1`; sections
//!   14 to 16 cover virtual memory, host registration and CANN's external-allocator
//!   registry.
//! - Error answers give the portable [`ErrorKind`](crate::ErrorKind), which callers match,
//!   and the vendor codes, which logs show. The ACL code (see [`code`](crate::code)) is the
//!   emulator's and the Ascend backend's numbering. A *CUDA* column gives the `CUresult` of
//!   the same mistake: what the CPU `libcuda.so.1` answers for the CUDA twin of the call,
//!   and what the CUDA backend reports, stamped at its boundary from the one kind → code
//!   table of the CUDA numbering (`mempool_cuda::result::code_of`) or passed on from the
//!   driver. A cell says so where the two differ; "—" marks a call or a case with no CUDA
//!   twin. The CPU library's own codes are listed on [`cuda_abi`].
//! - Where a comparison with CANN or CUDA is made, it says which behaviour the project
//!   follows and why.
//! - A page ends with a **Status** note when the project does not implement every rule of it
//!   yet; the rule still stands, and the note says what differs today.
//!
//! Every test that checks a rule names its page (`contract::allocation`, ...).
//!
//! | § | page | what it fixes |
//! |---|---|---|
//! | 1 | [`objects`] | Devices, streams, events, pools, device pointers; the *ordered after* relation |
//! | 2 | [`properties`] | Pool properties, their C layout and checks; reserved memory per device |
//! | 3 | [`attributes`] | The eight attributes, their access rules and errors |
//! | 4 | [`allocation`] | Allocation: rounding, the reuse order a to g, bad input |
//! | 5 | [`free`] | Free: valid pointers, stream tags, merging |
//! | 6 | [`release`] | Release at synchronization and `trim_to` |
//! | 7 | [`statistics`] | The four counters; destroying pools; handles |
//! | 8 | [`c_abi`] | The C ABI of the drop-in `libacl_rt.so`: calls, enum values, lifecycle and error codes, argument checks |
//! | 9 | [`loading`] | Finding the real runtimes: CANN's and the CUDA driver |
//! | 10 | [`conformance`] | The thirty conformance scenarios |
//! | 11 | [`checker`] | The emulator's stream-order checker |
//! | 12 | [`profiles`] | The runtime as documented and as it ships: `documented`, `cann-open`, and CUDA's `cuda` |
//! | 13 | [`cuda_abi`] | The C ABI of the CPU `libcuda.so.1`: calls, codes, adding a call |
//! | 14 | [`vmm`] | Virtual memory: reserved ranges, physical chunks, mappings and access |
//! | 15 | [`host_register`] | Host registration: page-locked ranges of the program's own memory |
//! | 16 | [`allocator_registry`] | CANN's external-allocator registry |

#[doc = include_str!("objects.md")]
pub mod objects {}
#[doc = include_str!("properties.md")]
pub mod properties {}
#[doc = include_str!("attributes.md")]
pub mod attributes {}
#[doc = include_str!("allocation.md")]
pub mod allocation {}
#[doc = include_str!("free.md")]
pub mod free {}
#[doc = include_str!("release.md")]
pub mod release {}
#[doc = include_str!("statistics.md")]
pub mod statistics {}
#[doc = include_str!("c_abi.md")]
pub mod c_abi {}
#[doc = include_str!("loading.md")]
pub mod loading {}
#[doc = include_str!("conformance.md")]
pub mod conformance {}
#[doc = include_str!("checker.md")]
pub mod checker {}
#[doc = include_str!("profiles.md")]
pub mod profiles {}
#[doc = include_str!("cuda_abi.md")]
pub mod cuda_abi {}
#[doc = include_str!("vmm.md")]
pub mod vmm {}
#[doc = include_str!("host_register.md")]
pub mod host_register {}
#[doc = include_str!("allocator_registry.md")]
pub mod allocator_registry {}
