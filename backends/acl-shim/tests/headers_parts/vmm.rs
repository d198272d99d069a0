//! The virtual-memory part of the header checks (contract §14): the fields of
//! `aclrtPhysicalMemProp` and `aclrtMemAccessDesc`.

use super::{Field, field_size};
use mempool_ascend::sys::{aclrtMemAccessDesc, aclrtPhysicalMemProp};
use std::mem::offset_of;

/// The fields of the virtual-memory structs.
pub(super) fn fields() -> Vec<Field> {
    type V = aclrtPhysicalMemProp;
    type A = aclrtMemAccessDesc;
    vec![
        Field(
            "aclrtPhysicalMemProp",
            "handleType",
            offset_of!(V, handleType),
            field_size(|p: &V| &p.handleType),
            "aclrtMemHandleType",
        ),
        Field(
            "aclrtPhysicalMemProp",
            "allocationType",
            offset_of!(V, allocationType),
            field_size(|p: &V| &p.allocationType),
            "aclrtMemAllocationType",
        ),
        Field(
            "aclrtPhysicalMemProp",
            "memAttr",
            offset_of!(V, memAttr),
            field_size(|p: &V| &p.memAttr),
            "aclrtMemAttr",
        ),
        Field(
            "aclrtPhysicalMemProp",
            "location",
            offset_of!(V, location),
            field_size(|p: &V| &p.location),
            "aclrtMemLocation",
        ),
        Field("aclrtPhysicalMemProp", "reserve", offset_of!(V, reserve), field_size(|p: &V| &p.reserve), "uint64_t"),
        Field("aclrtMemAccessDesc", "flags", offset_of!(A, flags), field_size(|a: &A| &a.flags), "aclrtMemAccessFlags"),
        Field(
            "aclrtMemAccessDesc",
            "location",
            offset_of!(A, location),
            field_size(|a: &A| &a.location),
            "aclrtMemLocation",
        ),
        Field("aclrtMemAccessDesc", "rsv", offset_of!(A, rsv), field_size(|a: &A| &a.rsv), "uint8_t[12]"),
    ]
}
