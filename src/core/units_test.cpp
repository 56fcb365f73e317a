#include <gtest/gtest.h>

#include "core/params.hpp"
#include "core/rng.hpp"
#include "core/units.hpp"

namespace podnet {
namespace {

TEST(Units, ParseAndFormat) {
  std::string why;
  Bandwidth bw;
  Time t0;
  ASSERT_TRUE(parse_bandwidth("400Gbps", bw, why));
  EXPECT_DOUBLE_EQ(bw.bps, 400e9);
  ASSERT_TRUE(parse_bandwidth("50GB/s", bw, why));  // 50e9 bytes/s = 400e9 bits/s
  EXPECT_DOUBLE_EQ(bw.bps, 400e9);
  // A port's speed as podnet's tables print it ("400G", "1.6T"): bits per second.
  ASSERT_TRUE(parse_bandwidth("400G", bw, why));
  EXPECT_DOUBLE_EQ(bw.bps, 400e9);
  ASSERT_TRUE(parse_bandwidth("1.6T", bw, why));
  EXPECT_DOUBLE_EQ(bw.bps, 1.6e12);
  EXPECT_FALSE(parse_bandwidth("400g", bw, why));
  EXPECT_NE(why.find("did you mean '400G'?"), std::string::npos) << why;
  // A unit in another case is named; where two units differ only in case (bits, bytes), both.
  EXPECT_FALSE(parse_bandwidth("800gbps", bw, why));
  EXPECT_NE(why.find("; did you mean '800Gbps'?"), std::string::npos) << why;
  EXPECT_FALSE(parse_bandwidth("50 gb/s", bw, why));
  EXPECT_NE(why.find("; did you mean '50Gb/s' or '50GB/s'?"), std::string::npos) << why;
  EXPECT_FALSE(parse_time("2US", t0, why));
  EXPECT_NE(why.find("; did you mean '2us'?"), std::string::npos) << why;
  EXPECT_FALSE(parse_bandwidth("400GHz", bw, why));
  EXPECT_EQ(why.find("did you mean"), std::string::npos) << why;
  EXPECT_FALSE(parse_bandwidth("400", bw, why));
  EXPECT_FALSE(parse_bandwidth("400GHz", bw, why));
  EXPECT_FALSE(parse_bandwidth("-1Gbps", bw, why));
  Time t;
  ASSERT_TRUE(parse_time("1us", t, why));
  EXPECT_EQ(t.ps, 1000000);
  ASSERT_TRUE(parse_time("2.5ms", t, why));
  EXPECT_EQ(t.ps, 2500000000LL);
  Bytes b = 0;
  ASSERT_TRUE(parse_bytes("64MiB", b, why));
  EXPECT_EQ(b, 64LL << 20);
  ASSERT_TRUE(parse_bytes("8GB", b, why));
  EXPECT_EQ(b, 8000000000LL);
  EXPECT_FALSE(parse_bytes("1.5B", b, why));
  double v = 0;
  ASSERT_TRUE(parse_power("10.2kW", v, why));
  EXPECT_DOUBLE_EQ(v, 10200);
  ASSERT_TRUE(parse_length("2m", v, why));
  EXPECT_DOUBLE_EQ(v, 2);
  ASSERT_TRUE(parse_ratio("3:1", v, why));
  EXPECT_DOUBLE_EQ(v, 3);
  EXPECT_FALSE(parse_ratio("1:3", v, why));  // undersubscription is not a down:up ratio we build

  EXPECT_EQ(format_bandwidth(Bandwidth(400e9)), "400Gbps");
  EXPECT_EQ(format_time(Time(1500000)), "1.5us");
  // Whole minutes and hours in their unit, as a user writes them; anything else in seconds or below.
  EXPECT_EQ(format_time(Time::from_seconds(300)), "5min");
  EXPECT_EQ(format_time(Time::from_seconds(5400)), "90min");
  EXPECT_EQ(format_time(Time::from_seconds(7200)), "2h");
  EXPECT_EQ(format_time(Time::from_seconds(90)), "90s");
  EXPECT_EQ(format_time(Time()), "0s");  // as the keys' defaults are written, not "0ps"
  EXPECT_EQ(format_time(Time::from_seconds(59)), "59s");
  EXPECT_EQ(format_bytes(64LL << 20), "64MiB");
  EXPECT_EQ(format_bytes(8000000000LL), "8GB");
  EXPECT_EQ(format_power(10200), "10.2kW");
}

TEST(Units, TransmitTime) {
  // 1 MB at 400 Gbps: 8e6 bits / 4e11 bits/s = 20 us
  EXPECT_EQ(transmit_time(1000000, Bandwidth(400e9)).ps, 20000000);
}

TEST(Params, ParseAgainstSpec) {
  ParamSpec s{"n", ParamType::Int, "4", "", 1, 8};
  std::string canonical, expected;
  EXPECT_TRUE(parse_param(s, "8", canonical, expected).has_value());
  EXPECT_FALSE(parse_param(s, "9", canonical, expected).has_value());
  EXPECT_EQ(expected, "an integer in [1, 8]");
  ParamSpec l{"dims", ParamType::IntList, "[4, 4]", "", 2, 64};
  auto v = parse_param(l, "4x4x8", canonical, expected);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(canonical, "[4, 4, 8]");
  ParamSpec c{"mode", ParamType::String, "a", "", -1e300, 1e300, {"a", "b"}};
  EXPECT_FALSE(parse_param(c, "z", canonical, expected).has_value());
  EXPECT_EQ(expected, "one of: a, b");
}

TEST(Rng, DeterministicAndIndependentStreams) {
  Rng a(42), b(42);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(a.next_u64(), b.next_u64());
  Rng s1 = Rng(42).stream("placement"), s2 = Rng(42).stream("failures");
  EXPECT_NE(s1.next_u64(), s2.next_u64());
  // below(n) is in range and roughly uniform: 60000 draws of below(6), each face ~10000 (sd ~ 91)
  Rng r(7);
  int count[6] = {};
  for (int i = 0; i < 60000; ++i) ++count[r.below(6)];
  for (int c : count) EXPECT_NEAR(c, 10000, 600);
  // exponential mean 1/rate: 100000 draws with rate 2 -> mean 0.5 (sd of the mean 0.5/sqrt(1e5) = 0.0016)
  double sum = 0;
  for (int i = 0; i < 100000; ++i) sum += r.exponential(2.0);
  EXPECT_NEAR(sum / 100000, 0.5, 0.01);
}

// The parsers' limits (units.hpp): nothing a user types can wrap the picosecond clock or reach infinity.
TEST(Units, LimitsKeepValuesFinite) {
  std::string why;
  Time t;
  // 1000 h = 1000 x 3600 s x 1e12 ps/s = 3.6e18 ps, the documented maximum, is accepted ...
  ASSERT_TRUE(parse_time("1000h", t, why));
  EXPECT_EQ(t.ps, 3'600'000'000'000'000'000);
  EXPECT_EQ(t, kMaxTime);
  // ... and twice it (7.2e18) still fits int64 (9.22e18), so one sum of two parsed times cannot wrap.
  EXPECT_GT((kMaxTime + kMaxTime).ps, 0);
  // 2600 h = 9.36e18 ps exceeds int64: it used to wrap to a negative time; 1001 h is past the limit.
  EXPECT_FALSE(parse_time("2600h", t, why));
  EXPECT_FALSE(parse_time("1001h", t, why));
  EXPECT_NE(why.find("at most 1000h"), std::string::npos) << why;
  // 1e308 h x 3.6e15 ps/h overflows a double to infinity.
  EXPECT_FALSE(parse_time("1e308h", t, why));

  Bandwidth bw;
  EXPECT_FALSE(parse_bandwidth("1bps", bw, why));  // below 1 Mbps
  ASSERT_TRUE(parse_bandwidth("1Mbps", bw, why));  // the minimum itself
  EXPECT_DOUBLE_EQ(bw.bps, 1e6);
  ASSERT_TRUE(parse_bandwidth("1000Tbps", bw, why));  // the maximum, 1e15 bit/s
  EXPECT_FALSE(parse_bandwidth("1001Tbps", bw, why));
  EXPECT_FALSE(parse_bandwidth("1e308Tbps", bw, why));  // 1e308 x 1e12 = inf
  EXPECT_NE(why.find("from 1Mbps to 1000Tbps"), std::string::npos) << why;

  Bytes b = 0;
  ASSERT_TRUE(parse_bytes("1024TiB", b, why));  // 2^10 x 2^40 = 2^50 = kMaxBytes
  EXPECT_EQ(b, kMaxBytes);
  EXPECT_FALSE(parse_bytes("1025TiB", b, why));
  EXPECT_FALSE(parse_bytes("9.3e18B", b, why));  // past int64 too

  double v = 0;
  EXPECT_FALSE(parse_ratio("1e308:1e-308", v, why));  // 1e308 / 1e-308 = inf
  EXPECT_FALSE(parse_length("1e308km", v, why));
  EXPECT_FALSE(parse_length("40001km", v, why));
  EXPECT_FALSE(parse_power("1e308MW", v, why));
  EXPECT_FALSE(parse_power("1001MW", v, why));
}

TEST(Units, FormatNumberKeepsHugeValuesShort) {
  EXPECT_EQ(format_number(2.5), "2.5");
  EXPECT_EQ(format_number(1e20), "100000000000000000000");
  // A 300-digit oversubscription ("1e300:1") was printed digit by digit in its error.
  EXPECT_EQ(format_number(1e300), "1e+300");
  EXPECT_EQ(format_number(-1e21), "-1e+21");
}

}  // namespace
}  // namespace podnet
