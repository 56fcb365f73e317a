// The dashboard's static assets, embedded into the binary at build time
// (cmake/EmbedWeb.cmake): podnet's own web/*.html, *.js, *.css and the chart
// library, Apache ECharts (web/node_modules/echarts/dist/echarts.min.js,
// installed from npm by scripts/setup.sh). Served by `podnet serve` from this
// table only (no file system access, so no path traversal) and inlined into
// the `--html` reports.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace podnet::report {

struct WebAsset {
  std::string_view path;  // "podnet.js", "vendor/echarts.min.js"
  std::string_view content_type;
  std::string_view data;
};

// Every embedded asset, in name order (the generated table).
const std::vector<WebAsset>& web_assets();
// The asset named `path`, or nullptr.
const WebAsset* find_web_asset(std::string_view path);
// True when the chart library was installed when podnet was built.
bool dashboard_installed();
// The message for a build without the chart library.
inline constexpr const char* kDashboardMissing =
    "the dashboard assets were not installed when podnet was built (Apache ECharts from npm is missing): run "
    "scripts/setup.sh (it runs `npm ci --prefix web`), then rebuild";

}  // namespace podnet::report
