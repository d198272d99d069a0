//! The behaviour contract: what every backend of the project does, rule by rule.
//!
//! These pages are the project's specification. The traits link here; every test that
//! checks a rule names its page (`contract::allocation`, ...). Each page is one section:
//!
//! | § | page | what it fixes |
//! |---|---|---|
//! | 1 | [`objects`] | Objects and stream order |
//! | 2 | [`properties`] | Pool properties |
//! | 3 | [`attributes`] | Attributes |
//! | 4 | [`allocation`] | Allocation and the reuse order |
//! | 5 | [`free`] | Free |
//! | 6 | [`release`] | Release and trim |
//! | 7 | [`statistics`] | Statistics and lifetime |
//! | 8 | [`c_abi`] | The C ABI of the drop-in ACL library |
//! | 9 | [`loading`] | Finding the real runtime |
//! | 10 | [`conformance`] | Conformance scenarios |
//! | 11 | [`checker`] | The stream-order checker |
//! | 12 | [`profiles`] | Profiles: the runtime as documented and as it ships |

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
