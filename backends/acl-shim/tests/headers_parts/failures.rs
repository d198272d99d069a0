//! The ordering and failure part of the header checks: notifications, value waits, event
//! flags, host-function subscription, stream state and abort, task failures (contract §8).

use super::Field;
use mempool_ascend::sys::{
    ACL_ERROR_RT_STREAM_ABORT, ACL_ERROR_RT_STREAM_NOT_CAPTURED, ACL_ERROR_RT_TASK_TIMEOUT, ACL_ERROR_RT_WAIT_TIMEOUT,
    ACL_EVENT_RECORD_DEFAULT, ACL_EVENT_RECORD_EXTERNAL, ACL_EVENT_WAIT_DEFAULT, ACL_EVENT_WAIT_EXTERNAL,
    ACL_RT_NO_ERROR, ACL_RT_STREAM_STATE_CREATE_POST, ACL_RT_STREAM_STATE_DESTROY_PRE, ACL_STREAM_WAIT_VALUE_AND,
    ACL_STREAM_WAIT_VALUE_EQ, ACL_STREAM_WAIT_VALUE_GEQ, ACL_STREAM_WAIT_VALUE_NOR, aclrtErrorInfo,
};
use std::mem::{align_of, offset_of, size_of};

/// The prototypes of this part, as CANN declares them.
pub(super) const PROTOTYPES: &[(&str, &str, &str)] = &[
    ("aclrtCreateNotify", "aclError", "aclrtNotify *, uint64_t"),
    ("aclrtDestroyNotify", "aclError", "aclrtNotify"),
    ("aclrtRecordNotify", "aclError", "aclrtNotify, aclrtStream"),
    ("aclrtWaitAndResetNotify", "aclError", "aclrtNotify, aclrtStream, uint32_t"),
    ("aclrtValueWrite", "aclError", "void *, uint64_t, uint32_t, aclrtStream"),
    ("aclrtValueWait", "aclError", "void *, uint64_t, uint32_t, aclrtStream"),
    ("aclrtCreateEventExWithFlag", "aclError", "aclrtEvent *, uint32_t"),
    ("aclrtRecordEventWithFlag", "aclError", "aclrtEvent, aclrtStream, uint32_t"),
    ("aclrtStreamWaitEventWithFlag", "aclError", "aclrtStream, aclrtEvent, uint32_t, uint32_t"),
    ("aclrtSubscribeHostFunc", "aclError", "uint64_t, aclrtStream"),
    ("aclrtProcessHostFunc", "aclError", "int32_t"),
    ("aclrtUnSubscribeHostFunc", "aclError", "uint64_t, aclrtStream"),
    ("aclrtStreamAbort", "aclError", "aclrtStream"),
    ("aclrtStreamStop", "aclError", "aclrtStream"),
    ("aclrtRegStreamStateCallback", "aclError", "const char *, aclrtStreamStateCallback, void *"),
    ("aclrtSetExceptionInfoCallback", "aclError", "aclrtExceptionInfoCallback"),
    ("aclrtGetTaskIdFromExceptionInfo", "uint32_t", "const aclrtExceptionInfo *"),
    ("aclrtGetStreamIdFromExceptionInfo", "uint32_t", "const aclrtExceptionInfo *"),
    ("aclrtGetThreadIdFromExceptionInfo", "uint32_t", "const aclrtExceptionInfo *"),
    ("aclrtGetDeviceIdFromExceptionInfo", "uint32_t", "const aclrtExceptionInfo *"),
    ("aclrtGetErrorCodeFromExceptionInfo", "uint32_t", "const aclrtExceptionInfo *"),
    ("aclrtGetArgsFromExceptionInfo", "aclError", "const aclrtExceptionInfo *, void **, uint32_t *"),
    ("aclrtGetFuncHandleFromExceptionInfo", "aclError", "const aclrtExceptionInfo *, aclrtFuncHandle *"),
    ("aclrtGetErrorVerbose", "aclError", "int32_t, aclrtErrorInfo *"),
    ("aclrtGetThreadLastTaskId", "aclError", "uint32_t *"),
];

/// The enum types of this part.
pub(super) const ENUMS: [&str; 3] = ["aclrtStreamState", "aclrtErrorType", "aclrtAicoreErrorType"];

