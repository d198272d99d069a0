/*
 * callback_report.c: callbacks on a thread of the program's own (aclrtSubscribeReport,
 * aclrtProcessReport, aclrtLaunchCallback, aclrtUnSubscribeReport).
 *
 * The program starts a report thread that makes the device's context current and calls
 * aclrtProcessReport(100) in a loop (a timeout, ACL_ERROR_RT_REPORT_TIMEOUT, just means no
 * callback was due), and subscribes it to a stream. Then 40 times on that stream: an
 * aclrtMemsetAsync of a device buffer (from a pool, allocated on the same stream) to the
 * round's byte, an aclrtMemcpyAsync of it into the round's own slot of a host buffer
 * (aclrtMallocHost), and an aclrtLaunchCallback, ACL_CALLBACK_BLOCK and ACL_CALLBACK_NO_BLOCK
 * alternately, the last one blocking. Every callback checks that it runs on the report
 * thread, in launch order, and that its slot holds its round's byte.
 *
 * After aclrtSynchronizeStream (the last callback blocks the stream, and one thread runs
 * them in order, so all have run): 40 callbacks, none on another thread, none out of order,
 * every slot right, and aclrtProcessReport never answered anything but success or timeout.
 * The thread is stopped and joined, then unsubscribed.
 */
#define _POSIX_C_SOURCE 200809L

#include <acl/acl.h>
#include <acl/acl_rt_memory_soma.h>

#include "sample_check.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CALLBACKS 40
#define SLOT 256 /* bytes per round in the host buffer */

typedef struct {
    int round;
    const unsigned char *slot;
} Report;

static aclrtContext g_context;
static pthread_t g_report_thread;
static atomic_int g_stop;
static atomic_int g_subscribed; /* set once the main thread has subscribed this thread */
static atomic_int g_context_error;  /* aclrtSetCurrentContext failed on the report thread */
static atomic_int g_process_errors; /* aclrtProcessReport codes other than success/timeout */
static atomic_int g_last_process_error;
static atomic_int g_done;
static atomic_int g_wrong_thread;
static atomic_int g_out_of_order;
static atomic_int g_wrong_slot;
static Report g_reports[CALLBACKS]; /* outlive the callbacks that point at them */

static void *report_loop(void *unused)
{
    (void)unused;
    if (aclrtSetCurrentContext(g_context) != ACL_SUCCESS) {
        atomic_store(&g_context_error, 1);
    }
    /* A thread may process reports only once it is subscribed to a stream. */
    while (!atomic_load(&g_subscribed) && !atomic_load(&g_stop)) {
        sched_yield();
    }
    while (!atomic_load(&g_stop)) {
        aclError rc = aclrtProcessReport(100);
        if (rc != ACL_SUCCESS && rc != ACL_ERROR_RT_REPORT_TIMEOUT) {
            atomic_fetch_add(&g_process_errors, 1);
            atomic_store(&g_last_process_error, rc);
        }
    }
    return NULL;
}

static void on_report(void *p)
{
    const Report *r = p;
    if (!pthread_equal(pthread_self(), g_report_thread)) {
        atomic_fetch_add(&g_wrong_thread, 1);
    }
    if (atomic_load(&g_done) != r->round) {
        atomic_fetch_add(&g_out_of_order, 1);
    }
    for (int i = 0; i < SLOT; i++) {
        if (r->slot[i] != (unsigned char)r->round) {
            atomic_fetch_add(&g_wrong_slot, 1);
            break;
        }
    }
    atomic_fetch_add(&g_done, 1);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!CHECK_ACL(aclInit(NULL)) || !CHECK_ACL(aclrtSetDevice(0)) ||
        !CHECK_ACL(aclrtGetCurrentContext(&g_context))) {
        return SAMPLE_FINISH();
    }
    aclrtStream stream = NULL;
    if (!CHECK_ACL(aclrtCreateStream(&stream))) {
        return SAMPLE_FINISH();
    }
    aclrtMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    props.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    props.location.id = 0;
    props.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    props.maxSize = (size_t)1 << 30;
    aclrtMemPool pool = NULL;
    void *host = NULL;
    void *dev = NULL;
    if (!CHECK_ACL(aclrtMemPoolCreate(&pool, &props)) ||
        !CHECK_ACL(aclrtMallocHost(&host, (size_t)CALLBACKS * SLOT)) ||
        !CHECK_ACL(aclrtMemPoolMallocAsync(&dev, SLOT, pool, stream))) {
        return SAMPLE_FINISH();
    }
    memset(host, 0xff, (size_t)CALLBACKS * SLOT);

    if (!CHECK_TRUE(pthread_create(&g_report_thread, NULL, report_loop, NULL) == 0)) {
        return SAMPLE_FINISH();
    }
    const uint64_t thread_id = (uint64_t)g_report_thread;
    int subscribed = CHECK_ACL(aclrtSubscribeReport(thread_id, stream));
    atomic_store(&g_subscribed, subscribed);

    int launched = 0;
    for (int r = 0; subscribed && r < CALLBACKS; r++) {
        unsigned char *slot = (unsigned char *)host + (size_t)r * SLOT;
        g_reports[r].round = r;
        g_reports[r].slot = slot;
        aclrtCallbackBlockType block =
            (r % 2 == 0 || r == CALLBACKS - 1) ? ACL_CALLBACK_BLOCK : ACL_CALLBACK_NO_BLOCK;
        CHECK_ACL(aclrtMemsetAsync(dev, SLOT, r, SLOT, stream));
        CHECK_ACL(aclrtMemcpyAsync(slot, SLOT, dev, SLOT, ACL_MEMCPY_DEVICE_TO_HOST, stream));
        launched += CHECK_ACL(aclrtLaunchCallback(on_report, &g_reports[r], block, stream));
    }
    CHECK_ACL(aclrtSynchronizeStream(stream));

    CHECK_TRUE(launched == CALLBACKS);
    CHECK_TRUE(atomic_load(&g_done) == CALLBACKS);
    CHECK_TRUE(atomic_load(&g_wrong_thread) == 0);
    CHECK_TRUE(atomic_load(&g_out_of_order) == 0);
    CHECK_TRUE(atomic_load(&g_wrong_slot) == 0);
    printf("callbacks: %d launched, %d ran, %d on another thread, %d out of order, %d saw a "
           "wrong slot\n",
           launched, atomic_load(&g_done), atomic_load(&g_wrong_thread),
           atomic_load(&g_out_of_order), atomic_load(&g_wrong_slot));

    /* stop the report thread, then end its subscription */
    atomic_store(&g_stop, 1);
    CHECK_TRUE(pthread_join(g_report_thread, NULL) == 0);
    if (subscribed) {
        CHECK_ACL(aclrtUnSubscribeReport(thread_id, stream));
    }
    CHECK_TRUE(atomic_load(&g_context_error) == 0);
    if (!CHECK_TRUE(atomic_load(&g_process_errors) == 0)) {
        printf("aclrtProcessReport answered %d %d time(s)\n", atomic_load(&g_last_process_error),
               atomic_load(&g_process_errors));
    }

    CHECK_ACL(aclrtMemPoolFreeAsync(dev, stream));
    CHECK_ACL(aclrtSynchronizeStream(stream));
    CHECK_ACL(aclrtMemPoolDestroy(pool));
    CHECK_ACL(aclrtFreeHost(host));
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
    return SAMPLE_FINISH();
}
