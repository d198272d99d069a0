/*
 * acl/acl_rt.h: the ACL runtime calls that `libacl_rt.so` of mempool-acl-shim implements
 * around its memory pools: process initialization and the per-thread error message,
 * devices, contexts, streams, events, synchronous memory, copies, memsets, host functions
 * and memory information, with the enumerations and structures they use (and that
 * `acl/acl_rt_memory_soma.h` builds on). It includes `acl/acl_rt_allocator.h` (the
 * external-allocator registry), as CANN's does. Including this header alone is enough to call any
 * of them, as with CANN.
 *
 * Written for this project. Names, values, types and prototypes match CANN's `acl/acl_rt.h`
 * for these calls, so a program written for CANN compiles unchanged and is ABI-compatible
 * with either library. Only what the library implements is declared: a CANN call missing
 * here is missing from the library too. 64-bit (LP64) targets only.
 */
#ifndef MEMPOOL_HAL_ACL_ACL_RT_H
#define MEMPOOL_HAL_ACL_ACL_RT_H

#include <stddef.h>
#include <stdint.h>

#include "acl_base.h"
#include "acl_rt_allocator.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- versions, flags and modes */

/* The version of CANN's ACL API these headers follow (1.17.0), which aclrtGetVersion answers
 * as CANN does; aclrtGetSocName names this library and its own version. */
#define ACL_MAJOR_VERSION 1
#define ACL_MINOR_VERSION 17
#define ACL_PATCH_VERSION 0

/* Flags of aclrtCreateEventWithFlag, kept and checked as CANN checks them: 0, above 0x3F, or
 * DEVICE_USE_ONLY / EXTERNAL with another flag are refused (107000); an event without SYNC
 * cannot be waited on or reset (207000). Every event keeps time stamps. */
#define ACL_EVENT_SYNC 0x00000001U
#define ACL_EVENT_CAPTURE_STREAM_PROGRESS 0x00000002U
#define ACL_EVENT_TIME_LINE 0x00000008U
#define ACL_EVENT_DEVICE_USE_ONLY 0x00000010U
#define ACL_EVENT_EXTERNAL 0x00000020U
#define ACL_EVENT_IPC 0x00000040U

/* Flags of aclrtCreateStreamWithConfig: accepted, no effect on the emulator. */
#define ACL_STREAM_FAST_LAUNCH 0x00000001U
#define ACL_STREAM_FAST_SYNC 0x00000002U
#define ACL_STREAM_PERSISTENT 0x00000004U
#define ACL_STREAM_HUGE 0x00000008U
#define ACL_STREAM_CPU_SCHEDULE 0x00000010U
#define ACL_STREAM_DEVICE_USE_ONLY 0x00000020U

/* Modes of aclrtSetStreamFailureMode (only bit 0 counts). */
#define ACL_CONTINUE_ON_FAILURE 0x00000000U
#define ACL_STOP_ON_FAILURE 0x00000001U

/* The buffer aclsysGetVersionStr writes, and the parts of a version. */
#define ACL_PKG_VERSION_MAX_SIZE 128
#define ACL_PKG_VERSION_PARTS_MAX_SIZE 64

/* Comparisons of aclrtValueWait: the stream waits until the 64-bit device word w satisfies
 * w >= value, w == value, (w & value) != 0, or ~(w | value) != 0. */
#define ACL_STREAM_WAIT_VALUE_GEQ 0x00000000U
#define ACL_STREAM_WAIT_VALUE_EQ 0x00000001U
#define ACL_STREAM_WAIT_VALUE_AND 0x00000002U
#define ACL_STREAM_WAIT_VALUE_NOR 0x00000003U

/* Flags of aclrtCreateNotify (no effect here). */
#define ACL_NOTIFY_DEFAULT 0x00000000U
#define ACL_NOTIFY_DEVICE_USE_ONLY 0x00000001U

/* Flags of aclrtRecordEventWithFlag and aclrtStreamWaitEventWithFlag: EXTERNAL is for a
 * stream capturing a graph (none does here: ACL_ERROR_RT_STREAM_NOT_CAPTURED). */
#define ACL_EVENT_RECORD_DEFAULT 0x0U
#define ACL_EVENT_RECORD_EXTERNAL 0x01U
#define ACL_EVENT_WAIT_DEFAULT 0x0U
#define ACL_EVENT_WAIT_EXTERNAL 0x01U

/* ---------------------------------------------------------------- enumerations */

/* Answer of aclrtGetRunMode: this library always answers ACL_HOST. */
typedef enum aclrtRunMode {
    ACL_DEVICE = 0,
    ACL_HOST = 1
} aclrtRunMode;

