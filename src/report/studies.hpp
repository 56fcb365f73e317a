// The study registry: every study podnet runs on a scenario, declared once.
//
// An entry says a study's name, its request parameters (ParamSpecs with the
// one set of defaults every front end uses), how it runs (a resolved
// scenario and the parameters -> its result document) and its result fields
// (key, label, unit, how a table prints it). The front ends loop over it:
// `podnet sweep` (--study choices, the study options, the table's columns
// and formats), `podnet diff` (--study), `podnet optimize` (its design and
// train points, the objectives it may choose), `podnet serve` (a run's JSON
// fields, GET /api/studies for the page). A study registered here works in
// each of them with no edit there.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/params.hpp"
#include "scenario/scenario.hpp"
#include "scenario/setup.hpp"
#include "study/study.hpp"
#include "topology/topology.hpp"

namespace podnet::report {

// Where a request parameter is offered: as an option of `podnet sweep` and `podnet diff` (kCli), as a
// field of serve's POST /api/runs (kServe).
inline constexpr unsigned kCli = 1, kServe = 2;

struct StudyParam {
  ParamSpec spec;        // name: serve's JSON field and the key in a sweep's definition; default_text: THE default
  std::string flags;     // the CLI option's names ("-b,--min"); empty: "--" + name with '_' as '-'
  std::string sets_key;  // sugar for a scenario key: a value given becomes KEY=VALUE after the --set overrides
  unsigned fronts = kCli | kServe;
  // The CLI option's long name ("--min").
  std::string option() const;
};

// A result field: a name of sweep_fields (the database column, diff's field), declared with what a
// person reads. `key` ending in '@' stands for KEY@BYTES, one per size of a bench.
struct ResultField {
  std::string key;
  std::string label;      // "iteration time"
  std::string unit;       // printed after the value ("ms", "%", "USD"); "" for a count
  double scale = 1;       // shown = stored x scale (a fraction shown in %: 100)
  int decimals = 2;       // shown with this many decimals, digits grouped by thousands
  bool headline = false;  // a default column of sweep's table
  std::string objective;  // the name `podnet optimize --objective` knows it by ("" = not an objective)
  bool optional = false;  // absent from some documents of the study (a run without failures, a mode)
  std::string null_when;  // "" = always a number; else when it is null ("no request has a second token")
  bool yes_no = false;    // a true/false result: "yes" or "no" in tables (a sweep stores 1 or 0), boolean in the schema
};

// A request's parameters: every one of the study's (defaults filled in), the texts given, and the scenario
// overrides they imply.
struct StudyArgs {
  Params values;
  std::map<std::string, std::string> given;   // name -> text, only those given
  std::map<std::string, std::string> labels;  // name -> how errors name it ("--min", "'min'")
  std::vector<std::string> sets;              // KEY=VALUE overrides the parameters imply (after the user's)
  std::map<std::string, std::string> set_by;  // scenario key -> the parameter's label, for errors
  std::string label(const std::string& name) const;
};

struct StudyRun {
  const scenario::Scenario* scenario = nullptr;  // every study
  const scenario::Setup* setup = nullptr;        // a study with needs_setup
  const StudyArgs* args = nullptr;
  study::Progress progress;
  bool page = false;  // also what the dashboard draws beside the document (StudyOutput::extras, trace)
};

struct StudyOutput {
  nlohmann::json document;
  nlohmann::json extras = nlohmann::json::object();  // serve's payload beside "document" (drawing, ...)
  std::string trace;                                 // a Chrome/Perfetto trace, when one was asked for
};

struct StudyDef {
  std::string name;
  std::string description;
  std::vector<StudyParam> params;
  bool needs_setup = true;  // false: runs on the loaded scenario alone (design), no Setup resolved
  // The result field holding the number of GPUs the study ran on ("" = none): sweep and diff show it and
  // warn when it differs between points or sides.
  std::string gpus_field;
  std::vector<ResultField> fields;
  // Checks the parameters before any scenario is loaded (InputError naming the parameter's label) and
  // adds the scenario overrides they imply to args.sets.
  std::function<void(StudyArgs&)> prepare;
  // Checks the parameters against the resolved scenario (a GPU list against the fabric) before a front end
  // accepts the run (serve answers 400 instead of starting it); none = nothing to check.
  std::function<void(const StudyArgs&, const scenario::Setup&)> check;
  std::function<StudyOutput(const StudyRun&)> run;
};

// Every study, in the order front ends list them (a deque: a study registered later moves no other).
const std::deque<StudyDef>& studies();
// Adds a study (a test's, or one defined outside this file); InputError for a name taken.
void register_study(StudyDef s);
const StudyDef* find_study(const std::string& name);
// The study named `name`, else InputError "OPTION NAME: expected design, bench, ...".
const StudyDef& study_named(const std::string& name, const std::string& option);
// "design, bench, train, reliability, diagnose or jobs".
std::string study_names(const std::string& last = " or ");

// A parameter of `s` by name, or null.
const StudyParam* find_param(const StudyDef& s, const std::string& name);
// The parameters of `s` given as texts (name -> text; the others take their defaults), checked against
// their specs and the study's prepare. `label_of` names a parameter in errors.
StudyArgs study_args(const StudyDef& s, const std::map<std::string, std::string>& given,
                     const std::function<std::string(const StudyParam&)>& label_of);

// "NAME=TEXT" per parameter of `s` offered on `front` (given, else its default), in declaration order: the
// study's part of a sweep's definition.
std::vector<std::string> study_definition(const StudyDef& s, const StudyArgs& a, unsigned front);

// Runs `s` on `sc` with `args`: resolves the Setup when the study needs one (`adjust`, when given, may
// change it first: threads, an engine progress hook).
StudyOutput run_study(const StudyDef& s, const scenario::Scenario& sc, const StudyArgs& args,
                      const study::Progress& progress = {}, const std::function<void(scenario::Setup&)>& adjust = {},
                      bool page = false);

// The declared field `key` of `s` (KEY@BYTES matches a declared "KEY@"), or null.
const ResultField* find_field(const StudyDef& s, const std::string& key);
// A value as a table prints it: a declared field with its unit, scale and decimals ("14,612.91 ms",
// "37.2%"); otherwise integers grouped by thousands and reals with up to 4 decimals, grouped too.
// `with_unit` false: the number alone (a table that says the unit in its header), but for "%".
std::string format_field(const ResultField* f, const nlohmann::json& value, bool with_unit = true);
// The GPU count of a result document by its study's gpus_field, or -1.
int64_t gpus_of(const StudyDef& s, const nlohmann::json& doc);

// The registry as the page reads it (GET /api/studies): {studies: [{name, description, params: [{name,
// type, default, help, choices, option}], fields: [{key, label, unit, scale, decimals, headline}],
// gpus_field}]}; parameters of the front `front` only.
nlohmann::json studies_json(unsigned front);

// The JSON Schema (draft 2020-12) of a study's result document: schema_version, run, and every declared
// field at its path with its type, label and unit (a KEY@ field in each of `rows`); other keys are allowed
// (the schema is the contract the front ends read, not every number of the document).
nlohmann::json result_schema(const StudyDef& s);
// Every study's, under $defs by name (`podnet list results --schema`).
nlohmann::json result_schemas();

// "S s elapsed", and once a run has taken 3 s and is not over, ", ETA T" (by the mean time per step so far).
std::string elapsed_and_eta(int64_t done, int64_t total, double elapsed);

// Sizes as nccl-tests takes them (-b/-e): a number with B/KB/MB/GB/KiB/..., or K/M/G/T meaning powers of
// 1024. InputError naming `label`.
Bytes parse_size(const std::string& text, const std::string& label);
// What follows "not a collective" in an error about a misspelt op: " (did you mean allreduce?); expected one of
// allreduce, allgather, ...".
std::string op_hint(const std::string& name);

// The design result document (BOM, limits, ...) of a built topology.
nlohmann::json design_document(const scenario::Scenario& sc, const topology::Topology& t, const std::string& cmd);

}  // namespace podnet::report
