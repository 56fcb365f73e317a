#include "core/params.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/ip.hpp"

namespace podnet {

const char* param_type_name(ParamType t) {
  switch (t) {
    case ParamType::Int: return "integer";
    case ParamType::Real: return "number";
    case ParamType::Bool: return "true|false";
    case ParamType::String: return "string";
    case ParamType::Bandwidth: return "bandwidth";
    case ParamType::Time: return "time";
    case ParamType::Bytes: return "bytes";
    case ParamType::Length: return "length";
    case ParamType::Power: return "power";
    case ParamType::Ratio: return "ratio";
    case ParamType::IntList: return "list of integers";
    case ParamType::Ipv4Prefix: return "IPv4 prefix";
    case ParamType::Ipv6Prefix: return "IPv6 prefix";
  }
  return "?";
}

const ParamValue& Params::at(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw Error(fmt::format("internal: parameter '{}' not set", name));
  return it->second;
}

int64_t Params::get_int(const std::string& name) const {
  const auto& v = at(name);
  if (auto p = std::get_if<int64_t>(&v)) return *p;
  throw Error(fmt::format("internal: parameter '{}' is not an integer", name));
}

double Params::get_real(const std::string& name) const {
  const auto& v = at(name);
  if (auto p = std::get_if<double>(&v)) return *p;
  if (auto p = std::get_if<int64_t>(&v)) return static_cast<double>(*p);
  throw Error(fmt::format("internal: parameter '{}' is not a number", name));
}

bool Params::get_bool(const std::string& name) const {
  const auto& v = at(name);
  if (auto p = std::get_if<bool>(&v)) return *p;
  throw Error(fmt::format("internal: parameter '{}' is not a bool", name));
}

const std::string& Params::get_string(const std::string& name) const {
  const auto& v = at(name);
  if (auto p = std::get_if<std::string>(&v)) return *p;
  throw Error(fmt::format("internal: parameter '{}' is not a string", name));
}

Bandwidth Params::get_bandwidth(const std::string& name) const {
  const auto& v = at(name);
  if (auto p = std::get_if<Bandwidth>(&v)) return *p;
  throw Error(fmt::format("internal: parameter '{}' is not a bandwidth", name));
}

Time Params::get_time(const std::string& name) const {
  const auto& v = at(name);
  if (auto p = std::get_if<Time>(&v)) return *p;
  throw Error(fmt::format("internal: parameter '{}' is not a time", name));
}

const std::vector<int64_t>& Params::get_int_list(const std::string& name) const {
  const auto& v = at(name);
  if (auto p = std::get_if<std::vector<int64_t>>(&v)) return *p;
  throw Error(fmt::format("internal: parameter '{}' is not a list", name));
}

const std::string& Params::text(const std::string& name) const {
  auto it = texts_.find(name);
  if (it == texts_.end()) throw Error(fmt::format("internal: parameter '{}' not set", name));
  return it->second;
}

bool parse_int(const std::string& text, int64_t& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size()) return false;
  out = v;
  return true;
}

namespace {
// For a number given with a unit ("30d", "1500USD") to a key that takes a bare one: the unit is the key's, in its
// help ("..., in days", "USD per back-end NIC ...").
std::string unit_hint(const ParamSpec& s, const std::string& text) {
  char* end = nullptr;
  (void)std::strtod(text.c_str(), &end);
  const bool number_then_more = end != text.c_str() && end != text.c_str() + text.size();
  // Letters or a symbol after the number ("30d", "5 %", "$"): not a thousands separator's comma or a decimal point.
  const char next = number_then_more ? *end : '\0';
  if (!number_then_more || next == ',' || next == '.' || s.help.empty()) return "";
  return fmt::format(", a bare number without a unit ({}: {})", s.name, s.help);
}

std::string range_text(const ParamSpec& s) {
  if (s.min > -1e299 && s.max < 1e299) return fmt::format(" in [{}, {}]", format_number(s.min), format_number(s.max));
  if (s.min > -1e299) return fmt::format(" >= {}", format_number(s.min));
  if (s.max < 1e299) return fmt::format(" <= {}", format_number(s.max));
  return "";
}
}  // namespace

