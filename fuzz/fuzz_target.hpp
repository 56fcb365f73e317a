// Shared by the fuzz targets (fuzz/targets/*.cpp): each defines
// LLVMFuzzerTestOneInput for one parser a user feeds. podnet's own input
// errors (podnet::Error and its InputError / ParamError) are the expected
// answer to bad input; anything else escaping - std::out_of_range from a
// stoll, a bad_alloc from a size taken on trust - is a bug: it is not caught
// here, so the process aborts and libFuzzer (or the corpus replay in ctest)
// reports it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"

namespace podnet::fuzz {

template <class F>
int guarded(F&& f) {
  try {
    f();
  } catch (const podnet::Error&) {
  }
  return 0;
}

inline std::string text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace podnet::fuzz
