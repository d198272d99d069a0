/*
 * allocator_registry.c: a program's own allocator registered for a stream, and used the
 * way CANN's operator layer uses it.
 *
 * The program describes a small allocator over one of its pools (aclrtMemPoolMallocAsync
 * and aclrtMemPoolFreeAsync on the stream it serves; each block a host record of the device
 * address and size) by an object and three callbacks in a descriptor, and registers it on
 * its stream. An "operator" then does what CANN's operator layer does with a workspace:
 * fetches the stream's allocator with aclrtAllocatorGetByStream, allocates a block through
 * the fetched alloc callback, takes its address with getAddrFromBlock, queues its work on
 * the stream (a memset and a copy back to the host), and frees the block through the
 * fetched free callback, in stream order. Eight operators run; each checks its bytes, and
 * the pool's statistics show the workspaces came from it and went back.
 *
 * Then the registry's rules, as CANN: a second registration replaces the first; the last
 * wins; unregistering twice succeeds; fetching a stream with nothing registered, a NULL
 * stream or a NULL descriptor output, and registering a descriptor without its free
 * callback, answer ACL_ERROR_INVALID_PARAM.
 */
#include <acl/acl.h>
#include <acl/acl_rt_memory_soma.h>

#include "sample_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPERATORS 8
#define WORKSPACE (64u << 10)

/* The program's allocator: a pool and the stream it serves. */
typedef struct {
    aclrtMemPool pool;
    aclrtStream stream;
    int allocs;
    int frees;
    int failures;
} UserAllocator;

/* A block: a host record of one device allocation. */
typedef struct {
    void *addr;
    size_t size;
} UserBlock;

static void *user_alloc(aclrtAllocator allocator, size_t size)
{
    UserAllocator *a = (UserAllocator *)allocator;
    UserBlock *b = (UserBlock *)malloc(sizeof *b);
    if (b == NULL) {
        a->failures++;
        return NULL;
    }
    b->addr = NULL;
    b->size = size;
    if (aclrtMemPoolMallocAsync(&b->addr, size, a->pool, a->stream) != ACL_SUCCESS) {
        a->failures++;
        free(b);
        return NULL;
    }
    a->allocs++;
    return b;
}

static void user_free(aclrtAllocator allocator, aclrtAllocatorBlock block)
{
    UserAllocator *a = (UserAllocator *)allocator;
    UserBlock *b = (UserBlock *)block;
    if (aclrtMemPoolFreeAsync(b->addr, a->stream) != ACL_SUCCESS) {
        a->failures++;
    } else {
        a->frees++;
    }
    free(b);
}

static void *user_addr(aclrtAllocatorBlock block)
{
    return ((UserBlock *)block)->addr;
}

/* One operator on `stream`, as CANN's operator layer runs it: its workspace comes from
 * the stream's registered allocator. Returns how many bytes came back wrong (-1: no
 * allocator or no workspace). */
