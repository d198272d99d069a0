/*
 * acl/acl_rt.h: the ACL runtime calls that `libacl_rt.so` of mempool-acl-shim implements
 * around its memory pools: devices, contexts, streams, events, synchronous memory, copies,
 * memsets, host functions and memory information, with the enumerations and structures
 * they use (and that `acl/acl_rt_memory_soma.h` builds on).
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

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- enumerations */

/* Direction of aclrtMemcpy / aclrtMemcpyAsync. Other values: ACL_ERROR_INVALID_PARAM. */
typedef enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
    ACL_MEMCPY_DEFAULT = 4, /* the direction follows from the addresses */
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE = 5 /* done as ACL_MEMCPY_HOST_TO_DEVICE */
} aclrtMemcpyKind;

/* Policy of aclrtMalloc: accepted, and every policy gets the same device memory. */
typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2,
    ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
    ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
    ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5
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
    ACL_HBM_MEM_P2P_NORMAL = 9
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
    ACL_MEM_LOCATION_TYPE_UNREGISTERED = 2
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

/* ---------------------------------------------------------------- layout checks */

MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtMemcpyKind) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtMemMallocPolicy) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtMemAttr) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtEventRecordedStatus) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtMemLocationType) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtMemAllocationType) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtMemHandleType) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtMemLocation) == 8, "aclrtMemLocation is 8 bytes");
MEMPOOL_HAL_ACL_STATIC_ASSERT(offsetof(aclrtMemLocation, id) == 0, "aclrtMemLocation.id @0");
MEMPOOL_HAL_ACL_STATIC_ASSERT(offsetof(aclrtMemLocation, type) == 4, "aclrtMemLocation.type @4");

/* ---------------------------------------------------------------- devices and contexts */

/* Makes the device's default context current on this thread. */
aclError aclrtSetDevice(int32_t deviceId);
/* Waits for the device's work; the device stops being current if it was. */
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtGetDeviceCount(uint32_t *count);

/* The new context becomes current. */
aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId);
/* A device's default context cannot be destroyed (ACL_ERROR_RT_INVALID_HANDLE). */
aclError aclrtDestroyContext(aclrtContext context);
aclError aclrtSetCurrentContext(aclrtContext context);
aclError aclrtGetCurrentContext(aclrtContext *context);

/* ---------------------------------------------------------------- streams */

/* On the current device. A NULL stream elsewhere means its default stream, where the ACL
 * API allows it. */
aclError aclrtCreateStream(aclrtStream *stream);
/* Work already queued still runs. */
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
/* The current device. */
aclError aclrtSynchronizeDevice(void);

/* ---------------------------------------------------------------- events */

aclError aclrtCreateEvent(aclrtEvent *event);
aclError aclrtDestroyEvent(aclrtEvent event);
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
aclError aclrtSynchronizeEvent(aclrtEvent event);
aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status);
/* Real elapsed milliseconds between two completed events. */
aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent);

/* ---------------------------------------------------------------- memory */

/* Synchronous device memory; it may also be freed in stream order (aclrtMemPoolFreeAsync). */
aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void *devPtr);
/* Ordinary host memory, 64-byte aligned. */
aclError aclrtMallocHost(void **hostPtr, size_t size);
aclError aclrtFreeHost(void *hostPtr);

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

#ifdef __cplusplus
}
#endif

#endif /* MEMPOOL_HAL_ACL_ACL_RT_H */
