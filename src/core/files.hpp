// Reading a file the user names (a scenario fragment, a sweep file, a log, a
// saved result): the whole of it as text, or an InputError that says what
// the path is instead (a directory, unreadable) and what was expected there.
#pragma once

#include <string>

namespace podnet {

// `label` opens the message ("--config-add f.yaml", or the path); `expected` ends it ("a YAML file of
// scenario sections").
std::string read_input_file(const std::string& path, const std::string& label, const std::string& expected);

}  // namespace podnet
