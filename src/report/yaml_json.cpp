#include "report/yaml_json.hpp"

#include <cmath>
#include <cstdlib>

namespace podnet::report {

namespace {

// A YAML scalar as JSON: a plain number or boolean as such, anything else (units, names) as text.
nlohmann::json scalar_json(const YAML::Node& n) {
  const std::string& v = n.Scalar();
  if (n.Tag() != "!" && !v.empty()) {  // not quoted in the YAML
    if (v == "true" || v == "false") return v == "true";
    char* end = nullptr;
    const long long i = std::strtoll(v.c_str(), &end, 10);
    if (end == v.c_str() + v.size()) return i;
    const double d = std::strtod(v.c_str(), &end);
    if (end == v.c_str() + v.size() && std::isfinite(d)) return d;
  }
  return v;
}

}  // namespace

nlohmann::json yaml_json(const YAML::Node& n) {
  if (n.IsMap()) {
    nlohmann::json o = nlohmann::json::object();
    for (auto it = n.begin(); it != n.end(); ++it) o[it->first.Scalar()] = yaml_json(it->second);
    return o;
  }
  if (n.IsSequence()) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& x : n) a.push_back(yaml_json(x));
    return a;
  }
  if (n.IsScalar()) return scalar_json(n);
  return nullptr;
}

}  // namespace podnet::report
