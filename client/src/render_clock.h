#pragma once
// The clock a client renders remote characters at: server time = local time + offset. The offset
// follows the ping/pong estimate by slewing (at most `max_slew` seconds per second, 5 %), never by
// stepping: a step of a few milliseconds at each pong moves every extrapolated joint by velocity x
// step in one frame (5 mm at 2.5 m/s and 2 ms), a kink the truth does not have, while a 5 % change
// of pace is invisible. Only a gap larger than `snap_s` (the first estimate, a server restart) is
// stepped.

namespace ks {

class RenderClock {
public:
    explicit RenderClock(double max_slew = 0.05, double snap_s = 0.25) : max_slew_(max_slew), snap_s_(snap_s) {}
    // Server time at local time `local_s` (non-decreasing) given the current offset estimate.
    double at(double local_s, double estimated_offset_s) {
        if (!valid_ || estimated_offset_s - offset_ > snap_s_ || offset_ - estimated_offset_s > snap_s_) {
            offset_ = estimated_offset_s;
            valid_ = true;
        } else {
            const double step = max_slew_ * (local_s > last_local_ ? local_s - last_local_ : 0.0);
            const double gap = estimated_offset_s - offset_;
            offset_ += gap > step ? step : gap < -step ? -step : gap;
        }
        last_local_ = local_s;
        return local_s + offset_;
    }
    double offset() const { return offset_; }

private:
    double max_slew_, snap_s_;
    double offset_ = 0, last_local_ = 0;
    bool valid_ = false;
};

}  // namespace ks
