//! The part of the project automation that the workspace's tests share with `cargo xtask`:
//! C and C++ programs on the drop-in ACL library ([`c`]). Standard library only.

pub mod c;
