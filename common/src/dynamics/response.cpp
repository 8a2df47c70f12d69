#include "common/src/dynamics/response.h"

#include <cmath>

namespace ks {

SodTrace sod_step_response(const SodParams& p, SodStability mode, float T, float duration) {
    SecondOrder<float> f(p, 0.0f, mode);
    SodTrace tr;
    tr.t.push_back(0);
    tr.x.push_back(0);
    tr.y.push_back(0);
    const int n = int(std::ceil(duration / T));
    for (int i = 1; i <= n; ++i) {
        f.update(T, 1.0f);
        tr.t.push_back(double(i) * T);
        tr.x.push_back(1.0);
        tr.y.push_back(f.y);
    }
    return tr;
}

SodTrace sod_moving_response(const SodParams& p, SodStability mode, float T, float duration) {
    auto input = [](double t, double& v) {
        v = 0;
        if (t < 0.25) return 0.0;
        if (t < 1.5) return 1.0;
        const double w = 2 * 3.14159265358979 * 0.5;
        v = -w * std::sin(w * (t - 1.5));
        return std::cos(w * (t - 1.5));
    };
    SecondOrder<float> f(p, 0.0f, mode);
    SodTrace tr;
    const int n = int(std::ceil(duration / T));
    for (int i = 0; i <= n; ++i) {
        const double t = double(i) * T;
        double v;
        const double x = input(t, v);
        // Steps have no known velocity: estimate it there; elsewhere pass the true one.
        if (i > 0) {
            if (t >= 1.5) f.update(T, float(x), float(v));
            else f.update(T, float(x));
        }
        tr.t.push_back(t);
        tr.x.push_back(x);
        tr.y.push_back(f.y);
    }
    return tr;
}

}  // namespace ks
