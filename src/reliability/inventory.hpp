// The components a training job depends on, counted from the built fabric.
//
// A job of N GPUs takes the first N GPUs by global rank (the placement every
// podnet builder makes contiguous: whole servers, then whole leaves/groups),
// and depends on exactly the components on its paths, found in the graph
// rather than by proportion:
//   - its GPUs (and, per GPU, the software stack), its servers (host: CPU,
//     memory, PSU, SSD, chassis; a partly used server counts whole);
//   - its NICs: those wired by PCIe to its GPUs (all of them when a GPU owns
//     several, the shared one when GPUs share a NIC);
//   - access links: every network link with an end at one of its NICs (or,
//     in NIC-less fabrics such as a torus, at one of its GPUs);
//   - leaves: the switches at the far end of its access links. With a
//     rail-optimized fabric every server depends on `rails` leaves;
//   - the fabric above: every switch reachable from its leaves over
//     switch-to-switch links that never step down a tier (leaf -> spine ->
//     super-spine; same-tier links such as dragonfly local/global links are
//     followed), and the switch-to-switch links between two such switches.
//     For a Clos this is the upward closure of the job's leaves (the other
//     leaves under a shared spine are not on the job's paths); for a
//     dragonfly it is every router (minimal routes of a multi-group job can
//     cross any group: an over-approximation, harmless because transit
//     routers do not interrupt by default).
// Each link counts as one cable (copper or optical, as the BOM decides by
// length) plus, when optical, two transceivers. NVLink and PCIe links inside
// a server are part of the GPU/host failure rates and are not counted.
//
// With N = every GPU the counts equal the bill of materials (NICs,
// transceivers, cables, switches per tier); a unit test checks this.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reliability/rates.hpp"
#include "topology/topology.hpp"

namespace podnet::reliability {

// How a failure of the component affects the job.
enum class Role : uint8_t {
  Compute,       // GPU, software, host: the job stops
  Rail,          // NIC and NIC-to-leaf link parts: stops unless spare_rail (then fails over); on a multi-plane
                 // fabric (server.nic_planes) a NIC-to-leaf link is a FabricLink and a leaf a FabricSwitch
  DirectLink,    // GPU-to-GPU network links (torus): stops (dimension-order routes cannot avoid it)
  Leaf,          // the switch a NIC plugs into: stops the job of every GPU behind it
  FabricLink,    // link parts above the leaf: routed around (ComponentClass::local says by whom)
  FabricSwitch,  // switches above the leaf (and transit routers): routed around (likewise)
};
const char* role_name(Role r);

struct ComponentClass {
  std::string key;        // "gpu", "nic", "copper_cable:nic-leaf", "optic:leaf-spine", "switch:spine", ...
  std::string label;      // "GPU", "copper cables (nic-leaf)", ...
  Part part = Part::Gpu;  // which failure rate applies
  Role role = Role::Compute;
  int64_t count = 0;  // in the job
  // Which components, when counted with members (count_inventory_of): GPU
  // ranks (gpu, software), the first GPU rank of each server (host), NIC node
  // ids (nic), link ids (cables and optics: one entry per link, so an optic
  // class lists each link once for its two transceivers), switch node ids.
  std::vector<int32_t> members;
  // FabricLink / FabricSwitch: whether the flow and packet engines' failure
  // injection repairs every flow through a failed one within
  // network.local_repair (true) or only after network.convergence (false),
  // by their rule (engine/failure_driver.cpp): a dead direction is repaired
  // locally when it is an uplink or has a live parallel twin. So a link is
  // local when it has a twin (its downward direction too), and a switch when
  // all its links go down a tier (a top-tier switch: every flow through it
  // entered on an uplink); a mid-tier switch or a transit router stalls the
  // flows that come down through it until convergence. A class is local when
  // all its members are.
  bool local = true;
};

struct Inventory {
  int64_t job_gpus = 0;
  int64_t fabric_gpus = 0;
  int64_t servers = 0;                  // servers of the job
  std::vector<ComponentClass> classes;  // fixed order: compute, rail, leaf, fabric; no zero counts

  int64_t count(const std::string& key) const;  // 0 if absent
  // Sum over classes of one part (e.g. every optic), optionally only one role.
  int64_t count_part(Part p) const;
};

// Counts what a job of `job_gpus` GPUs (0 = all) depends on. Throws
// ParamError("reliability.job_gpus") when job_gpus exceeds the fabric.
Inventory count_inventory(const topology::Topology& t, int64_t job_gpus = 0);
// The same for a job on any set of GPU ranks (a placement), optionally
// listing each class's members. Throws Error for a rank outside the fabric.
Inventory count_inventory_of(const topology::Topology& t, const std::vector<int32_t>& gpu_ranks,
                             bool with_members = false);

}  // namespace podnet::reliability
