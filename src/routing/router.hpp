// Router: path choice for GPU-to-GPU flows on any built Topology.
//
// route(src, dst, entropy, weight, out) appends the flow's route (route.hpp:
// directed links with the fraction of the bytes crossing each) to `out`.
// Ranks are global GPU ids (t.gpus[rank] is the node).
//
// 1. Inside and out of the server (all policies).
//   - src == dst: empty route.
//   - Same NVLink domain (both GPUs linked to one NvSwitch node):
//     gpu -> nvswitch -> gpu (2 directed links).
//   - Both GPUs use the same NIC (GPUs sharing a NIC, no NVLink):
//     gpu -> nic -> gpu over PCIe.
//   - Otherwise through NICs: src gpu -> (PCIe) src NIC -> network -> dst NIC
//     -> (PCIe) dst gpu, src NIC = t.gpu_nic[src], dst NIC = t.gpu_nic[dst].
//     If the two NICs' rails (node.rail) differ:
//       * the source GPU owns (is PCIe-linked to) a NIC on the destination
//         rail (more NICs than GPUs): that NIC is the source NIC;
//       * else with PXN (NCCL >= 2.12 default, option `pxn`) the GPU of the
//         source server whose NIC is on the destination rail relays:
//         src gpu -> nvswitch -> relay gpu -> (PCIe) relay NIC -> network ...,
//         so network traffic stays on the destination's rail (NCCL: "PXN",
//         NCCL_PXN_DISABLE=0). The relay must share the source's NVSwitch.
//       * else the flow crosses rails in the network; with per-rail planes
//         (2-tier rail_clos) there is no such path and route() throws Error
//         suggesting PXN or a super-spine tier.
//   - Torus (t.torus_dims non-empty): the GPUs are the routers, no NICs; the
//     route is GPU-to-GPU torus links only.
//   - Multi-plane NICs (t.nic_planes > 1, topology/planes.hpp): NIC n has one
//     attachment per plane, A_p(n) its p-th switch link. The planes usable
//     by a flow are those where both NICs' links are up and A_p(dst) is
//     reachable from A_p(src); the policy picks among them at the NIC as a
//     switch picks a next hop (ECMP and valiant: mix64(K ^ mix64(seed ^
//     src NIC)) mod usable; static: the first; adaptive and ugal: the NIC
//     link with the least load, ties by that hash; spray: every usable
//     plane, 1 / usable of the bytes each), then routes inside that plane
//     exactly as below, from A_p(src) to A_p(dst). No path crosses planes.
//
// 2. The network part: shortest paths over network nodes only (switches; on a
//    torus the GPUs), never through a GPU/NIC/NVSwitch. Let A(n) be the switch
//    a NIC n attaches to (its first up link to a switch, in link-id order). For
//    a target T (the destination's attachment switch, or the destination GPU
//    on a torus) a breadth-first search from T over up links gives the hop
//    distance d_T(u) of every network node u (int16, -1 unreachable); tables
//    are built lazily per target and cached until a link changes state
//    (memory: 2 bytes x network nodes x targets used: 5,000 switches x 2,000
//    targets = 20 MB). The graph, the link state and the tables are one
//    NetworkGraph (network_graph.hpp), which the packet engine's per-packet
//    next hops read too. The equal-cost next hops of u are
//      N_T(u) = { up links u -> v to a network node v : d_T(v) = d_T(u) - 1 },
//    in link-id order, so a parallel link between the same two switches is a
//    distinct next hop (as in hardware ECMP groups). Every walk that picks one
//    member of N_T(u) per hop reaches T in exactly d_T(A(src)) hops: a
//    shortest path. On a fault-free torus d_T is computed instead of stored:
//      d(u, v) = sum_i min(|x_i(u) - x_i(v)|, k_i - |x_i(u) - x_i(v)|).
//    Dragonfly families: minimal routing is local-global-local (Kim et al.
//    2008): no path may pass through a third group, so the search toward T
//    in group G_T only uses edges u -> v with group(u) = group(v) or
//    group(v) = G_T (a plain shortest path could otherwise take two global
//    links, g-g, where l-g-l needs three hops). If that leaves the source
//    unreachable (all links between two groups down), unrestricted shortest
//    paths are used.
//
// 3. Policies (registry: policies.hpp).
//   ecmp / minimal: per flow, at each network node u
//       next = N_T(u)[ mix64(K ^ s_u) mod |N_T(u)| ],
//     s_u = mix64(seed ^ u) (per_switch_seed, default) or mix64(seed) for
//     every switch (per_switch_seed = false: with the same s everywhere a
//     flow's choice index is the same at every tier, so a k-ary fat-tree's
//     (k/2)^2 core paths collapse to k/2: hash polarization). The flow key
//       K = mix64(mix64(src_nic << 32 | dst_nic) ^ sport),
//       sport = 0xC000 | (mix64(entropy) & 0x3FFF)
//     is the RoCEv2 5-tuple hash: the NICs fix the addresses and UDP port
//     4791, the UDP source port comes from the QP (entropy = QP index), so
//     more QPs per connection (NCCL_IB_QPS_PER_CONNECTION) give more keys.
//   adaptive: per flow, at each u the member of N_T(u) with the least load
//     L(d) (the weights of the routed, not yet released flows on directed
//     link d); ties broken by the ECMP hash among the tied members. route()
//     adds `weight` x fraction to every link of the route, release() removes
//     it (the caller releases when the flow ends).
//   spray: per-packet spraying at flow level. Fractions propagate down the
//     shortest-path DAG: f(A(src)) = 1; a node's f splits equally over
//     N_T(u), each link d = u -> v carries f(u) / |N_T(u)|, and
//     f(v) = sum of its incoming link fractions. Fractions are conserved:
//     the links leaving each DAG level sum to 1.
//   static: always N_T(u)[0] (one fixed path; baselines and tests).
//   dimension_order (torus): correct dimension 0, then 1, then 2; in
//     dimension i with offset delta = (x_i(dst) - x_i(src)) mod k_i go +
//     delta steps if delta < k_i - delta, else - (k_i - delta) steps; a tie
//     (k_i even, delta = k_i / 2) goes +. If a link of that path is down the
//     flow takes the static shortest path around it. `ecmp` on a torus
//     hashes over all minimal paths.
//   valiant (dragonfly): the intermediate group I is the
//       (mix64(K ^ mix64(seed ^ 0x7a11a7)) mod (g - 2))-th group other than
//     the source group S and destination group D; the flow goes minimally
//     (ECMP) to the nearest router of I (where the global link lands), then
//     minimally to the destination: at most 2 global links (one into I, one
//     out), Valiant (1982) load balancing at twice the minimal hop count.
//     Flows inside one group (S = D) and fabrics with g < 3 route minimally.
//     If failed links leave either phase without a minimal (local-global-
//     local) path, the next group in that order is tried; if none works,
//     the flow routes minimally.
//   ugal (dragonfly, UGAL-L as in Kim et al. 2008 / Singh 2005): per flow,
//     build the minimal and a Valiant candidate (each hop adaptive, as
//     above), cost C = H x (Lmax + w), H = switch-to-switch links, Lmax the
//     largest load on them, w the flow's weight (so the flow counts itself);
//     take minimal if C_min <= C_val, else Valiant; loads as in adaptive.
//
// 4. Failures. set_link_up(l, false) marks link l down and drops every
//    cached live table (they are rebuilt lazily without it); no route uses a down
//    link (a torus switches from computed distances to tables).
//    set_dir_up(d, false) takes one direction out: switch-to-switch paths
//    avoid that direction only (a repaired uplink while its downlink still
//    waits for convergence); links a route takes whole (NIC attachments,
//    PCIe, NVLink, torus dimension-order hops) count as down when either
//    direction is. A down
//    NVLink sends same-domain traffic through the NICs; a down PCIe or NIC
//    uplink has no alternative. If no path remains route() throws Error
//    naming both endpoints (and the NICs and rails). Loads of flows routed
//    before the change stay until they are released. The
//    convergence delay before the new tables take effect is the engine's
//    business (it decides when to call set_link_up).
//
// The Topology must outlive the Router (it is held by reference).
// Determinism: every choice is a function of (seed, node ids, link ids,
// flow key, loads); no pointer or unordered-container order is involved.
// Cost: with every link up, route() reads two per-rank records and, per hop,
// N_T(u) learnt once per (target, node) and kept (each node's distinct lists
// stored once: a leaf has one, its uplinks; a spine its uplinks and one per
// leaf below it), so a hop is O(1) after the first route through it; memory
// 4 bytes x network nodes per target used, beside its distance table. Twin
// targets (the same neighbours: network_graph.hpp) share what they learn for
// every node but the twins and their neighbours, and their distance tables
// are copies: N_T(u) depends on d_T at u's neighbours only, the same for
// every twin when u is neither a twin nor next to one. With a
// link down, O(hops x degree). It allocates nothing but the caller's `out`
// growth and what it learns; a Router is not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "routing/network_graph.hpp"
#include "routing/policies.hpp"
#include "routing/route.hpp"
#include "topology/topology.hpp"

