/*
 * event_status.c: events report where a stream is.
 *
 * A host function that blocks until the program releases it is launched on a stream between
 * two events, `start` before it and `end` after it. While it blocks:
 *   - aclrtQueryEventStatus(end) answers ACL_EVENT_RECORDED_STATUS_NOT_READY (several times),
 *   - a second stream that waits for `end` (aclrtStreamWaitEvent) has not run its own host
 *     function.
 * After the release and aclrtSynchronizeEvent(end): both events answer COMPLETE, the second
 * stream runs after the first's work (its host function sees the first one done), and
 * aclrtEventElapsedTime(start, end) is at least 0 ms and covers the time the host function
 * was held.
 *
 * The release is unconditional: whatever check fails, the host function is let go before
 * the program synchronizes or ends, so a failure never hangs it.
 */
#define _POSIX_C_SOURCE 200809L

#include <acl/acl.h>

#include "sample_check.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define HOLD_MS 30 /* how long the host function is held after the first query */

static atomic_int g_released; /* set by main: the blocked host function may return */
static atomic_int g_blocker_done;
static atomic_int g_waiter_saw_blocker_done = -1; /* -1: the second stream's function not run */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Blocks its stream until main releases it. */
static void blocker(void *unused)
{
    (void)unused;
    while (!atomic_load(&g_released)) {
        sleep_ms(1);
    }
    atomic_store(&g_blocker_done, 1);
}

/* On the second stream, behind the event: the blocker must be done. */
static void waiter(void *unused)
{
    (void)unused;
    atomic_store(&g_waiter_saw_blocker_done, atomic_load(&g_blocker_done));
}

static aclrtEventRecordedStatus status_of(aclrtEvent event)
{
    aclrtEventRecordedStatus status = (aclrtEventRecordedStatus)-1;
    CHECK_ACL(aclrtQueryEventStatus(event, &status));
    return status;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!CHECK_ACL(aclInit(NULL)) || !CHECK_ACL(aclrtSetDevice(0))) {
        return SAMPLE_FINISH();
    }
    aclrtStream first = NULL;
    aclrtStream second = NULL;
    aclrtEvent start = NULL;
    aclrtEvent end = NULL;
    if (!CHECK_ACL(aclrtCreateStream(&first)) || !CHECK_ACL(aclrtCreateStream(&second)) ||
        !CHECK_ACL(aclrtCreateEvent(&start)) || !CHECK_ACL(aclrtCreateEvent(&end))) {
        return SAMPLE_FINISH();
    }

    /* start, the blocked host function, end; the second stream waits for end */
    CHECK_ACL(aclrtRecordEvent(start, first));
    int launched = CHECK_ACL(aclrtLaunchHostFunc(first, blocker, NULL));
    CHECK_ACL(aclrtRecordEvent(end, first));
    CHECK_ACL(aclrtStreamWaitEvent(second, end));
    CHECK_ACL(aclrtLaunchHostFunc(second, waiter, NULL));

    if (launched) {
        /* The host function cannot return before the release: the answer is determined. */
        for (int i = 0; i < 3; i++) {
            CHECK_TRUE(status_of(end) == ACL_EVENT_RECORDED_STATUS_NOT_READY);
            sleep_ms(HOLD_MS / 3);
        }
        CHECK_TRUE(atomic_load(&g_waiter_saw_blocker_done) == -1); /* still waiting for end */
        printf("while held: end NOT_READY, the second stream waiting\n");
    }
    atomic_store(&g_released, 1);

    CHECK_ACL(aclrtSynchronizeEvent(end));
    CHECK_TRUE(atomic_load(&g_blocker_done) == 1);
    CHECK_TRUE(status_of(start) == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    CHECK_TRUE(status_of(end) == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    CHECK_ACL(aclrtSynchronizeStream(second));
    CHECK_TRUE(atomic_load(&g_waiter_saw_blocker_done) == 1);

    float ms = -1.0f;
    if (CHECK_ACL(aclrtEventElapsedTime(&ms, start, end))) {
        CHECK_TRUE(ms >= 0.0f);
        CHECK_TRUE(ms >= (float)HOLD_MS / 2); /* the host function was held that long */
    }
    printf("after release: start and end COMPLETE, the second stream ran after the first; "
           "%.3f ms from start to end\n",
           (double)ms);

    CHECK_ACL(aclrtDestroyEvent(start));
    CHECK_ACL(aclrtDestroyEvent(end));
    CHECK_ACL(aclrtDestroyStream(first));
    CHECK_ACL(aclrtDestroyStream(second));
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
    return SAMPLE_FINISH();
}
