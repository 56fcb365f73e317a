// The reporters' shared pieces (report.hpp): rounding, number formatting,
// the console table, flat CSV and the document's run context. Expected
// strings are worked out by hand from the rules stated in report.hpp.
#include "report/report.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <cmath>
#include <sstream>

#include "core/version.hpp"

namespace podnet::report {
namespace {

TEST(Report, RoundToKeepsDecimalsAndNeverGivesMinusZero) {
  EXPECT_DOUBLE_EQ(round_to(1.23456789, 3), 1.235);  // 1234.56789 rounds to 1235
  EXPECT_DOUBLE_EQ(round_to(1.0000004), 1.0);        // default 6 decimals: 1000000.4 -> 1000000
  EXPECT_DOUBLE_EQ(round_to(1.0000006), 1.000001);   // 1000000.6 -> 1000001
  EXPECT_DOUBLE_EQ(round_to(2.5, 0), 3.0);           // halves go away from zero (std::round)
  EXPECT_DOUBLE_EQ(round_to(-2.5, 0), -3.0);
  // -0.0000001 at 3 decimals is -0.0001 -> round gives -0: reported as +0, so JSON never shows "-0".
  const double z = round_to(-0.0000001, 3);
  EXPECT_EQ(z, 0.0);
  EXPECT_FALSE(std::signbit(z));
}

TEST(Report, ThousandsSeparatesGroupsOfThree) {
  EXPECT_EQ(thousands(0), "0");
  EXPECT_EQ(thousands(999), "999");
  EXPECT_EQ(thousands(1000), "1,000");
  EXPECT_EQ(thousands(16384), "16,384");
  EXPECT_EQ(thousands(1234567), "1,234,567");
  EXPECT_EQ(thousands(-1234), "-1,234");
  EXPECT_EQ(thousands(-999), "-999");
}

// Below 1e15 as fixed() (a million-GPU cluster's energy bill, 1.82e9 USD a year, in full); from 1e15 on, 3
// significant digits: 1383635613944298... x 10^288 -> 1.38e+288.
TEST(Report, FixedOrExpSwitchesToENotationAtAQuadrillion) {
  EXPECT_EQ(fixed_or_exp(123456.789, 2), "123,456.79");
  EXPECT_EQ(fixed_or_exp(1820000000.0, 0), "1,820,000,000");
  EXPECT_EQ(fixed_or_exp(999999999999999.0, 0), "999,999,999,999,999");
  EXPECT_EQ(fixed_or_exp(1e15, 2), "1.00e+15");
  EXPECT_EQ(fixed_or_exp(1.3836356139442983e288, 2), "1.38e+288");
  EXPECT_EQ(fixed_or_exp(-2.5e19, 0), "-2.50e+19");
  EXPECT_EQ(fixed_or_exp(std::numeric_limits<double>::infinity(), 2), "-");
}

TEST(Report, FixedRoundsThenGroupsTheIntegerPart) {
  // Beyond int64 (9.2e18) too: 1e20 has 21 digits, 7 groups.
  EXPECT_EQ(fixed(1e20, 1), "100,000,000,000,000,000,000.0");
  EXPECT_EQ(fixed(-2.5e19, 0), "-25,000,000,000,000,000,000");
  EXPECT_EQ(fixed(std::numeric_limits<double>::infinity(), 2), "-");
  EXPECT_EQ(fixed(std::nan(""), 2), "-");
  EXPECT_EQ(fixed(1234.5, 1), "1,234.5");
  EXPECT_EQ(fixed(1234.56, 1), "1,234.6");
  EXPECT_EQ(fixed(-1234.567, 2), "-1,234.57");
  EXPECT_EQ(fixed(999999.996, 2), "1,000,000.00");  // rounding carries into a new group
  EXPECT_EQ(fixed(0.5, 0), "1");                    // no decimals: no point
  EXPECT_EQ(fixed(-0.4, 0), "0");                   // -0.4 rounds to -0, shown as 0
  EXPECT_EQ(fixed(-0.5, 1), "-0.5");                // a negative value under 1 keeps its sign
}

std::string table_text(const Table& t, const std::string& indent = "") {
  std::ostringstream out;
  t.write(out, indent);
  return out.str();
}

TEST(Report, TableAlignsNumbersRightAndTextLeft) {
  // Widths: column 0 = max("name", "leaf", "spine") = 5, column 1 = max("count", "1,024", "16") = 5.
  // Column 1 holds only numbers, so it is right-aligned (header too); the first column is always left.
  // Separator: (5 + 2) + (5 + 2) - 2 = 12 dashes. Cells are joined by two spaces; trailing spaces cut.
  Table t({"name", "count"});
  t.add({"leaf", "1,024"});
  t.add({"spine", "16"});
  EXPECT_EQ(table_text(t), "name   count\n"
                           "------------\n"
                           "leaf   1,024\n"
                           "spine     16\n");
  // A column with one non-numeric cell ("x") is left-aligned; widths 2 and 2, separator 6, indent on every line.
  Table u({"k", "v"});
  u.add({"a", "x"});
  u.add({"bb", "10"});
  EXPECT_EQ(table_text(u, "  "), "  k   v\n"
                                 "  ------\n"
                                 "  a   x\n"
                                 "  bb  10\n");
}

TEST(Report, TableCellsThatReadAsNumbers) {
  // "99.0%", "3 / 4", "(2)", "1.5 x" read as numbers (right-aligned under a wider header "value").
  Table t({"k", "value"});
  for (const char* c : {"99.0%", "3 / 4", "(2)", "1.5 x"}) t.add({"a", c});
  EXPECT_EQ(table_text(t), "k  value\n"
                           "--------\n"
                           "a  99.0%\n"
                           "a  3 / 4\n"
                           "a    (2)\n"
                           "a  1.5 x\n");
}

TEST(Report, TableQuantitiesInUnitsAlignAsNumbers) {
  // A leading '$' and one unit of at most 4 letters after a space or slash keep a cell a number: "$70,400",
  // "92,160 m", "$2/m", "265,663 MWh" are right-aligned, header too (width 11, from "265,663 MWh"). A longer word ("92
  // meters") or a unit glued to the digits ("400G") makes a column text: left-aligned.
  Table t({"k", "amount"});
  for (const char* c : {"$70,400", "92,160 m", "$2/m", "265,663 MWh"}) t.add({"a", c});
  EXPECT_EQ(table_text(t), "k       amount\n"
                           "--------------\n"
                           "a      $70,400\n"
                           "a     92,160 m\n"
                           "a         $2/m\n"
                           "a  265,663 MWh\n");
  for (const char* text : {"92 meters", "400G"}) {
    Table u({"k", "v"});
    u.add({"a", text});
    u.add({"b", "1"});
    EXPECT_EQ(table_text(u).substr(table_text(u).size() - 5), "b  1\n") << text;
  }
}

TEST(Report, ProseLinesWrapAtTheTableWidth) {
  // A note of 133 characters (indent 2, "note:", 21 five-letter words, each after a space): 18 words end at
  // column 2 + 5 + 18 x 6 = 115, a 19th would end at 121 > 120, so the line breaks after word 18; the other 3 hang
  // at indent 4. A table row (two spaces between cells) and a short line stay as they are.
  std::string note = "  note:";
  for (int i = 0; i < 21; ++i) note += " abcde";
  std::string row = "  figure" + std::string(120, ' ') + "1,024";
  const std::string out = wrap_prose(note + "\n" + row + "\nshort\n");
  std::string first = "  note:", second = "    ";
  for (int i = 0; i < 18; ++i) first += " abcde";
  for (int i = 0; i < 3; ++i) second += (i ? " " : "") + std::string("abcde");
  EXPECT_EQ(out, first + "\n" + second + "\n" + row + "\nshort\n");
  EXPECT_EQ(first.size(), 2u + 5u + 18u * 6u);  // 115: a 19th word (121) would not fit
  // A number keeps its unit: a line that would break between "12.50" and "ms" breaks before the number.
  // 2 + 110 + " 12.50" = 118 characters; the last space within 120 is the one before "ms".
  const std::string timed = "  " + std::string(110, 'a') + " 12.50 ms intact";
  EXPECT_EQ(wrap_prose(timed), "  " + std::string(110, 'a') + "\n    12.50 ms intact");
  // A word longer than the width stays whole on a line of its own.
  const std::string url = "  see: " + std::string(130, 'x') + " end";
  EXPECT_EQ(wrap_prose(url), "  see:\n    " + std::string(130, 'x') + "\n    end");
}

TEST(Report, AFirstColumnWiderThanHalfTheTableWraps) {
  // A failure named by both ends of its link (127 characters) beside two numbers, 148 wide in all. The header
  // "costs (ms)" narrows to its cells' 7 (two lines); the table is still 127 wide, so the first column wraps at
  // spaces, to 120 - (2 + 7 + 2 + 7) = 102. It had kept its width: every line 127 characters.
  const std::string name(60, 'a');
  Table t({"failure", "at (ms)", "costs (ms)"});
  t.add({"gpu 1 slowed", "0.000", "201.506"});
  t.add({name + " <-> " + name + " x", "995.087", "0.000"});
  const std::string text = table_text(t);
  EXPECT_EQ(text.substr(0, text.find("---")),
            "failure" + std::string(95, ' ') + "  at (ms)    costs\n" + std::string(116, ' ') + "(ms)\n")
      << text;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 120u) << text;
  EXPECT_NE(text.find(name + " <->" + std::string(38, ' ') + "  995.087    0.000\n" + name + " x\n"), std::string::npos)
      << text;
}

TEST(Report, TablePlaceholdersAlignWithTheirNumbers) {
  // A '-' (no value) takes its column's alignment, as an empty cell does: a column of numbers and '-', or of
  // '-' alone, stays right-aligned; a '-' among words stays left-aligned.
  Table t({"k", "time", "fct", "note"});
  t.add({"a", "12.5", "-", "-"});
  t.add({"b", "-", "-", "fine"});
  EXPECT_EQ(table_text(t), "k  time  fct  note\n"
                           "------------------\n"
                           "a  12.5    -  -\n"
                           "b     -    -  fine\n");
}

TEST(Report, TableWithoutHeaderHasNoSeparator) {
  Table t({"", ""});
  t.add({"gpus", "8"});
  t.add({"nics", "16"});
  // widths 4 and 2, numbers right-aligned: "gpus" + 2 spaces + " 8"
  EXPECT_EQ(table_text(t), "gpus   8\nnics  16\n");
}

TEST(Report, AWideTableWrapsItsTextColumnsAtSpacesPreferringCommas) {
  // A 90-character name and a 2-space gap leave the text column 120 - 92 = 28 characters. A list whose items
  // all fit breaks between items only: "tp 4, pp 4, cp 2," (17) cannot take " interleave 5," (31 > 28), nor
  // "interleave 5," (13) " stage_layers even" (31). Prose breaks at spaces: after "a," where that fills two
  // thirds of the line (22 of 28 here: "alpha beta gamma delta," is 23), else at the last space that fits.
  const std::string name(90, 'n');
  Table t({"", ""});
  t.add({name, "tp 4, pp 4, cp 2, interleave 5, stage_layers even"});
  t.add({"short", "one line"});
  t.add({name, "alpha beta gamma delta, epsilon zeta eta theta iota kappa lambda"});
  const std::string pad(92, ' ');
  // A wrapped row stands between blank lines; the short one in between as it is.
  EXPECT_EQ(table_text(t), name + "  tp 4, pp 4, cp 2,\n" + pad + "interleave 5,\n" + pad + "stage_layers even\n\n" +
                               "short" + std::string(85, ' ') + "  one line\n\n" + name +
                               "  alpha beta gamma delta,\n" + pad + "epsilon zeta eta theta iota\n" + pad +
                               "kappa lambda\n");
  // A word longer than the column keeps a line of its own, whole; a header's separator is as wide as the
  // columns after narrowing (90 + 2 + 28).
  Table h({"name", "text"});
  h.add({name, "a " + std::string(40, 'w') + " b"});
  const std::string out = table_text(h);
  EXPECT_NE(out.find(name + "  a\n" + pad + std::string(40, 'w') + "\n" + pad + "b\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\n" + std::string(120, '-') + "\n"), std::string::npos) << out;
  // Numbers never wrap: a table of numbers stays as wide as it is.
  Table n({"", ""});
  n.add({name, std::string(40, '9')});
  EXPECT_EQ(table_text(n), name + "  " + std::string(40, '9') + "\n");
}

TEST(Report, AWideTableOfNumbersWrapsItsHeaders) {
  // A 100-character name, a number under "total goodput (Gb/s)": 100 + 2 + 20 = 122 > 120. The column gives 2
  // characters (its cells need 4, its longest header word 7): 18 wide, the header in two lines, right-aligned
  // as the numbers under it.
  const std::string name(100, 'n');
  Table t({"name", "total goodput (Gb/s)"});
  t.add({name, "12.5"});
  EXPECT_EQ(table_text(t), "name" + std::string(96, ' ') + "       total goodput\n" + std::string(102, ' ') +
                               "            (Gb/s)\n" + std::string(120, '-') + "\n" + name + "  " +
                               std::string(14, ' ') + "12.5\n");
}

TEST(Report, FlatCsvFlattensKeysAndQuotesOnlyWhenNeeded) {
  // nlohmann::json objects iterate in sorted key order: a.b, a.c.0, a.c.1, d, e.
  nlohmann::json doc = {{"d", "say \"hi\""}, {"a", {{"c", {true, "x,y"}}, {"b", 1}}}, {"e", nullptr}};
  std::ostringstream out;
  write_flat_csv(doc, out);
  EXPECT_EQ(out.str(),
            "key,value\n"
            "a.b,1\n"
            "a.c.0,true\n"
            "a.c.1,\"x,y\"\n"         // a comma: quoted
            "d,\"say \"\"hi\"\"\"\n"  // quotes: quoted and doubled (RFC 4180)
            "e,null\n");
}

TEST(Report, TidyCsvWritesOneRowPerEntryWithTheUnionOfColumns) {
  // An array of rows: "size" first (asked for), then the other fields sorted;
  // the nested object flattens to t.x; a field a row lacks is an empty cell.
  nlohmann::json doc = {
      {"rows", {{{"size", 8}, {"name", "a,b"}, {"t", {{"x", 1.5}}}}, {{"size", 16}, {"name", "c"}, {"extra", true}}}}};
  std::ostringstream out;
  write_tidy_csv(doc, "rows", "size", out);
  EXPECT_EQ(out.str(), "size,extra,name,t.x\n"
                       "8,,\"a,b\",1.5\n"
                       "16,true,c,\n");
  // Columns asked first come next, in the order asked (one no row has is left out); then the rest sorted.
  out.str("");
  write_tidy_csv(doc, "rows", "size", out, {"t.x", "name", "absent"});
  EXPECT_EQ(out.str(), "size,t.x,name,extra\n"
                       "8,1.5,\"a,b\",\n"
                       "16,,c,true\n");
  // An object of rows: its keys in the named first column.
  nlohmann::json by = {{"by", {{"gpu", {{"n", 2}}}, {"nic", {{"n", 3}, {"l", {1, 2}}}}}}};
  out.str("");
  write_tidy_csv(by, "by", "component", out);
  EXPECT_EQ(out.str(),
            "component,l,n\n"
            "gpu,,2\n"
            "nic,\"[1,2]\",3\n");  // a list: its JSON text, quoted for its comma
  // No such table: the key,value dump.
  out.str("");
  write_tidy_csv(nlohmann::json{{"a", 1}}, "rows", "", out);
  EXPECT_EQ(out.str(), "key,value\na,1\n");
}

TEST(Report, JsonIsIndentedByTwoWithATrailingNewline) {
  std::ostringstream out;
  write_json({{"b", 1.5}, {"a", {1, 2}}}, out);
  EXPECT_EQ(out.str(), "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": 1.5\n}\n");
}

TEST(Report, NewDocumentCarriesSchemaAndRunContext) {
  const RunContext ctx{"bench", "leafspine-8k", "leafspine-8k.yaml (built-in)", 42};
  const nlohmann::json doc = new_document(ctx);
  EXPECT_EQ(doc.size(), 2u);  // schema_version and run, nothing else yet
  EXPECT_EQ(doc["schema_version"], kSchemaVersion);
  const nlohmann::json& run = doc["run"];
  EXPECT_EQ(run["command"], "bench");
  EXPECT_EQ(run["scenario"], "leafspine-8k");
  EXPECT_EQ(run["source"], "leafspine-8k.yaml (built-in)");
  EXPECT_EQ(run["seed"], 42u);
  EXPECT_EQ(run["podnet_version"], version());
  EXPECT_EQ(run["git_sha"], git_sha());
  EXPECT_EQ(run.size(), 6u);  // no wall-clock time or host in the run context
}

}  // namespace
}  // namespace podnet::report
