// The YAML scenario: schema, defaults, strict validation, `--set` overrides,
// and the resolved scenario echoed beside results.
//
// A scenario file is a YAML map:
//   schema_version: 1          (required)
//   name: aipod-16k            (default: file name without .yaml)
//   description: "..."
//   seed: 1                    (default 1)
//   topology: {family: <builder>, <builder parameters>}   (required)
//   server: {...}  switch: {...}  cabling: {...}           (hardware, all defaulted)
// Every value is checked against a ParamSpec: an unknown key, a missing
// required key, a bad unit or an out-of-range value raises InputError whose
// message starts "FILE:LINE: KEY.PATH: " and says what was expected. Values
// given with --set name no line ("--set topology.gpus"), and a section a --set
// creates is blamed on the --set ("--set foo: unknown key"). Also refused: a
// document that is not a map, a key given twice in one map (both lines named),
// a network.routing policy that does not apply to topology.family, and values
// beyond the unit limits of core/units.hpp (times above 1000 h, bandwidths
// outside 1 Mbps..1000 Tbps, infinite ratios).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/params.hpp"
#include "diagnose/probe.hpp"
#include "engine/failures.hpp"
#include "topology/cost.hpp"
#include "topology/frontend.hpp"
#include "topology/hardware.hpp"
#include "topology/tenants.hpp"
#include "topology/topology.hpp"

