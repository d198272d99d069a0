//! The queries part of the header checks: device information, status, utilization and
//! resource limits, stream getters and configuration handles, peer access, package
//! versions and the base helpers of `acl/acl_base_rt.h` (contract §8).

use super::Field;
use mempool_ascend::sys::{
    ACL_ERROR_FEATURE_UNSUPPORTED, ACL_ERROR_RT_DEV_SETUP_ERROR, ACL_RT_DEV_RES_CUBE_CORE, ACL_RT_DEV_RES_VECTOR_CORE,
    ACL_RT_DEVICE_STATUS_NORMAL, aclrtStreamConfigHandle, aclrtUtilizationInfo,
};
use std::mem::{align_of, offset_of, size_of};

/// The prototypes of this part, as CANN declares them.
pub(super) const PROTOTYPES: &[(&str, &str, &str)] = &[
    ("aclrtGetDeviceInfo", "aclError", "uint32_t, aclrtDevAttr, int64_t *"),
    ("aclrtQueryDeviceStatus", "aclError", "int32_t, aclrtDeviceStatus *"),
    ("aclrtGetDeviceUtilizationRate", "aclError", "int32_t, aclrtUtilizationInfo *"),
    ("aclrtGetDeviceResLimit", "aclError", "int32_t, aclrtDevResLimitType, uint32_t *"),
    ("aclrtSetDeviceResLimit", "aclError", "int32_t, aclrtDevResLimitType, uint32_t"),
    ("aclrtResetDeviceResLimit", "aclError", "int32_t"),
    ("aclrtGetResInCurrentThread", "aclError", "aclrtDevResLimitType, uint32_t *"),
    ("aclrtDeviceGetStreamPriorityRange", "aclError", "int32_t *, int32_t *"),
    ("aclrtDeviceCanAccessPeer", "aclError", "int32_t *, int32_t, int32_t"),
    ("aclrtDeviceEnablePeerAccess", "aclError", "int32_t, uint32_t"),
    ("aclrtDeviceDisablePeerAccess", "aclError", "int32_t"),
    ("aclsysGetVersionStr", "aclError", "char *, char *"),
    ("aclsysGetVersionNum", "aclError", "char *, int32_t *"),
    ("aclrtCtxGetCurrentDefaultStream", "aclError", "aclrtStream *"),
    ("aclrtStreamGetFlags", "aclError", "aclrtStream, uint32_t *"),
    ("aclrtStreamGetPriority", "aclError", "aclrtStream, uint32_t *"),
    ("aclrtStreamGetId", "aclError", "aclrtStream, int32_t *"),
    ("aclrtCreateStreamConfigHandle", "aclrtStreamConfigHandle *", "void"),
    ("aclrtDestroyStreamConfigHandle", "aclError", "aclrtStreamConfigHandle *"),
    ("aclrtSetStreamConfigOpt", "aclError", "aclrtStreamConfigHandle *, aclrtStreamConfigAttr, const void *, size_t"),
    ("aclrtCreateStreamV2", "aclError", "aclrtStream *, const aclrtStreamConfigHandle *"),
    ("aclDataTypeSize", "size_t", "aclDataType"),
    ("aclFloatToFloat16", "aclFloat16", "float"),
    ("aclFloat16ToFloat", "float", "aclFloat16"),
];

/// The enum types of this part.
pub(super) const ENUMS: [&str; 5] =
    ["aclrtDevAttr", "aclrtDeviceStatus", "aclrtDevResLimitType", "aclrtStreamConfigAttr", "aclDataType"];

