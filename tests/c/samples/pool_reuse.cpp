/*
 * pool_reuse.cpp (C++17): a pool that caches what is freed hands the same memory back.
 *
 * Twenty iterations on one stream of: three 4 MiB allocations from a pool (a, b, c), two
 * host-to-device copies, a host function computing c = a + b, a device-to-host copy and three
 * frees, all in stream order, then one aclrtSynchronizeStream. The pool's release threshold
 * is its size, so freed memory stays cached: every iteration after the first must get the
 * first iteration's three addresses back, RESERVED must never grow past the first iteration's,
 * and every sum must be right.
 *
 * The vector add is a host function (aclrtLaunchHostFunc) reading and writing the device
 * buffers through their pointers. That relies on a property of the emulator behind the
 * drop-in library: its device addresses are host addresses. On an Ascend device this step
 * would be a kernel launch.
 */
#include <acl/acl.h>
#include <acl/acl_rt_memory_soma.h>

#include "sample_check.h"

#include <array>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

constexpr std::size_t kBytes = std::size_t{4} << 20;
constexpr std::size_t kFloats = kBytes / sizeof(float);
constexpr int kIterations = 20;
constexpr std::uint64_t kPoolSize = std::uint64_t{1} << 30;

struct AddArgs {
    const float *a = nullptr;
    const float *b = nullptr;
    float *c = nullptr;
    std::size_t n = 0;
};

// c[i] = a[i] + b[i] on the device pointers themselves (the emulator's property, see above).
void add_vectors(void *p)
{
    const auto *args = static_cast<const AddArgs *>(p);
    for (std::size_t i = 0; i < args->n; i++) {
        args->c[i] = args->a[i] + args->b[i];
    }
}

std::uint64_t attr(aclrtMemPool pool, aclrtMemPoolAttr which)
{
    std::uint64_t value = UINT64_MAX;
    if (!CHECK_ACL(aclrtMemPoolGetAttr(pool, which, &value))) {
        return UINT64_MAX;
    }
    return value;
}

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
    props.maxSize = static_cast<std::size_t>(kPoolSize);
    aclrtMemPool pool = nullptr;
    if (!CHECK_ACL(aclrtMemPoolCreate(&pool, &props))) {
        return SAMPLE_FINISH();
    }
    std::uint64_t threshold = kPoolSize;
    CHECK_ACL(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &threshold));

    std::vector<float> a(kFloats);
    std::vector<float> b(kFloats);
    std::vector<float> c(kFloats);
    AddArgs args;  // outlives every host function: the stream is synchronized each iteration
    std::array<void *, 3> first{};
    std::uint64_t first_reserved = 0;
    int reused = 0;
    int sums_ok = 0;
    for (int it = 0; it < kIterations; it++) {
        for (std::size_t i = 0; i < kFloats; i++) {
            a[i] = static_cast<float>(i % 1000) + static_cast<float>(it);
            b[i] = static_cast<float>(2 * (i % 1000));
            c[i] = -1.0f;
        }
        std::array<void *, 3> d{};
        bool ok = true;
        for (auto &p : d) {
            ok &= CHECK_ACL(aclrtMemPoolMallocAsync(&p, kBytes, pool, stream)) && p != nullptr;
        }
        if (ok) {
            ok &= CHECK_ACL(aclrtMemcpyAsync(d[0], kBytes, a.data(), kBytes,
                                             ACL_MEMCPY_HOST_TO_DEVICE, stream));
            ok &= CHECK_ACL(aclrtMemcpyAsync(d[1], kBytes, b.data(), kBytes,
                                             ACL_MEMCPY_HOST_TO_DEVICE, stream));
            args = AddArgs{static_cast<const float *>(d[0]), static_cast<const float *>(d[1]),
                           static_cast<float *>(d[2]), kFloats};
            ok &= CHECK_ACL(aclrtLaunchHostFunc(stream, add_vectors, &args));
            ok &= CHECK_ACL(aclrtMemcpyAsync(c.data(), kBytes, d[2], kBytes,
                                             ACL_MEMCPY_DEVICE_TO_HOST, stream));
        }
        for (void *p : d) {
            if (p != nullptr) {
                ok &= CHECK_ACL(aclrtMemPoolFreeAsync(p, stream));
            }
        }
        if (!CHECK_ACL(aclrtSynchronizeStream(stream))) {
            std::printf("iteration %d: the stream did not synchronize; stopping\n", it);
            return SAMPLE_FINISH();
        }
        const std::uint64_t reserved = attr(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT);
        bool same = true;
        if (it == 0) {
            first = d;
            first_reserved = reserved;
            CHECK_TRUE(reserved >= 3 * kBytes);
        } else {
            same = d == first;
            CHECK_TRUE(same);
            CHECK_TRUE(reserved == first_reserved);
            reused += same && reserved == first_reserved;
        }
        std::size_t bad = kFloats;
        for (std::size_t i = 0; ok && i < kFloats && bad == kFloats; i++) {
            const float want = static_cast<float>(i % 1000) + static_cast<float>(it) +
                               static_cast<float>(2 * (i % 1000));
            if (c[i] != want) {
                bad = i;
            }
        }
        const bool sum_ok = ok && bad == kFloats;
        CHECK_TRUE(sum_ok);
        sums_ok += sum_ok;
        std::printf("iteration %2d: a=%p b=%p c=%p reserved=%" PRIu64 " MiB %s, sum %s\n", it,
                    d[0], d[1], d[2], reserved >> 20,
                    it == 0 ? "first" : (same ? "reused" : "NOT REUSED"),
                    sum_ok ? "ok" : "WRONG");
    }
    CHECK_TRUE(attr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT) == 0);
    CHECK_TRUE(attr(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH) == first_reserved);
    std::printf("reuse: %d of %d iterations after the first got the same addresses without "
                "growing; %d of %d sums right\n",
                reused, kIterations - 1, sums_ok, kIterations);

    CHECK_ACL(aclrtMemPoolDestroy(pool));
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
    return SAMPLE_FINISH();
}