/* Answer of aclrtStreamQuery: COMPLETE or NOT_READY (never RESERVED). */
typedef enum aclrtStreamStatus {
    ACL_STREAM_STATUS_COMPLETE = 0,
    ACL_STREAM_STATUS_NOT_READY = 1,
    ACL_STREAM_STATUS_RESERVED = 0xFFFF
} aclrtStreamStatus;

/* Whether the stream waits for a callback of aclrtLaunchCallback to have run. */
typedef enum aclrtCallbackBlockType {
    ACL_CALLBACK_NO_BLOCK = 0,
    ACL_CALLBACK_BLOCK = 1
} aclrtCallbackBlockType;

/* Scope of aclrtGetLastError / aclrtPeekAtLastError. */
typedef enum aclrtLastErrLevel {
    ACL_RT_THREAD_LEVEL = 0
} aclrtLastErrLevel;

/* Direction of aclrtMemcpy / aclrtMemcpyAsync. The library takes 0-5; other values,
 * the two device-to-device kinds 6 and 7 included: ACL_ERROR_INVALID_PARAM. */
/* How aclrtHostRegister maps a host range (bits; IOMEMORY and READONLY may be combined). */
typedef enum aclrtHostRegisterType {
    ACL_HOST_REGISTER_MAPPED = 0,
    ACL_HOST_REGISTER_IOMEMORY = 0x4,
    ACL_HOST_REGISTER_READONLY = 0x8
} aclrtHostRegisterType;

/* Flags of aclrtHostRegisterV2: at least one, no other bit. */
#define ACL_HOST_REG_MAPPED 0x2U
#define ACL_HOST_REG_IOMEMORY 0x4U
#define ACL_HOST_REG_READONLY 0x8U
#define ACL_HOST_REG_PINNED 0x10000000U

typedef enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
    ACL_MEMCPY_DEFAULT = 4, /* the direction follows from the addresses */
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE = 5, /* done as ACL_MEMCPY_HOST_TO_DEVICE */
    ACL_MEMCPY_INNER_DEVICE_TO_DEVICE = 6,
    ACL_MEMCPY_INTER_DEVICE_TO_DEVICE = 7
} aclrtMemcpyKind;

/* Policy of aclrtMalloc: accepted, and every policy gets the same device memory. The
 * values from ACL_MEM_TYPE_LOW_BAND_WIDTH on are bits that CANN combines with a policy. */
typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2,
    ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
    ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
    ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5,
    ACL_MEM_MALLOC_HUGE1G_ONLY = 6,
    ACL_MEM_MALLOC_HUGE1G_ONLY_P2P = 7,
    ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x100,
    ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
    ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000
} aclrtMemMallocPolicy;

/* Memory kind of aclrtGetMemInfo: every kind reports the current device's memory. */
typedef enum aclrtMemAttr {
    ACL_DDR_MEM = 0,
    ACL_HBM_MEM = 1,
    ACL_DDR_MEM_HUGE = 2,
    ACL_DDR_MEM_NORMAL = 3,
    ACL_HBM_MEM_HUGE = 4,
    ACL_HBM_MEM_NORMAL = 5,
    ACL_DDR_MEM_P2P_HUGE = 6,
    ACL_DDR_MEM_P2P_NORMAL = 7,
    ACL_HBM_MEM_P2P_HUGE = 8,
    ACL_HBM_MEM_P2P_NORMAL = 9,
    ACL_HBM_MEM_HUGE1G = 10,
    ACL_HBM_MEM_P2P_HUGE1G = 11,
    ACL_MEM_NORMAL = 12,
    ACL_MEM_HUGE = 13,
    ACL_MEM_HUGE1G = 14,
    ACL_MEM_P2P_NORMAL = 15,
    ACL_MEM_P2P_HUGE = 16,
    ACL_MEM_P2P_HUGE1G = 17
} aclrtMemAttr;

/* Answer of aclrtQueryEventStatus. */
typedef enum aclrtEventRecordedStatus {
    ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
    ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
} aclrtEventRecordedStatus;

/* aclrtMemLocation.type: a pool's location must be DEVICE. */
typedef enum aclrtMemLocationType {
    ACL_MEM_LOCATION_TYPE_HOST = 0,
    ACL_MEM_LOCATION_TYPE_DEVICE = 1,
    ACL_MEM_LOCATION_TYPE_UNREGISTERED = 2,
    ACL_MEM_LOCATION_TYPE_MANAGED = 3,
    ACL_MEM_LOCATION_TYPE_HOST_NUMA = 4
} aclrtMemLocationType;

/* aclrtMemPoolProps.allocType: only PINNED is accepted. */
typedef enum aclrtMemAllocationType {
    ACL_MEM_ALLOCATION_TYPE_PINNED = 0
} aclrtMemAllocationType;

