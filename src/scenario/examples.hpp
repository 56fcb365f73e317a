// Built-in example scenarios (examples/*.yaml compiled in; see cmake/EmbedExamples.cmake).
#pragma once

#include <string>
#include <vector>

namespace podnet::scenario {

struct Example {
  const char* name;         // file name without .yaml
  const char* description;  // first comment line of the file
  const char* text;         // the YAML
};

const std::vector<Example>& builtin_examples();

}  // namespace podnet::scenario