namespace podnet::routing {

class Router {
 public:
  // Throws Error for an unknown policy or one that does not apply to t.family.
  Router(const topology::Topology& t, RouteOptions o);

  // Appends the route of one flow src_rank -> dst_rank to `out`. `entropy`
  // is the QP index (sets the UDP source port); `weight` is what adaptive
  // and ugal add to the load of each link (e.g. 1 per flow, or bytes).
  // Every path of it is a simple path from the one GPU to the other (the
  // flow engine leaves links in series out of its solver on that ground:
  // engine/flow/flow_backend.hpp).
  void route(int32_t src_rank, int32_t dst_rank, uint64_t entropy, double weight, std::vector<PathPart>& out);
  // Many routes at once, each what route(src, dst, entropy, 1.0, ...) gives and in the same order: request
  // k's route is out[at[k], at[k + 1]) (`at` gets one entry more than `reqs`). Where every route is a walk
  // (ECMP or static policy, one plane, not a torus nor a dragonfly, nothing down, no load tracked), up to
  // kBatchWalks walks advance together, one read each in turn: a hop is three or four dependent reads from
  // tables as large as the fabric (at 131,072 GPUs each a cache miss), each walk requests what it reads
  // next, and the walks' reads overlap where one walk's would wait on the next. Requests are resolved a few
  // turns ahead for the same reason. Elsewhere, and for a route that is not one walk between two NICs (inside a
  // server, a PXN relay), it calls route(). Throws as route() does.
  struct Request {
    int32_t src = 0, dst = 0;
    uint64_t entropy = 0;
  };
  static constexpr size_t kBatchWalks = 32;
  void route_batch(std::span<const Request> reqs, std::vector<PathPart>& out, std::vector<size_t>& at);
  // The network part only, between two NICs (on a torus: two GPUs, the
  // routers): NIC -> attachment switch -> ... -> NIC, as route() takes it for
  // a flow whose NICs are these (same flow key for the same entropy). What
  // probes between NICs cross. Adaptive/ugal loads count weight 1. Throws
  // Error if either end is not a NIC (torus: GPU) or no path remains.
  void route_endpoints(topology::NodeId src_ep, topology::NodeId dst_ep, uint64_t entropy, std::vector<PathPart>& out);
  // Removes a routed flow's weight from the load counters (adaptive, ugal;
  // a no-op for the other policies).
  void release(const std::vector<PathPart>& route, double weight);

