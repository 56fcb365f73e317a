// Typed parameters (params.hpp): parse_param for each type (value, canonical
// text, what is expected on failure), Params' typed getters and defaults_of.
// Expected values follow from the parsing rules in params.cpp and units.hpp.
#include "core/params.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"

namespace podnet {
namespace {

struct Parsed {
  std::optional<ParamValue> value;
  std::string canonical, expected;
};

Parsed parse(const ParamSpec& spec, const std::string& text) {
  Parsed p;
  p.value = parse_param(spec, text, p.canonical, p.expected);
  return p;
}

ParamSpec spec(ParamType t, double min = -1e300, double max = 1e300, std::vector<std::string> choices = {}) {
  return ParamSpec{"x", t, "", "", min, max, std::move(choices), false};
}

TEST(Params, IntegersWholeAndInRange) {
  const ParamSpec s = spec(ParamType::Int, 1, 8);
  Parsed p = parse(s, "8");
  ASSERT_TRUE(p.value);
  EXPECT_EQ(std::get<int64_t>(*p.value), 8);
  EXPECT_EQ(p.canonical, "8");
  for (const char* bad : {"9", "0", "4x", "", "2.5"}) {
    p = parse(s, bad);
    EXPECT_FALSE(p.value) << bad;
    EXPECT_EQ(p.expected, "an integer in [1, 8]") << bad;
  }
  // Only a lower bound: ">= 1"; no bound: nothing added.
  EXPECT_EQ(parse(spec(ParamType::Int, 1), "0").expected, "an integer >= 1");
  EXPECT_EQ(parse(spec(ParamType::Int), "z").expected, "an integer");
}

TEST(Params, RealsAreFiniteNumbersWithNothingAfter) {
  const ParamSpec s = spec(ParamType::Real, 0, 1);
  Parsed p = parse(s, "0.25");
  ASSERT_TRUE(p.value);
  EXPECT_EQ(std::get<double>(*p.value), 0.25);
  EXPECT_EQ(p.canonical, "0.25");
  EXPECT_EQ(std::get<double>(*parse(s, "1e-1").value), 0.1);
  for (const char* bad : {"1.5", "-0.1", "nan", "inf", "0.5x", ""}) EXPECT_FALSE(parse(s, bad).value) << bad;
  EXPECT_EQ(parse(s, "2").expected, "a number in [0, 1]");
}

TEST(Params, BoolsAreTrueOrFalseOnly) {
  const ParamSpec s = spec(ParamType::Bool);
  EXPECT_TRUE(std::get<bool>(*parse(s, "true").value));
  EXPECT_FALSE(std::get<bool>(*parse(s, "false").value));
  const Parsed p = parse(s, "yes");
  EXPECT_FALSE(p.value);
  EXPECT_EQ(p.expected, "true or false (for 'yes', write true)");
  EXPECT_EQ(parse(s, "off").expected, "true or false (for 'off', write false)");
  EXPECT_EQ(parse(s, "maybe").expected, "true or false");
}

TEST(Params, StringsFromAListOfChoices) {
  const ParamSpec s = spec(ParamType::String, -1e300, 1e300, {"ecmp", "adaptive"});
  EXPECT_EQ(std::get<std::string>(*parse(s, "adaptive").value), "adaptive");
  const Parsed p = parse(s, "ecmpp");
  EXPECT_FALSE(p.value);
  EXPECT_EQ(p.expected, "one of: ecmp, adaptive");
  // No choices: any text.
  EXPECT_EQ(std::get<std::string>(*parse(spec(ParamType::String), "anything").value), "anything");
}

TEST(Params, ValuesWithUnits) {
  // 64 MiB = 64 x 2^20 = 67,108,864 bytes; 2 us = 2,000,000 ps; 400 Gbps = 4e11 bit/s; "3:1" = 3.
  EXPECT_EQ(std::get<int64_t>(*parse(spec(ParamType::Bytes), "64MiB").value), 67108864);
  EXPECT_EQ(std::get<Time>(*parse(spec(ParamType::Time), "2us").value).ps, 2000000);
  EXPECT_EQ(std::get<Bandwidth>(*parse(spec(ParamType::Bandwidth), "400Gbps").value).bps, 4e11);
  const Parsed r = parse(spec(ParamType::Ratio), "3:1");
  EXPECT_EQ(std::get<double>(*r.value), 3.0);
  EXPECT_EQ(r.canonical, "3:1");
  EXPECT_FALSE(parse(spec(ParamType::Time), "2").value);  // a time needs its unit
}

TEST(Params, ABandwidthKeepsTheUnitFamilyItWasWrittenIn) {
  // 450 GB/s is 3.6 Tb/s: written in bytes it reads back in bytes, in bits it stays in bits; 64 GB/s is 512 Gb/s.
  EXPECT_EQ(parse(spec(ParamType::Bandwidth), "450GB/s").canonical, "450GB/s");
  EXPECT_EQ(parse(spec(ParamType::Bandwidth), "3600Gbps").canonical, "3.6Tbps");
  EXPECT_EQ(parse(spec(ParamType::Bandwidth), "512000MB/s").canonical, "512GB/s");
  EXPECT_EQ(parse(spec(ParamType::Bandwidth), "512Gbps").canonical, "512Gbps");
  EXPECT_EQ(std::get<Bandwidth>(*parse(spec(ParamType::Bandwidth), "64GB/s").value).bps, 512e9);
}

TEST(Params, IntegerListsInThreeSpellingsOrAWord) {
  const ParamSpec s = spec(ParamType::IntList, 1, 1e300, {"auto"});
  for (const char* text : {"[4, 4, 2]", "4x4x2", "4,4,2", "4X4X2"}) {
    const Parsed p = parse(s, text);
    ASSERT_TRUE(p.value) << text;
    EXPECT_EQ(std::get<std::vector<int64_t>>(*p.value), (std::vector<int64_t>{4, 4, 2})) << text;
    EXPECT_EQ(p.canonical, "[4, 4, 2]") << text;
  }
  // The spec's word is kept as a string.
  EXPECT_EQ(std::get<std::string>(*parse(s, "auto").value), "auto");
  // An empty element, an element below min, an empty list, a stray word.
  for (const char* bad : {"4,,4", "0x4", "[]", "four"}) {
    const Parsed p = parse(s, bad);
    EXPECT_FALSE(p.value) << bad;
    EXPECT_EQ(p.expected, "a list of integers >= 1 such as [4, 4, 4] or 4x4x4, or auto") << bad;
  }
}

TEST(Params, GettersCheckTheType) {
  Params p;
  p.set("n", int64_t{3}, "3");
  p.set("f", 0.5, "0.5");
  p.set("s", std::string("ecmp"), "ecmp");
  EXPECT_EQ(p.get_int("n"), 3);
  EXPECT_EQ(p.get_real("n"), 3.0);  // an integer reads as a number
  EXPECT_EQ(p.get_real("f"), 0.5);
  EXPECT_EQ(p.get_string("s"), "ecmp");
  EXPECT_EQ(p.text("f"), "0.5");
  EXPECT_TRUE(p.has("n"));
  EXPECT_FALSE(p.has("m"));
  EXPECT_THROW(p.get_int("f"), Error);  // a number does not silently become an integer
  EXPECT_THROW(p.get_bool("s"), Error);
  EXPECT_THROW(p.get_int("m"), Error);  // not set
  EXPECT_THROW(p.text("m"), Error);
}

TEST(Params, DefaultsOfFillsParsedDefaults) {
  std::vector<ParamSpec> specs = {
      {"gpus", ParamType::Int, "8", "", 1, 1e300, {}, false},
      {"speed", ParamType::Bandwidth, "400Gbps", "", -1e300, 1e300, {}, false},
      {"tiers", ParamType::Int, "", "", 1, 4, {}, true},  // optional: absent means auto
  };
  const Params p = defaults_of(specs);
  EXPECT_EQ(p.get_int("gpus"), 8);
  EXPECT_EQ(p.get_bandwidth("speed").bps, 4e11);
  EXPECT_FALSE(p.has("tiers"));
  // A required parameter (no default, not optional) cannot be defaulted.
  specs.push_back({"model", ParamType::String, "", "", -1e300, 1e300, {}, false});
  EXPECT_THROW(defaults_of(specs), Error);
  // A default that does not parse is an internal error.
  EXPECT_THROW(defaults_of({{"gpus", ParamType::Int, "eight", "", -1e300, 1e300, {}, false}}), Error);
}

}  // namespace
}  // namespace podnet
