#include "study/nccl_tests_log.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <ostream>
#include <regex>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"

namespace podnet::study {

int NcclTestsLog::nranks() const {
  if (!ranks.empty()) return static_cast<int>(ranks.size());
  return threads * gpus_per_thread;
}

std::vector<std::string> NcclTestsLog::hosts() const {
  std::vector<std::string> h;
  for (const auto& r : ranks)
    if (std::find(h.begin(), h.end(), r.host) == h.end()) h.push_back(r.host);
  if (h.empty()) h.push_back("");
  return h;
}

int NcclTestsLog::ranks_per_host() const {
  if (ranks.empty()) return nranks();
  std::map<std::string, int> n;
  for (const auto& r : ranks) ++n[r.host];
  const int first = n.begin()->second;
  for (const auto& [h, k] : n)
    if (k != first) return 0;
  return first;
}

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> t;
  std::istringstream in(s);
  for (std::string w; in >> w;) t.push_back(w);
  return t;
}

bool to_int(const std::string& s, int64_t& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  v = x;
  return true;
}

bool to_double(const std::string& s, double& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(s.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(x)) return false;
  v = x;
  return true;
}

// Layout of a results table, from its column header line.
struct Columns {
  std::vector<std::string> labels;  // before the first time column: size count type [redop] [root]
  struct Block {
    int width = 0;                                      // columns in the block
    int time = -1, algbw = -1, busbw = -1, wrong = -1;  // offsets inside it
  };
  std::vector<Block> blocks;  // out-of-place, in-place
  bool timestamp = false;
  int label(const std::string& name) const {
    for (size_t i = 0; i < labels.size(); ++i)
      if (labels[i] == name) return static_cast<int>(i);
    return -1;
  }
};

bool is_time_column(const std::string& s) { return s == "time" || s == "cputime"; }

// "#       size         count      type   redop    root     time   algbw   busbw  #wrong ..." or nullopt-like false.
bool read_columns(const std::vector<std::string>& tok, Columns& c) {
  // tok[0] is "#"
  if (tok.size() < 4 || tok[1] != "size" || tok[2] != "count") return false;
  c = Columns{};
  size_t i = 1;
  for (; i < tok.size() && !is_time_column(tok[i]); ++i) c.labels.push_back(tok[i]);
  while (i < tok.size()) {
    if (tok[i] == "timestamp") {
      c.timestamp = true;
      break;
    }
    Columns::Block b;
    const size_t start = i;
    do {
      const int off = static_cast<int>(i - start);
      if (is_time_column(tok[i])) b.time = off;
      if (tok[i] == "algbw") b.algbw = off;
      if (tok[i] == "busbw") b.busbw = off;
      if (tok[i] == "#wrong") b.wrong = off;
      ++i;
    } while (i < tok.size() && !is_time_column(tok[i]) && tok[i] != "timestamp");
    b.width = static_cast<int>(i - start);
    c.blocks.push_back(b);
  }
  return !c.blocks.empty() && c.blocks[0].algbw >= 0 && c.blocks[0].busbw >= 0;
}

const char* kTests[] = {"all_reduce", "all_gather", "reduce_scatter", "alltoallv", "alltoall", "sendrecv",
                        "broadcast",  "reduce",     "gather",         "scatter",   "hypercube"};

// The first "<test>_perf" on a line ("./build/all_reduce_perf -b 8 ..."), or "".
std::string test_named_in(const std::string& line) {
  const auto p = line.find("_perf");
  if (p == std::string::npos) return {};
  size_t b = p;
  while (b > 0 && (std::isalnum(static_cast<unsigned char>(line[b - 1])) || line[b - 1] == '_')) --b;
  const std::string word = line.substr(b, p - b);
  for (const char* t : kTests)
    if (word == t) return word;
  return {};
}

}  // namespace

