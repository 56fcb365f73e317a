// The bounded JSON intake (json_intake.hpp).
#include "report/json_intake.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"

namespace podnet::report {
namespace {

std::string refusal(const std::string& text, const JsonLimits& limits = {}) {
  try {
    parse_json(text, "r.json", limits);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonIntake, DeepNestingIsRefusedNotWalked) {
  // 200,000 levels (400 KB) crashed `podnet diff` and POST /api/compare (a recursive flattening).
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  const std::string e = refusal(deep);
  EXPECT_EQ(e.rfind("r.json: $[0][0][0][0][0][0]", 0), 0u) << e;  // the path's start and end, cut between
  EXPECT_NE(e.find("...[0][0][0][0][0][0][0][0]: nested"), std::string::npos) << e;
  EXPECT_NE(e.find(": nested over 64 levels deep; expected at most 64"), std::string::npos) << e;
  JsonLimits l;
  l.max_depth = 2;
  EXPECT_EQ(refusal(R"({"a": {"b": 1}})", l), "");
  EXPECT_EQ(refusal(R"({"a": {"b": [1]}})", l), "r.json: $.a.b: nested over 2 levels deep; expected at most 2");
  EXPECT_EQ(refusal(R"([1, [2], {"x": []}])", l), "r.json: $[2].x: nested over 2 levels deep; expected at most 2");
}

TEST(JsonIntake, AKeyGivenTwiceIsRefusedWithItsPath) {
  EXPECT_EQ(refusal(R"({"study": "bench", "study": "train"})"),
            "r.json: $: the key 'study' is given twice; expected each key once per object");
  EXPECT_EQ(refusal(R"({"a": {"run": 1}, "b": [{"x": 1, "y": 2}, {"x": 1, "x": 2}]})"),
            "r.json: $.b[1]: the key 'x' is given twice; expected each key once per object");
  // The same key in two objects is fine.
  EXPECT_EQ(refusal(R"({"a": {"x": 1}, "b": {"x": 1}})"), "");
}

TEST(JsonIntake, ParsesWhatItTakesAndNamesBadSyntax) {
  const nlohmann::json j = parse_json(R"({"a": [1, 2, {"b": null}], "c": "d"})", "r.json");
  EXPECT_EQ(j["a"][2].contains("b"), true);
  EXPECT_EQ(j["c"], "d");
  // Where, then what, in words: no "[json.exception.parse_error.101]" tag.
  EXPECT_EQ(refusal("{bad").rfind("r.json: line 1, column 2: not JSON: syntax error", 0), 0u) << refusal("{bad");
  EXPECT_EQ(refusal("{bad").find("json.exception"), std::string::npos);
  // A number past double's range was an out_of_range exception: exit 1 from diff, 500 from the server.
  EXPECT_EQ(refusal(R"({"schema_version": 1e999})").rfind("r.json: ", 0), 0u) << refusal(R"([1e999])");
  EXPECT_NE(refusal(R"({"schema_version": 1e999})").find("not JSON: "), std::string::npos) << refusal(R"([1e999])");
}

}  // namespace
}  // namespace podnet::report
