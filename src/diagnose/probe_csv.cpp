#include "diagnose/probe_csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <ostream>
#include <unordered_map>

#include "core/error.hpp"
#include "routing/router.hpp"

namespace podnet::diagnose {

using routing::DirLink;
using topology::NodeId;

namespace {

std::string hop_name(const topology::Topology& t, DirLink d) {
  const NodeId from = routing::dir_from(d, t);
  const auto& l = t.links[routing::link_of(d)];
  return t.nodes[from].name + ":" + t.port_name(from, l.a == from ? l.port_a : l.port_b);
}

std::string us(Time x) { return fmt::format("{:.3f}", static_cast<double>(x.ps) * 1e-6); }

}  // namespace

void write_probe_csv(std::ostream& out, const topology::Topology& t, const Mesh& mesh, const ProbeRun& run) {
  out << "# podnet probe results: " << mesh.kind << " mesh, " << run.rounds << " rounds of " << format_time(run.round)
      << "; columns documented in docs/commands/diagnose.md\n";
  out << "src,dst,sport,sent,lost,rtt_p50_us,rtt_p99_us,path,return_path\n";
  std::string path, back;
  for (size_t i = 0; i < mesh.tuples.size(); ++i) {
    const Tuple& tu = mesh.tuples[i];
    const TupleResult& r = run.total[i];
    path.clear();
    back.clear();
    for (int32_t k = tu.path_begin; k < tu.return_begin; ++k)
      path += (path.empty() ? "" : ">") + hop_name(t, mesh.links[k]);
    for (int32_t k = tu.return_begin; k < tu.path_end; ++k)
      back += (back.empty() ? "" : ">") + hop_name(t, mesh.links[k]);
    const bool rtt = r.sent > r.lost;
    out << t.nodes[tu.src].name << ',' << t.nodes[tu.dst].name << ',' << tu.sport << ',' << r.sent << ',' << r.lost
        << ',' << (rtt ? us(r.rtt_p50) : "") << ',' << (rtt ? us(r.rtt_p99) : "") << ',' << path << ',' << back << '\n';
  }
}

namespace {

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t p = line.find(sep, start);
    out.push_back(line.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) return out;
    start = p + 1;
  }
}

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r')) --b;
  return s.substr(a, b - a);
}

}  // namespace

