#include "core/files.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace podnet {

std::string read_input_file(const std::string& path, const std::string& label, const std::string& expected) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(fmt::format("{}: is a directory; expected {}", label, expected));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(fmt::format("{}: cannot read the file ({}); expected {}", label, std::strerror(errno), expected));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace podnet
