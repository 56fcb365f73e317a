#include "report/json_intake.hpp"

#include <fmt/format.h>
#include <set>
#include <vector>

#include "core/error.hpp"

namespace podnet::report {

nlohmann::json parse_json(std::string_view text, const std::string& source, const JsonLimits& limits) {
  using Event = nlohmann::json::parse_event_t;
  struct Level {
    bool object;
    std::string at;              // this container's place: "" for the root, ".key" or "[3]" below it
    std::set<std::string> keys;  // an object's keys so far
    size_t items = 0;            // an array's elements so far
  };
  std::vector<Level> open;
  std::string pending_key;
  auto path = [&] {
    std::string p = "$";
    for (const Level& l : open) p += l.at;
    return p;
  };
  // A path of 64 levels is cut to its start and end.
  auto shorten = [](const std::string& p) {
    return p.size() <= 60 ? p : p.substr(0, 24) + "..." + p.substr(p.size() - 24);
  };
  // The place of a value about to start in the innermost container.
  auto next_place = [&]() -> std::string {
    if (open.empty()) return "";
    if (open.back().object) return "." + pending_key;
    return fmt::format("[{}]", open.back().items);
  };
  auto callback = [&](int depth, Event event, nlohmann::json& parsed) -> bool {
    switch (event) {
      case Event::object_start:
      case Event::array_start: {
        if (depth >= limits.max_depth)
          throw InputError(fmt::format("{}: {}: nested over {} levels deep; expected at most {}", source,
                                       shorten(path() + next_place()), limits.max_depth, limits.max_depth));
        open.push_back({event == Event::object_start, next_place(), {}, 0});
        break;
      }
      case Event::key: {
        pending_key = parsed.get<std::string>();
        if (!open.empty() && !open.back().keys.insert(pending_key).second)
          throw InputError(fmt::format("{}: {}: the key '{}' is given twice; expected each key once per object", source,
                                       path(), pending_key));
        break;
      }
      case Event::object_end:
      case Event::array_end:
        open.pop_back();
        if (!open.empty() && !open.back().object) ++open.back().items;
        break;
      case Event::value:
        if (!open.empty() && !open.back().object) ++open.back().items;
        break;
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), callback);
  } catch (const nlohmann::json::exception& e) {  // a parse error, or a number out of range (1e999)
    // nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..." as
    // "FILE: line 1, column 2: not JSON: syntax error ..." (the library's tag is not the user's business).
    std::string what = e.what();
    if (const size_t tag = what.find("] "); what.rfind("[json.exception.", 0) == 0 && tag != std::string::npos)
      what = what.substr(tag + 2);
    constexpr std::string_view kAt = "parse error at ";
    if (what.rfind(kAt, 0) == 0) {
      const std::string rest = what.substr(kAt.size());
      if (const size_t colon = rest.find(": "); colon != std::string::npos)
        throw InputError(fmt::format("{}: {}: not JSON: {}", source, rest.substr(0, colon), rest.substr(colon + 2)));
    }
    throw InputError(fmt::format("{}: not JSON: {}", source, what));
  }
}

}  // namespace podnet::report