namespace podnet::scenario {

// A key that names a file ends in `_file` (inference.lengths_file): serve refuses it, a sweep records the file's
// contents.
inline bool names_a_file(std::string_view key) { return key.size() > 5 && key.ends_with("_file"); }

// A section with a fixed schema (server, switch, cabling, ...).
struct SectionInfo {
  const char* name;
  const char* description;
  std::vector<ParamSpec> (*params)();
};
const std::vector<SectionInfo>& sections();
// A section key's default as `podnet list keys` shows it ("inference.rate" -> "1/s"); "" for a key with none (absent
// means none, or auto) or no such key.
std::string key_default(const std::string& key);
// Keys the loader accepts: at the top besides the sections, in a `failures:`
// entry (a random one), in a `faults:` entry.
const std::vector<std::string>& top_keys();
const std::vector<std::string>& failure_keys();
const std::vector<std::string>& random_failure_keys();
const std::vector<std::string>& fault_keys();
const std::vector<std::string>& job_keys();

// One entry of the scenario's `failures:` list, as written (resolved against
// the topology by Scenario::failure_events):
//   - {at: 12ms, link: "su000-leaf-r0:Ethernet1/65", action: down}
//   - {at: 12ms, link: "gpu-node-0000/nic0", action: degrade, rate: 200Gbps}
//   - {at: 0s, switch: "pod00-spine-r0-00", action: down}
//   - {at: 5ms, switch: "pod00-spine-r0-00", action: drain}   (maintenance: flows moved off first)
//   - {at: 0s, gpu: 17, action: slow, factor: 1.5}
//   - {random: 3}                        (3 failures drawn from the risk model, during the run)
//   - {random: poisson, scale: 1e6, parts: [optic, switch], from: 0s, until: 2s}
// A link is named by one end: a switch and its port ("NODE:PORT", as in the
// cabling plan), or a NIC (its one network link). Random entries draw from
// the job's components at the `reliability:` rates (reliability/draw.hpp),
// over [from, until), until defaulting to the length of the same run without
// failures; seeded by the scenario's seed and the entry's index.
// One entry of the scenario's `failures:` list (the forms `podnet list` prints). Besides one named link,
// switch or GPU and the risk model's random draws, a share of one tier:
//   - {links: leaf-spine, fraction: 1%}        1 % of the leaf-to-spine cables down from t = 0
//   - {switches: spine, count: 2, at: 5ms}     two spine switches down at 5 ms
// `links:` names a link class of the fabric (`podnet design` lists them: leaf-spine, spine-super_spine, ...)
// or `fabric` (every switch-to-switch link); NIC links fail only when their class (nic-leaf) is named. Which
// links or switches fail is drawn from the scenario's seed; a fraction rounds to the nearest count, at least 1.
struct FailureSpec {
  Time at;
  std::string target_kind;  // link | switch | gpu | random | links | switches
  std::string target;       // a name; links: a link class or "fabric"; switches: a tier
  std::string action;       // down | up | degrade | drain | slow
  Bandwidth rate;
  double factor = 1.0;
  int line = 0;
  // random entries
  int64_t count = -1;  // random: N; -1 for poisson
  double scale = 1.0;
  Time from;
  Time until;  // 0 = the run's length
  std::vector<std::string> parts;
  // links / switches entries: a share of one tier's links or switches, drawn from the seed
  double fraction = -1;  // of the tier's links or switches; -1 when `count` gives the number
};

// One entry of the scenario's `faults:` list: a silent fault hidden for
// `podnet diagnose` to find (diagnose/probe.hpp), as written:
//   - {kind: drop, link: "su000-leaf-r0:Ethernet1/65", probability: 0.001}   (packets leaving that port)
//   - {kind: drop, link: "gpu-node-0000/nic0", direction: both, probability: 1e-4}
//   - {kind: corrupt, switch: "pod00-spine-r0-00", probability: 0.001}      (every packet through it)
//   - {kind: degrade, link: "...", latency: 50us}                            (one-way latency added)
//   - {kind: flap, link: "...", period: 30s, down: 2s, at: 60s}
//   - {kind: pfc_storm, link: "gpu-node-0003/nic0", at: 50us, duration: 2ms}  (that NIC sends PAUSE; packet engine)
//   - {kind: drifted_thresholds, switch: "su000-leaf-r0", kmin: 20KB, kmax: 80KB, pfc_alpha: 0.5}  (packet engine)
// A link is named by one end, as in `failures:`; direction tx (default) is
// the direction leaving that end, rx the one entering it, both both. `at`
// (default 0 s) is when the fault begins.
struct FaultSpec {
  std::string kind;         // drop | corrupt | degrade | flap
  std::string target_kind;  // link | switch
  std::string target;
  std::string direction = "tx";
  double probability = 0;
  Time latency, at, period, down;
  Time duration;  // pfc_storm: how long the NIC sends PAUSE
  // drifted_thresholds: the switch's ECN band (bytes) and PFC alpha = 2^-dt_shift (-1: as configured)
  int64_t kmin = -1, kmax = -1;
  double pmax = -1;
  int32_t dt_shift = -1;
  int line = 0;
};

// One entry of the scenario's `jobs:` list: several training jobs on one
// fabric (`podnet train`; cluster/jobs.hpp), as written:
//   - {name: a, gpus: 64, start: 0s, placement: topology-aware, workload: {model: llama3-8b, tp: 8}}
// gpus (required): the job's GPU count; workload: keys of `workload:` that
// differ for this job, on top of the scenario's `workload:` section (a job
// without it is that section's job); dp, when neither gives it, is
// gpus / (tp x cp x pp). placement: a scheduler policy (cluster::schedulers;
// default: `scheduler.policy`). start: when its iteration begins (default 0 s).
// name: default job<index>; names are unique.
struct JobSpec {
  std::string name;
  int64_t gpus = 0;
  Time start;
  std::string placement;          // "" = scheduler.policy
  Params workload;                // the scenario's `workload:` with this job's keys on top, validated
  std::vector<std::string> keys;  // the workload keys this entry gives, in order
  int line = 0;
};

// One entry of the scenario's `tenants:` list: a share of the fabric's servers isolated in a VRF of its
// own (EVPN-VXLAN in the configuration plan, topology/tenants.hpp):
//   - {name: research, gpus: 50%}      (a share of the fabric's GPUs)
//   - {name: prod, gpus: 4096}         (a count)
struct TenantSpec {
  std::string name;
  int64_t gpus = 0;      // a count, or
  double fraction = -1;  // a share of the fabric's GPUs (0, 1]
  int line = 0;
};

class Scenario {
 public:
  std::vector<FailureSpec> failures;
  std::vector<JobSpec> jobs;
  std::vector<TenantSpec> tenants;
  std::vector<FaultSpec> faults;
  // The faults resolved against a built topology (InputError with the
  // entry's line for a name that is not there).
  std::vector<diagnose::Fault> fault_list(const topology::Topology& t) const;
  // The pfc_storm entries resolved against a built topology: PAUSE storms the
  // packet engine simulates (engine/failures.hpp); fault_list() leaves them out.
  std::vector<engine::PauseStorm> pause_storms(const topology::Topology& t) const;
  // The drifted_thresholds entries resolved against a built topology (packet engine; fault_list() leaves them out).
  std::vector<engine::ThresholdDrift> threshold_drifts(const topology::Topology& t) const;
  // The failures resolved against a built topology (InputError with the
  // entry's line for a name that is not there), sorted by time. Random
  // entries draw from the components of a job on `job_gpus` (empty: every
  // GPU) over [from, until), until defaulting to `run_length` (the same run
  // without failures; InputError when neither is known).
  std::vector<engine::FailureEvent> failure_events(const topology::Topology& t, Time run_length = Time(),
                                                   const std::vector<int32_t>& job_gpus = {}) const;
  // Resolves the named entries only (no draw): the errors failure_events would
  // raise for them, before any run.
  void check_failures(const topology::Topology& t) const;

