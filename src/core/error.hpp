// Errors podnet reports to its user.
//
// InputError: the user's input (scenario file, option, imported file) is
// wrong. The message names where (file:line, key path) and what was expected;
// the CLI prints it and exits with status 2.
// Error: anything else that stops a run (exit status 1).
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace podnet {

// `text` safe to print on a terminal: control characters other than newline
// and tab (NUL, ESC and the rest, DEL) become visible escapes ("\x1b"), so a
// message quoting a user's bytes neither ends early at a NUL nor drives the
// terminal. UTF-8 text is kept as is.
inline std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

// Every message is printable(): a user's bytes quoted in it are escaped.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(printable(message)) {}
  explicit Error(const char* message) : std::runtime_error(printable(message)) {}
};

class InputError : public Error {
 public:
  using Error::Error;
};

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;

}  // namespace podnet

namespace podnet {

// An impossible value for one scenario key. `key` is the full key path
// ("topology.gpus"); the scenario layer adds the file and line of that key.
class ParamError : public InputError {
 public:
  ParamError(std::string key, const std::string& message) : InputError(message), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

}  // namespace podnet
