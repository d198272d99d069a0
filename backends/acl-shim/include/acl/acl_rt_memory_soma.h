/*
 * acl/acl_rt_memory_soma.h: the stream-ordered memory pool API (`aclrtMemPool*`) that
 * `libacl_rt.so` of mempool-acl-shim implements: the pool handle, its properties and
 * attributes, and the seven pool calls.
 *
 * Written for this project. Names, values, the `aclrtMemPoolProps` layout and the prototypes
 * match CANN's `acl/acl_rt_memory_soma.h`, so a program written for CANN compiles unchanged
 * and is ABI-compatible with either library. 64-bit (LP64) targets only:
 * `aclrtMemPoolProps` is 56 bytes, 8-aligned: allocType @0, handleType @4, location @8
 * (id @8, type @12), maxSize @16, reserved[32] @24.
 */
#ifndef MEMPOOL_HAL_ACL_ACL_RT_MEMORY_SOMA_H
#define MEMPOOL_HAL_ACL_ACL_RT_MEMORY_SOMA_H

#include <stddef.h>
#include <stdint.h>

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A pool handle: a checked registry id, never dereferenced. */
typedef void *aclrtMemPool;

/*
 * Pool attributes (CUDA's cudaMemPoolAttr numbering). The `value` argument of
 * aclrtMemPoolSetAttr / aclrtMemPoolGetAttr points at:
 *   1-3  uint32_t  reuse flags: 0 = off (the default), any non-zero value stores 1
 *   4    uint64_t  release threshold in bytes (read/write, at most the pool size; default 0)
 *   5    uint64_t  reserved bytes now (read-only)
 *   6    uint64_t  reserved bytes high-water mark (read; writing 0 resets it)
 *   7    uint64_t  used bytes now (read-only)
 *   8    uint64_t  used bytes high-water mark (read; writing 0 resets it)
 * Other ids: ACL_ERROR_RT_PARAM_INVALID.
 */
typedef enum aclrtMemPoolAttr {
    ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES = 1,
    ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC = 2,
    ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3,
    ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD = 4,
    ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT = 5,
    ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH = 6,
    ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT = 7,
    ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH = 8
} aclrtMemPoolAttr;

/* Properties of aclrtMemPoolCreate. Zero the whole struct first: reserved must be zero. */
typedef struct {
    aclrtMemAllocationType allocType; /* ACL_MEM_ALLOCATION_TYPE_PINNED */
    aclrtMemHandleType handleType;    /* NONE or POSIX */
    aclrtMemLocation location;        /* { device id, ACL_MEM_LOCATION_TYPE_DEVICE } */
    size_t maxSize;                   /* 0 = the whole device (rounded down), else rounded up */
    unsigned char reserved[32];       /* must be all zero */
} aclrtMemPoolProps;

/* ---------------------------------------------------------------- layout checks */

MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtMemPoolAttr) == 4, "enums are int-sized");
MEMPOOL_HAL_ACL_STATIC_ASSERT(sizeof(aclrtMemPoolProps) == 56, "aclrtMemPoolProps is 56 bytes");
MEMPOOL_HAL_ACL_STATIC_ASSERT(offsetof(aclrtMemPoolProps, allocType) == 0, "allocType @0");
MEMPOOL_HAL_ACL_STATIC_ASSERT(offsetof(aclrtMemPoolProps, handleType) == 4, "handleType @4");
MEMPOOL_HAL_ACL_STATIC_ASSERT(offsetof(aclrtMemPoolProps, location) == 8, "location @8");
MEMPOOL_HAL_ACL_STATIC_ASSERT(offsetof(aclrtMemPoolProps, maxSize) == 16, "maxSize @16");
MEMPOOL_HAL_ACL_STATIC_ASSERT(offsetof(aclrtMemPoolProps, reserved) == 24, "reserved @24");

/* ---------------------------------------------------------------- pool calls */

/* Needs a current device (aclrtSetDevice); the pool's memory is on props->location.id. */
aclError aclrtMemPoolCreate(aclrtMemPool *memPool, const aclrtMemPoolProps *poolProps);
/* Live allocations die with the pool; its memory is released once work queued before
 * the call has run. */
aclError aclrtMemPoolDestroy(const aclrtMemPool memPool);
aclError aclrtMemPoolSetAttr(aclrtMemPool memPool, aclrtMemPoolAttr attr, void *value);
aclError aclrtMemPoolGetAttr(aclrtMemPool memPool, aclrtMemPoolAttr attr, void *value);
/* size == 0: success, *ptr untouched. The memory is usable in the stream's order. */
aclError aclrtMemPoolMallocAsync(void **ptr, size_t size, aclrtMemPool memPool,
                                 aclrtStream stream);
/* Frees any pool's allocation (or an aclrtMalloc address) in the stream's order. */
aclError aclrtMemPoolFreeAsync(void *ptr, aclrtStream stream);
/* Releases cached memory until minBytesToKeep bytes stay reserved; minBytesToKeep below the
 * used bytes or above the pool size: ACL_ERROR_RT_INTERNAL_ERROR. */
aclError aclrtMemPoolTrimTo(aclrtMemPool memPool, size_t minBytesToKeep);

#ifdef __cplusplus
}
#endif

#endif /* MEMPOOL_HAL_ACL_ACL_RT_MEMORY_SOMA_H */
