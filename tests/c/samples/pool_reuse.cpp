/*
 * pool_reuse.cpp (C++17): a pool that caches what is freed hands the same memory back -- on a
 * runtime that reuses freed blocks.
 *
 * Twenty iterations on one stream of: three 4 MiB allocations from a pool (a, b, c), two
 * host-to-device copies, a host function computing c = a + b, a device-to-host copy and three
 * frees, all in stream order, then one aclrtSynchronizeStream. The pool's release threshold
 * is its size, so freed memory stays cached. Every sum must be right, and then:
 *
 * - on a runtime that reuses freed blocks (CANN as documented), every iteration after the
 *   first gets the first iteration's three addresses back and RESERVED never grows past the
 *   first iteration's;
 * - on a runtime that does not (CANN's open runtime as it ships), every iteration gets fresh
 *   addresses (each block lies outside every earlier iteration's blocks) and RESERVED grows by
 *   exactly the first iteration's bytes each iteration, up to 20 times that, until
 *   aclrtMemPoolTrimTo gives it back. The 240 MiB stay well inside the 1 GiB pool; a program
 *   for that runtime that looped longer would trim before RESERVED reached the pool size.
 *
 * Either way the program ends with aclrtMemPoolTrimTo(pool, 0), after which RESERVED is 0.
 *
 * Which runtime it is, the program measures first (sample_runtime.h: allocate, free, allocate
 * on one stream; did the address come back?), as a CANN program must: it cannot ask the
 * runtime, and the same source also runs against installed runtimes (tests/ascend_hardware.rs),
 * where the emulator's MEMPOOL_EMU_PROFILE means nothing. tests/c_samples.rs runs it on both
 * emulator profiles and checks the measured line against the profile it set, so the
 * measurement cannot hide a library that ignores its profile.
 *
 * The vector add is a host function (aclrtLaunchHostFunc) reading and writing the device
 * buffers through their pointers. That relies on a property of the emulator behind the
 * drop-in library: its device addresses are host addresses. On an Ascend device this step
 * would be a kernel launch.
 */
#include <acl/acl.h>
#include <acl/acl_rt_memory_soma.h>

#include "sample_check.h"
#include "sample_runtime.h"

#include <algorithm>
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

// Whether every block of `d` lies outside every block of `earlier` (each kBytes long).
bool outside(const std::array<void *, 3> &d, const std::vector<std::array<void *, 3>> &earlier)
{
    return std::all_of(d.begin(), d.end(), [&](void *p) {
        const auto lo = reinterpret_cast<std::uintptr_t>(p);
        return std::all_of(earlier.begin(), earlier.end(), [&](const std::array<void *, 3> &e) {
            return std::all_of(e.begin(), e.end(), [&](void *q) {
                const auto qlo = reinterpret_cast<std::uintptr_t>(q);
                return lo + kBytes <= qlo || qlo + kBytes <= lo;
            });
        });
    });
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
    sample_runtime rt{};
    if (!sample_measure_runtime(stream, &rt)) {
        return SAMPLE_FINISH();
    }
    std::uint64_t threshold = kPoolSize;
    CHECK_ACL(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &threshold));

    std::vector<float> a(kFloats);
    std::vector<float> b(kFloats);
    std::vector<float> c(kFloats);
    AddArgs args;  // outlives every host function: the stream is synchronized each iteration
    std::array<void *, 3> first{};
    std::vector<std::array<void *, 3>> earlier;  // every earlier iteration's blocks
    std::uint64_t first_reserved = 0;
    int as_expected = 0;  // iterations after the first with the addresses and RESERVED expected
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
        bool addresses_ok = true;
        if (it == 0) {
            first = d;
            first_reserved = reserved;
            CHECK_TRUE(reserved >= 3 * kBytes);
        } else if (rt.reuses) {
            addresses_ok = d == first;
            CHECK_TRUE(addresses_ok);
            const bool reserved_ok = CHECK_TRUE(reserved == first_reserved);
            as_expected += addresses_ok && reserved_ok;
        } else {
            addresses_ok = outside(d, earlier);  // fresh address space
            CHECK_TRUE(addresses_ok);
            const auto grown = first_reserved * static_cast<std::uint64_t>(it + 1);
            const bool reserved_ok = CHECK_TRUE(reserved == grown);
            as_expected += addresses_ok && reserved_ok;
        }
        earlier.push_back(d);
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
        const char *addresses = addresses_ok ? (rt.reuses ? "reused" : "fresh")
                                             : (rt.reuses ? "NOT REUSED" : "NOT FRESH");
        std::printf("iteration %2d: a=%p b=%p c=%p reserved=%" PRIu64 " MiB %s, sum %s\n", it,
                    d[0], d[1], d[2], reserved >> 20, it == 0 ? "first" : addresses,
                    sum_ok ? "ok" : "WRONG");
    }
    CHECK_TRUE(attr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT) == 0);
    const std::uint64_t high = rt.reuses ? first_reserved : first_reserved * kIterations;
    CHECK_TRUE(attr(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH) == high);
    if (rt.reuses) {
        std::printf("reuse: %d of %d iterations after the first got the same addresses without "
                    "growing; %d of %d sums right\n",
                    as_expected, kIterations - 1, sums_ok, kIterations);
    } else {
        std::printf("no reuse: %d of %d iterations after the first got fresh addresses, RESERVED "
                    "growing by %" PRIu64 " MiB each; %d of %d sums right\n",
                    as_expected, kIterations - 1, first_reserved >> 20, sums_ok, kIterations);
    }
    const std::uint64_t before_trim = attr(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT);
    CHECK_TRUE(before_trim == high);  // nothing given back until the trim
    CHECK_ACL(aclrtMemPoolTrimTo(pool, 0));
    const std::uint64_t trimmed = attr(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT);
    CHECK_TRUE(trimmed == 0);
    std::printf("trimmed to 0: RESERVED %" PRIu64 " MiB (was %" PRIu64 " MiB)\n", trimmed >> 20,
                before_trim >> 20);

    CHECK_ACL(aclrtMemPoolDestroy(pool));
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
    return SAMPLE_FINISH();
}