/* aclrtMemPoolProps.handleType: NONE or POSIX, accepted and otherwise ignored. */
typedef enum aclrtMemHandleType {
    ACL_MEM_HANDLE_TYPE_NONE = 0,
    ACL_MEM_HANDLE_TYPE_POSIX = 2
} aclrtMemHandleType;

/* ---------------------------------------------------------------- structures */

/* Where memory lives: 8 bytes, id @0, type @4. */
typedef struct aclrtMemLocation {
    uint32_t id;               /* device id */
    aclrtMemLocationType type; /* int-sized (checked below) */
} aclrtMemLocation;

/* A host function enqueued with aclrtLaunchHostFunc: runs on a worker thread when the stream
 * reaches it. Device pointers are host addresses here, so it may touch device memory. */
typedef void (*aclrtHostFunc)(void *args);

/* A callback enqueued with aclrtLaunchCallback: runs on the thread that subscribed the stream
 * (aclrtSubscribeReport), inside its aclrtProcessReport. */
typedef void (*aclrtCallback)(void *userData);

/* What aclrtGetDeviceInfo reads (the values it answers are in the C ABI contract). */
typedef enum {
    ACL_DEV_ATTR_AICPU_CORE_NUM = 1,
    ACL_DEV_ATTR_AICORE_CORE_NUM = 101,
    ACL_DEV_ATTR_CUBE_CORE_NUM = 102,
    ACL_DEV_ATTR_VECTOR_CORE_NUM = 201,
    ACL_DEV_ATTR_WARP_SIZE = 202,
    ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE = 203,
    ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE = 204,
    ACL_DEV_ATTR_LOCAL_MEM_PER_VECTOR_CORE = 204,
    ACL_DEV_ATTR_MAX_GRID_DIM_X = 205,
    ACL_DEV_ATTR_MAX_GRID_DIM_Y = 206,
    ACL_DEV_ATTR_MAX_GRID_DIM_Z = 207,
    ACL_DEV_ATTR_MAX_BLOCK_PER_GRID = 208,
    ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK = 209,
    ACL_DEV_ATTR_MAX_BLOCK_DIM_X = 210,
    ACL_DEV_ATTR_MAX_BLOCK_DIM_Y = 211,
    ACL_DEV_ATTR_MAX_BLOCK_DIM_Z = 212,
    ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE = 301,
    ACL_DEV_ATTR_L2_CACHE_SIZE = 302,
    ACL_DEV_ATTR_SMP_ID = 401,
    ACL_DEV_ATTR_PHY_CHIP_ID = 402,
    ACL_DEV_ATTR_SUPER_POD_DEVIDE_ID = 403,
    ACL_DEV_ATTR_SUPER_POD_DEVICE_ID = 403,
    ACL_DEV_ATTR_SUPER_POD_SERVER_ID = 404,
    ACL_DEV_ATTR_SUPER_POD_ID = 405,
    ACL_DEV_ATTR_CUST_OP_PRIVILEGE = 406,
    ACL_DEV_ATTR_MAINBOARD_ID = 407,
    ACL_DEV_ATTR_HD_CONNECT_TYPE = 408,
    ACL_DEV_ATTR_DEVICE_FORM_FACTOR = 409,
    ACL_DEV_ATTR_IS_VIRTUAL = 501,
    ACL_DEV_ATTR_NPU_ARCH = 601,
} aclrtDevAttr;

/* Values of ACL_DEV_ATTR_DEVICE_FORM_FACTOR. */
#define ACL_DEVICE_FORM_FACTOR_POD 0
#define ACL_DEVICE_FORM_FACTOR_A_K 1
#define ACL_DEVICE_FORM_FACTOR_A_X 2
#define ACL_DEVICE_FORM_FACTOR_PCIE_CARD 3

/* What aclrtQueryDeviceStatus answers (an emulated device is always NORMAL). */
typedef enum aclrtDeviceStatus {
    ACL_RT_DEVICE_STATUS_NORMAL = 0,
    ACL_RT_DEVICE_STATUS_ABNORMAL = 1,
    ACL_RT_DEVICE_STATUS_END = 0xFFFF,
} aclrtDeviceStatus;

/* The kinds of core a device resource limit counts. */
typedef enum {
    ACL_RT_DEV_RES_CUBE_CORE = 0,
    ACL_RT_DEV_RES_VECTOR_CORE = 1,
} aclrtDevResLimitType;

/* aclrtGetDeviceUtilizationRate: percentages, -1 where not measured; utilizationExtend is
 * reserved and must be NULL. */
typedef struct aclrtUtilizationExtendInfo aclrtUtilizationExtendInfo;
typedef struct aclrtUtilizationInfo {
    int32_t cubeUtilization;
    int32_t vectorUtilization;
    int32_t aicpuUtilization;
    int32_t memoryUtilization;
    aclrtUtilizationExtendInfo *utilizationExtend;
} aclrtUtilizationInfo;

