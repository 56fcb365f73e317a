// The diagnose study (`podnet diagnose`): probe the fabric with the
// scenario's hidden `faults:` (statistical mode, diagnose/probe.hpp; or
// packet mode on the packet engine, diagnose/packet_probe.hpp), or read
// a probe results file, localize the silent loss (diagnose/localize.hpp), and
// check the routing for cyclic buffer dependencies (diagnose/cbd.hpp), with
// and without the scenario's `failures:` links down. With `evaluate` > 0:
// that many seeded trials with random hidden faults instead, scored by
// precision, recall and time to localize.
//
// Time to localize: localization runs on the cumulative counts after every
// round; it is the end of the first round from which the suspects equal the
// hidden faults (evaluation; a scenario with faults) or the final suspects
// (no ground truth) in every later round. -1 when never.
// Precision and recall count components: a link direction or a switch; a
// fault on both directions of a link is two. A suspect whose only look-alike
// is its own reverse direction (a NIC's link: every round-trip probe crosses
// both) names the link and is right when either direction is hidden.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "diagnose/cbd.hpp"
#include "diagnose/localize.hpp"
#include "diagnose/probe.hpp"
#include "scenario/setup.hpp"
#include "study/study.hpp"

namespace podnet::study {

struct DiagnoseRequest {
  diagnose::ProbeOptions probe;
  std::string probe_mode = "statistical";  // statistical | packet
  diagnose::LocalizeOptions localize;
  std::string probes_text;          // non-empty: localize this probe file (diagnose/probe_csv.hpp) instead
  std::string probes_source;        // its name, for errors
  int evaluate = 0;                 // trials with random hidden faults (0: the scenario's faults:)
  int faults = 1;                   // hidden faults per trial
  std::string fault_kind = "link";  // link | switch | mixed
  double loss = 1e-3;               // their drop probability
  double delay_threshold_s = 2e-6;  // a probe tuple is slow above its base RTT + this
  bool cbd = true;
  bool keep_probes = false;  // keep the mesh and the run (to write the probe CSV)
};

struct SuspectRow {
  std::string name;
  std::string kind;  // link | switch
  diagnose::Suspect s;
  bool hidden = false;             // it, or one of its look-alikes, is a hidden fault (when they are known)
  std::vector<std::string> alike;  // the look-alikes' names (the first 8 of s.tied), for an operator to check too
};

struct DelayRow {
  std::string name;
  std::string kind;                // link | switch
  std::vector<std::string> alike;  // the look-alikes' names (the first 8 of s.tied)
  diagnose::DelaySuspect s;
  bool hidden = false;
};

struct Score {
  int64_t true_pos = 0, false_pos = 0, false_neg = 0;
  double precision() const;
  double recall() const;
};

struct CbdCheck {
  std::string when;  // "fault-free", "with failures: ..."
  diagnose::CbdResult result;
  std::vector<std::string> cycle;  // link names
};

struct Evaluation {
  int trials = 0;
  int faults = 0;
  std::string kind;
  double loss = 0;
  Score score;
  int localized = 0;                       // trials whose suspects equal the hidden faults at the end
  std::vector<double> time_to_localize_s;  // per trial; -1 never
  double overhead_share_max = 0;           // busiest NIC's probe load / its link rate
  // What the faults are drawn from: the link directions and switches some probe crosses (a fault elsewhere
  // cannot be seen, so recall is over these only).
  int64_t candidate_links = 0, candidate_switches = 0;
};

struct DiagnoseResult {
  std::string mode;  // simulated | file | evaluate
  // Probing (simulated and evaluate)
  std::string mesh;
  std::string probe_mode;  // statistical | packet
  int32_t endpoints = 0;
  int64_t tuples = 0, covered_dirs = 0, network_dirs = 0, unroutable = 0;
  int rounds = 0;
  Time round, duration;
  double rate = 0;
  double probe_bytes_per_s_per_nic = 0, probe_bytes_per_s_per_nic_max = 0, capacity_share_max = 0;
  // One run (simulated, file)
  std::vector<std::string> hidden;  // the scenario's faults, as written
  // The scenario's faults that probes cannot see (pfc_storm, drifted_thresholds: they lose no probe); the packet
  // engine simulates them in bench and train, whose telemetry finds them.
  std::vector<std::string> not_probed;
  // The hidden faults on links (or a switch) no probe tuple crosses: this mesh cannot see them.
  std::vector<std::string> hidden_unprobed;
  int latency_faults = 0;  // hidden latency faults (localized from RTTs, not from loss)
  int64_t sent = 0, lost = 0;
  int64_t rows_without_path = 0;  // file rows spread over the ECMP DAG
  double background = 0;
  std::vector<SuspectRow> suspects;
  std::optional<Score> score;  // when the hidden faults are known
  // Latency (gray) faults from RTTs
  std::vector<DelayRow> delay_suspects;
  int64_t slow_tuples = 0, unexplained_slow = 0;
  double delay_threshold_s = 0;
  std::optional<Score> delay_score;  // when the hidden faults are known
  double time_to_localize_s = -1;
  // Evaluation
  std::optional<Evaluation> evaluation;
  // Deadlock check
  std::vector<CbdCheck> cbd;
  // Kept with keep_probes
  std::optional<diagnose::Mesh> mesh_data;
  std::optional<diagnose::ProbeRun> run_data;
};

DiagnoseResult diagnose(const scenario::Setup& s, const DiagnoseRequest& r, const Progress& progress = {});

}  // namespace podnet::study