/// The constants of this part: from the Rust side where it has one, else CANN's.
pub(super) fn constants() -> Vec<(String, i64)> {
    let attrs: [(&str, i64); 30] = [
        ("AICPU_CORE_NUM", 1),
        ("AICORE_CORE_NUM", 101),
        ("CUBE_CORE_NUM", 102),
        ("VECTOR_CORE_NUM", 201),
        ("WARP_SIZE", 202),
        ("MAX_THREAD_PER_VECTOR_CORE", 203),
        ("UBUF_PER_VECTOR_CORE", 204),
        ("LOCAL_MEM_PER_VECTOR_CORE", 204),
        ("MAX_GRID_DIM_X", 205),
        ("MAX_GRID_DIM_Y", 206),
        ("MAX_GRID_DIM_Z", 207),
        ("MAX_BLOCK_PER_GRID", 208),
        ("MAX_THREADS_PER_BLOCK", 209),
        ("MAX_BLOCK_DIM_X", 210),
        ("MAX_BLOCK_DIM_Y", 211),
        ("MAX_BLOCK_DIM_Z", 212),
        ("TOTAL_GLOBAL_MEM_SIZE", 301),
        ("L2_CACHE_SIZE", 302),
        ("SMP_ID", 401),
        ("PHY_CHIP_ID", 402),
        ("SUPER_POD_DEVIDE_ID", 403),
        ("SUPER_POD_DEVICE_ID", 403),
        ("SUPER_POD_SERVER_ID", 404),
        ("SUPER_POD_ID", 405),
        ("CUST_OP_PRIVILEGE", 406),
        ("MAINBOARD_ID", 407),
        ("HD_CONNECT_TYPE", 408),
        ("DEVICE_FORM_FACTOR", 409),
        ("IS_VIRTUAL", 501),
        ("NPU_ARCH", 601),
    ];
    let dtypes: [(&str, i64); 28] = [
        ("DT_UNDEFINED", -1),
        ("FLOAT", 0),
        ("FLOAT16", 1),
        ("INT8", 2),
        ("INT32", 3),
        ("UINT8", 4),
        ("INT16", 6),
        ("UINT16", 7),
        ("UINT32", 8),
        ("INT64", 9),
        ("UINT64", 10),
        ("DOUBLE", 11),
        ("BOOL", 12),
        ("STRING", 13),
        ("COMPLEX64", 16),
        ("COMPLEX128", 17),
        ("BF16", 27),
        ("INT4", 29),
        ("UINT1", 30),
        ("COMPLEX32", 33),
        ("HIFLOAT8", 34),
        ("FLOAT8_E5M2", 35),
        ("FLOAT8_E4M3FN", 36),
        ("FLOAT8_E8M0", 37),
        ("FLOAT6_E3M2", 38),
        ("FLOAT6_E2M3", 39),
        ("FLOAT4_E2M1", 40),
        ("FLOAT4_E1M2", 41),
    ];
    let mut c: Vec<(String, i64)> = attrs.iter().map(|(n, v)| (format!("ACL_DEV_ATTR_{n}"), *v)).collect();
    c.extend(dtypes.iter().map(|(n, v)| (format!("ACL_{n}"), *v)));
    for (n, v) in [
        ("ACL_DEVICE_FORM_FACTOR_POD", 0),
        ("ACL_DEVICE_FORM_FACTOR_A_K", 1),
        ("ACL_DEVICE_FORM_FACTOR_A_X", 2),
        ("ACL_DEVICE_FORM_FACTOR_PCIE_CARD", 3),
        ("ACL_RT_DEVICE_STATUS_NORMAL", i64::from(ACL_RT_DEVICE_STATUS_NORMAL)),
        ("ACL_RT_DEVICE_STATUS_ABNORMAL", 1),
        ("ACL_RT_DEVICE_STATUS_END", 0xFFFF),
        ("ACL_RT_DEV_RES_CUBE_CORE", i64::from(ACL_RT_DEV_RES_CUBE_CORE)),
        ("ACL_RT_DEV_RES_VECTOR_CORE", i64::from(ACL_RT_DEV_RES_VECTOR_CORE)),
        ("ACL_RT_STREAM_WORK_ADDR_PTR", 0),
        ("ACL_RT_STREAM_WORK_SIZE", 1),
        ("ACL_RT_STREAM_FLAG", 2),
        ("ACL_RT_STREAM_PRIORITY", 3),
        ("ACL_PKG_VERSION_MAX_SIZE", 128),
        ("ACL_PKG_VERSION_PARTS_MAX_SIZE", 64),
        ("ACL_ERROR_FEATURE_UNSUPPORTED", i64::from(ACL_ERROR_FEATURE_UNSUPPORTED)),
        ("ACL_ERROR_RT_DEV_SETUP_ERROR", i64::from(ACL_ERROR_RT_DEV_SETUP_ERROR)),
    ] {
        c.push((n.to_string(), v));
    }
    c
}

/// The structs of this part: name, size, alignment.
pub(super) fn structs() -> Vec<(&'static str, usize, usize)> {
    vec![
        ("aclrtUtilizationInfo", size_of::<aclrtUtilizationInfo>(), align_of::<aclrtUtilizationInfo>()),
        ("aclrtStreamConfigHandle", size_of::<aclrtStreamConfigHandle>(), align_of::<aclrtStreamConfigHandle>()),
    ]
}

/// The fields of this part's structs.
pub(super) fn fields() -> Vec<Field> {
    type U = aclrtUtilizationInfo;
    type H = aclrtStreamConfigHandle;
    vec![
        Field("aclrtUtilizationInfo", "cubeUtilization", offset_of!(U, cubeUtilization), 4, "int32_t"),
        Field("aclrtUtilizationInfo", "vectorUtilization", offset_of!(U, vectorUtilization), 4, "int32_t"),
        Field("aclrtUtilizationInfo", "aicpuUtilization", offset_of!(U, aicpuUtilization), 4, "int32_t"),
        Field("aclrtUtilizationInfo", "memoryUtilization", offset_of!(U, memoryUtilization), 4, "int32_t"),
        Field(
            "aclrtUtilizationInfo",
            "utilizationExtend",
            offset_of!(U, utilizationExtend),
            8,
            "aclrtUtilizationExtendInfo *",
        ),
        Field("aclrtStreamConfigHandle", "workptr", offset_of!(H, workptr), 8, "void *"),
        Field("aclrtStreamConfigHandle", "workSize", offset_of!(H, workSize), 8, "size_t"),
        Field("aclrtStreamConfigHandle", "flag", offset_of!(H, flag), 8, "size_t"),
        Field("aclrtStreamConfigHandle", "priority", offset_of!(H, priority), 4, "uint32_t"),
    ]
}
