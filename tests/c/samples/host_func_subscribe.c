/*
 * host_func_subscribe.c: host functions run by a subscribed thread.
 *
 * A thread subscribes a stream's host functions (aclrtSubscribeHostFunc) and another its
 * callbacks (aclrtSubscribeReport), as CANN's runtime with these calls allows on one stream.
 * Each host function checks it runs on the subscribed thread and in stream order, between
 * the callbacks around it; nothing runs before the thread calls aclrtProcessHostFunc.
 */
#define _DEFAULT_SOURCE /* usleep */
#include <acl/acl.h>

#include "sample_check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#define FUNCS 20

static pthread_t g_host_thread;
static atomic_int g_order;
static atomic_int g_bad;
static atomic_int g_started; /* the host-function thread may process */
static atomic_int g_loop = 1;
static atomic_int g_subscribed; /* the report thread may process */

static void host_func(void *arg)
{
    int want = (int)(intptr_t)arg;
    if (!pthread_equal(pthread_self(), g_host_thread) || atomic_fetch_add(&g_order, 1) != want) {
        atomic_fetch_add(&g_bad, 1);
    }
}

static void callback(void *arg)
{
    int want = (int)(intptr_t)arg;
    if (atomic_fetch_add(&g_order, 1) != want) {
        atomic_fetch_add(&g_bad, 1);
    }
}

static void *host_loop(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_started)) {
        usleep(1000);
    }
    while (atomic_load(&g_loop)) {
        aclError rc = aclrtProcessHostFunc(20);
        if (rc != ACL_SUCCESS && rc != ACL_ERROR_RT_REPORT_TIMEOUT) {
            atomic_fetch_add(&g_bad, 1);
        }
    }
    return NULL;
}

static void *report_loop(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_subscribed)) {
        usleep(1000);
    }
    while (atomic_load(&g_loop)) {
        aclError rc = aclrtProcessReport(20);
        if (rc != ACL_SUCCESS && rc != ACL_ERROR_RT_REPORT_TIMEOUT) {
            atomic_fetch_add(&g_bad, 1);
        }
    }
    return NULL;
}

int main(void)
{
    CHECK_ACL(aclInit(NULL));
    CHECK_ACL(aclrtSetDevice(0));
    aclrtStream s = NULL;
    CHECK_ACL(aclrtCreateStream(&s));
    pthread_t report;
    CHECK_TRUE(pthread_create(&g_host_thread, NULL, host_loop, NULL) == 0);
    CHECK_TRUE(pthread_create(&report, NULL, report_loop, NULL) == 0);
    CHECK_ACL(aclrtSubscribeHostFunc((uint64_t)g_host_thread, s));
    CHECK_CODE(aclrtSubscribeHostFunc((uint64_t)g_host_thread, s), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    CHECK_ACL(aclrtSubscribeReport((uint64_t)report, s));
    atomic_store(&g_subscribed, 1);
    int n = 0;
    CHECK_ACL(aclrtLaunchCallback(callback, (void *)(intptr_t)n++, ACL_CALLBACK_BLOCK, s));
    for (int i = 0; i < FUNCS; i++) {
        CHECK_ACL(aclrtLaunchHostFunc(s, host_func, (void *)(intptr_t)n++));
    }
    CHECK_ACL(aclrtLaunchCallback(callback, (void *)(intptr_t)n++, ACL_CALLBACK_BLOCK, s));
    /* The first callback runs, then the stream waits for the subscribed thread. */
    usleep(30000);
    CHECK_TRUE(atomic_load(&g_order) <= 1);
    atomic_store(&g_started, 1);
    CHECK_ACL(aclrtSynchronizeStream(s));
    CHECK_TRUE(atomic_load(&g_order) == n);
    CHECK_TRUE(atomic_load(&g_bad) == 0);
    atomic_store(&g_loop, 0);
    pthread_join(g_host_thread, NULL);
    pthread_join(report, NULL);
    CHECK_ACL(aclrtUnSubscribeHostFunc((uint64_t)g_host_thread, s));
    CHECK_CODE(aclrtUnSubscribeHostFunc((uint64_t)g_host_thread, s), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    CHECK_ACL(aclrtUnSubscribeReport((uint64_t)report, s));
    CHECK_CODE(aclrtProcessHostFunc(0), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_CODE(aclrtProcessHostFunc(5), ACL_ERROR_RT_THREAD_SUBSCRIBE);
    CHECK_ACL(aclrtDestroyStream(s));
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
    return SAMPLE_FINISH();
}
