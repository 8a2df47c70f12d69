#pragma once
// Waiting for a state instead of counting what happens in a fixed window: a loaded machine, or a
// sanitized build, makes everything slower, so a test polls what it asserts until it holds, under
// a deadline generous enough that only a real failure reaches it.

#include <chrono>
#include <thread>

namespace ks::test {

// The deadline of a wait for something that takes milliseconds on an idle machine.
constexpr double kDeadlineS = 60.0;

// Polls pred() (after step() each time, e.g. pumping a client) until it holds or timeout_s pass;
// true when it held. Returns as soon as it holds.
template <class Pred, class Step>
bool wait_until(Pred pred, Step step, double timeout_s = kDeadlineS, std::chrono::microseconds pause = std::chrono::milliseconds(2)) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
        step();
        if (pred()) return true;
        if (std::chrono::steady_clock::now() >= end) return false;
        std::this_thread::sleep_for(pause);
    }
}

template <class Pred>
bool wait_until(Pred pred, double timeout_s = kDeadlineS, std::chrono::microseconds pause = std::chrono::milliseconds(2)) {
    return wait_until(pred, [] {}, timeout_s, pause);
}

}  // namespace ks::test
