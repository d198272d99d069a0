/*
 * simple_stream.c: 3,000 tasks on the default stream.
 *
 * With no stream of its own, a program passes NULL: the current device's default stream.
 * 1,500 times: an aclrtMemsetAsync of a 4 KiB device buffer to the round's byte, then a
 * host function (aclrtLaunchHostFunc) that reads the buffer, checks every byte against its
 * round and adds the round to a sum. One aclrtSynchronizeStream(NULL) at the end, then:
 * every host function ran, in order, each saw exactly its own memset, and the sum is
 * 0 + 1 + ... + 1499.
 *
 * The host function reads the device buffer through its pointer: on the emulator behind the
 * drop-in library device addresses are host addresses. On an Ascend device it would copy the
 * buffer to the host first.
 */
#include <acl/acl.h>

#include "sample_check.h"

#include <stdint.h>
#include <stdio.h>

#define ROUNDS 1500 /* two tasks each */
#define BYTES 4096

typedef struct {
    const unsigned char *buf;
    int round;
} Check;

static Check g_checks[ROUNDS]; /* outlive the host functions that point at them */
static int g_next_round;       /* only the default stream's worker touches these */
static int g_wrong_bytes;
static int g_out_of_order;
static int64_t g_sum;

static void check_round(void *p)
{
    const Check *c = p;
    if (c->round != g_next_round) {
        g_out_of_order++;
    }
    g_next_round = c->round + 1;
    const unsigned char want = (unsigned char)(c->round & 0xff);
    for (int i = 0; i < BYTES; i++) {
        if (c->buf[i] != want) {
            g_wrong_bytes++;
            break;
        }
    }
    g_sum += c->round;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!CHECK_ACL(aclInit(NULL)) || !CHECK_ACL(aclrtSetDevice(0))) {
        return SAMPLE_FINISH();
    }
    void *buf = NULL;
    if (!CHECK_ACL(aclrtMalloc(&buf, BYTES, ACL_MEM_MALLOC_HUGE_FIRST))) {
        return SAMPLE_FINISH();
    }

    int tasks = 0;
    for (int r = 0; r < ROUNDS; r++) {
        g_checks[r].buf = buf;
        g_checks[r].round = r;
        tasks += CHECK_ACL(aclrtMemsetAsync(buf, BYTES, r & 0xff, BYTES, NULL));
        tasks += CHECK_ACL(aclrtLaunchHostFunc(NULL, check_round, &g_checks[r]));
    }
    CHECK_ACL(aclrtSynchronizeStream(NULL));

    const int64_t want_sum = (int64_t)ROUNDS * (ROUNDS - 1) / 2;
    CHECK_TRUE(tasks == 2 * ROUNDS);
    CHECK_TRUE(g_next_round == ROUNDS);
    CHECK_TRUE(g_out_of_order == 0);
    CHECK_TRUE(g_wrong_bytes == 0);
    CHECK_TRUE(g_sum == want_sum);
    printf("default stream: %d tasks queued, %d host functions ran, %d out of order, %d saw a "
           "wrong byte, sum %lld (expected %lld)\n",
           tasks, g_next_round, g_out_of_order, g_wrong_bytes, (long long)g_sum,
           (long long)want_sum);

    CHECK_ACL(aclrtFree(buf));
    CHECK_ACL(aclrtSynchronizeDevice());
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
    return SAMPLE_FINISH();
}