/* The options of a stream configuration handle (aclrtSetStreamConfigOpt). */
typedef enum {
    ACL_RT_STREAM_WORK_ADDR_PTR = 0,
    ACL_RT_STREAM_WORK_SIZE = 1,
    ACL_RT_STREAM_FLAG = 2,
    ACL_RT_STREAM_PRIORITY = 3,
} aclrtStreamConfigAttr;

/* A stream configuration, made by aclrtCreateStreamConfigHandle and used by
 * aclrtCreateStreamV2. */
typedef struct aclrtStreamConfigHandle {
    void *workptr;
    size_t workSize;
    size_t flag;
    uint32_t priority;
} aclrtStreamConfigHandle;

/* What a stream state callback (aclrtRegStreamStateCallback) is told, on the thread that
 * creates or destroys the stream. */
typedef enum {
    ACL_RT_STREAM_STATE_CREATE_POST = 1,
    ACL_RT_STREAM_STATE_DESTROY_PRE = 2,
} aclrtStreamState;

typedef void (*aclrtStreamStateCallback)(aclrtStream stm, aclrtStreamState state, void *args);

/* The information a task failure gives the exception callback, valid during the call; read it
 * with the aclrtGet...FromExceptionInfo getters. */
typedef struct rtExceptionInfo aclrtExceptionInfo;
typedef void (*aclrtExceptionInfoCallback)(aclrtExceptionInfo *exceptionInfo);
typedef void *aclrtFuncHandle;

/* The device fault aclrtGetErrorVerbose reports (the emulator has none: ACL_RT_NO_ERROR). */
typedef enum {
    ACL_RT_NO_ERROR = 0,
    ACL_RT_ERROR_MEMORY = 1,
    ACL_RT_ERROR_L2 = 2,
    ACL_RT_ERROR_AICORE = 3,
    ACL_RT_ERROR_LINK = 4,
    ACL_RT_ERROR_L3_PORT = 5,
    ACL_RT_ERROR_OTHERS = 0xFFFF,
} aclrtErrorType;

typedef enum aclrtAicoreErrorType {
    ACL_RT_AICORE_ERROR_UNKNOWN = 0,
    ACL_RT_AICORE_ERROR_SW = 1,
    ACL_RT_AICORE_ERROR_HW_LOCAL = 2,
} aclrtAicoreErrorType;

#define ACL_RT_MEM_UCE_INFO_MAX_NUM 20

/* One uncorrectable memory fault: where, and how long. */
typedef struct aclrtMemUceInfo {
    void *addr;
    size_t len;
    size_t reserved[14];
} aclrtMemUceInfo;

typedef struct {
    size_t arraySize;
    aclrtMemUceInfo memUceInfoArray[ACL_RT_MEM_UCE_INFO_MAX_NUM];
} aclrtMemUceInfoArray;

typedef union aclrtErrorInfoDetail {
    aclrtMemUceInfoArray uceInfo;
    aclrtAicoreErrorType aicoreErrType;
} aclrtErrorInfoDetail;

typedef struct aclrtErrorInfo {
    uint8_t tryRepair;
    uint8_t hasDetail;
    uint8_t reserved[2];
    aclrtErrorType errorType;
    aclrtErrorInfoDetail detail;
} aclrtErrorInfo;

/* ---------------------------------------------------------------- layout checks */

MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtMemcpyKind) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtMemMallocPolicy) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtMemAttr) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtEventRecordedStatus) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtMemLocationType) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtMemAllocationType) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtMemHandleType) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtRunMode) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtStreamStatus) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtStreamState) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtDevAttr) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtUtilizationInfo) == 24, "aclrtUtilizationInfo is 24 bytes");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtStreamConfigHandle) == 32, "aclrtStreamConfigHandle is 32 bytes");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtErrorInfo) == 2576, "aclrtErrorInfo is 2576 bytes");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtCallbackBlockType) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtLastErrLevel) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtMemLocation) == 8, "aclrtMemLocation is 8 bytes");
MEMPOOL_HAL_ACL_STATIC_ASSERT(offsetof(aclrtMemLocation, id) == 0, "aclrtMemLocation.id @0");
MEMPOOL_HAL_ACL_STATIC_ASSERT(offsetof(aclrtMemLocation, type) == 4, "aclrtMemLocation.type @4");

/* ---------------------------------------------------------------- initialization */

/* NULL, "" or a readable file (its content is not read); another path: ACL_ERROR_INVALID_FILE.
 * Again before aclFinalize: ACL_ERROR_REPEAT_INITIALIZE; aclFinalize again without aclInit:
 * ACL_ERROR_REPEAT_FINALIZE. A bad emulator setting in the environment
 * (MEMPOOL_EMU_*) makes this and every later call fail with ACL_ERROR_RT_INTERNAL_ERROR and a
 * message naming the variable. */
