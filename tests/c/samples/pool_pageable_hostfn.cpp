/*
 * pool_pageable_hostfn.cpp (C++17): pool memory, pageable host memory, a host function and
 * stream-ordered frees, in one stream's order.
 *
 * Five rounds of: two 1 MiB allocations from a pool (in, out) on a stream; aclrtMemcpyAsync
 * host-to-device from a std::vector (pageable memory, not aclrtMallocHost); a host function
 * computing out[i] = 2 * in[i] + round; aclrtMemcpyAsync device-to-host into a malloc'd
 * buffer (pageable too); two aclrtMemPoolFreeAsync; then aclrtSynchronizeStream. Every
 * round's result must be exact, the pool must have nothing in use after each
 * synchronization, and no host buffer is touched while a copy of it may be pending.
 *
 * The host function reads and writes the device buffers through their pointers. That relies
 * on a property of the emulator behind the drop-in library: its device addresses are host
 * addresses. On an Ascend device this step would be a kernel launch.
 */
#include <acl/acl.h>
#include <acl/acl_rt_memory_soma.h>

#include "sample_check.h"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace {

constexpr std::size_t kFloats = std::size_t{1} << 18;
constexpr std::size_t kBytes = kFloats * sizeof(float);
constexpr int kRounds = 5;

struct ScaleArgs {
    const float *in = nullptr;
    float *out = nullptr;
    std::size_t n = 0;
    float add = 0.0f;
};

// out[i] = 2 * in[i] + add, on the device pointers themselves (the emulator's property).
void scale(void *p)
{
    const auto *args = static_cast<const ScaleArgs *>(p);
    for (std::size_t i = 0; i < args->n; i++) {
        args->out[i] = 2.0f * args->in[i] + args->add;
    }
}

struct FreeDeleter {
    void operator()(float *p) const { std::free(p); }
};

}  // namespace

int main()
{
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    if (!CHECK_ACL(aclInit(nullptr)) || !CHECK_ACL(aclrtSetDevice(0))) {
        return SAMPLE_FINISH();
    }
    aclrtStream stream = nullptr;
    if (!CHECK_ACL(aclrtCreateStream(&stream))) {
        return SAMPLE_FINISH();
    }
    aclrtMemPoolProps props;
    std::memset(&props, 0, sizeof props);
    props.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    props.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    props.location.id = 0;
    props.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    props.maxSize = std::size_t{256} << 20;
    aclrtMemPool pool = nullptr;
    if (!CHECK_ACL(aclrtMemPoolCreate(&pool, &props))) {
        return SAMPLE_FINISH();
    }

    std::vector<float> input(kFloats);                                   // pageable
    std::unique_ptr<float, FreeDeleter> output(static_cast<float *>(std::malloc(kBytes)));  // pageable
    if (!CHECK_TRUE(output != nullptr)) {
        return SAMPLE_FINISH();
    }
    ScaleArgs args;  // outlives the host function: the stream is synchronized each round
    int rounds_ok = 0;
    for (int round = 0; round < kRounds; round++) {
        for (std::size_t i = 0; i < kFloats; i++) {
            input[i] = static_cast<float>(i % 4096) - 2048.0f;
            output.get()[i] = -1.0f;
        }
        void *d_in = nullptr;
        void *d_out = nullptr;
        bool ok = CHECK_ACL(aclrtMemPoolMallocAsync(&d_in, kBytes, pool, stream));
        ok &= CHECK_ACL(aclrtMemPoolMallocAsync(&d_out, kBytes, pool, stream));
        ok &= d_in != nullptr && d_out != nullptr;
        if (ok) {
            ok &= CHECK_ACL(aclrtMemcpyAsync(d_in, kBytes, input.data(), kBytes,
                                             ACL_MEMCPY_HOST_TO_DEVICE, stream));
            args = ScaleArgs{static_cast<const float *>(d_in), static_cast<float *>(d_out),
                             kFloats, static_cast<float>(round)};
            ok &= CHECK_ACL(aclrtLaunchHostFunc(stream, scale, &args));
            ok &= CHECK_ACL(aclrtMemcpyAsync(output.get(), kBytes, d_out, kBytes,
                                             ACL_MEMCPY_DEVICE_TO_HOST, stream));
        }
        for (void *p : {d_in, d_out}) {
            if (p != nullptr) {
                ok &= CHECK_ACL(aclrtMemPoolFreeAsync(p, stream));
            }
        }
        if (!CHECK_ACL(aclrtSynchronizeStream(stream))) {
            std::printf("round %d: the stream did not synchronize; stopping\n", round);
            return SAMPLE_FINISH();
        }
        std::uint64_t used = UINT64_MAX;
        CHECK_ACL(aclrtMemPoolGetAttr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, &used));
        CHECK_TRUE(used == 0);
        std::size_t bad = kFloats;
        for (std::size_t i = 0; ok && i < kFloats && bad == kFloats; i++) {
            if (output.get()[i] != 2.0f * input[i] + static_cast<float>(round)) {
                bad = i;
            }
        }
        const bool right = ok && bad == kFloats;
        CHECK_TRUE(right);
        rounds_ok += right;
        std::printf("round %d: in=%p out=%p, result %s\n", round, d_in, d_out,
                    right ? "exact" : "WRONG");
    }
    std::printf("pageable copies around a host function: %d of %d rounds exact\n", rounds_ok,
                kRounds);

    CHECK_ACL(aclrtMemPoolDestroy(pool));
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
    return SAMPLE_FINISH();
}
