#include "cli/cli.hpp"
#include "core/process.hpp"

int main(int argc, char** argv) {
  podnet::use_huge_pages(argv);  // core/process.hpp: first, it may run the process again
  podnet::keep_freed_memory();
  return podnet::cli::run(argc, argv);
}
