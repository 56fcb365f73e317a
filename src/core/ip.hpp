// IP addresses and prefixes for address plans (IPv4, RFC 791; IPv6, RFC 4291).
//
// An address is 128 bits (IPv4 in the low 32). Text forms:
// - IPv4 dotted quad "10.0.0.0", four decimal octets 0..255, no leading zeros
//   (inet_pton's rule: "010.0.0.1" is refused rather than read as octal).
// - IPv6 per RFC 4291 section 2.2 (eight groups of 1..4 hex digits, one "::",
//   an embedded IPv4 tail), written in RFC 5952's canonical form: lower case,
//   no leading zeros, the longest run of two or more zero groups (the first on
//   a tie) shortened to "::".
// - A prefix is "ADDRESS/LEN" (LEN 0..32 or 0..128) with no host bits set:
//   "10.0.0.1/8" is refused, as a pool must name its network.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/append.hpp"

namespace podnet {

using Uint128 = unsigned __int128;

struct IpPrefix {
  bool v6 = false;
  Uint128 base = 0;  // network address (host bits zero)
  int len = 0;       // prefix length

  int bits() const { return v6 ? 128 : 32; }
  // Addresses in the prefix, saturated at 2^64 (an IPv6 /64 or shorter).
  uint64_t size() const;
  // The prefix's i-th address (0-based, i < size()).
  Uint128 at(uint64_t i) const { return base + static_cast<Uint128>(i); }
  bool overlaps(const IpPrefix& o) const;
  std::string text() const;  // canonical "10.0.0.0/9", "fd00::/64"
};

// Parses an address; nullopt when the text is not one of the family.
std::optional<Uint128> parse_ipv4(const std::string& text);
std::optional<Uint128> parse_ipv6(const std::string& text);
// Parses "ADDRESS/LEN" of either family; on failure sets `why`.
std::optional<IpPrefix> parse_prefix(const std::string& text, std::string& why);

std::string format_ipv4(Uint128 a);
std::string format_ipv6(Uint128 a);
inline std::string format_ip(Uint128 a, bool v6) { return v6 ? format_ipv6(a) : format_ipv4(a); }
// The same text appended to `out`, with no string of its own: a 1,048,576-GPU config plan writes millions.
void append_ipv4(std::string& out, Uint128 a);
void append_ipv6(std::string& out, Uint128 a);
inline void append_ip(std::string& out, Uint128 a, bool v6) { v6 ? append_ipv6(out, a) : append_ipv4(out, a); }

}  // namespace podnet