std::optional<ParamValue> parse_param(const ParamSpec& spec, const std::string& text, std::string& canonical,
                                      std::string& expected) {
  switch (spec.type) {
    case ParamType::Int: {
      // An Int spec's choices are words accepted besides integers (e.g. "auto"), kept as strings.
      for (const auto& c : spec.choices)
        if (c == text) {
          canonical = text;
          return text;
        }
      int64_t v = 0;
      if (!parse_int(text, v) || static_cast<double>(v) < spec.min || static_cast<double>(v) > spec.max) {
        expected = "an integer" + range_text(spec);
        for (const auto& c : spec.choices) expected += " or " + c;
        expected += unit_hint(spec, text);
        return std::nullopt;
      }
      canonical = std::to_string(v);
      return v;
    }
    case ParamType::Real: {
      char* end = nullptr;
      double v = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v < spec.min || v > spec.max) {
        expected = "a number" + range_text(spec) + unit_hint(spec, text);
        return std::nullopt;
      }
      canonical = format_number(v);
      return v;
    }
    case ParamType::Bool:
      if (text == "true" || text == "false") {
        canonical = text;
        return text == "true";
      }
      expected = "true or false";
      // A switch's other words (on, off, yes, no, 1, 0) name the value meant: said, not guessed.
      for (const char* w : {"on", "yes", "y", "1", "enabled", "enable"})
        if (text == w) expected += " (for '" + text + "', write true)";
      for (const char* w : {"off", "no", "n", "0", "disabled", "disable"})
        if (text == w) expected += " (for '" + text + "', write false)";
      return std::nullopt;
    case ParamType::String:
      if (!spec.choices.empty()) {
        for (const auto& c : spec.choices)
          if (c == text) {
            canonical = text;
            return text;
          }
        std::string list;
        for (const auto& c : spec.choices) list += (list.empty() ? "" : ", ") + c;
        expected = "one of: " + list;
        return std::nullopt;
      }
      canonical = text;
      return text;
    case ParamType::Ipv4Prefix:
    case ParamType::Ipv6Prefix: {
      const bool v6 = spec.type == ParamType::Ipv6Prefix;
      std::string why;
      auto p = parse_prefix(text, why);
      if (p && p->v6 != v6) why = std::string("an ") + (v6 ? "IPv6" : "IPv4") + " prefix, not '" + text + "'";
      if (!p || p->v6 != v6) {
        expected = why;
        return std::nullopt;
      }
      canonical = p->text();
      return canonical;
    }
    case ParamType::Bandwidth: {
      Bandwidth b;
      if (!parse_bandwidth(text, b, expected)) return std::nullopt;
      // In the unit family it was written in: bytes per second stay bytes ("450GB/s", not "3.6Tbps"), so that
      // resolve, diff and run.options show a value as the scenario's author wrote it.
      canonical = text.find("B/s") != std::string_view::npos ? format_bandwidth_bytes(b) : format_bandwidth(b);
      return b;
    }
    case ParamType::Time: {
      Time t;
      if (!parse_time(text, t, expected)) return std::nullopt;
      canonical = format_time(t);
      return t;
    }
    case ParamType::Bytes: {
      Bytes b = 0;
      if (!parse_bytes(text, b, expected)) return std::nullopt;
      if (static_cast<double>(b) < spec.min || static_cast<double>(b) > spec.max) {
        expected = fmt::format("a size from {} to {}", format_bytes(static_cast<Bytes>(spec.min)),
                               format_bytes(static_cast<Bytes>(spec.max)));
        return std::nullopt;
      }
      canonical = format_bytes(b);
      return static_cast<int64_t>(b);
    }
    case ParamType::Length: {
      double m = 0;
      if (!parse_length(text, m, expected)) return std::nullopt;
      canonical = format_length(m);
      return m;
    }
    case ParamType::Power: {
      double w = 0;
      if (!parse_power(text, w, expected)) return std::nullopt;
      canonical = format_power(w);
      return w;
    }
    case ParamType::Ratio: {
      double r = 0;
      if (!parse_ratio(text, r, expected)) return std::nullopt;
      canonical = format_number(r) + ":1";
      return r;
    }
    case ParamType::IntList: {
      // "[4, 4, 4]" or "4x4x4" or "4,4,4"; or one of the spec's words (e.g. "auto"), kept as a string
      if (std::find(spec.choices.begin(), spec.choices.end(), text) != spec.choices.end()) {
        canonical = text;
        return text;
      }
      std::string s;
      for (char c : text)
        if (c != '[' && c != ']' && c != ' ') s += (c == 'x' || c == 'X') ? ',' : c;
      std::vector<int64_t> out;
      size_t pos = 0;
      while (pos <= s.size()) {
        size_t comma = s.find(',', pos);
        if (comma == std::string::npos) comma = s.size();
        int64_t v = 0;
        if (!parse_int(s.substr(pos, comma - pos), v) || static_cast<double>(v) < spec.min ||
            static_cast<double>(v) > spec.max) {
          // The example in the key's own terms: its default when that is a list ([1, 4, 16, 64]), else a shape
          // (torus dims: [4, 4, 4] or 4x4x4).
          expected = "a list of integers" + range_text(spec) +
                     (spec.default_text.rfind('[', 0) == 0 && spec.name != "dims" && spec.name != "cube"
                          ? " such as " + spec.default_text
                          : " such as [4, 4, 4] or 4x4x4");
          for (const auto& c : spec.choices) expected += ", or " + c;
          return std::nullopt;
        }
        out.push_back(v);
        pos = comma + 1;
      }
      canonical = "[";
      for (size_t i = 0; i < out.size(); ++i) canonical += (i ? ", " : "") + std::to_string(out[i]);
      canonical += "]";
      return out;
    }
  }
  return std::nullopt;
}

Params defaults_of(const std::vector<ParamSpec>& specs) {
  Params p;
  for (const auto& s : specs) {
    if (s.default_text.empty()) {
      if (s.optional) continue;
      throw Error(fmt::format("internal: parameter '{}' has no default", s.name));
    }
    std::string canonical, expected;
    auto v = parse_param(s, s.default_text, canonical, expected);
    if (!v) throw Error(fmt::format("internal: default of '{}' ({}) is not {}", s.name, s.default_text, expected));
    p.set(s.name, *v, canonical);
  }
  return p;
}

}  // namespace podnet
