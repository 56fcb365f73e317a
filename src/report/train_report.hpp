// Training reports: a simulated iteration (workload::TrainResult) as JSON
// keys, a console table, a Chrome/Perfetto trace, and the scaling sweep.
//
// add_training fills a JSON object (the document of `podnet train`, or
// doc["training"] for `podnet run`) with, among others:
//   iteration_time_ms, breakdown_ms.{compute,tp,pp,dp,ep,bubble} (the
//   critical stage's; they add up to the iteration time), mfu, hfu,
//   tflops_per_gpu, tokens_per_second, days_to_train,
//   placement.cross_spine_fraction, groups, volumes, stages[], plan stats.
// write_training_table renders such an object.
//
// train_document is the whole `podnet train` result (study::train): the
// above, plus "failures" (the iteration with the scenario's failures),
// "reliability" (days to train with failures), "imported" and "sweep".
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <vector>

#include "cluster/placement.hpp"
#include "scenario/setup.hpp"
#include "study/reliability.hpp"
#include "study/train.hpp"
#include "workload/chakra.hpp"
#include "workload/simai.hpp"
#include "workload/training.hpp"

namespace podnet::report {

void add_training(nlohmann::json& obj, const workload::TrainResult& r);
void write_training_table(const nlohmann::json& obj, std::ostream& out);
// The data-parallel collectives NCCL's tuner chose, as train prints them ("128 allgather ring/ll128 on 4
// channels, ..."), from a training document's plan.dp_choices; empty when it has none.
std::string dp_choices_text(const nlohmann::json& obj);
// The shape keys (layers, hidden, heads, kv_heads, ffn, vocab, experts, top_k) in which a model differs from its
// preset of the same name (an empty array for the preset itself or an unknown name), and the name a report
// gives it: "a model from mixtral-8x7b (layers, experts changed)" when reshaped, so that it is not read as the
// published model.
nlohmann::json reshaped_keys(const workload::ModelSpec& m);
std::string model_label(const nlohmann::json& model);

// The `podnet train` document and its table (training table, days to train
// with failures, the iteration with failures, the sweep).
nlohmann::json train_document(const scenario::Setup& s, const study::TrainStudy& t);

void write_train_table(const nlohmann::json& doc, std::ostream& out);
// The iteration with the scenario's injected failures (doc["failures"], train_document): the slowdown, the events,
// what made the step slower and what each failure costs. Nothing without failures. write_train_table ends with it.
void write_injected_failures(const nlohmann::json& doc, std::ostream& out);

// {mtbi_hours, checkpoint_interval_minutes, checkpoint_cost_minutes,
//  restart_cost_minutes, goodput, days_to_train_with_failures} (null for +inf)
nlohmann::json training_reliability_json(const study::TrainingReliability& r);
// `parallelism` (the training document's): a job on part of the fabric names its GPU count in the hint to
// `podnet reliability`, which otherwise takes every GPU of the fabric.
void write_training_reliability(const nlohmann::json& rel, std::ostream& out,
                                const nlohmann::json* parallelism = nullptr);

// One iteration's data loading from the frontend's storage nodes (study::DataLoading) against the iteration
// it feeds: {bytes_per_iteration, sample_bytes, servers, flows, engine, read_ms, gbyte_per_s, bound,
// iteration_ms, share_of_iteration, keeps_up, stall_ms}, and its lines of text.
nlohmann::json data_loading_json(const study::DataLoading& d, Time iteration);
void write_data_loading(const nlohmann::json& d, std::ostream& out);

// Chrome trace-event JSON (chrome://tracing, ui.perfetto.dev): one process per
// pipeline stage, threads "compute" (passes, TP/EP delays, optimizer), "pp send
// (replica 0)" and "dp (tp rank j)"; complete events (ph "X") with ts/dur in us.
// Times are whole nanoseconds: both end points of a slice are rounded and dur
// is their difference, so slices that touch in simulated time touch in the
// trace, and each number is written so that Perfetto's importer (which
// truncates us * 1000.0) reads back exactly those nanoseconds. Slice args:
// kind (p2p, ring, coupled, compute; a Chakra run's processes are ranks and
// its kinds compute, collective, p2p), group ("stage <pid>/<lane name>": the
// communicator the lane stands for) and, for traffic, bytes (payload: p2p
// total, per ring hop, per coupled edge), peers (GPUs taking part) and channel.
// Flow arrows (r.trace_flows: a pipeline send and the pass that waits for it; a Chakra send and its
// receive): a flow event pair with one id, "s" at the middle of the sending slice and "f" with binding
// point "e" at the middle of the receiving slice (not before the "s"). Counter tracks (r.trace_counters:
// link utilization on the flow engine): "C" events with args {utilization}, one track per link, in a
// process "links" after the stages.
void write_training_trace(const workload::TrainResult& r, std::ostream& out);

// obj["imported"]: the source file and, per communicator kind, collectives, bytes and blocking time
// per iteration (workload::simai::import_iteration).
void add_imported(nlohmann::json& obj, const std::string& source, const std::vector<workload::simai::GroupTraffic>& t);

// obj["chakra"] (workload/chakra.hpp): the trace directory, ranks, nodes, per communicator (pg_name, and
// "p2p" for sends/receives) ops, bytes and the critical rank's exposed time; breakdown_ms and stages_ms
// become the trace's per-rank compute / collective / p2p / idle, and what a trace does not know (the
// parallelism, the pipeline bubble, the communicator groups) is null.
void add_chakra(nlohmann::json& obj, const std::string& source, const workload::chakra::Imported& imported);

// doc["sweep"] rows and their table.
void add_sweep(nlohmann::json& obj, const std::vector<study::ScalingPoint>& points);
void write_sweep_table(const nlohmann::json& obj, std::ostream& out);

}  // namespace podnet::report
