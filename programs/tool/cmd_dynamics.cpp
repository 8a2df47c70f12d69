// kinesync-tool dynamics: plots the step response and a moving-input response of the
// second-order filter for given f, zeta, r, so the parameters can be tuned by eye.
#include <cstdio>

#include "common/src/dynamics/response.h"
#include <kinesync/offline/svg.h>
#include "programs/tool/commands.h"

namespace ks::tool {

void add_dynamics_command(CLI::App& app) {
    auto* cmd = app.add_subcommand("dynamics", "Plot second-order dynamics (f, zeta, r) responses as SVG");
    static float f = 2.0f, zeta = 0.5f, r = 2.0f, dt = 1.0f / 60.0f, duration = 4.0f;
    static std::string svg = "dynamics.svg", mode_name = "polezero";
    cmd->add_option("--f", f, "natural frequency in Hz (speed of response)")->check(CLI::PositiveNumber);
    cmd->add_option("--zeta", zeta, "damping ratio: 0 vibrates forever, <1 overshoots, >=1 settles")->check(CLI::NonNegativeNumber);
    cmd->add_option("--r", r, "initial response: 0 eases in, >1 overshoots, <0 anticipates");
    cmd->add_option("--dt", dt, "frame time in seconds")->check(CLI::PositiveNumber);
    cmd->add_option("--duration", duration, "seconds to plot")->check(CLI::PositiveNumber);
    cmd->add_option("--mode", mode_name, "stability guard: polezero, substep, clamp or none")
        ->check(CLI::IsMember({"polezero", "substep", "clamp", "none"}));
    cmd->add_option("--svg", svg, "output SVG file")->required();
    cmd->callback([] {
        SodStability mode;
        sod_stability_from_name(mode_name.c_str(), mode);
        const SodParams p{f, zeta, r};
        const SodCoeffs c = sod_coefficients(p);
        const SodTrace step = sod_step_response(p, mode, dt, duration);
        const SodTrace moving = sod_moving_response(p, mode, dt, duration);
        char title[160];
        std::snprintf(title, sizeof title, "step response: f=%g Hz, zeta=%g, r=%g, dt=%g s (%s)", f, zeta, r, dt, mode_name.c_str());
        SvgPlot a{title, "time (s)", "value", {}, {}, "", 900, 380};
        a.series.push_back({"input x", "#777777", step.t, step.x, true});
        a.series.push_back({"output y", svg_palette(0), step.t, step.y, false});
        SvgPlot b{"moving input (step at 0.25 s, then a 0.5 Hz sine with known velocity)", "time (s)", "value", {}, {}, "", 900, 380};
        b.series.push_back({"input x", "#777777", moving.t, moving.x, true});
        b.series.push_back({"output y", svg_palette(1), moving.t, moving.y, false});
        write_text_file(svg, render_svg_plots({a, b}));
        double peak = 0;
        for (double y : step.y) peak = std::max(peak, y);
        std::printf("k1=%.6g k2=%.6g k3=%.6g  T_crit=%.4g s  step peak %.4f, final %.4f\nwrote %s\n", c.k1, c.k2, c.k3,
                    sod_critical_timestep(c), peak, step.y.back(), svg.c_str());
    });
}

}  // namespace ks::tool
