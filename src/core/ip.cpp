#include "core/ip.hpp"

#include <fmt/format.h>

#include <vector>

namespace podnet {

namespace {

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Splits on `sep`, keeping empty fields.
std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == sep) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

}  // namespace

uint64_t IpPrefix::size() const {
  const int host = bits() - len;
  return host >= 64 ? UINT64_MAX : uint64_t{1} << host;
}

bool IpPrefix::overlaps(const IpPrefix& o) const {
  if (v6 != o.v6) return false;
  const int l = len < o.len ? len : o.len;
  const int shift = bits() - l;
  if (shift >= 128) return true;
  return (base >> shift) == (o.base >> shift);
}

std::string IpPrefix::text() const { return format_ip(base, v6) + "/" + std::to_string(len); }

std::optional<Uint128> parse_ipv4(const std::string& text) {
  const auto parts = split(text, '.');
  if (parts.size() != 4) return std::nullopt;
  Uint128 a = 0;
  for (const auto& p : parts) {
    if (!all_digits(p) || p.size() > 3 || (p.size() > 1 && p[0] == '0')) return std::nullopt;
    const int v = std::stoi(p);
    if (v > 255) return std::nullopt;
    a = (a << 8) | static_cast<Uint128>(v);
  }
  return a;
}

std::optional<Uint128> parse_ipv6(const std::string& text) {
  // At most one "::"; each side a list of groups, the last group may be an IPv4 tail.
  const size_t dc = text.find("::");
  if (dc != std::string::npos && text.find("::", dc + 1) != std::string::npos) return std::nullopt;
  auto groups_of = [](const std::string& s, std::vector<uint32_t>& out, bool allow_v4_tail) {
    if (s.empty()) return true;
    const auto parts = split(s, ':');
    for (size_t i = 0; i < parts.size(); ++i) {
      const auto& p = parts[i];
      if (allow_v4_tail && i + 1 == parts.size() && p.find('.') != std::string::npos) {
        const auto v4 = parse_ipv4(p);
        if (!v4) return false;
        out.push_back(static_cast<uint32_t>(*v4 >> 16) & 0xffff);
        out.push_back(static_cast<uint32_t>(*v4) & 0xffff);
        continue;
      }
      if (p.empty() || p.size() > 4) return false;
      uint32_t v = 0;
      for (char c : p) {
        const int h = hex_value(c);
        if (h < 0) return false;
        v = v * 16 + static_cast<uint32_t>(h);
      }
      out.push_back(v);
    }
    return true;
  };
  std::vector<uint32_t> head, tail;
  if (dc == std::string::npos) {
    if (!groups_of(text, head, true) || head.size() != 8) return std::nullopt;
  } else {
    if (!groups_of(text.substr(0, dc), head, false) || !groups_of(text.substr(dc + 2), tail, true)) return std::nullopt;
    if (head.size() + tail.size() > 7) return std::nullopt;  // "::" stands for at least one zero group
    head.resize(8 - tail.size(), 0);
    head.insert(head.end(), tail.begin(), tail.end());
  }
  Uint128 a = 0;
  for (uint32_t g : head) a = (a << 16) | g;
  return a;
}

std::optional<IpPrefix> parse_prefix(const std::string& text, std::string& why) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) {
    why = "a prefix ADDRESS/LENGTH such as 10.0.0.0/9 or fd00::/64 (no /LENGTH in '" + text + "')";
    return std::nullopt;
  }
  const std::string addr = text.substr(0, slash), len = text.substr(slash + 1);
  IpPrefix p;
  if (auto v4 = parse_ipv4(addr)) {
    p.base = *v4;
  } else if (auto v6 = parse_ipv6(addr)) {
    p.v6 = true;
    p.base = *v6;
  } else {
    why = "a prefix ADDRESS/LENGTH such as 10.0.0.0/9 or fd00::/64 ('" + addr + "' is not an IPv4 or IPv6 address)";
    return std::nullopt;
  }
  if (!all_digits(len) || len.size() > 3 || std::stoi(len) > p.bits()) {
    why = fmt::format("a prefix length 0..{} after '/', not '{}'", p.bits(), len);
    return std::nullopt;
  }
  p.len = std::stoi(len);
  const int host = p.bits() - p.len;
  const Uint128 host_mask = host >= 128 ? ~Uint128{0} : (Uint128{1} << host) - 1;
  if (p.base & host_mask) {
    why = fmt::format("a network address with no host bits set: {}/{} has them (the network is {})", addr, p.len,
                      format_ip(p.base & ~host_mask, p.v6) + "/" + len);
    return std::nullopt;
  }
  return p;
}

void append_ipv4(std::string& out, Uint128 a) {
  const auto v = static_cast<uint32_t>(a);
  for (int shift = 24; shift >= 0; shift -= 8) {
    append_decimal(out, (v >> shift) & 0xff);
    if (shift != 0) out += '.';
  }
}

std::string format_ipv4(Uint128 a) {
  std::string s;
  append_ipv4(s, a);
  return s;
}

void append_ipv6(std::string& out, Uint128 a) {
  uint32_t g[8];
  for (int i = 7; i >= 0; --i, a >>= 16) g[i] = static_cast<uint32_t>(a & 0xffff);
  // RFC 5952 4.2: the longest run of >= 2 zero groups, the first if tied.
  int best = -1, best_len = 1;
  for (int i = 0; i < 8;) {
    if (g[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && g[j] == 0) ++j;
    if (j - i > best_len) best = i, best_len = j - i;
    i = j;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  bool colon = false;  // a group written last: the next one needs its ':'
  for (int i = 0; i < 8; ++i) {
    if (i == best) {
      out += "::";
      colon = false;
      i += best_len - 1;
      continue;
    }
    if (colon) out += ':';
    int shift = 12;  // no leading zeros
    while (shift > 0 && (g[i] >> shift) == 0) shift -= 4;
    for (; shift >= 0; shift -= 4) out += kHex[(g[i] >> shift) & 0xf];
    colon = true;
  }
}

std::string format_ipv6(Uint128 a) {
  std::string s;
  append_ipv6(s, a);
  return s;
}

}  // namespace podnet