aclError aclInit(const char *configPath);
aclError aclFinalize(void);
/* The counted finalize: every aclInit (a repeat answering ACL_ERROR_REPEAT_INITIALIZE too)
 * adds one reference; this takes one away and finalizes, as aclFinalize, when it takes the
 * last. No reference left: ACL_ERROR_REPEAT_FINALIZE. refCount may be NULL; otherwise it
 * receives the references left. aclFinalize clears the count. */
aclError aclFinalizeReference(uint64_t *refCount);

/* Takes the calling thread's last error message, as CANN "obtains and clears" it: NULL when
 * there is nothing to report (no failure yet, or the message was already taken), so check
 * for NULL before printing it. Owned by the library, valid until this function returns
 * another message on this thread. */
const char *aclGetRecentErrMsg(void);

/* ---------------------------------------------------------------- devices and contexts */

/* Makes the device's default context current on this thread; counted per device. */
aclError aclrtSetDevice(int32_t deviceId);
/* Undoes one aclrtSetDevice (ACL_ERROR_RT_CONTEXT_RELEASE_ERROR if none is left) and waits for
 * the device's work; the device stops being current on this thread if it was. */
aclError aclrtResetDevice(int32_t deviceId);
/* As aclrtResetDevice, undoing every aclrtSetDevice of the device. */
aclError aclrtResetDeviceForce(int32_t deviceId);
aclError aclrtGetDeviceCount(uint32_t *count);
/* The calling thread's current device. */
aclError aclrtGetDevice(int32_t *deviceId);
/* Always ACL_HOST; works before aclInit and without a current device. */
aclError aclrtGetRunMode(aclrtRunMode *runMode);
/* CANN's ACL API version, 1.17.0 (ACL_MAJOR_VERSION, ACL_MINOR_VERSION, ACL_PATCH_VERSION). */
aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion);
/* "mempool-emu-" and this library's version (e.g. "mempool-emu-0.1.0"), a static string. */
const char *aclrtGetSocName(void);
/* The device profile's value (see the C ABI contract); the configured memory for
 * TOTAL_GLOBAL_MEM_SIZE. A device out of range or an unknown attribute:
 * ACL_ERROR_RT_PARAM_INVALID; a SIMT attribute: ACL_ERROR_RT_FEATURE_NOT_SUPPORT. */
aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t *value);
aclError aclrtQueryDeviceStatus(int32_t deviceId, aclrtDeviceStatus *deviceStatus);
/* 0 for cube, vector and AI CPU (no cores run), -1 for memory; -1 everywhere for a device not
 * current on this thread. */
aclError aclrtGetDeviceUtilizationRate(int32_t deviceId, aclrtUtilizationInfo *utilizationInfo);
/* Stored limits, at most the device's 24 cube and 48 vector cores; the device must be set
 * (ACL_ERROR_RT_DEV_SETUP_ERROR). */
aclError aclrtGetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t *value);
aclError aclrtSetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t value);
aclError aclrtResetDeviceResLimit(int32_t deviceId);
aclError aclrtGetResInCurrentThread(aclrtDevResLimitType type, uint32_t *value);
/* 7 and 0 (a lower number is a higher priority); a NULL pointer is not written. */
aclError aclrtDeviceGetStreamPriorityRange(int32_t *leastPriority, int32_t *greatestPriority);
/* Peer access, one direction (current device to peer): a device-to-device copy between two
 * devices needs it (else ACL_ERROR_RT_DRV_INTERNAL_ERROR). flags must be 0
 * (ACL_ERROR_FEATURE_UNSUPPORTED). */
aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId, int32_t peerDeviceId);
aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags);
aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId);
/* The version of a package: $ASCEND_HOME_PATH/share/info/<pkgName>/version.info as on CANN,
 * else "runtime" is this library's version; unknown: ACL_ERROR_INVALID_FILE. */
aclError aclsysGetVersionStr(char *pkgName, char *versionStr);
aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum);

/* The new context becomes current. */
aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId);
/* A device's default context cannot be destroyed (ACL_ERROR_RT_CONTEXT_NULL). */
aclError aclrtDestroyContext(aclrtContext context);
aclError aclrtSetCurrentContext(aclrtContext context);
aclError aclrtGetCurrentContext(aclrtContext *context);
/* A handle of the current device's default stream (the stream NULL names); not destroyable. */
aclError aclrtCtxGetCurrentDefaultStream(aclrtStream *stream);

/* ---------------------------------------------------------------- streams */

/* On the current device. A NULL stream elsewhere means its default stream, where the ACL
 * API allows it. */
