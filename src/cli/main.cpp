#include "cli/cli.hpp"
#include "core/process.hpp"

int main(int argc, char** argv) {
  podnet::keep_freed_memory();  // core/process.hpp
  return podnet::cli::run(argc, argv);
}