 private:
  std::vector<engine::FailureEvent> resolve_failures(const topology::Topology& t, Time run_length,
                                                     const std::vector<int32_t>& job_gpus, bool draw) const;

 public:
  bool has_random_failures() const;

  std::string source;                  // the path, or "built-in <name>"
  std::vector<std::string> overrides;  // --set KEY=VALUE as given, in order
  std::vector<std::string> fragments;  // --config-add files, in order
  std::string name;
  std::string description;
  uint64_t seed = 1;
  std::string family;
  Params topology;
  std::map<std::string, Params> section_params;  // by section name

  const Params& section(const std::string& name) const;
  topology::Hardware hardware() const;
  // The `cost:` section as a cost model (InputError at the key's line for contradicting values).
  topology::CostModel cost_model() const;
  // The `frontend:` section (InputError at the key's line), and the frontend fabric it builds for the
  // back end's servers (topology/frontend.hpp; an empty one when frontend.nics is 0).
  topology::FrontendConfig frontend() const;
  topology::FrontendFabric build_frontend(int32_t servers) const;
  // Where checkpoints and data loading run: the frontend (build_frontend) or, with frontend.converged, the
  // back end `backend` itself (topology::build_converged). InputError naming the key.
  topology::FrontendFabric build_storage_network(const topology::Topology& backend) const;
  // The `tenants:` on the built fabric (topology/tenants.hpp), route targets from addressing.asn_base;
  // InputError at the entry's line when they do not fit. Empty without tenants.
  std::vector<topology::Tenant> plan_tenants(const topology::Topology& t) const;
  // Builds the topology; a ParamError from the builder becomes an InputError
  // located at the key's line.
  topology::Topology build_topology() const;
  // "FILE:LINE: key" for a key given in the file, "--set key" for an override,
  // "FILE: key (default)" otherwise.
  // The file a top-level key's lines are in: the fragment (--config-add) that gave it, else the scenario's.
  const std::string& file_of(const std::string& key) const;
  std::string where(const std::string& key) const;
  // Where an error about e.key() points: where(e.key()), or, when the command line set another key the error
  // names (server.nics does not divide among server.gpus after --set server.gpus=7), that --set.
  std::string where(const ParamError& e) const;
  // Whether the user gave `key`: in the file, a --config-add fragment, or --set (the key, or a map holding it);
  // false for a default or a recipe's value.
  bool given(const std::string& key) const;
  // The key to name for `e`: one of a SharedParamError's keys the user gave (--set, then a fragment), else e.key().
  std::string blame(const ParamError& e) const;
  // The scenario with every default filled in, as YAML (deterministic). `editable` (podnet resolve, --out): the
  // workload keys a model's recipe sets, or could set where the scenario leaves a default, are comments, so that
  // the file runs the same job and a model edited into it takes its own recipe. Without it (the studies, which
  // read the values back): every key written out.
  std::string resolved_yaml(bool editable = false) const;
  // The recipe keys (workload.*, by name) the scenario file or a fragment gives while the model came from --set:
  // written for the file's own model (workload::recipe_groups). Empty when the model is not from --set.
  std::vector<std::string> recipe_keys_from_file() const;

