/*
 * acl_mempool.h: the subset of the Ascend CANN ACL runtime C API that this project implements
 * (SPEC.md section 8): stream-ordered memory pools (`aclrtMemPool*`) and the runtime calls a
 * pool needs around it (init, device, context, stream, event, memory, copy, host function).
 *
 * Self-contained: no CANN SDK header is needed. The names, values and signatures follow the
 * public CANN headers (acl_base.h, acl_rt.h, acl_rt_memory_soma.h), so a program written
 * against this header also builds against a real CANN install, and links against either the
 * real `libacl_rt.so` / `libascendcl.so` or the project's emulator-backed drop-in shim.
 *
 * ABI notes:
 *  - `aclError` is `int`; 0 is success.
 *  - Handles are opaque `void *`.
 *  - Enumerations are passed to functions as C enums (int-sized on every supported ABI; checked
 *    below). Inside structs the fields are plain `int`, so the layout does not depend on how a
 *    compiler sizes an enum.
 *  - 64-bit (LP64) targets only, as CANN: `aclrtMemPoolProps` is 56 bytes, 8-aligned:
 *    allocType @0, handleType @4, location @8 (id first, then type), maxSize @16,
 *    reserved[32] @24 (must be all zero).
 */
#ifndef MEMPOOL_HAL_ACL_MEMPOOL_H
#define MEMPOOL_HAL_ACL_MEMPOOL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- basic types */

typedef int aclError;

typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void *aclrtContext;
typedef void *aclrtMemPool;

/* Host function enqueued with aclrtLaunchHostFunc; runs when the stream reaches it. */
typedef void (*aclrtHostFunc)(void *args);

/* ---------------------------------------------------------------- error codes */

#define ACL_SUCCESS 0
#define ACL_ERROR_INVALID_PARAM 100000          /* null pointers, bad props, bad memcpy kind */
#define ACL_ERROR_COMPILING_STUB_MODE 100039    /* a link stub, not a runtime */
#define ACL_ERROR_RT_PARAM_INVALID 107000       /* bad attr write/id, bad free pointer, ... */
#define ACL_ERROR_RT_INVALID_DEVICEID 107001    /* device id out of range */
#define ACL_ERROR_RT_CONTEXT_NULL 107002        /* no current device/context */
#define ACL_ERROR_RT_STREAM_CONTEXT 107003      /* stream used outside its context */
#define ACL_ERROR_RT_INVALID_HANDLE 107017      /* destroyed or foreign stream/event handle */
#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT 207000 /* the runtime lacks the pool API */
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001   /* host/driver allocation failed at pool creation */
#define ACL_ERROR_RT_INTERNAL_ERROR 507000      /* pool exhausted, HIGH write, trim misuse, ... */

/* ---------------------------------------------------------------- enumerations */

typedef enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
    ACL_MEMCPY_DEFAULT = 4
} aclrtMemcpyKind;

typedef enum aclrtEventRecordedStatus {
    ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
    ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
} aclrtEventRecordedStatus;

/* Policy of the synchronous aclrtMalloc. */
typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2
} aclrtMemMallocPolicy;

/* Memory kind queried by aclrtGetMemInfo. */
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
    ACL_HBM_MEM_P2P_NORMAL = 9
} aclrtMemAttr;

/*
 * Pool attributes (the same numbering as CUDA's cudaMemPoolAttr). The `value` argument of
 * aclrtMemPoolSetAttr / aclrtMemPoolGetAttr points at:
 *   1-3  uint32_t  reuse flags: 0 = off (the default), any non-zero value stores 1
 *   4    uint64_t  release threshold in bytes (read/write, at most the pool size; default 0)
 *   5    uint64_t  reserved bytes now (read-only)
 *   6    uint64_t  reserved bytes high-water mark (read; writing 0 resets it to 0)
 *   7    uint64_t  used bytes now (read-only)
 *   8    uint64_t  used bytes high-water mark (read; writing 0 resets it to 0)
 */
typedef enum aclrtMemPoolAttr {
    ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES = 1,   /* uint32_t */
    ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC = 2,         /* uint32_t */
    ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3, /* uint32_t */
    ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD = 4,            /* uint64_t */
    ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT = 5,         /* uint64_t, read-only */
    ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH = 6,            /* uint64_t, write 0 only */
    ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT = 7,             /* uint64_t, read-only */
    ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH = 8                 /* uint64_t, write 0 only */
} aclrtMemPoolAttr;

/* aclrtMemPoolProps.allocType: only PINNED is accepted. */
typedef enum aclrtMemAllocationType {
    ACL_MEM_ALLOCATION_TYPE_PINNED = 0
} aclrtMemAllocationType;

/* aclrtMemPoolProps.handleType: NONE or POSIX, accepted and otherwise ignored. */
typedef enum aclrtMemHandleType {
    ACL_MEM_HANDLE_TYPE_NONE = 0,
    ACL_MEM_HANDLE_TYPE_POSIX = 2
} aclrtMemHandleType;