aclError aclrtCreateStream(aclrtStream *stream);
/* The priority and flags are accepted and do not change how the stream runs. */
aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag);
/* Waits for the work already queued, then destroys the stream. */
aclError aclrtDestroyStream(aclrtStream stream);
/* Drops the work not yet started (it never runs) and waits for what is running; the plain
 * aclrtDestroyStream waits for all the queued work. Either way, every task queued before
 * the call has completed when it returns, or never runs. */
aclError aclrtDestroyStreamForce(aclrtStream stream);
/* A stream of another device is synchronized too (CANN switches to its context). */
aclError aclrtSynchronizeStream(aclrtStream stream);
/* timeout in ms, -1 for none; expiry: ACL_ERROR_RT_STREAM_SYNC_TIMEOUT. */
aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout);
/* COMPLETE counts as the host observing the stream, as a synchronization does. */
aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status);
/* With ACL_STOP_ON_FAILURE a failing task stops the stream: its work is dropped until a
 * synchronization reports the failure. Going back to CONTINUE: ACL_ERROR_RT_FEATURE_NOT_SUPPORT. */
aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode);
/* Getters: what the stream was created with (NULL: the current device's default stream: 0). */
aclError aclrtStreamGetFlags(aclrtStream stream, uint32_t *flags);
aclError aclrtStreamGetPriority(aclrtStream stream, uint32_t *priority);
aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId);
/* A stream from a configuration handle: FLAG (a size_t) and PRIORITY (a uint32_t, 0-7). */
aclrtStreamConfigHandle *aclrtCreateStreamConfigHandle(void);
aclError aclrtDestroyStreamConfigHandle(aclrtStreamConfigHandle *handle);
aclError aclrtSetStreamConfigOpt(aclrtStreamConfigHandle *handle, aclrtStreamConfigAttr attr, const void *attrValue,
                                 size_t valueSize);
aclError aclrtCreateStreamV2(aclrtStream *stream, const aclrtStreamConfigHandle *handle);
/* Drop the work queued and not started (the task running completes); the next
 * synchronization answers ACL_ERROR_RT_STREAM_ABORT (abort) or ACL_ERROR_RT_INTERNAL_ERROR
 * (stop), and the stream takes new work afterwards. Stop refuses the default stream. */
aclError aclrtStreamAbort(aclrtStream stream);
aclError aclrtStreamStop(aclrtStream stream);
/* Process-wide, by name: called after every stream creation and before every destroy. A NULL
 * callback removes the name; a name registered already: ACL_ERROR_RT_PARAM_INVALID. */
aclError aclrtRegStreamStateCallback(const char *regName, aclrtStreamStateCallback callback, void *args);
/* The current device. */
aclError aclrtSynchronizeDevice(void);

/* ---------------------------------------------------------------- events */

aclError aclrtCreateEvent(aclrtEvent *event);
aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag);
aclError aclrtDestroyEvent(aclrtEvent event);
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
/* "New mode" events: flags one or more of 0x1-0x8, or ACL_EVENT_IPC alone. */
aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag);
/* DEFAULT flags record and wait as the plain calls (the wait's timeout sets no limit here);
 * an event keeps the flag its first use took. */
aclError aclrtRecordEventWithFlag(aclrtEvent event, aclrtStream stream, uint32_t flag);
aclError aclrtStreamWaitEventWithFlag(aclrtStream stream, aclrtEvent event, uint32_t timeout, uint32_t flag);
aclError aclrtSynchronizeEvent(aclrtEvent event);
/* timeout in ms, -1 for none; expiry: ACL_ERROR_RT_EVENT_SYNC_TIMEOUT. */
aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout);
/* The event forgets its record. */
aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream);
/* When the recorded point was reached, in microseconds since the Unix epoch. */
aclError aclrtEventGetTimestamp(aclrtEvent event, uint64_t *timestamp);
aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status);
/* Real elapsed milliseconds between two completed events. */
aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent);

/* ---------------------------------------------------------------- memory */

/* Synchronous device memory; it may also be freed in stream order (aclrtMemPoolFreeAsync). */
aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
/* As aclrtMalloc. */
aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void *devPtr);
/* Ordinary host memory, 64-byte aligned. */
aclError aclrtMallocHost(void **hostPtr, size_t size);
aclError aclrtFreeHost(void *hostPtr);

/* Registered host memory: a range the program allocated, page-locked for copies and
 * memsets (queued in stream order) until it is unregistered. Its device address (*devPtr)
 * is the host address here. Overlapping a registered range or aclrtMallocHost memory:
 * ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED; unregistering anything but a registered
 * range's start: ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED. All three need a current context. */
aclError aclrtHostRegister(void *ptr, uint64_t size, aclrtHostRegisterType type, void **devPtr);
aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag);
aclError aclrtHostUnregister(void *ptr);