  std::map<std::string, int> lines;  // key path -> 1-based line in the file
  // key path ("workload.tp", "jobs[1].workload.tp") -> the model preset whose recipe set it
  // (workload::Recipe; the key was left to its default by the scenario, or workload.recipe: preset)
  std::map<std::string, std::string> recipe_keys;
  // Network keys a deployment preset (network.preset) set -> the preset's name.
  std::map<std::string, std::string> preset_keys;
  // Network keys of the preset the scenario gives itself -> the scenario's value (kept).
  std::map<std::string, std::string> preset_kept;
  // Server keys the GPU preset (workload.gpu) would set but the scenario gives otherwise -> (given, the GPU's),
  // in GB/s.
  std::map<std::string, std::pair<std::string, std::string>> gpu_kept;
  // Server keys the GPU preset set (the scenario left them out) -> "workload.gpu".
  std::map<std::string, std::string> gpu_keys;
  // key path -> given with --set: "" for the user's own --set, else the command-line option that set it
  // (`--channels` sets collective.channels), which errors then name.
  std::map<std::string, std::string> from_set;
  // Keys a `--set KEY=` (nothing after '=') dropped from the scenario: their defaults apply (the CLI says so, as an
  // unset shell variable gives the same line).
  std::vector<std::string> dropped;
  // Sections a --set created (`--set foo.bar=1` makes `foo`): an error about the section itself names the --set;
  // the section's other keys are still defaults.
  std::set<std::string> sections_from_set;
  // key path -> (fragment file, 1-based line) for keys a --config-add fragment set
  std::map<std::string, std::pair<std::string, int>> from_fragment;
};

// Loads a scenario from a path, or a built-in example name, applying
// `fragments` then `overrides` ("a.b=value", YAML value syntax) before
// validation. `flags` names the command-line option behind an override that
// a command added for one of its own options (collective.channels ->
// "--channels"), so that an error in it names the option the user typed.
//
// A fragment (`--config-add FILE`) is a YAML file of scenario keys merged on
// top of the scenario: maps merge key by key, any other value replaces the
// scenario's. It has the scenario's sections (server, switch, network, ...,
// topology, failures) and nothing else (`schema_version: 1` may be given);
// it is validated with the scenario, and an error in one of its keys names
// the fragment's file and line. `podnet calibrate --out` writes one.
Scenario load(const std::string& path_or_name, const std::vector<std::string>& overrides = {},
              const std::vector<std::string>& fragments = {}, const std::map<std::string, std::string>& flags = {});
Scenario load_text(const std::string& text, const std::string& source, const std::string& default_name,
                   const std::vector<std::string>& overrides = {}, const std::vector<std::string>& fragments = {},
                   const std::map<std::string, std::string>& flags = {});

// Closest candidate by edit distance (for "did you mean"), or "" if none is close.
std::string closest(const std::string& word, const std::vector<std::string>& candidates);
// What "did you mean" offers, quoted: a family's stem names its members ("dcqcn": "'dcqcn_paper' or 'dcqcn_nic'"),
// else closest()'s name ("'dctcp'"), else "".
std::string closest_quoted(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace podnet::scenario
