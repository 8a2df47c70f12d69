#pragma once
// Motion-capture takes often start with a reference frame (a T-pose or an all-zero rest pose)
// that is not part of the motion. The server drops it before looping a clip; the offline tools
// show what the server plays.

#include <kinesync/common/anim/clip.h>

namespace ks {

// The fraction of moving joints that jump into frame 1 (0 when none move or frames < 4), and the
// verdict: frame 0 is a T-pose / rest frame to drop when that fraction is at least 0.5.
float leading_frame_jump_fraction(const Clip& clip);
bool leading_frame_is_reference(const Clip& clip);
// The clip without its first frame (frame_dt, skeleton and units kept).
Clip drop_first_frame(const Clip& clip);

}  // namespace ks
