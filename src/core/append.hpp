// Text appended to a string in place, with no string of its own: exports and config plans write millions of
// numbers and names, and a temporary (std::to_string, fmt::format) for each was most of their time.
#pragma once

#include <cstdint>
#include <string>

namespace podnet {

// `v` in decimal, as std::to_string writes it.
inline void append_decimal(std::string& out, int64_t v) {
  char buf[24];
  char* const end = buf + sizeof buf;
  char* p = end;
  // The magnitude as unsigned: INT64_MIN has none as a signed number.
  uint64_t u = v < 0 ? ~static_cast<uint64_t>(v) + 1 : static_cast<uint64_t>(v);
  do {
    *--p = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (v < 0) *--p = '-';
  out.append(p, end);
}

// `v` in decimal, zeros after its sign up to `width` characters in all (fmt's "{:0{}}").
inline void append_zero_padded(std::string& out, int64_t v, size_t width) {
  const size_t at = out.size();
  append_decimal(out, v);
  const size_t digits = out.size() - at;
  if (digits < width) out.insert(at + (v < 0 ? 1 : 0), width - digits, '0');
}

}  // namespace podnet