  void set_link_up(topology::LinkId l, bool up);  // both directions
  void set_dir_up(DirLink d, bool up);
  bool link_up(topology::LinkId l) const { return graph_->link_up(l); }  // both directions up
  // Whether routes depend on the loads of the flows routed so far (adaptive, UGAL); if not, a route depends only
  // on (src, dst, key) and the link state, which changes the epoch at every set_dir_up.
  bool tracks_load() const { return tracks_load_; }
  uint64_t epoch() const { return epoch_; }
  // The network graph, link state and distance tables (shared with per-packet forwarding).
  NetworkGraph& graph() { return *graph_; }

  // Switches traversed on a shortest path (0 inside a server; on a torus the
  // chip-to-chip links, each passing one chip's router). Throws as route().
  int switch_hops(int32_t src_rank, int32_t dst_rank);
  // Distinct shortest network paths (counted on the DAG, parallel links
  // distinct, saturating at INT32_MAX); 1 inside a server. Throws as route().
  int equal_cost_paths(int32_t src_rank, int32_t dst_rank);

  double load(DirLink d) const { return load_[d]; }
  const RouteOptions& options() const { return o_; }
  const topology::Topology& topology() const { return t_; }

  // The ECMP flow key of a flow between two network endpoints (NICs, or
  // torus GPUs) on QP `entropy`, and the UDP source port it uses.
  static uint16_t udp_source_port(uint64_t entropy);
  static uint64_t flow_key(topology::NodeId src_nic, topology::NodeId dst_nic, uint64_t entropy);

