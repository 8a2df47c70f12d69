// WorkerPool: every index runs exactly once per loop, loops follow each other without a worker
// left behind taking an index of the next, and the results equal a plain loop's.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "common/src/util/worker_pool.h"

using namespace ks;

TEST(WorkerPool, EveryIndexExactlyOnceAcrossManyLoops) {
    for (int workers : {0, 1, 3}) {
        WorkerPool pool(workers);
        EXPECT_EQ(pool.workers(), workers);
        for (size_t n : {0u, 1u, 2u, 7u, 64u, 1000u}) {
            for (int round = 0; round < 50; ++round) {
                std::vector<std::atomic<int>> hits(n);
                pool.parallel_for(n, [&](size_t i) { hits[i].fetch_add(1); });
                for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "workers " << workers << " n " << n << " index " << i;
            }
        }
    }
}

TEST(WorkerPool, ResultsEqualASerialLoop) {
    WorkerPool pool(1);
    std::vector<double> a(5000), b(5000);
    auto f = [](size_t i) { double x = double(i); for (int k = 0; k < 50; ++k) x = x * 0.999 + 1.0 / double(k + 1); return x; };
    pool.parallel_for(a.size(), [&](size_t i) { a[i] = f(i); });
    for (size_t i = 0; i < b.size(); ++i) b[i] = f(i);
    EXPECT_EQ(a, b);
}
