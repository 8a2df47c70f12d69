#include "common/src/util/worker_pool.h"

#include <algorithm>

namespace ks {

WorkerPool::WorkerPool(int workers) {
    if (workers < 0) workers = std::max(0, int(std::thread::hardware_concurrency()) - 1);
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
}

WorkerPool::~WorkerPool() {
    {
        std::lock_guard<std::mutex> lock(m_);
        stopping_ = true;
    }
    start_.notify_all();
    for (std::thread& t : threads_) t.join();
}

void WorkerPool::run_items() {
    for (size_t i = next_.fetch_add(1); i < n_.load(); i = next_.fetch_add(1)) (*job_.load())(i);
}

void WorkerPool::work() {
    uint64_t seen = 0;
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(m_);
            start_.wait(lock, [&] { return stopping_ || generation_ != seen; });
            if (stopping_) return;
            seen = generation_;
        }
        run_items();
        {
            std::lock_guard<std::mutex> lock(m_);
            ++finished_;
        }
        done_.notify_one();
    }
}

void WorkerPool::parallel_for(size_t n, const std::function<void(size_t)>& f) {
    if (threads_.empty() || n < 2) {
        for (size_t i = 0; i < n; ++i) f(i);
        return;
    }
    {
        std::lock_guard<std::mutex> lock(m_);
        job_ = &f;
        n_ = n;
        next_ = 0;
        finished_ = 0;
        ++generation_;
    }
    start_.notify_all();
    run_items();
    // Every item is taken; wait until every worker has been through this loop (so none is left
    // behind to take an index of the next one).
    std::unique_lock<std::mutex> lock(m_);
    done_.wait(lock, [&] { return finished_ == int(threads_.size()); });
    job_ = nullptr;
}

}  // namespace ks