std::vector<NcclTestsLog> parse_nccl_tests(const std::string& text, const std::string& source) {
  static const std::regex rank_re(
      R"(^#\s*Rank\s+(\d+)\s+(?:Group\s+(\d+)\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*?)\s*$)");
  static const std::regex prefix_re(R"(^\s*(\d+:|\[\d+,\d+\]<std(out|err)>:)\s?)");
  std::vector<NcclTestsLog> logs;
  NcclTestsLog cur;
  cur.source = source;
  Columns cols;
  bool in_table = false;
  std::string named;  // a test name seen on a command line, for logs without "Collective test starting"
  // NCCL_ALGO / NCCL_PROTO seen so far (value, line): they hold for the tables after them.
  static const std::regex env_re(R"(\b(NCCL_ALGO|NCCL_PROTO)(?:\s*=\s*|\s+set by environment to\s+)["']?([^\s"']+))");
  std::string env_algo, env_proto;
  int env_algo_line = 0, env_proto_line = 0;
  // A new test's preamble after a finished table starts the next log.
  auto finish = [&] {
    if (in_table && !cur.rows.empty()) logs.push_back(cur);
    if (in_table) {
      NcclTestsLog next;
      next.source = source;
      cur = next;
    }
    in_table = false;
  };
  auto where = [&](int line) { return fmt::format("{}:{}", source, line); };

  std::istringstream in(text);
  int lineno = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // Launcher prefixes: srun --label ("0: "), mpirun --tag-output ("[1,0]<stdout>:").
    if (std::smatch pm; std::regex_search(line, pm, prefix_re)) line = pm.suffix().str();
    const std::vector<std::string> tok = split(line);
    if (tok.empty()) continue;
    if (line.find("NCCL_ALGO") != std::string::npos || line.find("NCCL_PROTO") != std::string::npos) {
      for (auto it = std::sregex_iterator(line.begin(), line.end(), env_re); it != std::sregex_iterator(); ++it) {
        std::string v = (*it)[2].str();
        while (!v.empty() && (v.back() == '.' || v.back() == ';')) v.pop_back();  // "... set by environment to Ring."
        if (v.empty()) continue;
        if ((*it)[1] == "NCCL_ALGO") env_algo = v, env_algo_line = lineno;
        else env_proto = v, env_proto_line = lineno;
      }
    }
    const std::string named_here = test_named_in(line);
    if (tok[0][0] == '#') {
      // Comments: "#  Rank" lines have '#' alone; normalise "#Rank"-less forms by re-splitting after '#'.
      std::vector<std::string> t = tok;
      if (t[0].size() > 1) {
        t[0] = t[0].substr(1);
        t.insert(t.begin(), "#");
      }
      if (line.find("Collective test starting:") != std::string::npos) {
        finish();
        cur.test = named_here;
        continue;
      }
      if (t.size() >= 5 && t[1] == "nThread") {
        if (in_table) finish();
        int64_t th = 0, g = 0;
        if (to_int(t[2], th) && t[3] == "nGpus" && to_int(t[4], g)) {
          cur.threads = static_cast<int>(th);
          cur.gpus_per_thread = static_cast<int>(g);
        }
        if (cur.test.empty()) cur.test = named;
        continue;
      }
      std::smatch m;
      if (t.size() > 1 && t[1] == "Rank" && std::regex_match(line, m, rank_re)) {
        if (in_table) finish();
        NcclTestsRank r;
        r.rank = std::atoi(m[1].str().c_str());
        r.group = m[2].matched ? std::atoi(m[2].str().c_str()) : 0;
        r.pid = std::atoi(m[3].str().c_str());
        r.host = m[4].str();
        r.device = std::atoi(m[5].str().c_str());
        r.device_name = m[7].str();
        r.line = lineno;
        cur.ranks.push_back(r);
        continue;
      }
      Columns c;
      if (read_columns(t, c)) {
        if (in_table) {  // a second table of the same test: same ranks
          const NcclTestsLog prev = cur;
          finish();
          cur.test = prev.test;
          cur.threads = prev.threads;
          cur.gpus_per_thread = prev.gpus_per_thread;
          cur.ranks = prev.ranks;
        }
        cols = c;
        in_table = true;
        cur.line = lineno;
        cur.nccl_algo = env_algo;
        cur.nccl_algo_line = env_algo_line;
        cur.nccl_proto = env_proto;
        cur.nccl_proto_line = env_proto_line;
        if (cur.test.empty()) cur.test = named;
        continue;
      }
      if (in_table && line.find("Avg bus bandwidth") != std::string::npos) {
        const auto colon = line.find(':');
        double v = 0;
        const auto after = colon == std::string::npos ? std::vector<std::string>{} : split(line.substr(colon + 1));
        if (!after.empty() && to_double(after[0], v)) cur.avg_busbw_gbyte_per_s = v;
        continue;
      }
      if (!named_here.empty() && named.empty()) named = named_here;
      continue;  // any other comment
    }
    int64_t size = 0;
    if (!in_table || !to_int(tok[0], size)) {
      // Not a result: NCCL INFO lines, mpirun output, a command line.
      if (!named_here.empty()) {
        named = named_here;
        if (!in_table && cur.test.empty()) cur.test = named;
      }
      continue;
    }
    // A results line.
    NcclTestsRow row;
    row.line = lineno;
    row.bytes = size;
    const size_t nl = cols.labels.size();
    if (tok.size() < nl)
      throw InputError(fmt::format("{}: expected the {} columns '{}' then the results, got {} value(s)", where(lineno),
                                   nl, fmt::join(cols.labels, " "), tok.size()));
    const int ci = cols.label("count");
    if (ci >= 0 && !to_int(tok[ci], row.count))
      throw InputError(fmt::format("{}: count '{}' is not an integer", where(lineno), tok[ci]));
    if (const int ti = cols.label("type"); ti >= 0) row.type = tok[ti];
    if (const int ri = cols.label("redop"); ri >= 0) row.redop = tok[ri];
    if (const int ri = cols.label("root"); ri >= 0 && !to_int(tok[ri], row.root))
      throw InputError(fmt::format("{}: root '{}' is not an integer", where(lineno), tok[ri]));
    if (row.bytes < 0) throw InputError(fmt::format("{}: size {} is negative", where(lineno), row.bytes));
    // The blocks: all of them, or only the last (trace replay prints no out-of-place block).
    size_t full = nl;
    for (const auto& b : cols.blocks) full += static_cast<size_t>(b.width);
    const size_t rest = tok.size() - nl;
    size_t first_block = 0;
    if (tok.size() < full) {
      if (cols.blocks.size() == 2 && rest == static_cast<size_t>(cols.blocks[1].width)) {
        first_block = 1;
      } else {
        throw InputError(fmt::format("{}: expected {} columns (as the header at line {}: {} then {} result block(s) "
                                     "of {}), got {}",
                                     where(lineno), full, cur.line, fmt::join(cols.labels, " "), cols.blocks.size(),
                                     cols.blocks[0].width, tok.size()));
      }
    } else if (tok.size() > full && !cols.timestamp) {
      throw InputError(fmt::format("{}: expected {} columns (as the header at line {}), got {}: '{}' is extra",
                                   where(lineno), full, cur.line, tok.size(), tok[full]));
    }
    size_t at = nl;
    const char* names[] = {"out-of-place", "in-place"};
    for (size_t k = first_block; k < cols.blocks.size() && k < 2; ++k) {
      const auto& b = cols.blocks[k];
      NcclTestsResult& res = k == 0 ? row.out_of_place : row.in_place;
      auto num = [&](int off, const char* what, double& v) {
        if (off < 0) return;
        const std::string& s = tok[at + static_cast<size_t>(off)];
        if (!to_double(s, v) || v < 0)
          throw InputError(
              fmt::format("{}: {} {} '{}' is not a non-negative number", where(lineno), names[k], what, s));
      };
      num(b.time, "time", res.time_us);
      // nccl-tests prints microseconds; an hour per collective is no measurement (1e308 made the fit's rms "-%").
      if (b.time >= 0 && res.time_us > kMaxLogTimeUs)
        throw InputError(fmt::format("{}: {} time '{}' us is over an hour; expected microseconds per collective, at "
                                     "most {:.0e}",
                                     where(lineno), names[k], tok[at + static_cast<size_t>(b.time)], kMaxLogTimeUs));
      num(b.algbw, "algbw", res.algbw_gbyte_per_s);
      num(b.busbw, "busbw", res.busbw_gbyte_per_s);
      if (b.wrong >= 0) {
        const std::string& s = tok[at + static_cast<size_t>(b.wrong)];
        double w = 0;
        if (s == "N/A") {
          res.wrong = -1;
        } else if (to_double(s, w) && w >= 0 && w == std::floor(w) && w < 9.2e18) {
          res.wrong = static_cast<int64_t>(w);
        } else {
          throw InputError(
              fmt::format("{}: {} #wrong '{}' is neither a count of wrong values nor N/A", where(lineno), names[k], s));
        }
      }
      res.present = true;
      at += static_cast<size_t>(b.width);
    }
    cur.rows.push_back(row);
  }
  if (in_table && !cur.rows.empty()) logs.push_back(cur);
  if (logs.empty())
    throw InputError(fmt::format("{}: no nccl-tests results found (expected a column header line '#  size  count  "
                                 "type ... time  algbw  busbw ...' followed by result lines)",
                                 source));
  return logs;
}

std::vector<NcclTestsLog> read_nccl_tests(const std::string& path) {
  return parse_nccl_tests(read_input_file(path, path, "an nccl-tests output"), path);
}

}  // namespace podnet::study
