#include "report/scenario_schema.hpp"

#include <fmt/format.h>
#include <string>

#include "cluster/jobs.hpp"
#include "core/params.hpp"
#include "core/version.hpp"
#include "scenario/scenario.hpp"
#include "topology/builders.hpp"
#include "workload/job.hpp"

namespace podnet::report {

namespace {

using nlohmann::json;

// "number + unit", e.g. 400Gbps, 2us, 1.5MiB, 3m, 10.2kW.
constexpr const char* kUnitPattern = R"(^\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\s*[A-Za-z/]+\s*$)";

// Dotted quad (octets 0..255, no leading zeros) and a length 0..32; host bits are the loader's check.
constexpr const char* kIpv4PrefixPattern =
    R"(^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])/(3[0-2]|[12]?[0-9])$)";
// Hex groups and colons (RFC 4291's forms, an IPv4 tail allowed) and a length 0..128; the loader parses it exactly.
constexpr const char* kIpv6PrefixPattern = R"(^[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*/(12[0-8]|1[01][0-9]|[1-9]?[0-9])$)";

json property(const ParamSpec& p) {
  json j;
  switch (p.type) {
    case ParamType::Int:
      if (p.choices.empty()) {
        j["type"] = "integer";
        if (p.min > -1e300) j["minimum"] = static_cast<int64_t>(p.min);
        if (p.max < 1e300 && p.max < 9.2e18) j["maximum"] = static_cast<int64_t>(p.max);
      } else {
        j["anyOf"] = json::array({{{"type", "integer"}}, {{"enum", p.choices}}});
      }
      break;
    case ParamType::Real:
      j["type"] = "number";
      if (p.min > -1e300) j["minimum"] = p.min;
      if (p.max < 1e300) j["maximum"] = p.max;
      break;
    case ParamType::Ratio:
      j["anyOf"] = json::array(
          {{{"type", "number"}}, {{"type", "string"}, {"pattern", R"(^\s*[0-9.eE+-]+\s*(:\s*[0-9.eE+-]+\s*)?$)"}}});
      break;
    case ParamType::Bool: j["type"] = "boolean"; break;
    case ParamType::String:
      j["type"] = "string";
      if (!p.choices.empty()) j["enum"] = p.choices;
      break;
    case ParamType::IntList:
      j["anyOf"] = json::array({{{"type", "array"}, {"items", {{"type", "integer"}}}}, {{"type", "string"}}});
      break;
    case ParamType::Ipv4Prefix:
      j["type"] = "string";
      j["pattern"] = kIpv4PrefixPattern;
      break;
    case ParamType::Ipv6Prefix:
      j["type"] = "string";
      j["pattern"] = kIpv6PrefixPattern;
      break;
    case ParamType::Bandwidth:
    case ParamType::Time:
    case ParamType::Bytes:
    case ParamType::Length:
    case ParamType::Power:
      j["type"] = "string";
      j["pattern"] = kUnitPattern;
      break;
  }
  std::string d = p.help;
  d += fmt::format(" ({}", param_type_name(p.type));
  if (!p.default_text.empty()) d += ", default " + p.default_text;
  else if (p.optional) d += ", default auto";
  d += ")";
  j["description"] = d;
  return j;
}

json object_of(const std::vector<ParamSpec>& specs, const std::string& description) {
  json props = json::object();
  json required = json::array();
  for (const auto& p : specs) {
    props[p.name] = property(p);
    if (p.default_text.empty() && !p.optional) required.push_back(p.name);
  }
  json j = {{"type", "object"}, {"description", description}, {"properties", props}, {"additionalProperties", false}};
  if (!required.empty()) j["required"] = required;
  return j;
}

json keys_object(const std::vector<std::string>& keys, const std::string& description) {
  json props = json::object();
  for (const auto& k : keys) props[k] = json::object();  // values checked by the loader
  return {{"type", "object"}, {"description", description}, {"properties", props}, {"additionalProperties", false}};
}

}  // namespace

json scenario_json_schema() {
  json props = json::object();
  props["schema_version"] = {{"const", 1}, {"description", "scenario format version (required): 1"}};
  props["name"] = {{"type", "string"}, {"description", "scenario name (default: the file name)"}};
  props["description"] = {{"type", "string"}};
  props["seed"] = {{"type", "integer"}, {"minimum", 0}, {"description", "random seed (default 1)"}};
  json families = json::array();
  for (const auto& b : topology::builders()) {
    json o = object_of(b.params(), std::string(b.name) + ": " + b.description);
    o["properties"]["family"] = {{"const", b.name}};
    json req = o.value("required", json::array());
    req.push_back("family");
    o["required"] = req;
    families.push_back(o);
  }
  props["topology"] = {{"description", "the fabric: `family` and its parameters (podnet list)"}, {"oneOf", families}};
  for (const auto& s : scenario::sections()) props[s.name] = object_of(s.params(), s.description);
  json failure_keys = scenario::failure_keys();
  props["failures"] = {
      {"type", "array"},
      {"description", "failures injected into bench/train runs (podnet list shows the forms)"},
      {"items",
       {{"anyOf",
         json::array({keys_object(scenario::failure_keys(), "a scheduled failure: at, one of link/switch/gpu, "
                                                            "action, and rate or factor"),
                      keys_object(scenario::random_failure_keys(), "failures drawn from the reliability: rates")})}}}};
  props["faults"] = {{"type", "array"},
                     {"description",
                      "hidden faults: silent loss, corruption, gray degradation and flaps for podnet "
                      "diagnose to find (and for bench and train on the packet engine); pfc_storm (a NIC stuck "
                      "sending PAUSE) and drifted_thresholds (a switch's ECN kmin/kmax/pmax or PFC pfc_alpha off the "
                      "configuration) on the packet engine"},
                     {"items", keys_object(scenario::fault_keys(), "kind, link or switch, and the fault's figure")}};
  json policies = json::array();
  for (const auto& x : cluster::schedulers()) policies.push_back(x.name);
  json job = {{"type", "object"},
              {"description", "one training job of several on the fabric (podnet train)"},
              {"properties",
               {{"name", {{"type", "string"}, {"description", "unique name (default job<index>)"}}},
                {"gpus", {{"type", "integer"}, {"minimum", 1}, {"description", "the job's GPU count (required)"}}},
                {"start",
                 {{"type", "string"},
                  {"pattern", kUnitPattern},
                  {"description", "when its iteration begins (Time, default 0s)"}}},
                {"placement",
                 {{"enum", policies}, {"description", "scheduler policy for this job (default scheduler.policy)"}}},
                {"workload", object_of(workload::workload_params(),
                                       "keys of workload: that differ for this job (the rest come from workload:)")}}},
              {"required", json::array({"gpus"})},
              {"additionalProperties", false}};
  props["jobs"] = {{"type", "array"},
                   {"minItems", 1},
                   {"description", "several training jobs on one fabric, placed by the scheduler: (podnet train)"},
                   {"items", job}};
  const json tenant = {{"type", "object"},
                       {"properties",
                        {{"name", {{"type", "string"}, {"pattern", "^[a-z0-9-]{1,11}$"}}},
                         {"gpus",
                          {{"description", "a GPU count or a share such as 50%"},
                           {"anyOf", json::array({json{{"type", "integer"}, {"minimum", 1}},
                                                  json{{"type", "string"}, {"pattern", "^[0-9.]+%$"}}})}}}}},
                       {"required", json::array({"name", "gpus"})},
                       {"additionalProperties", false}};
  props["tenants"] = {{"type", "array"},
                      {"minItems", 1},
                      {"description", "tenants isolated in VRFs of their own (EVPN-VXLAN in the configuration plan)"},
                      {"items", tenant}};
  return {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
          {"$id", "https://podnet.invalid/schema/scenario-1.json"},
          {"title", fmt::format("podnet scenario (schema_version 1; podnet {})", version())},
          {"type", "object"},
          {"required", json::array({"schema_version", "topology"})},
          {"properties", props},
          {"additionalProperties", false}};
}

}  // namespace podnet::report