 private:
  using Policy = PolicyKind;
  enum class Pick : uint8_t { Static, Hash, Least };
  struct Attachment {
    topology::LinkId link = topology::kNone;  // NIC <-> its switch
    int32_t net = -1;                         // network index of the switch
    DirLink up = -1;                          // the direction NIC -> switch
  };
  struct Ends {
    enum Kind : uint8_t { Same, NvLink, SharedNic, Net } kind = Same;
    int32_t relay = -1;                                                       // PXN relay GPU rank
    topology::NodeId src_ep = topology::kNone, dst_ep = topology::kNone;      // NICs (torus: GPUs)
    topology::LinkId src_pcie = topology::kNone;                              // src (or relay) GPU -> src_ep
    topology::LinkId from_link = topology::kNone, to_link = topology::kNone;  // NIC <-> attachment switch
    DirLink from_dir = -1, to_dir = -1;  // NIC -> switch at the source, switch -> NIC at the destination
    DirLink src_dir = -1, dst_dir = -1;  // PCIe: the source (or relay) GPU -> src_ep, dst_ep -> the destination GPU
    int32_t from = -1, to = -1;          // network indices of the attachments
    // The network ends: the source NIC's attachment (leaving the NIC), the destination's (entering it).
    void attach(const Attachment& s, const Attachment& d) {
      from_link = s.link;
      from = s.net;
      from_dir = s.up;
      to_link = d.link;
      to = d.net;
      to_dir = d.up >= 0 ? d.up ^ 1 : -1;
    }
  };
  struct Hop {  // a next hop: the directed link leaving u and the network node it reaches
    DirLink dir;
    int32_t to;
  };
  struct Target {
    const int16_t* tab = nullptr;  // nullptr: fault-free torus, distance computed
    int32_t node = -1;             // network index of the target node; -1 for a group target
    int32_t group = -1;            // group of the target (restricted dragonfly search)
    bool restricted = false;
    // Fault-free and unrestricted: the learnt next hops toward it (gather), a node's in own[near[u]] when near
    // numbers it (>= 0), else in shared[u] (its twins' array).
    const int32_t* near = nullptr;
    uint32_t* own = nullptr;
    uint32_t* shared = nullptr;
  };

  Ends resolve(int32_t src, int32_t dst);
  // Appends NIC -> network -> NIC of e (no PCIe/NVLink); false if unreachable.
  bool network_part(const Ends& e, uint64_t entropy, double weight, std::vector<PathPart>& out);
  [[noreturn]] void no_path(int32_t src, int32_t dst, const Ends& e, const char* why) const;
  void check_rank(int32_t rank) const;
  Attachment attachment(topology::NodeId nic) const;
  Attachment scan_attachment(topology::NodeId nic) const;
  // Multi-plane NICs: the attachment in plane p (link up), else none; and the network part over the planes.
  Attachment plane_attachment(topology::NodeId nic, int32_t p) const;
  Attachment scan_plane_attachment(topology::NodeId nic, int32_t p) const;
  bool plane_part(const Ends& e, uint64_t entropy, double weight, std::vector<PathPart>& out);
  // The network part inside the plane (or the one fabric) of e's attachments.
  bool one_part(const Ends& e, uint64_t entropy, double weight, std::vector<PathPart>& out);
  std::vector<int32_t> usable_;  // plane_part's usable planes
  topology::NodeId nic_on_rail(int32_t server, int32_t rail) const;

  // Search toward a node / any node of a group. In a dragonfly the search is
  // group-restricted; if `from` is unreachable that way and `fallback`, the
  // unrestricted search is used instead.
  Target node_target(int32_t net, int32_t from, bool fallback = true);
  Target group_target(int32_t group, int32_t from, bool fallback = true);
  int dist(int32_t u, const Target& tg) const { return tg.tab ? tg.tab[u] : torus_dist(u, tg.node); }
  int torus_dist(int32_t u, int32_t v) const;
  // N_T(u): the equal-cost next hops of u toward tg, in u's edge order (valid until the next gather). Without a
  // direction down and unrestricted, the list is learnt once per (target, u) and kept: each node keeps its distinct
  // lists (a leaf has one, up; a spine one up and one per leaf below it), so a hop costs one lookup instead of a scan
  // of u's edges.
  std::span<const Hop> gather(int32_t u, const Target& tg);
  uint32_t learn_next(int32_t u, const Target& tg);
  int32_t walk(int32_t from, const Target& tg, Pick pick, uint64_t key, std::vector<PathPart>& out);
  void spray(int32_t from, const Target& tg, std::vector<PathPart>& out);
  bool dimension_order(int32_t from, int32_t to, std::vector<PathPart>& out);
  void valiant(int32_t from, int32_t to, Pick pick, uint64_t key, std::vector<PathPart>& out);
  double path_cost(const std::vector<PathPart>& parts, double weight) const;
  static void merge_duplicates(std::vector<PathPart>& out, size_t start);