/* count == 0: success, nothing done; count > destMax: ACL_ERROR_INVALID_PARAM. */
aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                     aclrtMemcpyKind kind);
aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                          aclrtMemcpyKind kind, aclrtStream stream);
/* Sets count bytes to (uint8_t)value; count == 0: success, nothing done. */
aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count);
aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
                          aclrtStream stream);

/* The current device's free and total bytes. */
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total);

/* ---------------------------------------------------------------- host functions */

/* fn(args) runs when the stream reaches it. */
aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args);
/* A stream subscribed with aclrtSubscribeHostFunc runs its host functions on the subscribing
 * thread (a pthread_t), one per aclrtProcessHostFunc(timeout ms, -1: no limit) there. */
aclError aclrtSubscribeHostFunc(uint64_t hostFuncThreadId, aclrtStream exeStream);
aclError aclrtProcessHostFunc(int32_t timeout);
aclError aclrtUnSubscribeHostFunc(uint64_t hostFuncThreadId, aclrtStream exeStream);

/* ---------------------------------------------------------------- notifications and value waits */

/* A notification: each record (when its stream reaches it) is taken by one wait, in order. A
 * wait blocks its stream until its record runs, even one enqueued later or from another
 * thread; timeout in seconds (0: no limit of its own); a wait that runs out of time fails its
 * task with ACL_ERROR_RT_TASK_TIMEOUT. */
aclError aclrtCreateNotify(aclrtNotify *notify, uint64_t flag);
aclError aclrtDestroyNotify(aclrtNotify notify);
aclError aclrtRecordNotify(aclrtNotify notify, aclrtStream stream);
aclError aclrtWaitAndResetNotify(aclrtNotify notify, aclrtStream stream, uint32_t timeout);
/* Write a 64-bit device word in stream order (flag must be 0); wait until it compares with
 * value as flag (ACL_STREAM_WAIT_VALUE_*) asks. devAddr must be device memory. */
aclError aclrtValueWrite(void *devAddr, uint64_t value, uint32_t flag, aclrtStream stream);
aclError aclrtValueWait(void *devAddr, uint64_t value, uint32_t flag, aclrtStream stream);

/* Callbacks: threadId (a pthread_t) runs the callbacks launched on the stream, one per
 * aclrtProcessReport call. */
aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream);
aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream);
/* Nobody subscribed the stream: ACL_ERROR_RT_STREAM_NO_CB_REG. */
aclError aclrtLaunchCallback(aclrtCallback fn, void *userData, aclrtCallbackBlockType blockType,
                             aclrtStream stream);
/* timeout in ms, -1 for none; no callback in time: ACL_ERROR_RT_REPORT_TIMEOUT. */
aclError aclrtProcessReport(int32_t timeout);

/* ---------------------------------------------------------------- virtual memory */

/* A reserved address range (aclrtReserveMemAddress) has nothing behind it; a physical chunk
 * (aclrtMallocPhysical) is device memory with no address; aclrtMapMem puts a chunk behind
 * part of a range. The granularity of sizes and addresses is 2 MiB (1 GiB for the HUGE1G
 * kinds). Codes as CANN's: ACL_ERROR_INVALID_PARAM for the checks ACL makes itself (null
 * pointers, size 0, flags, property fields), ACL_ERROR_RT_PARAM_INVALID for the runtime's
 * and the driver library's (alignment, offset, a bad access descriptor, an address that is
 * not a reservation), ACL_ERROR_RT_DRV_INTERNAL_ERROR for the kernel's (an address not
 * reserved or already mapped, a size not a multiple of the granularity, an unmap of an
 * address that does not start a mapping). */

/* A physical chunk: an opaque handle the library checks (a freed or made-up handle gets
 * ACL_ERROR_RT_PARAM_INVALID, never a crash). */
typedef void *aclrtDrvMemHandle;

/* Option of aclrtMemGetAllocationGranularity: both answer 2 MiB (1 GiB for HUGE1G); any
 * other value, UNDEF included: ACL_ERROR_RT_FEATURE_NOT_SUPPORT. */
typedef enum aclrtMemGranularityOptions {
    ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM = 0,
    ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED = 1,
    ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF = 0xFFFF
} aclrtMemGranularityOptions;

/* aclrtMemAccessDesc.flags: only READWRITE is granted (NONE and READ:
 * ACL_ERROR_RT_FEATURE_NOT_SUPPORT, as on Atlas A2/A3). */
typedef enum aclrtMemAccessFlags {
    ACL_RT_MEM_ACCESS_FLAGS_NONE = 0x0,
    ACL_RT_MEM_ACCESS_FLAGS_READ = 0x1,
    ACL_RT_MEM_ACCESS_FLAGS_READWRITE = 0x3
} aclrtMemAccessFlags;

