#pragma once
// A few persistent threads that run the iterations of a loop together with the calling thread:
// the server builds its clients' snapshots (and the demo steps its characters) on every core
// without starting threads per tick.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ks {

class WorkerPool {
public:
    // `workers` threads besides the caller; -1: one fewer than the machine's cores (at least 0).
    explicit WorkerPool(int workers = -1);
    ~WorkerPool();
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;
    // f(i) for every i in [0, n), spread over the workers and the caller; returns when all are
    // done. f must not throw. Not reentrant: one loop at a time.
    void parallel_for(size_t n, const std::function<void(size_t)>& f);
    int workers() const { return int(threads_.size()); }

private:
    void work();
    void run_items();
    std::vector<std::thread> threads_;
    std::mutex m_;
    std::condition_variable start_, done_;
    std::atomic<const std::function<void(size_t)>*> job_{nullptr};
    std::atomic<size_t> n_{0};
    std::atomic<size_t> next_{0};
    uint64_t generation_ = 0;
    int finished_ = 0;  // workers through the current loop
    bool stopping_ = false;
};

}  // namespace ks