/// The constants of this part: from the Rust side where it has one, else CANN's.
pub(super) fn constants() -> Vec<(String, i64)> {
    let signed = [
        ("ACL_ERROR_RT_WAIT_TIMEOUT", ACL_ERROR_RT_WAIT_TIMEOUT),
        ("ACL_ERROR_RT_TASK_TIMEOUT", ACL_ERROR_RT_TASK_TIMEOUT),
        ("ACL_ERROR_RT_STREAM_ABORT", ACL_ERROR_RT_STREAM_ABORT),
        ("ACL_ERROR_RT_STREAM_NOT_CAPTURED", ACL_ERROR_RT_STREAM_NOT_CAPTURED),
        ("ACL_RT_STREAM_STATE_CREATE_POST", ACL_RT_STREAM_STATE_CREATE_POST),
        ("ACL_RT_STREAM_STATE_DESTROY_PRE", ACL_RT_STREAM_STATE_DESTROY_PRE),
        ("ACL_RT_NO_ERROR", ACL_RT_NO_ERROR),
        ("ACL_RT_ERROR_MEMORY", 1),
        ("ACL_RT_ERROR_L2", 2),
        ("ACL_RT_ERROR_AICORE", 3),
        ("ACL_RT_ERROR_LINK", 4),
        ("ACL_RT_ERROR_L3_PORT", 5),
        ("ACL_RT_ERROR_OTHERS", 0xFFFF),
        ("ACL_RT_AICORE_ERROR_UNKNOWN", 0),
        ("ACL_RT_AICORE_ERROR_SW", 1),
        ("ACL_RT_AICORE_ERROR_HW_LOCAL", 2),
        ("ACL_RT_MEM_UCE_INFO_MAX_NUM", 20),
    ];
    let unsigned = [
        ("ACL_STREAM_WAIT_VALUE_GEQ", ACL_STREAM_WAIT_VALUE_GEQ),
        ("ACL_STREAM_WAIT_VALUE_EQ", ACL_STREAM_WAIT_VALUE_EQ),
        ("ACL_STREAM_WAIT_VALUE_AND", ACL_STREAM_WAIT_VALUE_AND),
        ("ACL_STREAM_WAIT_VALUE_NOR", ACL_STREAM_WAIT_VALUE_NOR),
        ("ACL_EVENT_RECORD_DEFAULT", ACL_EVENT_RECORD_DEFAULT),
        ("ACL_EVENT_RECORD_EXTERNAL", ACL_EVENT_RECORD_EXTERNAL),
        ("ACL_EVENT_WAIT_DEFAULT", ACL_EVENT_WAIT_DEFAULT),
        ("ACL_EVENT_WAIT_EXTERNAL", ACL_EVENT_WAIT_EXTERNAL),
        ("ACL_NOTIFY_DEFAULT", 0),
        ("ACL_NOTIFY_DEVICE_USE_ONLY", 1),
    ];
    signed
        .into_iter()
        .map(|(n, v)| (n.to_string(), i64::from(v)))
        .chain(unsigned.into_iter().map(|(n, v)| (n.to_string(), i64::from(v))))
        .collect()
}

/// The structs of this part: name, size, alignment (the memory-fault records are CANN's
/// layout: pointers and sizes of 8 bytes).
pub(super) fn structs() -> Vec<(&'static str, usize, usize)> {
    vec![
        ("aclrtErrorInfo", size_of::<aclrtErrorInfo>(), align_of::<aclrtErrorInfo>()),
        ("aclrtMemUceInfo", 128, 8),
        ("aclrtMemUceInfoArray", 8 + 20 * 128, 8),
    ]
}

/// The fields of this part's structs.
pub(super) fn fields() -> Vec<Field> {
    type E = aclrtErrorInfo;
    vec![
        Field("aclrtErrorInfo", "tryRepair", offset_of!(E, tryRepair), 1, "uint8_t"),
        Field("aclrtErrorInfo", "hasDetail", offset_of!(E, hasDetail), 1, "uint8_t"),
        Field("aclrtErrorInfo", "reserved", offset_of!(E, reserved), 2, "uint8_t[2]"),
        Field("aclrtErrorInfo", "errorType", offset_of!(E, errorType), 4, "aclrtErrorType"),
        Field("aclrtErrorInfo", "detail", offset_of!(E, detail), size_of::<[u64; 321]>(), "aclrtErrorInfoDetail"),
        Field("aclrtMemUceInfo", "addr", 0, 8, "void *"),
        Field("aclrtMemUceInfo", "len", 8, 8, "size_t"),
        Field("aclrtMemUceInfo", "reserved", 16, 112, "size_t[14]"),
        Field("aclrtMemUceInfoArray", "arraySize", 0, 8, "size_t"),
        Field("aclrtMemUceInfoArray", "memUceInfoArray", 8, 20 * 128, "aclrtMemUceInfo[20]"),
    ]
}
