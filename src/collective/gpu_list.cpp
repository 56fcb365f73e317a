#include "collective/gpu_list.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "core/error.hpp"

namespace podnet::collective {

namespace {

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t')) --b;
  return s.substr(a, b - a);
}

// A non-negative decimal integer of at most 12 digits.
bool parse_number(const std::string& s, int64_t& out) {
  if (s.empty() || s.size() > 12) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

}  // namespace

std::vector<int32_t> parse_gpu_list(const std::string& spec, int32_t total_gpus) {
  const auto fail = [&](const std::string& why) -> InputError {
    return InputError(fmt::format("GPU list '{}': {}", spec, why));
  };
  const std::string syntax = "expected items like 5, 0-511 or 0-4095:8 separated by commas";
  if (trim(spec).empty()) throw fail("empty; " + syntax);
  std::vector<int32_t> out;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string::npos) comma = spec.size();
    const std::string item = trim(spec.substr(pos, comma - pos));
    pos = comma + 1;
    if (item.empty()) throw fail("empty item; " + syntax);
    // "'item': " before what is wrong with it, unless the list is that one item (named already).
    const std::string at = item == trim(spec) ? std::string() : fmt::format("'{}': ", item);
    int64_t a = 0, b = 0, stride = 1;
    const size_t dash = item.find('-');
    const size_t colon = item.find(':');
    if (dash == std::string::npos) {
      if (colon != std::string::npos) throw fail(fmt::format("{}a stride needs a range a-b:s; {}", at, syntax));
      if (!parse_number(item, a)) throw fail(fmt::format("'{}' is not a GPU number; {}", item, syntax));
      b = a;
    } else {
      const std::string first = item.substr(0, dash);
      const std::string rest = item.substr(dash + 1, colon == std::string::npos ? std::string::npos : colon - dash - 1);
      if (colon != std::string::npos && colon < dash) throw fail(fmt::format("'{}' is not a range; {}", item, syntax));
      if (!parse_number(trim(first), a) || !parse_number(trim(rest), b))
        throw fail(fmt::format("'{}' is not a range; {}", item, syntax));
      if (colon != std::string::npos && !parse_number(trim(item.substr(colon + 1)), stride))
        throw fail(fmt::format("{}the stride is not a number; {}", at, syntax));
      if (b < a) throw fail(fmt::format("{}the range ends before it starts", at));
      if (stride < 1) throw fail(fmt::format("{}the stride must be at least 1", at));
    }
    const int64_t last = a + (b - a) / stride * stride;
    if (last >= total_gpus)
      throw fail(fmt::format("{}GPU {} is out of range (the topology has GPUs 0-{})", at, last, total_gpus - 1));
    for (int64_t g = a; g <= b; g += stride) out.push_back(static_cast<int32_t>(g));
  }
  std::vector<int32_t> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end()) throw fail(fmt::format("GPU {} is listed more than once", *dup));
  return out;
}

}  // namespace podnet::collective