  const topology::Topology& t_;
  RouteOptions o_;
  Policy policy_ = Policy::Ecmp;
  bool torus_ = false;
  bool dragonfly_ = false;
  int32_t planes_ = 1;  // t.nic_planes
  bool tracks_load_ = false;
  uint64_t epoch_ = 0;  // link-state changes (set_dir_up calls)

  std::unique_ptr<NetworkGraph> graph_;  // network nodes, edges, link state, distance tables
  std::vector<uint64_t> seed_of_;        // network index -> s_u
  std::vector<double> load_;             // per directed link

  // servers
  std::vector<topology::NodeId> nvswitch_;    // rank -> its NvSwitch node (kNone)
  std::vector<topology::LinkId> nvl_link_;    // rank -> gpu<->nvswitch link
  std::vector<topology::LinkId> gpu_pcie_;    // rank -> gpu<->gpu_nic link
  std::vector<int32_t> owner_rank_;           // NIC node -> rank of the first GPU PCIe-linked to it (node-indexed)
  std::vector<topology::LinkId> owner_pcie_;  // NIC node -> that PCIe link

  // torus
  std::vector<int32_t> dims_, stride_;
  std::vector<topology::LinkId> plus_, minus_;  // [rank * D + i] -> link toward +i / -i

  // scratch
  std::vector<Hop> cand_, ties_;
  std::vector<int32_t> level_, next_;
  std::vector<double> frac_;
  std::vector<int64_t> count_;
  std::vector<PathPart> alt_a_, alt_b_;
  struct Walk {    // route_batch's walk in progress
    int32_t u, d;  // where it is, hops left
    uint64_t key;  // its flow key
    size_t pos;    // where its next hop goes in `out`
    Target tg;
    uint32_t id;        // stage 3: near[u]; 1: u's list number toward tg; 2: the next hop's place in pool_
    uint8_t stage = 0;  // the read it takes next (route_batch)
  };
  std::vector<Walk> walks_;
  // gather's learnt lists, for the fault-free graph (which never changes): per target the list of each node (an
  // index into lists_; kUnlearnt until asked for); lists_ holds every node's distinct lists once, as (offset,
  // count) into pool_, found again by their hash in list_slots_. Twin targets (network_graph.hpp) share one
  // array, next_id_[first twin], for every node but the twins and their neighbours, whose next hops toward
  // each twin differ: those are in the target's own own_id_[target], indexed by near_[first twin] (-1 for the
  // other nodes; near_count_ of them numbered): a few hundred entries, not one per node.
  static constexpr uint32_t kUnlearnt = 0xFFFFFFFF;
  std::vector<std::vector<uint32_t>> own_id_;
  std::vector<std::vector<int32_t>> near_;
  std::vector<int32_t> near_count_;
  struct NextList {
    uint64_t hash = 0;
    int32_t u = 0;
    uint32_t off = 0, n = 0;
  };
  std::vector<std::vector<uint32_t>> next_id_;
  // node_target's answer per target node on the fault-free graph (no torus, no dragonfly restriction): one read
  // in place of the six its parts take (tab null: not asked yet). set_dir_up clears it (the distance tables go).
  std::vector<Target> target_of_;
  std::vector<NextList> lists_;
  std::vector<uint32_t> list_slots_;
  std::vector<Hop> pool_;
  // The fault-free attachment of every NIC (node-indexed; net -1: none) and each rank's PCIe direction GPU -> NIC.
  std::vector<Attachment> attach_;
  std::vector<Attachment> plane_attach_;  // multi-plane: [nic * planes_ + p], fault-free
  // Per rank, what a fault-free route between two NICs on one rail reads, in one record: a route touches two
  // records instead of a dozen node-indexed arrays (at 131,072 GPUs each read is a cache miss).
  struct RankEnd {
    topology::NodeId nic = topology::kNone, nvswitch = topology::kNone;
    int32_t rail = topology::kNone;
    DirLink pcie_up = -1;  // GPU -> its NIC
    Attachment attach;     // its NIC's
  };
  std::vector<RankEnd> rank_end_;
};

}  // namespace podnet::routing
