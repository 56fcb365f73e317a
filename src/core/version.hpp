#pragma once
namespace podnet {
const char* version();  // e.g. "0.1.0"
const char* git_sha();  // short sha at configure time, or "unknown"
}  // namespace podnet
