// Failure-rate syntax and the preset table's derivations.
#include "reliability/rates.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace podnet::reliability {
namespace {

double rate(const char* text) {
  std::string expected;
  auto r = parse_rate(text, expected);
  EXPECT_TRUE(r.has_value()) << text << ": " << expected;
  return r.value_or(-1);
}

bool rejected(const char* text) {
  std::string expected;
  bool bad = !parse_rate(text, expected).has_value();
  EXPECT_FALSE(expected.empty());
  return bad;
}

TEST(Rates, ThreeForms) {
  EXPECT_DOUBLE_EQ(rate("50000h"), 1.0 / 50000);  // MTBF
  EXPECT_DOUBLE_EQ(rate("1e7h"), 1e-7);
  EXPECT_DOUBLE_EQ(rate("100d"), 1.0 / 2400);  // 100 × 24 h
  EXPECT_DOUBLE_EQ(rate("2y"), 1.0 / 17520);   // 2 × 8,760 h
  EXPECT_DOUBLE_EQ(rate("1000FIT"), 1e-6);     // 1,000 per 1e9 h
  // Monthly availability A: λ = −ln A / 720 h, so exp(−λ·720 h) = A.
  EXPECT_NEAR(std::exp(-rate("99.9%") * kHoursPerMonth), 0.999, 1e-15);
  EXPECT_DOUBLE_EQ(rate("0FIT"), 0.0);  // never fails
  EXPECT_DOUBLE_EQ(rate("100%"), 0.0);
  EXPECT_DOUBLE_EQ(rate(" 250000h "), 1.0 / 250000);
}

TEST(Rates, AnnualizedFailureRate) {
  // AFR F: the share of units failing within 8,760 h at a constant rate, 1 - exp(-lambda 8,760 h) = F, so
  // lambda = -ln(1 - F) / 8,760 h. 2 %: -ln 0.98 / 8,760 = 0.0202027 / 8,760 = 2.30624e-6 per hour (MTBF 433,603 h,
  // a little under the 438,000 h of 8,760 / 0.02, since units that failed are not there to fail again).
  EXPECT_NEAR(rate("2%/y"), 2.30624e-6, 1e-10);
  EXPECT_NEAR(1 - std::exp(-rate("2%/y") * 8760), 0.02, 1e-15);
  EXPECT_DOUBLE_EQ(rate("2%/year"), rate("2%/y"));
  EXPECT_DOUBLE_EQ(rate("2% AFR"), rate("2%/y"));
  for (const char* bad : {"0%/y", "100%/y", "150%/y"}) EXPECT_TRUE(rejected(bad)) << bad;
}

TEST(Rates, ABarePercentBelowFiftyIsAnAfrWithoutItsPeriod) {
  // "2%" read as a monthly availability is a part up 2 % of the time: MTBF 186 h, thousands of failures a month
  // on a large fabric. It is refused, and the message gives the AFR's spelling.
  std::string expected;
  EXPECT_FALSE(parse_rate("2%", expected).has_value());
  EXPECT_NE(expected.find("\"2%/y\""), std::string::npos) << expected;
  EXPECT_NE(expected.find("up 2% of each month"), std::string::npos) << expected;
  EXPECT_TRUE(parse_rate("50%", expected).has_value());  // an availability that low is odd but may be meant
  EXPECT_TRUE(parse_rate("99.9%", expected).has_value());
}

TEST(Rates, RejectsWhatIsNotARate) {
  for (const char* bad : {"", "5", "abc", "-1h", "0h", "0%", "101%", "5min", "10 hours", "infh", "nanFIT"})
    EXPECT_TRUE(rejected(bad)) << bad;
}

TEST(Rates, AtMostOneFailurePerMinute) {
  // kMaxRatePerHour = 60: an MTBF of 1/60 h (1 min) or 6e10 FIT (60 x 1e9 per 1e9 h) is the limit.
  EXPECT_DOUBLE_EQ(rate("6e10FIT"), 60.0);
  EXPECT_TRUE(rejected("7e10FIT"));  // 70 per hour
  EXPECT_TRUE(rejected("0.01h"));    // 100 per hour
  // 1e-300 h: 1e300 failures per hour, whose counts and days overflowed the printed tables ("stoll").
  EXPECT_TRUE(rejected("1e-300h"));
  EXPECT_TRUE(rejected("1e300FIT"));
}

TEST(Rates, AnMtbfOfAtMostTenToTheTwelveHours) {
  // kMinRatePerHour = 1e-12: 1e12 h is the limit; 1e308 h printed "MTBF (h) -0" (an integer overflow).
  EXPECT_DOUBLE_EQ(rate("1e12h"), 1e-12);
  EXPECT_TRUE(rejected("1e13h"));
  EXPECT_TRUE(rejected("1e308h"));
  EXPECT_TRUE(rejected("1e-4FIT"));   // 1e-13 per hour
  EXPECT_DOUBLE_EQ(rate("0FIT"), 0);  // never fails
}

TEST(Rates, PresetsReproduceLlama3) {
  // Each default is (Table 5 interruptions of its class) / (component-hours): multiplying back by the
  // Llama 3 inventory (16,384 GPUs/NICs/access links, 2,048 servers, 1,296 h) returns the counts,
  // which sum to the 419 unexpected interruptions (MTBI 1,296 / 419 = 3.09 h).
  const double gpu_h = Llama3::kGpus * Llama3::kHours, server_h = Llama3::kServers * Llama3::kHours;
  EXPECT_NEAR(gpu_h / preset(Part::Gpu).mtbf_hours, 268, 1e-9);
  EXPECT_NEAR(gpu_h / preset(Part::Software).mtbf_hours, 63, 1e-9);
  EXPECT_NEAR(server_h / preset(Part::Host).mtbf_hours, 46, 1e-9);
  EXPECT_NEAR(gpu_h / preset(Part::Nic).mtbf_hours, 7, 1e-9);
  EXPECT_NEAR(gpu_h / preset(Part::CopperCable).mtbf_hours, 35, 1e-9);
  EXPECT_EQ(Llama3::kGpu + Llama3::kSoftware + Llama3::kHost + Llama3::kNic + Llama3::kSwitchCable,
            Llama3::kInterruptions);
  // 21,233,664 GPU-hours / 268 = 79,230 h per GPU.
  EXPECT_EQ(mtbf_text(preset(Part::Gpu).mtbf_hours), "79230h");
  EXPECT_EQ(mtbf_text(preset(Part::Optic).mtbf_hours), "1000000h");
  EXPECT_EQ(static_cast<int>(presets().size()), kParts);
}

}  // namespace
}  // namespace podnet::reliability
