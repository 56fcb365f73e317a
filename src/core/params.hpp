// Typed, self-describing parameters for everything registered by name
// (topology builders now; routing policies, collectives, workloads later).
//
// A registered thing declares a list of ParamSpec (name, type, default as
// scenario text, help). The scenario layer checks each user value against its
// spec (unknown key, bad unit, out of range) and fills defaults, producing a
// Params: a sorted map from name to typed value. `podnet list` prints specs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/units.hpp"

namespace podnet {

// A whole decimal integer (an optional sign, no trailing text); false when the text is not one or overflows int64.
bool parse_int(const std::string& text, int64_t& out);

// Ipv4Prefix / Ipv6Prefix: a network "10.0.0.0/9" / "fd00::/64" (core/ip.hpp), kept as canonical text.
enum class ParamType {
  Int,
  Real,
  Bool,
  String,
  Bandwidth,
  Time,
  Bytes,
  Length,
  Power,
  Ratio,
  IntList,
  Ipv4Prefix,
  Ipv6Prefix
};

const char* param_type_name(ParamType t);

struct ParamSpec {
  std::string name;
  ParamType type;
  std::string default_text;  // in scenario syntax; empty = required (unless optional)
  std::string help;
  double min = -1e300;  // for Int/Real/IntList elements
  double max = 1e300;
  std::vector<std::string>
      choices;            // for String: allowed values (empty = any); for Int: words allowed besides integers ("auto")
  bool optional = false;  // no default and not required: absent means "auto"
};

using ParamValue = std::variant<int64_t, double, bool, std::string, Bandwidth, Time, std::vector<int64_t>>;

class Params {
 public:
  void set(const std::string& name, ParamValue v, std::string text) {
    values_[name] = std::move(v);
    texts_[name] = std::move(text);
  }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  void erase(const std::string& name) {
    values_.erase(name);
    texts_.erase(name);
  }
  int64_t get_int(const std::string& name) const;
  double get_real(const std::string& name) const;  // Real, Length (m), Power (W), Ratio, Bytes or Int
  bool get_bool(const std::string& name) const;
  const std::string& get_string(const std::string& name) const;
  Bandwidth get_bandwidth(const std::string& name) const;
  Time get_time(const std::string& name) const;
  const std::vector<int64_t>& get_int_list(const std::string& name) const;
  // The value as the user (or the default) wrote it, canonicalized.
  const std::string& text(const std::string& name) const;
  const std::map<std::string, std::string>& texts() const { return texts_; }

 private:
  const ParamValue& at(const std::string& name) const;
  std::map<std::string, ParamValue> values_;
  std::map<std::string, std::string> texts_;
};

// Parses `text` against `spec`. On success returns the value and sets
// `canonical` to its canonical text; on failure returns nullopt and sets
// `expected` to what the spec accepts.
std::optional<ParamValue> parse_param(const ParamSpec& spec, const std::string& text, std::string& canonical,
                                      std::string& expected);

// Fills a Params from defaults only (throws Error if a required one is missing).
Params defaults_of(const std::vector<ParamSpec>& specs);

}  // namespace podnet