/* aclrtMemLocation.type: a pool's location must be DEVICE. */
typedef enum aclrtMemLocationType {
    ACL_MEM_LOCATION_TYPE_HOST = 0,
    ACL_MEM_LOCATION_TYPE_DEVICE = 1
} aclrtMemLocationType;

/* ---------------------------------------------------------------- structures */

typedef struct aclrtMemLocation {
    uint32_t id; /* device id */
    int type;    /* aclrtMemLocationType */
} aclrtMemLocation;

typedef struct aclrtMemPoolProps {
    int allocType;               /* aclrtMemAllocationType: ACL_MEM_ALLOCATION_TYPE_PINNED */
    int handleType;              /* aclrtMemHandleType */
    aclrtMemLocation location;   /* { device id, ACL_MEM_LOCATION_TYPE_DEVICE } */
    size_t maxSize;              /* 0 = whole device (rounded down), else rounded up */
    unsigned char reserved[32];  /* must be all zero */
} aclrtMemPoolProps;

/* ---------------------------------------------------------------- layout checks */

#ifdef __cplusplus
#define ACL_MEMPOOL_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define ACL_MEMPOOL_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

ACL_MEMPOOL_STATIC_ASSERT(sizeof(aclrtMemLocation) == 8, "aclrtMemLocation must be 8 bytes");
ACL_MEMPOOL_STATIC_ASSERT(offsetof(aclrtMemLocation, id) == 0, "aclrtMemLocation.id @0");
ACL_MEMPOOL_STATIC_ASSERT(offsetof(aclrtMemLocation, type) == 4, "aclrtMemLocation.type @4");
ACL_MEMPOOL_STATIC_ASSERT(sizeof(aclrtMemPoolProps) == 56, "aclrtMemPoolProps must be 56 bytes");
ACL_MEMPOOL_STATIC_ASSERT(offsetof(aclrtMemPoolProps, allocType) == 0, "allocType @0");
ACL_MEMPOOL_STATIC_ASSERT(offsetof(aclrtMemPoolProps, handleType) == 4, "handleType @4");
ACL_MEMPOOL_STATIC_ASSERT(offsetof(aclrtMemPoolProps, location) == 8, "location @8");
ACL_MEMPOOL_STATIC_ASSERT(offsetof(aclrtMemPoolProps, maxSize) == 16, "maxSize @16");
ACL_MEMPOOL_STATIC_ASSERT(offsetof(aclrtMemPoolProps, reserved) == 24, "reserved @24");
ACL_MEMPOOL_STATIC_ASSERT(sizeof(aclrtMemPoolAttr) == sizeof(int), "enums must be int-sized");
ACL_MEMPOOL_STATIC_ASSERT(sizeof(aclrtMemcpyKind) == sizeof(int), "enums must be int-sized");

/* ---------------------------------------------------------------- pool calls */

aclError aclrtMemPoolCreate(aclrtMemPool *pool, const aclrtMemPoolProps *props);
aclError aclrtMemPoolDestroy(aclrtMemPool pool);
aclError aclrtMemPoolSetAttr(aclrtMemPool pool, aclrtMemPoolAttr attr, void *value);
aclError aclrtMemPoolGetAttr(aclrtMemPool pool, aclrtMemPoolAttr attr, void *value);
aclError aclrtMemPoolMallocAsync(void **ptr, size_t size, aclrtMemPool pool, aclrtStream stream);
aclError aclrtMemPoolFreeAsync(void *ptr, aclrtStream stream);
aclError aclrtMemPoolTrimTo(aclrtMemPool pool, size_t minBytesToKeep);

/* ---------------------------------------------------------------- runtime calls */

aclError aclInit(const char *config);
aclError aclFinalize(void);

aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtGetDeviceCount(uint32_t *count);

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId);
aclError aclrtDestroyContext(aclrtContext context);
aclError aclrtSetCurrentContext(aclrtContext context);
aclError aclrtGetCurrentContext(aclrtContext *context);

aclError aclrtCreateStream(aclrtStream *stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtSynchronizeDevice(void);

aclError aclrtCreateEvent(aclrtEvent *event);
aclError aclrtDestroyEvent(aclrtEvent event);
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
aclError aclrtSynchronizeEvent(aclrtEvent event);
aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status);
aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent);

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void *devPtr);
aclError aclrtMallocHost(void **hostPtr, size_t size);
aclError aclrtFreeHost(void *hostPtr);

/* count == 0: success, nothing done; count > destMax: ACL_ERROR_INVALID_PARAM. */
aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                     aclrtMemcpyKind kind);
aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                          aclrtMemcpyKind kind, aclrtStream stream);
aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count);
aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
                          aclrtStream stream);

aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args);

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total);

/* Text of the last error on the calling thread (owned by the library; may be NULL). */
const char *aclGetRecentErrMsg(void);

#ifdef __cplusplus
}
#endif

#endif /* MEMPOOL_HAL_ACL_MEMPOOL_H */
