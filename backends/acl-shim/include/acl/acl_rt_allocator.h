/*
 * acl/acl_rt_allocator.h: the external-allocator registry that `libacl_rt.so` of
 * mempool-acl-shim implements. A program describes an allocator by an object and callbacks
 * in a descriptor and registers it for a stream; CANN's operator layer fetches it with
 * aclrtAllocatorGetByStream and draws its workspaces from it: alloc, getAddrFromBlock for
 * the device address, the kernels on the stream, then free.
 *
 * Written for this project. Names, types and prototypes match CANN's
 * `acl/acl_rt_allocator.h`, so a program written for CANN compiles unchanged and is
 * ABI-compatible with either library. `acl/acl_rt.h` includes it, as in CANN. Every check
 * answers ACL_ERROR_INVALID_PARAM (100000); no call needs a current context.
 */
#ifndef MEMPOOL_HAL_ACL_ACL_RT_ALLOCATOR_H
#define MEMPOOL_HAL_ACL_ACL_RT_ALLOCATOR_H

#include <stddef.h>
#include <stdint.h>

#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- callbacks */

/* A block of at least `size` bytes, or NULL. */
typedef void *(*aclrtAllocatorAllocFunc)(aclrtAllocator allocator, size_t size);
/* Gives back a block in the stream's order. */
typedef void (*aclrtAllocatorFreeFunc)(aclrtAllocator allocator, aclrtAllocatorBlock block);
/* A block at `addr` if the allocator can place it there, or NULL (optional). */
typedef void *(*aclrtAllocatorAllocAdviseFunc)(aclrtAllocator allocator, size_t size,
                                               aclrtAllocatorAddr addr);
/* The device address of a block. */
typedef void *(*aclrtAllocatorGetAddrFromBlockFunc)(aclrtAllocatorBlock block);

/* ---------------------------------------------------------------- descriptors */

/* A new descriptor with nothing set; NULL when it cannot be made. */
aclrtAllocatorDesc aclrtAllocatorCreateDesc(void);
/* Registrations made with it stay. */
aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc);
/* Each setter: allocatorDesc NULL, then the value NULL: ACL_ERROR_INVALID_PARAM. */
aclError aclrtAllocatorSetObjToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocator allocator);
aclError aclrtAllocatorSetAllocFuncToDesc(aclrtAllocatorDesc allocatorDesc,
                                          aclrtAllocatorAllocFunc func);
aclError aclrtAllocatorSetFreeFuncToDesc(aclrtAllocatorDesc allocatorDesc,
                                         aclrtAllocatorFreeFunc func);
aclError aclrtAllocatorSetAllocAdviseFuncToDesc(aclrtAllocatorDesc allocatorDesc,
                                                aclrtAllocatorAllocAdviseFunc func);
aclError aclrtAllocatorSetGetAddrFromBlockFuncToDesc(aclrtAllocatorDesc allocatorDesc,
                                                     aclrtAllocatorGetAddrFromBlockFunc func);

/* ---------------------------------------------------------------- registration by stream */

/* Copies the descriptor's object and callbacks for `stream`; the last registration wins.
 * The object, alloc, free and getAddrFromBlock must be set (allocAdvise is optional). */
aclError aclrtAllocatorRegister(aclrtStream stream, aclrtAllocatorDesc allocatorDesc);
/* Success when the stream has no registration. Destroying a stream drops it too. */
aclError aclrtAllocatorUnregister(aclrtStream stream);
/* The stream's registration (ACL_ERROR_INVALID_PARAM when none); every output but
 * allocatorDesc may be NULL. */
aclError aclrtAllocatorGetByStream(aclrtStream stream, aclrtAllocatorDesc *allocatorDesc,
                                   aclrtAllocator *allocator, aclrtAllocatorAllocFunc *allocFunc,
                                   aclrtAllocatorFreeFunc *freeFunc,
                                   aclrtAllocatorAllocAdviseFunc *allocAdviseFunc,
                                   aclrtAllocatorGetAddrFromBlockFunc *getAddrFromBlockFunc);

#ifdef __cplusplus
}
#endif

#endif /* MEMPOOL_HAL_ACL_ACL_RT_ALLOCATOR_H */
