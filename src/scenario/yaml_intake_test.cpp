// The bounded YAML intake (yaml_intake.hpp): what a full walk would visit is
// counted from the event stream, aliases at their anchor's expanded size.
#include "scenario/yaml_intake.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"

namespace podnet::scenario {
namespace {

std::string refusal(const std::string& text, const YamlLimits& limits = {}) {
  try {
    parse_yaml(text, "f.yaml", limits);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(YamlIntake, AnAnchorHoldingItsOwnAliasIsRefusedWithItsPlace) {
  // These crashed resolve, design, --config-add and serve (a walk that never ends).
  EXPECT_EQ(refusal("x: &a [*a]\n"),
            "f.yaml:1:8: alias *a is inside its own anchor &a (line 1); a value cannot contain itself");
  EXPECT_NE(refusal("topology: &a {family: fat_tree, gpus: 64, x: *a}\n").find("f.yaml:1:46: alias *a is inside"),
            std::string::npos);
  EXPECT_NE(refusal("&r {schema_version: 1, me: *r}\n").find("alias *r is inside its own anchor &r"),
            std::string::npos);
  // Deeper: the alias two levels below its anchor.
  EXPECT_NE(refusal("a: &top\n  b:\n    c: [1, *top]\n").find("f.yaml:3:12: alias *top"), std::string::npos);
}

TEST(YamlIntake, AliasesCountAtTheirAnchorsExpandedSize) {
  // a: &x [1, 2] is 3 nodes (the list and two items) plus the key: 4. b: *x adds the key and 3 more: 8.
  // With the root map: 9 nodes. A limit of 9 takes it; 8 refuses it when the root map closes (at its
  // start, 1:1); 7 refuses it at the alias, which brings the count to 8.
  const std::string doc = "a: &x [1, 2]\nb: *x\n";
  YamlLimits l;
  l.max_nodes = 9;
  EXPECT_EQ(refusal(doc, l), "");
  l.max_nodes = 8;
  EXPECT_EQ(refusal(doc, l).rfind("f.yaml:1:1: the document expands to over 8 values", 0), 0u) << refusal(doc, l);
  l.max_nodes = 7;
  EXPECT_EQ(refusal(doc, l), "f.yaml:2:4: the document expands to over 7 values (aliases count once per use); "
                             "expected a smaller document, or fewer nested aliases");
  // A legitimate alias still loads as two handles on one value.
  const YAML::Node n = parse_yaml(doc, "f.yaml");
  EXPECT_EQ(n["b"].size(), 2u);
  EXPECT_EQ(n["b"][1].as<int>(), 2);
}

TEST(YamlIntake, BillionLaughsIsRefusedWithoutExpandingIt) {
  // Ten levels of ten aliases each: 10^10 values once expanded, 570 bytes of text.
  std::string doc = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    doc += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) doc += (k ? ", *a" : "*a") + std::to_string(i - 1);
    doc += "]\n";
  }
  const std::string e = refusal(doc);
  EXPECT_NE(e.find("expands to over 200,000 values"), std::string::npos) << e;
  // Refused at level 5 (11 x 10^4 + ... > 200,000): the line says where.
  EXPECT_EQ(e.rfind("f.yaml:6:", 0), 0u) << e;
}

TEST(YamlIntake, NestingSecondDocumentsAndControlCharacters) {
  YamlLimits l;
  l.max_depth = 3;
  EXPECT_EQ(refusal("a: {b: {c: 1}}\n", l), "");  // root, a, b: 3 levels
  EXPECT_EQ(refusal("a: {b: {c: [1]}}\n", l), "f.yaml:1:12: nested over 3 levels deep; expected at most 3");
  EXPECT_EQ(refusal("a: 1\n---\na: 2\n"), "f.yaml:2:1: a second YAML document (after '---'); expected one document "
                                          "per file");
  l = {};
  l.one_document = false;
  EXPECT_EQ(refusal("a: 1\n---\na: 2\n", l), "");
  // ESC in a double-quoted value (\e) would drive the terminal wherever the name is printed.
  EXPECT_EQ(refusal("name: \"a\\e[31mred\"\n"),
            "f.yaml:1:7: a control character (byte 0x1b) in the value 'a\\x1b[31mred'; expected printable text");
  EXPECT_EQ(refusal("description: \"two\\nlines\\tand a tab\"\n"), "");
}

TEST(YamlIntake, SyntaxErrorsNameFileLineAndColumn) {
  const std::string open = refusal("a: [1, 2\n"), undefined = refusal("a: *nope\n");
  EXPECT_EQ(open.rfind("f.yaml:", 0), 0u) << open;
  EXPECT_NE(open.find(": YAML syntax error: "), std::string::npos) << open;
  EXPECT_EQ(undefined.rfind("f.yaml:1:", 0), 0u) << undefined;
  EXPECT_NE(undefined.find(": YAML syntax error: "), std::string::npos) << undefined;
}

}  // namespace
}  // namespace podnet::scenario
