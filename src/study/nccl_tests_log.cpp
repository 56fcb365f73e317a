#include "study/nccl_tests_log.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <limits>
#include <map>
#include <ostream>
#include <sstream>
#include <string_view>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/units.hpp"

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

// Character classes as the C locale has them (what std::regex's \s, \d and \w mean there).
bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> t;
  for (size_t i = 0; i < s.size();) {
    while (i < s.size() && is_space(s[i])) ++i;
    const size_t b = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (i > b) t.push_back(s.substr(b, i - b));
  }
  return t;
}

// A hand-written scanner over one line: the matchers below replaced std::regex, which made a parse of a
// 64 KiB log take milliseconds (and recurses once per character it matches).
struct Scan {
  const std::string& s;
  size_t i = 0;
  bool end() const { return i >= s.size(); }
  size_t spaces() {  // \s*, the count skipped
    const size_t b = i;
    while (i < s.size() && is_space(s[i])) ++i;
    return i - b;
  }
  bool word(std::string_view w) {  // a literal
    if (s.compare(i, w.size(), w) != 0) return false;
    i += w.size();
    return true;
  }
  bool digits(int& v) {  // \d+ that fits an int
    const size_t b = i;
    int64_t x = 0;
    while (i < s.size() && is_digit(s[i])) {
      x = x * 10 + (s[i] - '0');
      if (x > std::numeric_limits<int>::max()) return false;
      ++i;
    }
    v = static_cast<int>(x);
    return i > b;
  }
  bool digits() {  // \d+ of any length
    const size_t b = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    return i > b;
  }
};

// The length of a launcher's prefix at the start of a line, or 0: srun --label ("0: "), mpirun --tag-output
// ("[1,0]<stdout>:"), with the blanks before it and one after it.
size_t launcher_prefix(const std::string& line) {
  Scan c{line};
  c.spaces();
  if (!c.end() && is_digit(line[c.i])) {
    c.digits();
  } else if (c.word("[")) {
    if (!c.digits() || !c.word(",") || !c.digits() || !c.word("]") || !(c.word("<stdout>") || c.word("<stderr>")))
      return 0;
  } else {
    return 0;
  }
  if (!c.word(":")) return 0;
  if (!c.end() && is_space(line[c.i])) ++c.i;
  return c.i;
}

// Every "NCCL_ALGO=Ring", "NCCL_PROTO = 'Simple'" or "NCCL_ALGO set by environment to Tree" on a line, in order:
// the variable's name starts a word; the value is what follows up to a blank or a quote.
template <class Found>
void env_settings(const std::string& line, Found&& found) {
  for (size_t p = line.find("NCCL_"); p != std::string::npos; p = line.find("NCCL_", p)) {
    if (p > 0 && is_word(line[p - 1])) {
      ++p;
      continue;
    }
    Scan c{line, p};
    std::string_view name;
    if (c.word("NCCL_ALGO")) name = "NCCL_ALGO";
    else if (c.word("NCCL_PROTO")) name = "NCCL_PROTO";
    const size_t blanks = name.empty() ? 0 : c.spaces();
    const bool sep = !name.empty() &&
                     (c.word("=") || (blanks > 0 && c.word("set by environment to") && c.spaces() > 0));
    if (!sep) {
      ++p;
      continue;
    }
    c.spaces();
    if (!c.end() && (line[c.i] == '"' || line[c.i] == '\'')) ++c.i;
    const size_t b = c.i;
    while (!c.end() && !is_space(line[c.i]) && line[c.i] != '"' && line[c.i] != '\'') ++c.i;
    if (c.i == b) {
      ++p;
      continue;
    }
    found(name, line.substr(b, c.i - b));
    p = c.i;
  }
}

// "# Rank  0 Group  0 Pid 1234 on host-a device  0 [0x1b] NVIDIA H100 80GB HBM3" (Group is optional), or false.
bool read_rank(const std::string& line, NcclTestsRank& r) {
  Scan c{line};
  int device = 0;
  if (!c.word("#")) return false;
  c.spaces();
  if (!c.word("Rank") || c.spaces() == 0 || !c.digits(r.rank) || c.spaces() == 0) return false;
  r.group = 0;
  if (c.word("Group")) {
    if (c.spaces() == 0 || !c.digits(r.group) || c.spaces() == 0) return false;
  }
  if (!c.word("Pid") || c.spaces() == 0 || !c.digits(r.pid) || c.spaces() == 0) return false;
  if (!c.word("on") || c.spaces() == 0) return false;
  const size_t h = c.i;
  while (!c.end() && !is_space(line[c.i])) ++c.i;
  r.host = line.substr(h, c.i - h);
  if (r.host.empty() || c.spaces() == 0) return false;
  if (!c.word("device") || c.spaces() == 0 || !c.digits(device) || c.spaces() == 0 || !c.word("[")) return false;
  const size_t close = line.find(']', c.i);
  if (close == std::string::npos) return false;
  size_t b = close + 1, e = line.size();
  while (b < e && is_space(line[b])) ++b;
  while (e > b && is_space(line[e - 1])) --e;
  r.device_name = line.substr(b, e - b);
  r.device = device;
  // The regular expression this replaced let '.' match anything but a line break.
  return r.device_name.find_first_of("\r\n") == std::string::npos;
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
  std::vector<NcclTestsLog> logs;
  NcclTestsLog cur;
  cur.source = source;
  Columns cols;
  bool in_table = false;
  std::string named;  // a test name seen on a command line, for logs without "Collective test starting"
  // NCCL_ALGO / NCCL_PROTO seen so far (value, line): they hold for the tables after them.
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
    if (const size_t p = launcher_prefix(line); p > 0) line.erase(0, p);
    const std::vector<std::string> tok = split(line);
    if (tok.empty()) continue;
    if (line.find("NCCL_ALGO") != std::string::npos || line.find("NCCL_PROTO") != std::string::npos) {
      env_settings(line, [&](std::string_view name, std::string v) {
        while (!v.empty() && (v.back() == '.' || v.back() == ';')) v.pop_back();  // "... set by environment to Ring."
        if (v.empty()) return;
        if (name == "NCCL_ALGO") env_algo = v, env_algo_line = lineno;
        else env_proto = v, env_proto_line = lineno;
      });
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
      if (NcclTestsRank r; t.size() > 1 && t[1] == "Rank" && read_rank(line, r)) {
        if (in_table) finish();
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
      throw InputError(fmt::format("{}: expected the {} columns '{}' then the results, got {}", where(lineno), nl,
                                   fmt::join(cols.labels, " "),
                                   plural(static_cast<int64_t>(tok.size()), "value", "values")));
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
        throw InputError(fmt::format("{}: expected {} columns (as the header at line {}: {} then {} "
                                     "of {}), got {}",
                                     where(lineno), full, cur.line, fmt::join(cols.labels, " "),
                                     plural(static_cast<int64_t>(cols.blocks.size()), "result block", "result blocks"),
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
