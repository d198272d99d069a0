/*
 * memcpy_host_device.c: copies between host and device memory, synchronous and asynchronous,
 * and memsets on both.
 *
 * Host buffers come from aclrtMallocHost, device buffers from aclrtMalloc (1 MiB each):
 *  1. aclrtMemset on a host buffer and on a device buffer, checked through copies;
 *  2. aclrtMemcpy host-to-device of a pattern, device-to-device, device-to-host: the pattern
 *     comes back;
 *  3. the same with aclrtMemcpyAsync on a stream, with an aclrtMemsetAsync of the device
 *     buffer and one of a host buffer in between, checked after aclrtSynchronizeStream;
 *  4. aclrtMemcpy host-to-host between two aclrtMallocHost buffers, and ACL_MEMCPY_DEFAULT,
 *     which infers the direction from the addresses;
 *  5. count 0 copies and memsets do nothing and succeed; count above destMax is refused with
 *     ACL_ERROR_RT_PARAM_INVALID (107000) and copies nothing.
 */
#include <acl/acl.h>

#include "sample_check.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define BYTES ((size_t)1 << 20)

/* The byte at i of pattern `seed`. */
static unsigned char pattern(size_t i, unsigned seed)
{
    return (unsigned char)((i * 31u + seed) & 0xff);
}

static void fill(unsigned char *p, unsigned seed)
{
    for (size_t i = 0; i < BYTES; i++) {
        p[i] = pattern(i, seed);
    }
}

/* Whether p holds pattern `seed`. */
static int holds(const unsigned char *p, unsigned seed)
{
    for (size_t i = 0; i < BYTES; i++) {
        if (p[i] != pattern(i, seed)) {
            return 0;
        }
    }
    return 1;
}

/* Whether every byte of p is `value`. */
static int all(const unsigned char *p, unsigned char value, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != value) {
            return 0;
        }
    }
    return 1;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!CHECK_ACL(aclInit(NULL)) || !CHECK_ACL(aclrtSetDevice(0))) {
        return SAMPLE_FINISH();
    }
    aclrtStream stream = NULL;
    void *h[3] = {NULL, NULL, NULL};
    void *d[2] = {NULL, NULL};
    if (!CHECK_ACL(aclrtCreateStream(&stream))) {
        return SAMPLE_FINISH();
    }
    for (int i = 0; i < 3; i++) {
        if (!CHECK_ACL(aclrtMallocHost(&h[i], BYTES))) {
            return SAMPLE_FINISH();
        }
    }
    for (int i = 0; i < 2; i++) {
        if (!CHECK_ACL(aclrtMalloc(&d[i], BYTES, ACL_MEM_MALLOC_HUGE_FIRST))) {
            return SAMPLE_FINISH();
        }
    }
    unsigned char *h0 = h[0];
    unsigned char *h1 = h[1];
    unsigned char *h2 = h[2];

    /* ---- 1. synchronous memsets on host and device memory */
    CHECK_ACL(aclrtMemset(h0, BYTES, 0x5a, BYTES));
    CHECK_TRUE(all(h0, 0x5a, BYTES));
    CHECK_ACL(aclrtMemset(d[0], BYTES, 0xc3, BYTES));
    memset(h1, 0, BYTES);
    CHECK_ACL(aclrtMemcpy(h1, BYTES, d[0], BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK_TRUE(all(h1, 0xc3, BYTES));
    printf("memset: host and device buffers set\n");

    /* ---- 2. synchronous copies: host -> device -> device -> host */
    fill(h0, 7);
    memset(h1, 0, BYTES);
    CHECK_ACL(aclrtMemcpy(d[0], BYTES, h0, BYTES, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_ACL(aclrtMemcpy(d[1], BYTES, d[0], BYTES, ACL_MEMCPY_DEVICE_TO_DEVICE));
    CHECK_ACL(aclrtMemcpy(h1, BYTES, d[1], BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK_TRUE(holds(h1, 7));
    printf("aclrtMemcpy: host -> device -> device -> host kept the pattern\n");

    /* ---- 3. the same in stream order, with memsets in between */
    fill(h0, 11);
    memset(h1, 0, BYTES);
    CHECK_ACL(aclrtMemsetAsync(d[0], BYTES, 0, BYTES, stream));
    CHECK_ACL(aclrtMemcpyAsync(d[0], BYTES, h0, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    CHECK_ACL(aclrtMemcpyAsync(d[1], BYTES, d[0], BYTES, ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
    CHECK_ACL(aclrtMemcpyAsync(h1, BYTES, d[1], BYTES, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    CHECK_ACL(aclrtMemsetAsync(d[0], BYTES, 0x77, BYTES / 2, stream));
    CHECK_ACL(aclrtMemcpyAsync(h2, BYTES, d[0], BYTES, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    CHECK_ACL(aclrtMemsetAsync(h0, BYTES, 0x11, BYTES, stream)); /* host memory, in order */
    CHECK_ACL(aclrtSynchronizeStream(stream));
    CHECK_TRUE(holds(h1, 11));
    CHECK_TRUE(all(h2, 0x77, BYTES / 2));
    CHECK_TRUE(memcmp(h2 + BYTES / 2, h1 + BYTES / 2, BYTES / 2) == 0); /* the copy's half */
    CHECK_TRUE(all(h0, 0x11, BYTES));
    printf("aclrtMemcpyAsync / aclrtMemsetAsync: stream order kept\n");

    /* ---- 4. host to host, and the direction inferred */
    fill(h0, 13);
    CHECK_ACL(aclrtMemcpy(h1, BYTES, h0, BYTES, ACL_MEMCPY_HOST_TO_HOST));
    CHECK_TRUE(holds(h1, 13));
    fill(h0, 17);
    memset(h2, 0, BYTES);
    CHECK_ACL(aclrtMemcpy(d[0], BYTES, h0, BYTES, ACL_MEMCPY_DEFAULT));
    CHECK_ACL(aclrtMemcpy(h2, BYTES, d[0], BYTES, ACL_MEMCPY_DEFAULT));
    CHECK_TRUE(holds(h2, 17));
    printf("host to host and ACL_MEMCPY_DEFAULT: copied\n");

    /* ---- 5. count 0 and count > destMax */
    memset(h1, 0xee, BYTES);
    CHECK_ACL(aclrtMemcpy(h1, BYTES, h0, 0, ACL_MEMCPY_HOST_TO_HOST));
    CHECK_ACL(aclrtMemset(h1, BYTES, 0, 0));
    CHECK_ACL(aclrtMemcpyAsync(d[0], BYTES, h0, 0, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    CHECK_CODE(aclrtMemcpy(h1, BYTES / 2, h0, BYTES, ACL_MEMCPY_HOST_TO_HOST),
               ACL_ERROR_RT_PARAM_INVALID);
    CHECK_CODE(aclrtMemset(h1, BYTES / 2, 0, BYTES), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_ACL(aclrtSynchronizeStream(stream));
    CHECK_TRUE(all(h1, 0xee, BYTES)); /* none of them wrote */
    printf("count 0 and count > destMax: nothing written\n");

    /* ---- cleanup */
    for (int i = 0; i < 2; i++) {
        CHECK_ACL(aclrtFree(d[i]));
    }
    for (int i = 0; i < 3; i++) {
        CHECK_ACL(aclrtFreeHost(h[i]));
    }
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
    return SAMPLE_FINISH();
}
