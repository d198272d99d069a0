/*
 * host_callback.c: host functions run in the order of their stream.
 *
 * Two streams get 200 host functions each (aclrtLaunchHostFunc). Each function carries its
 * position and checks that its stream's counter equals it before adding one, so any function
 * run early, late, twice or not at all shows. The second stream's functions also run behind
 * an event recorded after the first stream's hundredth function (aclrtStreamWaitEvent): each
 * of them must see at least 100 of the first stream's functions done.
 *
 * After synchronizing both streams: both counters are 200, no function ran out of order, and
 * each function ran exactly once.
 */
#include <acl/acl.h>

#include "sample_check.h"

#include <stdatomic.h>
#include <stdio.h>

#define STREAMS 2
#define PER_STREAM 200
#define GATE 100 /* the first stream's functions the second stream waits for */

typedef struct {
    int stream;   /* 0 or 1 */
    int position; /* 0 .. PER_STREAM - 1 on its stream */
} Task;

static atomic_int g_counter[STREAMS];
static atomic_int g_out_of_order;
static atomic_int g_before_gate; /* second-stream functions that saw fewer than GATE done */
static atomic_int g_runs[STREAMS][PER_STREAM];
static Task g_tasks[STREAMS][PER_STREAM]; /* outlive the functions that point at them */

static void count(void *p)
{
    const Task *t = p;
    atomic_fetch_add(&g_runs[t->stream][t->position], 1);
    if (atomic_load(&g_counter[t->stream]) != t->position) {
        atomic_fetch_add(&g_out_of_order, 1);
    }
    if (t->stream == 1 && atomic_load(&g_counter[0]) < GATE) {
        atomic_fetch_add(&g_before_gate, 1);
    }
    atomic_fetch_add(&g_counter[t->stream], 1);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!CHECK_ACL(aclInit(NULL)) || !CHECK_ACL(aclrtSetDevice(0))) {
        return SAMPLE_FINISH();
    }
    aclrtStream streams[STREAMS] = {NULL, NULL};
    aclrtEvent gate = NULL;
    if (!CHECK_ACL(aclrtCreateStream(&streams[0])) || !CHECK_ACL(aclrtCreateStream(&streams[1])) ||
        !CHECK_ACL(aclrtCreateEvent(&gate))) {
        return SAMPLE_FINISH();
    }

    for (int s = 0; s < STREAMS; s++) {
        for (int i = 0; i < PER_STREAM; i++) {
            g_tasks[s][i].stream = s;
            g_tasks[s][i].position = i;
        }
    }
    /* The first stream's first GATE functions, the gate, then both streams interleaved. */
    int launched = 0;
    for (int i = 0; i < GATE; i++) {
        launched += CHECK_ACL(aclrtLaunchHostFunc(streams[0], count, &g_tasks[0][i]));
    }
    CHECK_ACL(aclrtRecordEvent(gate, streams[0]));
    CHECK_ACL(aclrtStreamWaitEvent(streams[1], gate));
    for (int i = 0; i < PER_STREAM; i++) {
        if (i >= GATE) {
            launched += CHECK_ACL(aclrtLaunchHostFunc(streams[0], count, &g_tasks[0][i]));
        }
        launched += CHECK_ACL(aclrtLaunchHostFunc(streams[1], count, &g_tasks[1][i]));
    }
    for (int s = 0; s < STREAMS; s++) {
        CHECK_ACL(aclrtSynchronizeStream(streams[s]));
    }

    CHECK_TRUE(launched == STREAMS * PER_STREAM);
    CHECK_TRUE(atomic_load(&g_counter[0]) == PER_STREAM);
    CHECK_TRUE(atomic_load(&g_counter[1]) == PER_STREAM);
    CHECK_TRUE(atomic_load(&g_out_of_order) == 0);
    CHECK_TRUE(atomic_load(&g_before_gate) == 0);
    int once = 0;
    for (int s = 0; s < STREAMS; s++) {
        for (int i = 0; i < PER_STREAM; i++) {
            once += atomic_load(&g_runs[s][i]) == 1;
        }
    }
    CHECK_TRUE(once == STREAMS * PER_STREAM);
    printf("host functions: %d and %d run, %d out of order, %d ran exactly once, %d of the "
           "second stream's ran before the gate\n",
           atomic_load(&g_counter[0]), atomic_load(&g_counter[1]), atomic_load(&g_out_of_order),
           once, atomic_load(&g_before_gate));

    CHECK_ACL(aclrtDestroyEvent(gate));
    for (int s = 0; s < STREAMS; s++) {
        CHECK_ACL(aclrtDestroyStream(streams[s]));
    }
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
    return SAMPLE_FINISH();
}
