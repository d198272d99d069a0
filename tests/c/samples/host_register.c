/*
 * host_register.c: host memory the program allocated itself (malloc), registered with the
 * runtime so that copies on a stream reach it, then unregistered.
 *
 *  1. aclrtHostRegister of a page-aligned malloc'd buffer answers a device address;
 *     aclrtMemcpyAsync into it from device memory and out of it into device memory, on a
 *     stream, checked after aclrtSynchronizeStream (through the host pointer and through
 *     the device address);
 *  2. aclrtHostRegisterV2 of a second buffer, copies through it, unregistered;
 *  3. misuse: registering an overlapping range (ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED),
 *     unregistering an interior address, an address never registered and a range
 *     unregistered already (ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED), null arguments and
 *     size 0 (ACL_ERROR_INVALID_PARAM), a V2 flag of 0 (ACL_ERROR_RT_PARAM_INVALID).
 */
#include <acl/acl.h>

#include "sample_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE ((size_t)4096)
#define BYTES ((size_t)64 * PAGE)

/* The byte at i of pattern `seed`. */
static unsigned char pattern(size_t i, unsigned seed)
{
    return (unsigned char)((i * 13u + seed) & 0xff);
}

static void fill(unsigned char *p, unsigned seed)
{
    for (size_t i = 0; i < BYTES; i++) {
        p[i] = pattern(i, seed);
    }
}

static int holds(const unsigned char *p, unsigned seed)
{
    for (size_t i = 0; i < BYTES; i++) {
        if (p[i] != pattern(i, seed)) {
            return 0;
        }
    }
    return 1;
}

/* A page-aligned start inside a malloc'd block of BYTES + PAGE bytes. */
static unsigned char *page_aligned(void *block)
{
    uintptr_t p = (uintptr_t)block;
    return (unsigned char *)((p + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!CHECK_ACL(aclInit(NULL)) || !CHECK_ACL(aclrtSetDevice(0))) {
        return SAMPLE_FINISH();
    }
    aclrtStream stream = NULL;
    void *dev[2] = {NULL, NULL};
    void *block[2] = {malloc(BYTES + PAGE), malloc(BYTES + PAGE)};
    if (!CHECK_TRUE(block[0] != NULL && block[1] != NULL) || !CHECK_ACL(aclrtCreateStream(&stream))) {
        return SAMPLE_FINISH();
    }
    for (int i = 0; i < 2; i++) {
        if (!CHECK_ACL(aclrtMalloc(&dev[i], BYTES, ACL_MEM_MALLOC_HUGE_FIRST))) {
            return SAMPLE_FINISH();
        }
    }
    unsigned char *host = page_aligned(block[0]);
    unsigned char *other = page_aligned(block[1]);

    /* ---- 1. register, copy in and out, unregister */
    void *host_dev = NULL;
    CHECK_ACL(aclrtHostRegister(host, BYTES, ACL_HOST_REGISTER_MAPPED, &host_dev));
    CHECK_TRUE(host_dev != NULL);
    fill(host, 3);
    CHECK_ACL(aclrtMemcpyAsync(dev[0], BYTES, host, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    CHECK_ACL(aclrtMemcpyAsync(dev[1], BYTES, dev[0], BYTES, ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
    CHECK_ACL(aclrtSynchronizeStream(stream));
    memset(host, 0, BYTES);
    CHECK_ACL(aclrtMemcpyAsync(host, BYTES, dev[1], BYTES, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    CHECK_ACL(aclrtSynchronizeStream(stream));
    CHECK_TRUE(holds(host, 3));
    /* Through the device address: the registered range as device memory. */
    CHECK_ACL(aclrtMemsetAsync(dev[0], BYTES, 0, BYTES, stream));
    CHECK_ACL(aclrtMemcpyAsync(dev[0], BYTES, host_dev, BYTES, ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
    fill(other, 0); /* pageable scratch for the check */
    CHECK_ACL(aclrtSynchronizeStream(stream));
    CHECK_ACL(aclrtMemcpy(other, BYTES, dev[0], BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK_TRUE(holds(other, 3));
    CHECK_ACL(aclrtHostUnregister(host));
    printf("aclrtHostRegister: copies in and out of the registered range kept the pattern\n");

    /* ---- 2. the V2 call */
    CHECK_ACL(aclrtHostRegisterV2(other, BYTES, ACL_HOST_REG_MAPPED));
    fill(other, 9);
    CHECK_ACL(aclrtMemcpyAsync(dev[1], BYTES, other, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    CHECK_ACL(aclrtSynchronizeStream(stream));
    memset(other, 0, BYTES);
    CHECK_ACL(aclrtMemcpyAsync(other, BYTES, dev[1], BYTES, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    CHECK_ACL(aclrtSynchronizeStream(stream));
    CHECK_TRUE(holds(other, 9));
    CHECK_ACL(aclrtHostUnregister(other));
    printf("aclrtHostRegisterV2: the pattern came back\n");

    /* ---- 3. misuse */
    void *unused = NULL;
    CHECK_ACL(aclrtHostRegister(host, 2 * PAGE, ACL_HOST_REGISTER_MAPPED, &host_dev));
    CHECK_CODE(aclrtHostRegister(host, 2 * PAGE, ACL_HOST_REGISTER_MAPPED, &unused),
               ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED);
    CHECK_CODE(aclrtHostRegisterV2(host + PAGE, PAGE, ACL_HOST_REG_MAPPED),
               ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED);
    CHECK_CODE(aclrtHostUnregister(host + PAGE), ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED);
    CHECK_CODE(aclrtHostUnregister(other), ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED);
    CHECK_ACL(aclrtHostUnregister(host));
    CHECK_CODE(aclrtHostUnregister(host), ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED);
    CHECK_CODE(aclrtHostRegister(NULL, PAGE, ACL_HOST_REGISTER_MAPPED, &unused), ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtHostRegister(host, PAGE, ACL_HOST_REGISTER_MAPPED, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtHostRegister(host, 0, ACL_HOST_REGISTER_MAPPED, &unused), ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtHostRegisterV2(host, PAGE, 0), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_CODE(aclrtHostUnregister(NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_TRUE(unused == NULL);
    printf("misuse: answered with the runtime's codes\n");

    /* ---- cleanup */
    for (int i = 0; i < 2; i++) {
        CHECK_ACL(aclrtFree(dev[i]));
        free(block[i]);
    }
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
    return SAMPLE_FINISH();
}
