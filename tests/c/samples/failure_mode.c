/*
 * failure_mode.c: a failing task, the failure mode, the exception callback, abort and stop.
 *
 * The failing task stands in for a kernel that traps: a notification wait with a 1 s limit
 * that nothing records. Without the failure mode, the host functions around it both run and
 * the synchronization reports ACL_ERROR_RT_TASK_TIMEOUT; with ACL_STOP_ON_FAILURE only the
 * first runs. The exception callback sees the failed task's number (what
 * aclrtGetThreadLastTaskId said after enqueueing it), its stream's device and its code, and
 * the getters refuse any other info. Then aclrtStreamAbort drops queued work (the next
 * synchronization answers ACL_ERROR_RT_STREAM_ABORT) and the stream is usable again; stream
 * state callbacks see every create and destroy.
 */
#include <acl/acl.h>

#include "sample_check.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

static atomic_int g_ran;
static atomic_uint g_failed_task = 0xFFFFFFFFu;
static atomic_uint g_failed_code;
static atomic_uint g_failed_device = 0xFFFFFFFFu;
static atomic_int g_callbacks;
static atomic_int g_created;
static atomic_int g_destroyed;

static void easy_op(void *arg)
{
    (void)arg;
    atomic_fetch_add(&g_ran, 1);
}

static void error_op(aclrtStream s)
{
    static aclrtNotify never;
    if (never == NULL) {
        CHECK_ACL(aclrtCreateNotify(&never, 0));
    }
    CHECK_ACL(aclrtWaitAndResetNotify(never, s, 1));
}

static void on_exception(aclrtExceptionInfo *info)
{
    atomic_fetch_add(&g_callbacks, 1);
    atomic_store(&g_failed_task, aclrtGetTaskIdFromExceptionInfo(info));
    atomic_store(&g_failed_code, aclrtGetErrorCodeFromExceptionInfo(info));
    atomic_store(&g_failed_device, aclrtGetDeviceIdFromExceptionInfo(info));
    void *args = NULL;
    uint32_t len = 0;
    aclrtFuncHandle f = NULL;
    (void)aclrtGetArgsFromExceptionInfo(info, &args, &len);
    (void)aclrtGetFuncHandleFromExceptionInfo(info, &f);
}

static void on_state(aclrtStream s, aclrtStreamState state, void *args)
{
    (void)s;
    CHECK_TRUE(args == (void *)&g_created);
    if (state == ACL_RT_STREAM_STATE_CREATE_POST) {
        atomic_fetch_add(&g_created, 1);
    } else if (state == ACL_RT_STREAM_STATE_DESTROY_PRE) {
        atomic_fetch_add(&g_destroyed, 1);
    }
}

int main(void)
{
    CHECK_ACL(aclInit(NULL));
    CHECK_ACL(aclrtRegStreamStateCallback("failure_mode", on_state, &g_created));
    CHECK_CODE(aclrtRegStreamStateCallback("failure_mode", on_state, NULL), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_ACL(aclrtSetDevice(0));
    CHECK_ACL(aclrtSetExceptionInfoCallback(on_exception));
    aclrtStream s = NULL;
    CHECK_ACL(aclrtCreateStream(&s));
    CHECK_TRUE(atomic_load(&g_created) == 1);

    /* Without the failure mode: the task after the failure runs. */
    CHECK_ACL(aclrtLaunchHostFunc(s, easy_op, NULL));
    error_op(s);
    uint32_t task = 0;
    CHECK_ACL(aclrtGetThreadLastTaskId(&task));
    CHECK_ACL(aclrtLaunchHostFunc(s, easy_op, NULL));
    CHECK_CODE(aclrtSynchronizeStream(s), ACL_ERROR_RT_TASK_TIMEOUT);
    CHECK_TRUE(atomic_load(&g_ran) == 2);
    CHECK_TRUE(atomic_load(&g_callbacks) == 1);
    CHECK_TRUE(atomic_load(&g_failed_task) == task);
    CHECK_TRUE(atomic_load(&g_failed_code) == ACL_ERROR_RT_TASK_TIMEOUT);
    CHECK_TRUE(atomic_load(&g_failed_device) == 0);

    /* With it: the stream stops at the failure until the synchronization reports it. */
    atomic_store(&g_ran, 0);
    CHECK_ACL(aclrtSetStreamFailureMode(s, ACL_STOP_ON_FAILURE));
    CHECK_CODE(aclrtSetStreamFailureMode(s, ACL_CONTINUE_ON_FAILURE), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    CHECK_ACL(aclrtLaunchHostFunc(s, easy_op, NULL));
    error_op(s);
    CHECK_ACL(aclrtLaunchHostFunc(s, easy_op, NULL));
    CHECK_CODE(aclrtSynchronizeStream(s), ACL_ERROR_RT_TASK_TIMEOUT);
    CHECK_TRUE(atomic_load(&g_ran) == 1);
    CHECK_TRUE(atomic_load(&g_callbacks) == 2);
    CHECK_ACL(aclrtLaunchHostFunc(s, easy_op, NULL));
    CHECK_ACL(aclrtSynchronizeStream(s));
    CHECK_TRUE(atomic_load(&g_ran) == 2);

    /* The getters know only the running callback's info. */
    CHECK_TRUE(aclrtGetTaskIdFromExceptionInfo(NULL) == 0xFFFFFFFFu);
    CHECK_TRUE(aclrtGetStreamIdFromExceptionInfo(NULL) == 0xFFFFFFFFu);

    /* An abort drops what is queued behind a wait; the stream runs again afterwards. */
    aclrtNotify gate = NULL;
    CHECK_ACL(aclrtCreateNotify(&gate, 0));
    atomic_store(&g_ran, 0);
    CHECK_ACL(aclrtWaitAndResetNotify(gate, s, 0));
    CHECK_ACL(aclrtLaunchHostFunc(s, easy_op, NULL));
    CHECK_ACL(aclrtStreamAbort(s));
    CHECK_CODE(aclrtSynchronizeStream(s), ACL_ERROR_RT_STREAM_ABORT);
    CHECK_TRUE(atomic_load(&g_ran) == 0);
    CHECK_ACL(aclrtLaunchHostFunc(s, easy_op, NULL));
    CHECK_ACL(aclrtSynchronizeStream(s));
    CHECK_TRUE(atomic_load(&g_ran) == 1);
    CHECK_CODE(aclrtStreamStop(NULL), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_ACL(aclrtStreamStop(s));
    CHECK_CODE(aclrtSynchronizeStream(s), ACL_ERROR_RT_INTERNAL_ERROR);
    CHECK_ACL(aclrtDestroyNotify(gate));

    aclrtErrorInfo info;
    memset(&info, 0xAB, sizeof info);
    CHECK_ACL(aclrtGetErrorVerbose(0, &info));
    CHECK_TRUE(info.errorType == ACL_RT_NO_ERROR && info.tryRepair == 0 && info.hasDetail == 0);
    CHECK_CODE(aclrtGetErrorVerbose(7, &info), ACL_ERROR_RT_INVALID_DEVICEID);

    CHECK_ACL(aclrtDestroyStreamForce(s));
    CHECK_TRUE(atomic_load(&g_destroyed) == 1);
    CHECK_ACL(aclrtRegStreamStateCallback("failure_mode", NULL, NULL));
    CHECK_ACL(aclrtSetExceptionInfoCallback(NULL));
    CHECK_ACL(aclrtResetDeviceForce(0));
    CHECK_ACL(aclFinalize());
    return SAMPLE_FINISH();
}
