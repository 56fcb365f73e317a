#include "cli/cli.hpp"

int main(int argc, char** argv) { return podnet::cli::run(argc, argv); }
