// Errors podnet reports to its user.
//
// InputError: the user's input (scenario file, option, imported file) is
// wrong. The message names where (file:line, key path) and what was expected;
// the CLI prints it and exits with status 2.
// Error: anything else that stops a run (exit status 1).
#pragma once

#include <stdexcept>
#include <string>

namespace podnet {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
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
