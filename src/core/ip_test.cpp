#include "core/ip.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace podnet {
namespace {

TEST(Ip, Ipv4RoundTrip) {
  auto a = parse_ipv4("10.255.0.1");
  ASSERT_TRUE(a);
  // 10*2^24 + 255*2^16 + 0*2^8 + 1 = 167772160 + 16711680 + 1 = 184483841
  EXPECT_EQ(static_cast<uint64_t>(*a), 184483841u);
  EXPECT_EQ(format_ipv4(*a), "10.255.0.1");
  EXPECT_FALSE(parse_ipv4("10.0.0"));
  EXPECT_FALSE(parse_ipv4("10.0.0.256"));
  EXPECT_FALSE(parse_ipv4("010.0.0.1"));  // no octal-looking octets
  EXPECT_FALSE(parse_ipv4("10.0.0.-1"));
}

TEST(Ip, Ipv6CanonicalForm) {
  // RFC 5952 section 4: lower case, no leading zeros, the longest zero run as "::".
  auto a = parse_ipv6("FD00:0000:0000:0001:0000:0000:0000:0010");
  ASSERT_TRUE(a);
  EXPECT_EQ(format_ipv6(*a), "fd00:0:0:1::10");
  EXPECT_EQ(format_ipv6(*parse_ipv6("::")), "::");
  EXPECT_EQ(format_ipv6(*parse_ipv6("::1")), "::1");
  // Two runs of two zero groups: the first is shortened (4.2.3).
  EXPECT_EQ(format_ipv6(*parse_ipv6("2001:db8:0:0:1:0:0:1")), "2001:db8::1:0:0:1");
  // A single zero group is not shortened (4.2.2).
  EXPECT_EQ(format_ipv6(*parse_ipv6("2001:db8:0:1:1:1:1:1")), "2001:db8:0:1:1:1:1:1");
  // Embedded IPv4 tail: ::ffff:10.0.0.1 = ::ffff:a00:1.
  EXPECT_EQ(format_ipv6(*parse_ipv6("::ffff:10.0.0.1")), "::ffff:a00:1");
  EXPECT_FALSE(parse_ipv6("1::2::3"));
  EXPECT_FALSE(parse_ipv6("1:2:3:4:5:6:7"));
  EXPECT_FALSE(parse_ipv6("1:2:3:4:5:6:7:8:9"));
  EXPECT_FALSE(parse_ipv6("1:2:3:4:5:6:7::8"));  // "::" must stand for at least one group
  EXPECT_FALSE(parse_ipv6("12345::"));
  EXPECT_FALSE(parse_ipv6("g::"));
}

TEST(Ip, AppendingWritesAfterWhatIsThere) {
  // A config plan appends addresses to the line it is writing: after text of its own, IPv6's first group gets
  // no ':' and a leading "::" stays whole.
  std::string s = "a ";
  append_ipv4(s, *parse_ipv4("0.10.255.100"));
  EXPECT_EQ(s, "a 0.10.255.100");
  s = "b:";
  append_ipv6(s, *parse_ipv6("::1"));
  EXPECT_EQ(s, "b:::1");
  s = "c ";
  append_ip(s, *parse_ipv6("fd00:0:0:2::a"), true);
  EXPECT_EQ(s, "c fd00:0:0:2::a");
  s = "d ";
  append_ipv6(s, *parse_ipv6("1:0:0:0:0:0:0:0"));
  EXPECT_EQ(s, "d 1::");
  // Decimals as std::to_string writes them, the most negative one too.
  s.clear();
  for (int64_t v : {int64_t{0}, int64_t{-7}, int64_t{1234567890}, std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max()}) {
    s.clear();
    append_decimal(s, v);
    EXPECT_EQ(s, std::to_string(v));
  }
}

TEST(Ip, Prefixes) {
  std::string why;
  auto p = parse_prefix("10.0.0.0/9", why);
  ASSERT_TRUE(p) << why;
  EXPECT_FALSE(p->v6);
  EXPECT_EQ(p->size(), uint64_t{1} << 23);  // 32 - 9 = 23 host bits
  EXPECT_EQ(format_ip(p->at(5), false), "10.0.0.5");
  EXPECT_EQ(p->text(), "10.0.0.0/9");
  auto q = parse_prefix("fd00:0:0:1::/64", why);
  ASSERT_TRUE(q) << why;
  EXPECT_TRUE(q->v6);
  EXPECT_EQ(q->size(), UINT64_MAX);  // 2^64 saturated
  EXPECT_EQ(format_ip(q->at(3), true), "fd00:0:0:1::3");

  EXPECT_FALSE(parse_prefix("10.0.0.1/8", why));  // host bits set
  EXPECT_NE(why.find("10.0.0.0/8"), std::string::npos) << why;
  EXPECT_FALSE(parse_prefix("10.0.0.0/33", why));
  EXPECT_FALSE(parse_prefix("10.0.0.0", why));
  EXPECT_FALSE(parse_prefix("fd00::/129", why));
  EXPECT_FALSE(parse_prefix("x/8", why));

  // 10.0.0.0/9 covers 10.0.0.0-10.127.255.255: it overlaps 10.64.0.0/16, not 10.255.0.0/16.
  EXPECT_TRUE(p->overlaps(*parse_prefix("10.64.0.0/16", why)));
  EXPECT_FALSE(p->overlaps(*parse_prefix("10.255.0.0/16", why)));
  EXPECT_FALSE(p->overlaps(*q));  // different families never overlap
  EXPECT_TRUE(parse_prefix("0.0.0.0/0", why)->overlaps(*p));
}

}  // namespace
}  // namespace podnet
