// One bounded way in for every JSON text a user gives podnet: saved result
// documents (`podnet diff a.json b.json`) and the dashboard's request bodies.
//
// nlohmann's parser is iterative, but podnet walks documents recursively (the
// diff flattens them), so a 400 KB file of 200,000 nested brackets would
// overflow the stack. A request with a key given twice would silently keep
// one of them. parse_json() refuses both, naming the source and the key path:
//   - nesting deeper than `max_depth` (a result document nests 6 deep);
//   - a key given twice in one object.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace podnet::report {

struct JsonLimits {
  int max_depth = 64;
};

// Parses `text` (named `source` in messages); throws InputError.
nlohmann::json parse_json(std::string_view text, const std::string& source, const JsonLimits& limits = {});

}  // namespace podnet::report
