#pragma once
// Test rigs like a game's, built on a real clip's body so their motion is real where it matters:
//
// - the game rig (about 250 joints): the body as it is, five fingers of three joints on each hand
//   (curling slowly, out of phase), twist joints along the upper arms, forearms, thighs and shins
//   (each turning with a share of its limb's twist), and a face of mostly still joints under the
//   head: eyes that dart now and then, lids that blink, a jaw and lips that talk in bursts, brows
//   that rise; the rest (cheeks, nose, ears, ...) never move;
// - the stress rig (up to 1,024 joints): the game rig plus chains hanging from the hips and the
//   head (hair, cloth strips, straps), each swaying with a travelling wave, half of them at a time.
//
// Deterministic: the same body gives the same rig, so clips of one skeleton stay one skeleton.
// Limbs are found by name (hand/wrist, head; left/right by prefix or word): a body without them
// is refused with std::invalid_argument naming what is missing.

#include <stdexcept>
#include <string>

#include <kinesync/common/anim/clip.h>

namespace ks {

struct GameRigOptions {
    int joints = 250;  // total (the face fills up to it); at least the body's + 50
};
Clip make_game_rig(const Clip& body, const GameRigOptions& options = {});

struct StressRigOptions {
    int joints = 1000;     // total, at most 1,024; chains fill from the game rig's 250
    int chain_length = 25;
};
Clip make_stress_rig(const Clip& body, const StressRigOptions& options = {});

// "game" or "stress" (the rig of that name with its default size); throws std::invalid_argument
// for another name.
Clip make_rig(const std::string& name, const Clip& body);

}  // namespace ks