ProbeTable read_probe_csv(const std::string& text, const std::string& source, const topology::Topology& t,
                          routing::Router& spray) {
  ProbeTable out;
  Incidence& inc = out.incidence;
  inc.dirs = static_cast<int32_t>(2 * t.links.size());
  inc.components = inc.dirs + static_cast<int32_t>(t.nodes.size());
  inc.offset.push_back(0);
  std::unordered_map<std::string, NodeId> endpoint;  // name -> endpoint node
  for (NodeId e : probe_endpoints(t)) endpoint.emplace(t.nodes[e].name, e);
  std::unordered_map<std::string, DirLink> hop;  // "NODE:PORT" -> directed link leaving NODE
  for (topology::LinkId l = 0; l < static_cast<topology::LinkId>(t.links.size()); ++l) {
    if (!is_network_link(t, l)) continue;
    hop.emplace(hop_name(t, 2 * l), 2 * l);
    hop.emplace(hop_name(t, 2 * l + 1), 2 * l + 1);
  }

  std::vector<std::string> header;
  int col_src = -1, col_dst = -1, col_sport = -1, col_sent = -1, col_lost = -1, col_path = -1, col_back = -1,
      col_rtt = -1;
  int line_no = 0, header_line = 0;
  size_t pos = 0;
  std::vector<std::pair<int32_t, float>> parts;
  std::vector<routing::PathPart> route;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const std::string line = trim(text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos));
    pos = nl == std::string::npos ? text.size() : nl + 1;
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    const auto where = [&](const std::string& col) {
      return fmt::format("{}:{}: {}", source, line_no, col.empty() ? std::string("row") : "column " + col);
    };
    const std::vector<std::string> f = split(line, ',');
    if (header.empty()) {
      header_line = line_no;
      for (const auto& h : f) header.push_back(trim(h));
      for (int i = 0; i < static_cast<int>(header.size()); ++i) {
        const std::string& h = header[i];
        int* slot = h == "src"           ? &col_src
                    : h == "dst"         ? &col_dst
                    : h == "sport"       ? &col_sport
                    : h == "sent"        ? &col_sent
                    : h == "lost"        ? &col_lost
                    : h == "path"        ? &col_path
                    : h == "return_path" ? &col_back
                    : h == "rtt_p50_us"  ? &col_rtt
                                         : nullptr;
        if (h != "rtt_p99_us" && !slot)
          throw InputError(fmt::format("{}:{}: unknown column '{}'; expected src, dst, sport, sent, lost, rtt_p50_us, "
                                       "rtt_p99_us, path, return_path",
                                       source, line_no, h));
        if (slot && *slot >= 0) throw InputError(fmt::format("{}:{}: column '{}' appears twice", source, line_no, h));
        if (slot) *slot = i;
      }
      for (const auto& [c, name] : {std::pair{col_src, "src"}, std::pair{col_dst, "dst"}, std::pair{col_sent, "sent"},
                                    std::pair{col_lost, "lost"}})
        if (c < 0)
          throw InputError(fmt::format("{}:{}: the header has no '{}' column (required: src, dst, sent, lost)", source,
                                       line_no, name));
      continue;
    }
    if (f.size() != header.size())
      throw InputError(fmt::format("{}: {} fields, expected {} as in the header (line {})", where(""), f.size(),
                                   header.size(), header_line));
    const auto ep = [&](int c, const char* name) {
      const std::string v = trim(f[c]);
      auto it = endpoint.find(v);
      if (it == endpoint.end())
        throw InputError(fmt::format("{}: '{}' is not a probe endpoint of this fabric (expected a NIC name such as "
                                     "'{}')",
                                     where(name), v, t.nodes[probe_endpoints(t).front()].name));
      return it->second;
    };
    const auto count = [&](int c, const char* name) {
      const std::string v = trim(f[c]);
      int64_t x = -1;
      const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
      if (ec != std::errc() || p != v.data() + v.size() || x < 0 || x > (int64_t{1} << 50))
        throw InputError(fmt::format("{}: '{}': expected a whole number of probes, 0 to 2^50", where(name), v));
      return x;
    };
    const NodeId s = ep(col_src, "src"), d = ep(col_dst, "dst");
    if (s == d) throw InputError(fmt::format("{}: src and dst are the same endpoint", where("dst")));
    const int64_t sent = count(col_sent, "sent"), lost = count(col_lost, "lost");
    if (lost > sent) throw InputError(fmt::format("{}: {} lost of {} sent", where("lost"), lost, sent));
    uint64_t sport = 0;
    if (col_sport >= 0) {
      const std::string v = trim(f[col_sport]);
      const int64_t x = v.empty() ? 0 : count(col_sport, "sport");
      if (x > 65535) throw InputError(fmt::format("{}: {}: expected a UDP port, 0 to 65535", where("sport"), x));
      sport = static_cast<uint64_t>(x);
    }
    double rtt = -1;
    if (col_rtt >= 0 && !trim(f[col_rtt]).empty()) {
      const std::string v = trim(f[col_rtt]);
      char* end = nullptr;
      rtt = std::strtod(v.c_str(), &end);
      if (end != v.c_str() + v.size() || !(rtt >= 0 && rtt < 1e9))
        throw InputError(
            fmt::format("{}: '{}': expected a round-trip time in microseconds (or nothing)", where("rtt_p50_us"), v));
      if (lost == sent)
        throw InputError(fmt::format("{}: an RTT for a row whose every probe was lost", where("rtt_p50_us")));
      rtt *= 1e-6;
    }
    (void)sport;  // the ECMP hash of the user's switches is unknown: a row without path is spread over the DAG
    parts.clear();
    float hops = 0;
    const auto add_path = [&](int c, const char* name, NodeId from, NodeId to) {
      const std::string v = trim(f[c]);
      if (v.empty()) return false;
      NodeId at = from;
      for (const std::string& h : split(v, '>')) {
        auto it = hop.find(trim(h));
        if (it == hop.end())
          throw InputError(fmt::format("{}: hop '{}' is not a network interface of this fabric (expected DEVICE:PORT "
                                       "as in the cabling plan)",
                                       where(name), trim(h)));
        if (routing::dir_from(it->second, t) != at)
          throw InputError(
              fmt::format("{}: hop '{}' does not leave {}, where the path is", where(name), trim(h), t.nodes[at].name));
        parts.emplace_back(it->second, 1.0f);
        at = routing::dir_to(it->second, t);
        if (t.nodes[at].kind == topology::NodeKind::Switch) parts.emplace_back(inc.dirs + at, 1.0f);
        hops += 1;
      }
      if (at != to)
        throw InputError(
            fmt::format("{}: the path ends at {}, not at {}", where(name), t.nodes[at].name, t.nodes[to].name));
      return true;
    };
    const auto add_dag = [&](NodeId from, NodeId to) {
      route.clear();
      try {
        spray.route_endpoints(from, to, 0, route);
      } catch (const Error& e) {
        throw InputError(fmt::format("{}: {}", where(""), e.what()));
      }
      // Expected links crossed = sum of fractions; a switch is entered with the fractions of its in-links.
      for (const auto& p : route) {
        parts.emplace_back(p.link, static_cast<float>(p.fraction));
        const NodeId x = switch_entered(t, p.link);
        if (x != topology::kNone) parts.emplace_back(inc.dirs + x, static_cast<float>(p.fraction));
        hops += static_cast<float>(p.fraction);
      }
    };
    bool known = col_path >= 0 && add_path(col_path, "path", s, d);
    if (!known) add_dag(s, d);
    const bool known_back = col_back >= 0 && add_path(col_back, "return_path", d, s);
    if (!known_back) add_dag(d, s);
    if (!known || !known_back) ++out.rows_without_path;
    std::sort(parts.begin(), parts.end());
    size_t w = 0;
    for (size_t r = 0; r < parts.size(); ++r) {
      if (w > 0 && parts[w - 1].first == parts[r].first) parts[w - 1].second += parts[r].second;
      else parts[w++] = parts[r];
    }
    parts.resize(w);
    for (const auto& [c, a] : parts) {
      inc.component.push_back(c);
      inc.weight.push_back(a);
    }
    inc.offset.push_back(static_cast<int32_t>(inc.component.size()));
    inc.hops.push_back(hops);
    out.sent.push_back(sent);
    out.lost.push_back(lost);
    out.rtt_p50_s.push_back(rtt);
    ++out.rows;
  }
  if (header.empty()) throw InputError(fmt::format("{}: no header line (expected src,dst,sent,lost,...)", source));
  if (out.rows == 0) throw InputError(fmt::format("{}: no probe rows after the header", source));
  return out;
}

}  // namespace podnet::diagnose
