/*
 * device_queries.c: what a program asks about devices, contexts and streams (two devices).
 *
 * Device information from the profile and the configured memory, status, utilization,
 * resource limits set, read back and reset, the priority range, the package version, the
 * current default stream and stream getters, a stream made from a configuration handle,
 * and peer access: a device-to-device copy between the two devices is refused until the
 * current device has peer access, then carries the data; disabling ends it.
 */
#include <acl/acl.h>

#include "sample_check.h"

#include <stdint.h>
#include <string.h>

int main(void)
{
    CHECK_ACL(aclInit(NULL));
    CHECK_ACL(aclrtSetDevice(0));
    uint32_t count = 0;
    CHECK_ACL(aclrtGetDeviceCount(&count));
    CHECK_TRUE(count == 2);

    int64_t v = 0;
    CHECK_ACL(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_VECTOR_CORE_NUM, &v));
    CHECK_TRUE(v == 48);
    CHECK_ACL(aclrtGetDeviceInfo(1, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, &v));
    size_t free_mem = 0, total = 0;
    CHECK_ACL(aclrtGetMemInfo(ACL_HBM_MEM, &free_mem, &total));
    CHECK_TRUE((size_t)v == total);
    CHECK_ACL(aclrtGetDeviceInfo(1, ACL_DEV_ATTR_PHY_CHIP_ID, &v));
    CHECK_TRUE(v == 1);
    CHECK_CODE(aclrtGetDeviceInfo(2, ACL_DEV_ATTR_VECTOR_CORE_NUM, &v), ACL_ERROR_RT_PARAM_INVALID);
    aclrtDeviceStatus status = ACL_RT_DEVICE_STATUS_ABNORMAL;
    CHECK_ACL(aclrtQueryDeviceStatus(1, &status));
    CHECK_TRUE(status == ACL_RT_DEVICE_STATUS_NORMAL);
    aclrtUtilizationInfo u;
    memset(&u, 0, sizeof u);
    CHECK_ACL(aclrtGetDeviceUtilizationRate(0, &u));
    CHECK_TRUE(u.cubeUtilization == 0 && u.memoryUtilization == -1);

    uint32_t limit = 0;
    CHECK_ACL(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, 1));
    CHECK_ACL(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, &limit));
    CHECK_TRUE(limit == 1);
    CHECK_ACL(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, &limit));
    CHECK_TRUE(limit == 1);
    CHECK_CODE(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, 49), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_ACL(aclrtResetDeviceResLimit(0));
    CHECK_ACL(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, &limit));
    CHECK_TRUE(limit == 48);
    int32_t least = -1, greatest = -1;
    CHECK_ACL(aclrtDeviceGetStreamPriorityRange(&least, &greatest));
    CHECK_TRUE(least == 7 && greatest == 0);

    char version[ACL_PKG_VERSION_MAX_SIZE];
    int32_t number = 0;
    CHECK_ACL(aclsysGetVersionStr((char *)"runtime", version));
    CHECK_ACL(aclsysGetVersionNum((char *)"runtime", &number));
    CHECK_TRUE(number > 0);
    CHECK_TRUE(aclDataTypeSize(ACL_FLOAT16) == 2 && aclDataTypeSize(ACL_INT64) == 8);
    CHECK_TRUE(aclFloat16ToFloat(aclFloatToFloat16(1.5f)) == 1.5f);

    /* The default stream and the getters. */
    aclrtStream def = NULL;
    CHECK_ACL(aclrtCtxGetCurrentDefaultStream(&def));
    CHECK_TRUE(def != NULL);
    uint32_t flags = 9, prio = 9;
    CHECK_ACL(aclrtStreamGetFlags(def, &flags));
    CHECK_ACL(aclrtStreamGetPriority(NULL, &prio));
    CHECK_TRUE(flags == 0 && prio == 0);
    CHECK_CODE(aclrtDestroyStream(def), ACL_ERROR_RT_PARAM_INVALID);
    aclrtStreamConfigHandle *cfg = aclrtCreateStreamConfigHandle();
    CHECK_TRUE(cfg != NULL);
    size_t want_flags = ACL_STREAM_FAST_LAUNCH;
    uint32_t want_prio = 3;
    CHECK_ACL(aclrtSetStreamConfigOpt(cfg, ACL_RT_STREAM_FLAG, &want_flags, sizeof want_flags));
    CHECK_ACL(aclrtSetStreamConfigOpt(cfg, ACL_RT_STREAM_PRIORITY, &want_prio, sizeof want_prio));
    uint16_t short_flags = 1;
    CHECK_CODE(aclrtSetStreamConfigOpt(cfg, ACL_RT_STREAM_FLAG, &short_flags, sizeof short_flags), ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtSetStreamConfigOpt(cfg, ACL_RT_STREAM_PRIORITY, &want_flags, sizeof want_flags), ACL_ERROR_INVALID_PARAM);
    aclrtStream s = NULL;
    CHECK_ACL(aclrtCreateStreamV2(&s, cfg));
    CHECK_ACL(aclrtStreamGetFlags(s, &flags));
    CHECK_ACL(aclrtStreamGetPriority(s, &prio));
    CHECK_TRUE(flags == ACL_STREAM_FAST_LAUNCH && prio == 3);
    int32_t id = -1;
    CHECK_ACL(aclrtStreamGetId(s, &id));
    CHECK_TRUE(id > 0);
    CHECK_ACL(aclrtDestroyStreamConfigHandle(cfg));

    /* Peer access between the two devices. */
    int32_t can = 0;
    CHECK_ACL(aclrtDeviceCanAccessPeer(&can, 0, 1));
    CHECK_TRUE(can == 1);
    CHECK_CODE(aclrtDeviceCanAccessPeer(&can, 1, 1), ACL_ERROR_INVALID_PARAM);
    void *src = NULL, *dst = NULL;
    unsigned char pattern[256], back[256];
    for (int i = 0; i < 256; i++) {
        pattern[i] = (unsigned char)(i * 7);
    }
    CHECK_ACL(aclrtMalloc(&src, sizeof pattern, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMemcpy(src, sizeof pattern, pattern, sizeof pattern, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_ACL(aclrtSetDevice(1));
    CHECK_ACL(aclrtMalloc(&dst, sizeof pattern, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_CODE(aclrtMemcpy(dst, sizeof pattern, src, sizeof pattern, ACL_MEMCPY_DEVICE_TO_DEVICE),
               ACL_ERROR_RT_DRV_INTERNAL_ERROR);
    CHECK_CODE(aclrtDeviceEnablePeerAccess(0, 1), ACL_ERROR_FEATURE_UNSUPPORTED);
    CHECK_CODE(aclrtDeviceEnablePeerAccess(1, 0), ACL_ERROR_INVALID_PARAM);
    CHECK_ACL(aclrtDeviceEnablePeerAccess(0, 0));
    CHECK_ACL(aclrtMemcpy(dst, sizeof pattern, src, sizeof pattern, ACL_MEMCPY_DEVICE_TO_DEVICE));
    CHECK_ACL(aclrtMemcpy(back, sizeof back, dst, sizeof pattern, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK_TRUE(memcmp(back, pattern, sizeof pattern) == 0);
    CHECK_ACL(aclrtDeviceDisablePeerAccess(0));
    CHECK_CODE(aclrtDeviceDisablePeerAccess(0), ACL_ERROR_RT_DRV_INTERNAL_ERROR);
    CHECK_CODE(aclrtMemcpy(dst, sizeof pattern, src, sizeof pattern, ACL_MEMCPY_DEVICE_TO_DEVICE),
               ACL_ERROR_RT_DRV_INTERNAL_ERROR);
    CHECK_ACL(aclrtFree(dst));
    CHECK_ACL(aclrtSetDevice(0));
    CHECK_ACL(aclrtFree(src));
    CHECK_ACL(aclrtDestroyStream(s));
    CHECK_ACL(aclrtResetDeviceForce(1));
    CHECK_ACL(aclrtResetDeviceForce(0));
    CHECK_ACL(aclFinalize());
    return SAMPLE_FINISH();
}
