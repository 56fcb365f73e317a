#include "report/web_assets.hpp"

namespace podnet::report {

const WebAsset* find_web_asset(std::string_view path) {
  for (const auto& a : web_assets())
    if (a.path == path) return &a;
  return nullptr;
}

bool dashboard_installed() { return find_web_asset("vendor/echarts.min.js") != nullptr; }

}  // namespace podnet::report