static int run_operator(aclrtStream stream, int value, unsigned char *host)
{
    aclrtAllocatorDesc desc = NULL;
    aclrtAllocator obj = NULL;
    aclrtAllocatorAllocFunc alloc = NULL;
    aclrtAllocatorFreeFunc release = NULL;
    aclrtAllocatorAllocAdviseFunc advise = NULL;
    aclrtAllocatorGetAddrFromBlockFunc addr_of = NULL;
    if (!CHECK_ACL(aclrtAllocatorGetByStream(stream, &desc, &obj, &alloc, &release, &advise,
                                             &addr_of))) {
        return -1;
    }
    CHECK_TRUE(advise == NULL); /* never set: optional */
    void *block = alloc(obj, WORKSPACE);
    if (!CHECK_TRUE(block != NULL)) {
        return -1;
    }
    void *dev = addr_of(block);
    CHECK_ACL(aclrtMemsetAsync(dev, WORKSPACE, value, WORKSPACE, stream));
    CHECK_ACL(aclrtMemcpyAsync(host, WORKSPACE, dev, WORKSPACE, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    release(obj, block); /* in stream order, after the operator's work */
    CHECK_ACL(aclrtSynchronizeStream(stream));
    int wrong = 0;
    for (size_t i = 0; i < WORKSPACE; i++) {
        wrong += host[i] != (unsigned char)value;
    }
    return wrong;
}

static uint64_t pool_attr(aclrtMemPool pool, aclrtMemPoolAttr attr)
{
    uint64_t v = UINT64_MAX;
    CHECK_ACL(aclrtMemPoolGetAttr(pool, attr, &v));
    return v;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!CHECK_ACL(aclInit(NULL)) || !CHECK_ACL(aclrtSetDevice(0))) {
        return SAMPLE_FINISH();
    }
    aclrtStream stream = NULL, other = NULL;
    CHECK_ACL(aclrtCreateStream(&stream));
    CHECK_ACL(aclrtCreateStream(&other));
    aclrtMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    props.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    props.location.id = 0;
    props.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    props.maxSize = 64u << 20;
    aclrtMemPool pool = NULL;
    if (!CHECK_ACL(aclrtMemPoolCreate(&pool, &props))) {
        return SAMPLE_FINISH();
    }
    UserAllocator user = {pool, stream, 0, 0, 0};

    aclrtAllocatorDesc desc = aclrtAllocatorCreateDesc();
    CHECK_TRUE(desc != NULL);
    CHECK_ACL(aclrtAllocatorSetObjToDesc(desc, &user));
    CHECK_ACL(aclrtAllocatorSetAllocFuncToDesc(desc, user_alloc));
    CHECK_ACL(aclrtAllocatorSetFreeFuncToDesc(desc, user_free));
    CHECK_ACL(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, user_addr));
    CHECK_ACL(aclrtAllocatorRegister(stream, desc));

    static unsigned char host[WORKSPACE];
    int wrong = 0;
    for (int op = 0; op < OPERATORS; op++) {
        wrong += run_operator(stream, 0x11 * (op + 1), host);
    }
    CHECK_TRUE(wrong == 0);
    CHECK_TRUE(user.allocs == OPERATORS && user.frees == OPERATORS && user.failures == 0);
    CHECK_TRUE(pool_attr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT) == 0);
    CHECK_TRUE(pool_attr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH) >= WORKSPACE);

    /* What the stream has registered: the descriptor and object as given. */
    aclrtAllocatorDesc got_desc = NULL;
    aclrtAllocator got_obj = NULL;
    CHECK_ACL(aclrtAllocatorGetByStream(stream, &got_desc, &got_obj, NULL, NULL, NULL, NULL));
    CHECK_TRUE(got_desc == desc && got_obj == (aclrtAllocator)&user);

    /* A second registration replaces the first. */
    UserAllocator second = {pool, stream, 0, 0, 0};
    aclrtAllocatorDesc desc2 = aclrtAllocatorCreateDesc();
    CHECK_ACL(aclrtAllocatorSetObjToDesc(desc2, &second));
    CHECK_ACL(aclrtAllocatorSetAllocFuncToDesc(desc2, user_alloc));
    CHECK_ACL(aclrtAllocatorSetFreeFuncToDesc(desc2, user_free));
    CHECK_ACL(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc2, user_addr));
    CHECK_ACL(aclrtAllocatorRegister(stream, desc2));
    CHECK_TRUE(run_operator(stream, 0x7e, host) == 0);
    CHECK_TRUE(second.allocs == 1 && second.frees == 1 && user.allocs == OPERATORS);

    /* Misuse, with CANN's codes. */
    aclrtAllocatorDesc no_free = aclrtAllocatorCreateDesc();
    CHECK_ACL(aclrtAllocatorSetObjToDesc(no_free, &user));
    CHECK_ACL(aclrtAllocatorSetAllocFuncToDesc(no_free, user_alloc));
    CHECK_ACL(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(no_free, user_addr));
    CHECK_CODE(aclrtAllocatorRegister(other, no_free), ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtAllocatorRegister(NULL, desc), ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtAllocatorSetFreeFuncToDesc(no_free, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtAllocatorSetObjToDesc(NULL, &user), ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtAllocatorGetByStream(other, &got_desc, NULL, NULL, NULL, NULL, NULL),
               ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtAllocatorGetByStream(NULL, &got_desc, NULL, NULL, NULL, NULL, NULL),
               ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtAllocatorGetByStream(stream, NULL, NULL, NULL, NULL, NULL, NULL),
               ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtAllocatorUnregister(NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtAllocatorDestroyDesc(NULL), ACL_ERROR_INVALID_PARAM);

    /* Unregistering, twice: both succeed, and the stream has nothing registered. */
    CHECK_ACL(aclrtAllocatorUnregister(stream));
    CHECK_ACL(aclrtAllocatorUnregister(stream));
    CHECK_CODE(aclrtAllocatorGetByStream(stream, &got_desc, NULL, NULL, NULL, NULL, NULL),
               ACL_ERROR_INVALID_PARAM);

    CHECK_ACL(aclrtAllocatorDestroyDesc(no_free));
    CHECK_ACL(aclrtAllocatorDestroyDesc(desc2));
    CHECK_ACL(aclrtAllocatorDestroyDesc(desc));
    CHECK_ACL(aclrtMemPoolDestroy(pool));
    CHECK_ACL(aclrtDestroyStream(other));
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
    printf("allocator registry: %d operators drew %u-byte workspaces from the registered "
           "allocator, %d bytes wrong\n",
           OPERATORS + 1, WORKSPACE, wrong);
    return SAMPLE_FINISH();
}
