// The `maintenance:` section: a rolling upgrade of one switch tier for `podnet plan-upgrade`
// (study/upgrade.hpp runs it).
#pragma once

#include <vector>

#include "core/params.hpp"

namespace podnet::scenario {

std::vector<ParamSpec> maintenance_params();

}  // namespace podnet::scenario
