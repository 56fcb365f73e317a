// Random failures drawn from the risk model, as events for the engines.
//
// The job's inventory (inventory.hpp, counted with members) gives, per
// component class i, n_i components failing at λ_i per hour each (the
// scenario's `reliability:` rates). Two ways to draw over a window [from, until):
//   - count K: exactly K failures. Each picks class i with probability
//     n_i·λ_i / Σ_j n_j·λ_j (the share of failures the class causes), a
//     member of the class uniformly, and a time uniformly in the window: a
//     Poisson process conditioned on K events. "If three things break during
//     this iteration, what breaks and what does it cost?"
//   - Poisson at the model's rates times `scale` (accelerated ageing): the
//     superposition of the classes' processes, total rate Λ = scale·Σ n_i·λ_i,
//     exponential gaps from `from`; each arrival's class as above. At real
//     rates a 16K-GPU job sees a failure every few hours, so a run of one
//     iteration needs a large scale to see any.
// Only the parts listed in `parts` are drawn from (empty = every part).
// A failed component is permanent for the run (repairs take hours):
//   GPU, software -> Stop (the GPU's rank); host -> Stop (its server);
//   NIC -> Down of its network links; cable or optic -> Down of its link;
//   switch -> Down of every link of the switch.
// What the engines do with a Down (route around it, or stop the job when the
// collective times out) is theirs (engine/failures.hpp); a spare rail is not
// modelled there, so a NIC failure stops the job even with `spare_rail`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "core/units.hpp"
#include "engine/failures.hpp"
#include "reliability/inventory.hpp"
#include "reliability/risk.hpp"

namespace podnet::reliability {

struct DrawSpec {
  int64_t count = -1;       // >= 0: exactly this many; -1: Poisson at the rates x scale
  double scale = 1.0;       // Poisson: rate multiplier
  Time from;                // window start
  Time until;               // window end (> from)
  std::vector<Part> parts;  // draw only from these (empty = all)
};

// Largest number of failures one draw may produce (a guard against a scale
// that would flood the run).
inline constexpr int64_t kMaxDrawn = 100000;

// `inv` must be counted with members (count_inventory_of(..., true)).
// Events sorted by time (ties keep draw order), `what` starting "random ".
// Throws ParamError("scale"/"parts") when the expected Poisson count exceeds
// kMaxDrawn or the chosen parts have no component (or zero rate) in the job.
std::vector<engine::FailureEvent> draw_failures(const topology::Topology& t, const Inventory& inv, const Config& cfg,
                                                const DrawSpec& spec, Rng& rng);

// "su000-leaf-r0:Ethernet1/65 <-> pod00-spine-r0-00:Ethernet1/5" (a NIC or GPU end by its name).
std::string link_label(const topology::Topology& t, topology::LinkId l);

}  // namespace podnet::reliability