/* What aclrtMallocPhysical creates: 32 bytes. handleType NONE, allocationType PINNED, a
 * device location and a device memAttr (ACL_HBM_MEM_HUGE, ...); reserve must be 0. */
typedef struct aclrtPhysicalMemProp {
    aclrtMemHandleType handleType;         /* @0 */
    aclrtMemAllocationType allocationType; /* @4 */
    aclrtMemAttr memAttr;                  /* @8 */
    aclrtMemLocation location;             /* @12 */
    uint64_t reserve;                      /* @24 */
} aclrtPhysicalMemProp;

/* One entry of aclrtMemSetAccess: 24 bytes. */
typedef struct aclrtMemAccessDesc {
    aclrtMemAccessFlags flags; /* @0 */
    aclrtMemLocation location; /* @4: a device, or the host with id 0 */
    uint8_t rsv[12];           /* @12 */
} aclrtMemAccessDesc;

MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtMemGranularityOptions) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtMemAccessFlags) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtPhysicalMemProp) == 32, "aclrtPhysicalMemProp is 32 bytes");
MEMPOOL_HAL_ACL_STATIC_ASSERT(offsetof(aclrtPhysicalMemProp, reserve) == 24, "aclrtPhysicalMemProp.reserve @24");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtMemAccessDesc) == 24, "aclrtMemAccessDesc is 24 bytes");

/* Reserves size bytes of addresses (2 MiB at least), 2 MiB-aligned, on the current device.
 * alignment must be 0; expectPtr NULL or a free 2 MiB-aligned address; flags 0 or 1 (huge
 * pages). No current device: ACL_ERROR_RT_INVALID_HANDLE. */
aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment, void *expectPtr,
                                uint64_t flags);
/* The start of a reservation with nothing mapped in it. */
aclError aclrtReleaseMemAddress(void *virPtr);
/* size a multiple of the granularity; out of device memory: ACL_ERROR_RT_MEMORY_ALLOCATION. */
aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size, const aclrtPhysicalMemProp *prop,
                             uint64_t flags);
/* A chunk still mapped keeps its memory until its last mapping goes. */
aclError aclrtFreePhysical(aclrtDrvMemHandle handle);
/* Maps size bytes of handle at virPtr, inside one reservation, over nothing mapped; offset
 * and flags must be 0. The mapping is usable at once (read-write for its device). */
aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags);
/* The start of a mapping. Work queued on it before still sees the chunk. */
aclError aclrtUnmapMem(void *virPtr);
/* Sets access over [virPtr, virPtr + size) for each of the count descriptors. */
aclError aclrtMemSetAccess(void *virPtr, size_t size, aclrtMemAccessDesc *desc, size_t count);
aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop, aclrtMemGranularityOptions option,
                                          size_t *granularity);

/* ---------------------------------------------------------------- last error */

/* The code of the calling thread's last failed call (0 if none); Get forgets it. */
aclError aclrtGetLastError(aclrtLastErrLevel level);
aclError aclrtPeekAtLastError(aclrtLastErrLevel level);

/* ---------------------------------------------------------------- task failures */

/* The process's one exception callback, called on the failing stream's worker before the
 * synchronization that reports the failure returns (NULL removes it). */
aclError aclrtSetExceptionInfoCallback(aclrtExceptionInfoCallback callback);
/* 0xFFFFFFFF for NULL or an info that is not the running callback's. The thread id is 0 here. */
uint32_t aclrtGetTaskIdFromExceptionInfo(const aclrtExceptionInfo *info);
uint32_t aclrtGetStreamIdFromExceptionInfo(const aclrtExceptionInfo *info);
uint32_t aclrtGetThreadIdFromExceptionInfo(const aclrtExceptionInfo *info);
uint32_t aclrtGetDeviceIdFromExceptionInfo(const aclrtExceptionInfo *info);
uint32_t aclrtGetErrorCodeFromExceptionInfo(const aclrtExceptionInfo *info);
/* No failed task is a kernel here: no arguments (0xFFFFFFFF) and no function handle
 * (ACL_ERROR_RT_PARAM_INVALID). */
aclError aclrtGetArgsFromExceptionInfo(const aclrtExceptionInfo *info, void **devArgsPtr, uint32_t *devArgsLen);
aclError aclrtGetFuncHandleFromExceptionInfo(const aclrtExceptionInfo *info, aclrtFuncHandle *func);
/* The device's fault report: ACL_RT_NO_ERROR here (no device faults are emulated). */
aclError aclrtGetErrorVerbose(int32_t deviceId, aclrtErrorInfo *errorInfo);
/* The last task the calling thread enqueued (its position on its stream); 0xFFFFFFFF before any. */
aclError aclrtGetThreadLastTaskId(uint32_t *taskId);

#ifdef __cplusplus
}
#endif

#endif /* MEMPOOL_HAL_ACL_ACL_RT_H */
