// A ParamError whose blame several keys share. A job too large for its
// GPUs' memory is its layers' and sequence's as much as its tp's; naming
// workload.tp at the scenario file's line when the user had just given
// --set workload.layers=100000 sent them to the wrong place. The scenario
// layer (Scenario::blame) names the first of `also` that the user gave with
// --set, then with a --config-add fragment, and `key` otherwise.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace podnet {

class SharedParamError : public ParamError {
 public:
  SharedParamError(std::string key, const std::string& message, std::vector<std::string> also)
      : ParamError(std::move(key), message), also_(std::move(also)) {}
  const std::vector<std::string>& also() const { return also_; }

 private:
  std::vector<std::string> also_;
};

}  // namespace podnet
