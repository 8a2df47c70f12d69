#pragma once
// The accuracy-smoothness sweep (docs/FIDELITY.md, "The frontier"): each strategy over a grid of
// its own settings, all replayed on one network run, and each strategy's Pareto front.

#include <string>
#include <vector>

#include "client/src/reconstruct.h"

namespace ks {

// The grid: interp and hermite over display delays 50-200 ms; deadblend over blend times and
// velocity half-lives; deadblend+sod over f, zeta, the acceleration limit and the prediction's
// half-life; snap and extrap have nothing to sweep (one point each). `base` is the default
// setting, always included (first among its strategy's points).
std::vector<ReconstructConfig> sweep_variants(const ReconstructConfig& base, const std::vector<Strategy>& strategies);

// "delay 100 ms", "f 6 zeta 1 accel 40 predict 0.3", ...: the settings a variant sweeps.
std::string variant_label(const ReconstructConfig& c);

}  // namespace ks
