/*
 * acl/acl_base.h: the base types and the error codes of the ACL runtime C API, as far as
 * `libacl_rt.so` of mempool-acl-shim implements it: `aclError`, the `aclrtStream` /
 * `aclrtEvent` / `aclrtContext` handles, and the codes its functions return.
 *
 * Written for this project. The names, values and types match CANN's `acl/acl_base.h` (and
 * the runtime error codes CANN's base header pulls in), so a program written for CANN
 * compiles unchanged and is ABI-compatible with either library. 64-bit (LP64) targets only.
 *
 * The error codes are integer constant macros: usable in `switch`, `#if` and static
 * assertions in C and C++ alike.
 */
#ifndef MEMPOOL_HAL_ACL_ACL_BASE_H
#define MEMPOOL_HAL_ACL_ACL_BASE_H

#include <stddef.h>
#include <stdint.h>

#include "acl_base_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Compile-time layout checks of these headers (C11 or C++11; skipped by older dialects). */
#if defined(__cplusplus)
#define MEMPOOL_HAL_ACL_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define MEMPOOL_HAL_ACL_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#else
#define MEMPOOL_HAL_ACL_STATIC_ASSERT(cond, msg) struct mempool_hal_acl_static_assert_unused
#endif

/* ---------------------------------------------------------------- types */

/* The result of every ACL call: 0 is success, anything else an error code below. */
typedef int aclError;

/* Opaque handles. The library checks every handle it is given: a destroyed, foreign or
 * wrong-kind handle gets an error code, never a crash. */
typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void *aclrtContext;
typedef void *aclrtNotify;

/* The external-allocator registry's handles (acl/acl_rt_allocator.h): a descriptor is a
 * checked registry id; the other three are the program's own values, passed through. */
typedef void *aclrtAllocatorDesc;
typedef void *aclrtAllocator;
typedef void *aclrtAllocatorBlock;
typedef void *aclrtAllocatorAddr;

/* ---------------------------------------------------------------- error codes */

#define ACL_SUCCESS 0
#define ACL_ERROR_NONE 0 /* the older name of ACL_SUCCESS */

#define ACL_ERROR_INVALID_PARAM 100000       /* null pointers, bad props, bad memcpy kind */
#define ACL_ERROR_REPEAT_INITIALIZE 100002   /* aclInit called again before aclFinalize */
#define ACL_ERROR_INVALID_FILE 100003        /* aclInit's configuration path is not a readable file */
#define ACL_ERROR_REPEAT_FINALIZE 100037     /* aclFinalize called again without aclInit */
#define ACL_ERROR_COMPILING_STUB_MODE 100039 /* a link stub, not a runtime */

#define ACL_ERROR_RT_PARAM_INVALID 107000    /* bad attribute write/id, bad free pointer, ... */
#define ACL_ERROR_RT_INVALID_DEVICEID 107001 /* device id out of range */
#define ACL_ERROR_RT_CONTEXT_NULL 107002     /* no current device/context on this thread */
#define ACL_ERROR_RT_STREAM_CONTEXT 107003   /* stream used outside its context */
#define ACL_ERROR_RT_STREAM_SUBSCRIBE 107011 /* stream subscribed (or not by that thread), or it ran host functions */
#define ACL_ERROR_RT_THREAD_SUBSCRIBE 107012 /* aclrtProcessReport on a thread with no subscription */
#define ACL_ERROR_RT_STREAM_NO_CB_REG 107015 /* aclrtLaunchCallback on a stream nobody subscribed */
#define ACL_ERROR_RT_INVALID_MEMORY_TYPE 107016 /* aclrtGetMemInfo attribute outside 0-17 */
#define ACL_ERROR_RT_INVALID_HANDLE 107017   /* destroyed or unknown stream or event */
#define ACL_ERROR_RT_WAIT_TIMEOUT 107019     /* a wait of the runtime ran out of time */
#define ACL_ERROR_RT_TASK_TIMEOUT 107020     /* a task ran out of time (a notification wait's limit) */
#define ACL_ERROR_RT_STREAM_ABORT 107023     /* the stream was aborted (aclrtStreamAbort) */
#define ACL_ERROR_RT_STREAM_NOT_CAPTURED 107029 /* an external event flag on a stream not capturing */

#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT 207000 /* async host-to-host copy, wait on a non-SYNC event, ... */
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001   /* host/driver allocation failed */

#define ACL_ERROR_FEATURE_UNSUPPORTED 200006 /* a reserved argument that is not 0 */

#define ACL_ERROR_RT_DEV_SETUP_ERROR 507033   /* a device resource limit of a device not set */
#define ACL_ERROR_RT_INTERNAL_ERROR 507000        /* pool exhausted, HIGH write, trim misuse, ... */
#define ACL_ERROR_RT_CONTEXT_RELEASE_ERROR 507007 /* aclrtResetDevice of a device not set */
#define ACL_ERROR_RT_REPORT_TIMEOUT 507012        /* aclrtProcessReport: no callback in time */
#define ACL_ERROR_RT_STREAM_SYNC_TIMEOUT 507046   /* aclrtSynchronizeStreamWithTimeout expired */
#define ACL_ERROR_RT_EVENT_SYNC_TIMEOUT 507047    /* aclrtSynchronizeEventWithTimeout expired */
#define ACL_ERROR_RT_DRV_INTERNAL_ERROR 507899    /* the driver refused: VA not reserved/already mapped, ... */
#define ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED 507910 /* host range overlaps a registered one */
#define ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED 507911     /* no registered host range starts there */

/* ---------------------------------------------------------------- layout checks */

MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclError) == 4, "aclError is a 32-bit int");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtStream) == 8, "handles are 64-bit pointers (LP64)");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(size_t) == 8, "size_t is 64 bits (LP64)");

#ifdef __cplusplus
}
#endif

#endif /* MEMPOOL_HAL_ACL_ACL_BASE_H */
