// Prints, after all tests, the worst velocity errors measured against finite differences.
#include <cstdio>

#include "tests/support/fd.h"

namespace {
class FdReport : public ::testing::Environment {
public:
    void TearDown() override {
        const auto& r = ks::test::fd_registry();
        if (!r.empty()) {
            std::printf("\nWorst propagated-velocity error vs central finite difference\n");
            std::printf("%-44s %14s %14s\n", "op channel", "worst rel err", "worst/allowed");
            for (const auto& [key, w] : r) std::printf("%-44s %14.3e %14.3f\n", key.c_str(), w.rel, w.normalized);
        }
        const auto& f = ks::test::figure_registry();
        if (!f.empty()) {
            std::printf("\nMeasured figures (worst over the test's cases)\n");
            for (const auto& [key, v] : f) std::printf("%-72s %12.4g\n", key.c_str(), v);
        }
    }
};
const auto* const kFdReport = ::testing::AddGlobalTestEnvironment(new FdReport);
}  // namespace
