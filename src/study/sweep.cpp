#include "study/sweep.hpp"

#include "core/parallel.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <map>
#include <memory>
#include <mpi.h>
#include <mutex>
#include <set>
#include <sqlite3.h>
#include <sstream>
#include <string_view>
#include <unordered_set>
#include <yaml-cpp/yaml.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/mpi_world.hpp"
#include "core/params.hpp"
#include "scenario/scenario.hpp"
#include "scenario/yaml_intake.hpp"

namespace podnet::study {

namespace {

std::string quote(const std::string& name) {  // an SQL identifier
  std::string q = "\"";
  for (char c : name) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// A thin RAII wrapper over one SQLite connection; every error is an Error naming the file.
class Db {
 public:
  Db(const std::string& path, bool create) : path_(path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      throw InputError(fmt::format("{}: is a directory; expected a sweep database file", path));
    if (!create && !std::filesystem::exists(path)) throw InputError(fmt::format("{}: no such file", path));
    // A database podnet may write is read through a read-write connection (nothing is written): the last
    // connection to close folds the write-ahead log in and removes it. A read-only one leaves db-wal and db-shm
    // beside the results after every `podnet sweep`.
    int flags = create || writable(path) ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
    if (create) flags |= SQLITE_OPEN_CREATE;
    std::string name = path;
    if (!create && !writable(path)) {
      if (std::filesystem::file_size(path + "-wal", ec) > 0 && !ec)
        throw InputError(fmt::format("{}: its last points are still in {}-wal (the sweep that wrote it was stopped), "
                                     "and podnet may not write here to fold them in; run the sweep again to resume "
                                     "it, or make the file and its folder writable",
                                     path, path));
      // A database podnet may not write (a read-only file or folder, a shared result) is read as immutable:
      // SQLite would otherwise try to create its -shm file and fail with "attempt to write a readonly database".
      name = "file:";
      for (const char c : std::filesystem::absolute(path).string()) {
        if (c == '?' || c == '#' || c == '%') name += fmt::format("%{:02X}", static_cast<unsigned char>(c));
        else name += c;
      }
      name += "?immutable=1";
      flags |= SQLITE_OPEN_URI;
    }
    if (sqlite3_open_v2(name.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
      const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw InputError(fmt::format("{}: cannot open the sweep database: {}", path, msg));
    }
    sqlite3_busy_timeout(db_, 10000);
  }
  ~Db() { sqlite3_close(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      const std::string msg = err ? err : "?";
      sqlite3_free(err);
      throw InputError(fmt::format("{}: {} (in: {})", path_, msg, sql.substr(0, 120)));
    }
  }
  sqlite3_stmt* prepare(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
      throw InputError(fmt::format("{}: {} (in: {})", path_, sqlite3_errmsg(db_), sql.substr(0, 120)));
    return st;
  }
  void step_done(sqlite3_stmt* st) {
    const int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) throw Error(fmt::format("{}: {}", path_, sqlite3_errmsg(db_)));
  }
  std::vector<std::string> columns(const std::string& table) {
    std::vector<std::string> cols;
    sqlite3_stmt* st = prepare("PRAGMA table_info(" + quote(table) + ")");
    while (sqlite3_step(st) == SQLITE_ROW) cols.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
    sqlite3_finalize(st);
    return cols;
  }
  std::string meta(const std::string& key) {
    sqlite3_stmt* st = prepare("SELECT value FROM meta WHERE key = ?1");
    sqlite3_bind_text(st, 1, key.c_str(), -1, SQLITE_TRANSIENT);
    std::string v;
    if (sqlite3_step(st) == SQLITE_ROW) v = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
  }
  const std::string& path() const { return path_; }
  // The names of the tables in the file (an SQLite error here: the file is no database).
  std::vector<std::string> tables() {
    std::vector<std::string> out;
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", -1, &st,
                           nullptr) != SQLITE_OK)
      throw InputError(fmt::format("{}: not an SQLite database ({}); expected a podnet sweep database or a new file",
                                   path_, sqlite3_errmsg(db_)));
    while (sqlite3_step(st) == SQLITE_ROW) out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    sqlite3_finalize(st);
    return out;
  }

 private:
  static bool writable(const std::string& path) {
    const std::filesystem::path dir = std::filesystem::absolute(path).parent_path();
    return ::access(path.c_str(), W_OK) == 0 && ::access(dir.c_str(), W_OK) == 0;
  }

  std::string path_;
  sqlite3* db_ = nullptr;
};

void bind(sqlite3_stmt* st, int i, const Value& v) {
  if (std::holds_alternative<int64_t>(v)) sqlite3_bind_int64(st, i, std::get<int64_t>(v));
  else if (std::holds_alternative<double>(v)) sqlite3_bind_double(st, i, std::get<double>(v));
  else if (std::holds_alternative<std::string>(v))
    sqlite3_bind_text(st, i, std::get<std::string>(v).c_str(), -1, SQLITE_TRANSIENT);
  else sqlite3_bind_null(st, i);
}

Value column_value(sqlite3_stmt* st, int i) {
  switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER: return static_cast<int64_t>(sqlite3_column_int64(st, i));
    case SQLITE_FLOAT: return sqlite3_column_double(st, i);
    case SQLITE_NULL: return std::monostate{};
    default: return std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, i)));
  }
}

const char* kFixed[] = {"id", "status", "error", "wall_seconds"};

}  // namespace

Axis parse_axis(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(
        fmt::format("--vary {}: expected KEY=V1,V2,... or KEY=LO..HI (e.g. topology.oversubscription=1,2,3)", text));
  Axis a;
  a.key = text.substr(0, eq);
  const std::string rhs = text.substr(eq + 1);
  const auto dots = rhs.find("..");
  if (dots != std::string::npos) {
    // LO..HI, LO..HI+STEP, LO..HI*F (integers)
    std::string hi_text = rhs.substr(dots + 2);
    char kind = '+';
    int64_t step = 1;
    const auto op = hi_text.find_first_of("+*");
    if (op != std::string::npos) {
      kind = hi_text[op];
      if (!parse_int(hi_text.substr(op + 1), step))
        throw InputError(fmt::format("--vary {}: '{}' is not an integer step", text, hi_text.substr(op + 1)));
      hi_text = hi_text.substr(0, op);
    }
    int64_t lo = 0, hi = 0;
    if (!parse_int(rhs.substr(0, dots), lo) || !parse_int(hi_text, hi))
      throw InputError(fmt::format("--vary {}: a range is LO..HI with integers (LO..HI+STEP, LO..HI*FACTOR)", text));
    if (lo > hi) throw InputError(fmt::format("--vary {}: {} is above {}", text, lo, hi));
    if (kind == '+' && step < 1) throw InputError(fmt::format("--vary {}: the step must be at least 1", text));
    if (kind == '*' && (step < 2 || lo < 1))
      throw InputError(fmt::format("--vary {}: a geometric range needs LO >= 1 and a factor >= 2", text));
    // The count first: a range of 10^9 values is refused before 10^6 of them are written out.
    int64_t count = 1;
    if (kind == '+') {
      const __int128 n = (static_cast<__int128>(hi) - lo) / step + 1;
      count = n > kMaxPoints ? kMaxPoints + 1 : static_cast<int64_t>(n);
    } else {
      for (int64_t v = lo; v <= hi / step; v *= step) ++count;
    }
    if (count > kMaxPoints) throw InputError(fmt::format("--vary {}: more than {} values", text, kMaxPoints));
    a.values.reserve(static_cast<size_t>(count));
    for (int64_t v = lo;;) {
      a.values.push_back(std::to_string(v));
      // The next value, unless it passes HI (checked before computing it: no overflow near INT64_MAX).
      if (kind == '+' ? v > hi - step : v > hi / step) break;
      v = kind == '+' ? v + step : v * step;
    }
  } else {
    size_t start = 0;
    while (start <= rhs.size()) {
      const auto comma = rhs.find(',', start);
      const std::string v = rhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (v.empty()) throw InputError(fmt::format("--vary {}: an empty value", text));
      a.values.push_back(v);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    // A listed value given twice is refused (a range's values are distinct by construction: its step is at
    // least 1 and its factor at least 2 from LO >= 1, so only lists are checked).
    std::unordered_set<std::string_view> seen;
    seen.reserve(a.values.size());
    for (const auto& v : a.values)
      if (!seen.insert(v).second) throw InputError(fmt::format("--vary {}: '{}' is given twice", text, v));
  }
  return a;
}

std::vector<SweepPoint> cartesian(const std::vector<Axis>& axes) {
  // Dimensions: each unzipped axis, and each zip group (at its first axis's place).
  std::vector<std::vector<size_t>> dims;
  std::map<std::string, size_t> zip_dim;
  for (size_t k = 0; k < axes.size(); ++k) {
    if (axes[k].values.empty()) throw InputError(fmt::format("sweep axis {}: no values", axes[k].key));
    if (axes[k].zip.empty()) {
      dims.push_back({k});
      continue;
    }
    const auto it = zip_dim.find(axes[k].zip);
    if (it == zip_dim.end()) {
      zip_dim[axes[k].zip] = dims.size();
      dims.push_back({k});
      continue;
    }
    const Axis& first = axes[dims[it->second].front()];
    if (first.values.size() != axes[k].values.size())
      throw InputError(fmt::format("{}zipped axes {} ({} values) and {} ({} values) need as many values",
                                   axes[k].origin.empty() ? "" : axes[k].origin + ": ", first.key, first.values.size(),
                                   axes[k].key, axes[k].values.size()));
    dims[it->second].push_back(k);
  }
  double total = 1;
  for (const auto& d : dims) total *= static_cast<double>(axes[d.front()].values.size());
  if (total > static_cast<double>(kMaxPoints))
    throw InputError(fmt::format("the sweep has {:.3g} points; at most {} are run", total, kMaxPoints));
  std::vector<SweepPoint> out;
  const auto n = static_cast<int64_t>(total);
  out.reserve(static_cast<size_t>(n));
  for (int64_t id = 0; id < n; ++id) {
    SweepPoint p;
    p.id = id;
    p.values.resize(axes.size());
    int64_t rest = id;
    for (size_t d = dims.size(); d-- > 0;) {
      const auto m = static_cast<int64_t>(axes[dims[d].front()].values.size());
      const auto i = static_cast<size_t>(rest % m);
      for (size_t k : dims[d]) p.values[k] = axes[k].values[i];
      rest /= m;
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::vector<std::string>> value_check_overrides(const std::vector<Axis>& axes, size_t max_values) {
  std::vector<std::vector<std::string>> out;
  for (size_t k = 0; k < axes.size(); ++k)
    for (size_t v = 0; v < std::min(axes[k].values.size(), max_values); ++v) {
      std::vector<std::string> sets;
      for (size_t j = 0; j < axes.size(); ++j) {
        const bool with_k = j == k || (!axes[j].zip.empty() && axes[j].zip == axes[k].zip);
        sets.push_back(axes[j].key + "=" + axes[j].values[with_k ? v : 0]);
      }
      out.push_back(std::move(sets));
    }
  return out;
}

std::string Axis::label() const {
  std::string s = origin.empty() ? std::string("--vary") : origin;
  s += origin.empty() ? " " : ": ";
  s += key;
  return s;
}

SweepFile load_sweep_file(const std::string& path) {
  const YAML::Node root =
      scenario::parse_yaml(read_input_file(path, path, "a sweep file (YAML with study:, vary:, zip:)"), path);
  auto where = [&](const YAML::Node& n) { return fmt::format("{}:{}", path, n.Mark().line + 1); };
  if (!root.IsMap()) throw InputError(fmt::format("{}: a sweep file is a map (study:, vary:, zip:)", path));
  auto values_of = [&](const std::string& key, const YAML::Node& v) {
    if (v.IsScalar()) return parse_axis(key + "=" + v.as<std::string>()).values;
    if (!v.IsSequence() || v.size() == 0)
      throw InputError(fmt::format("{}: {}: expected a list of values or a \"LO..HI\" range", where(v), key));
    std::vector<std::string> out;
    for (const auto& e : v) {
      if (!e.IsScalar()) throw InputError(fmt::format("{}: {}: a value must be a scalar", where(e), key));
      out.push_back(e.as<std::string>());
    }
    return parse_axis(key + "=" +
                      [&] {
                        std::string joined;
                        for (const auto& x : out) joined += (joined.empty() ? "" : ",") + x;
                        return joined;
                      }())
        .values;
  };
  SweepFile f;
  for (const auto& kv : root) {
    const std::string k = kv.first.as<std::string>();
    if (k == "study") {
      f.study = kv.second.as<std::string>();
    } else if (k == "vary") {
      if (!kv.second.IsMap()) throw InputError(fmt::format("{}: vary: expected a map KEY: VALUES", where(kv.second)));
      for (const auto& a : kv.second) {
        const std::string key = a.first.as<std::string>();
        f.axes.push_back({key, values_of(key, a.second), "", where(a.first)});
      }
    } else if (k == "zip") {
      if (!kv.second.IsSequence())
        throw InputError(
            fmt::format("{}: zip: expected a list of maps (each KEY: VALUES, advancing together)", where(kv.second)));
      int group = 0;
      for (const auto& g : kv.second) {
        if (!g.IsMap() || g.size() == 0)
          throw InputError(fmt::format("{}: zip entry: expected a map KEY: VALUES", where(g)));
        const std::string name = fmt::format("zip{}", group++);
        for (const auto& a : g) {
          const std::string key = a.first.as<std::string>();
          f.axes.push_back({key, values_of(key, a.second), name, where(a.first)});
        }
      }
    } else {
      throw InputError(fmt::format("{}: {}: unknown key; expected study, vary or zip", where(kv.first), k));
    }
  }
  if (f.axes.empty()) throw InputError(fmt::format("{}: no axes (vary: or zip:)", path));
  return f;
}

namespace {

// " (N bytes, fnv1a64 H)" when `path` names a regular file, else "": a sweep's definition records what its
// files held, so that resuming after one of them changed is refused instead of mixing results of both.
std::string content_tag(const std::string& path) {
  std::error_code ec;
  if (path.empty() || !std::filesystem::is_regular_file(path, ec)) return "";
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return "";
  uint64_t h = 1469598103934665603ULL;  // FNV-1a, 64 bits
  int64_t n = 0;
  char buf[65536];
  for (size_t got; (got = std::fread(buf, 1, sizeof buf, f)) > 0; n += static_cast<int64_t>(got))
    for (size_t i = 0; i < got; ++i) h = (h ^ static_cast<unsigned char>(buf[i])) * 1099511628211ULL;
  std::fclose(f);
  return fmt::format(" ({} bytes, fnv1a64 {:016x})", n, h);
}

}  // namespace

std::string SweepSpec::definition() const {
  std::string d = "study=" + study + "\nscenario=" + scenario + content_tag(scenario) + "\n";
  for (const auto& f : fragments) d += "config-add=" + f + content_tag(f) + "\n";
  // A key naming a file (its name ends in _file: inference.lengths_file) records what the file holds too.
  const auto file_tag = [](const std::string& key, const std::string& value) {
    return scenario::names_a_file(key) ? content_tag(value) : std::string();
  };
  for (const auto& s : sets) {
    const size_t eq = s.find('=');
    d += "set=" + s + (eq == std::string::npos ? "" : file_tag(s.substr(0, eq), s.substr(eq + 1))) + "\n";
  }
  for (const auto& a : study_args) {
    const size_t eq = a.find('=');  // "--opt=FILE" or a bare FILE
    d += "arg=" + a + content_tag(eq == std::string::npos ? a : a.substr(eq + 1)) + "\n";
  }
  for (const auto& a : axes) {
    d += (a.zip.empty() ? "vary=" : "zip=" + a.zip + ":") + a.key + "=";
    for (size_t i = 0; i < a.values.size(); ++i) d += (i ? "," : "") + a.values[i] + file_tag(a.key, a.values[i]);
    d += "\n";
  }
  return d;
}

std::vector<std::string> SweepSpec::overrides(const SweepPoint& p) const {
  std::vector<std::string> o = sets;
  for (size_t k = 0; k < axes.size(); ++k) o.push_back(axes[k].key + "=" + p.values[k]);
  return o;
}

namespace {

// One sweep writes a database at a time: an exclusive flock(2) on the file, taken before SQLite opens it
// (flock and SQLite's own fcntl locks do not interact on Linux). The kernel drops it when the process ends,
// however it ends, so a killed sweep never leaves a stale lock. A second sweep on the same file stops at once
// with a message instead of racing the first to the same point ids.
class SweepLock {
 public:
  explicit SweepLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw InputError(fmt::format("{}: cannot open the sweep database for writing: {}", path, std::strerror(errno)));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      ::close(fd_);
      if (err == EWOULDBLOCK)
        throw InputError(fmt::format("{}: another sweep is writing this database now; wait for it to end, or give "
                                     "another --results file",
                                     path));
      throw InputError(fmt::format("{}: cannot lock the sweep database: {}", path, std::strerror(err)));
    }
  }
  ~SweepLock() { ::close(fd_); }
  SweepLock(const SweepLock&) = delete;
  SweepLock& operator=(const SweepLock&) = delete;

 private:
  int fd_ = -1;
};

// The database side of a sweep: opened (created, or checked to hold the same
// definition), the points it still misses, and storing one point per
// transaction. Not thread-safe: callers serialize store().
class Store {
 public:
  Store(const SweepSpec& spec, const std::string& db_path, const SweepProgress& progress)
      : spec_(spec), points_(cartesian(spec.axes)), lock_(db_path), db_(db_path, true), progress_(progress) {
    // A file of another program's tables is not written to: podnet would add its own beside them.
    const std::vector<std::string> tables = db_.tables();
    const bool ours = std::find(tables.begin(), tables.end(), "meta") != tables.end() &&
                      std::find(tables.begin(), tables.end(), "points") != tables.end();
    if (!tables.empty() && !(ours && db_.meta("format").rfind("podnet-sweep", 0) == 0))
      throw InputError(fmt::format("{}: an SQLite database of something else (tables: {}); expected a podnet sweep "
                                   "database or a new file",
                                   db_path, fmt::join(tables, ", ")));
    db_.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
    db_.exec("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    const std::string def = spec.definition();
    const std::string stored = db_.meta("definition");
    if (stored.empty()) {
      std::string cols = "id INTEGER PRIMARY KEY";
      for (const auto& a : spec.axes) cols += ", " + quote(a.key);
      cols += ", status TEXT NOT NULL, error TEXT, wall_seconds REAL";
      db_.exec("BEGIN");
      db_.exec("CREATE TABLE points(" + cols + ")");
      sqlite3_stmt* st =
          db_.prepare("INSERT INTO meta(key, value) VALUES ('definition', ?1), ('format', 'podnet-sweep 1')");
      sqlite3_bind_text(st, 1, def.c_str(), -1, SQLITE_TRANSIENT);
      db_.step_done(st);
      std::string axes;
      for (const auto& a : spec.axes) axes += a.key + "\n";
      st = db_.prepare("INSERT INTO meta(key, value) VALUES ('axes', ?1)");
      sqlite3_bind_text(st, 1, axes.c_str(), -1, SQLITE_TRANSIENT);
      db_.step_done(st);
      db_.exec("COMMIT");
    } else if (stored != def) {
      throw InputError(
          fmt::format("{} holds another sweep:\n{}this one is:\n{}({})", db_path, stored, def, spec.refusal_hint));
    }
    std::set<int64_t> done;
    sqlite3_stmt* st = db_.prepare("SELECT id FROM points");
    while (sqlite3_step(st) == SQLITE_ROW) done.insert(sqlite3_column_int64(st, 0));
    sqlite3_finalize(st);
    for (const auto& p : points_)
      if (!done.count(p.id)) todo_.push_back(&p);
    stats_.points = static_cast<int64_t>(points_.size());
    stats_.already = stats_.points - static_cast<int64_t>(todo_.size());
    for (const auto& c : db_.columns("points")) columns_.insert(c);
    for (const auto& a : spec.axes) axis_keys_.insert(a.key);
  }

  const std::vector<const SweepPoint*>& todo() const { return todo_; }
  const std::vector<SweepPoint>& points() const { return points_; }
  const SweepStats& stats() const { return stats_; }

  void store(const SweepPoint& p, const Outcome& o, double wall) {
    db_.exec("BEGIN IMMEDIATE");
    try {
      std::vector<std::pair<std::string, const Value*>> fields;
      for (const auto& f : o.fields) {
        std::string name = f.name;
        if (axis_keys_.count(name) || std::count(std::begin(kFixed), std::end(kFixed), name)) name = "result." + name;
        if (!columns_.count(name)) {
          db_.exec("ALTER TABLE points ADD COLUMN " + quote(name));
          columns_.insert(name);
        }
        fields.emplace_back(name, &f.value);
      }
      std::string cols = "id, status, error, wall_seconds", marks = "?1, ?2, ?3, ?4";
      for (size_t k = 0; k < spec_.axes.size(); ++k) {
        cols += ", " + quote(spec_.axes[k].key);
        marks += fmt::format(", ?{}", 5 + k);
      }
      const size_t base = 5 + spec_.axes.size();
      for (size_t k = 0; k < fields.size(); ++k) {
        cols += ", " + quote(fields[k].first);
        marks += fmt::format(", ?{}", base + k);
      }
      sqlite3_stmt* st = db_.prepare("INSERT INTO points(" + cols + ") VALUES (" + marks + ")");
      sqlite3_bind_int64(st, 1, p.id);
      sqlite3_bind_text(st, 2, o.ok ? "ok" : "error", -1, SQLITE_STATIC);
      if (o.ok) sqlite3_bind_null(st, 3);
      else sqlite3_bind_text(st, 3, o.error.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_double(st, 4, wall);
      for (size_t k = 0; k < spec_.axes.size(); ++k) {
        int64_t iv = 0;
        if (parse_int(p.values[k], iv)) sqlite3_bind_int64(st, static_cast<int>(5 + k), iv);
        else sqlite3_bind_text(st, static_cast<int>(5 + k), p.values[k].c_str(), -1, SQLITE_TRANSIENT);
      }
      for (size_t k = 0; k < fields.size(); ++k) bind(st, static_cast<int>(base + k), *fields[k].second);
      db_.step_done(st);
      db_.exec("COMMIT");
    } catch (...) {
      db_.exec("ROLLBACK");
      throw;
    }
    ++stats_.ran;
    if (!o.ok) ++stats_.failed;
    if (progress_.point)
      progress_.point(stats_.ran, static_cast<int64_t>(todo_.size()), stats_.failed,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }

 private:
  const SweepSpec& spec_;
  std::vector<SweepPoint> points_;
  SweepLock lock_;
  Db db_;
  SweepProgress progress_;
  std::vector<const SweepPoint*> todo_;
  SweepStats stats_;
  std::set<std::string> columns_, axis_keys_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// One point, timed; an exception is the point's error.
Outcome evaluate_one(const Evaluate& evaluate, const SweepPoint& p, double& wall) {
  const auto t0 = std::chrono::steady_clock::now();
  Outcome o;
  try {
    o = evaluate(p);
  } catch (const std::exception& e) {
    o = Outcome{false, e.what(), {}};
  }
  wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return o;
}

// ---- MPI: rank 0 owns the database and hands out points; the other ranks evaluate them.

void put_bytes(std::string& b, const void* p, size_t n) { b.append(static_cast<const char*>(p), n); }
template <class T>
void put(std::string& b, T v) {
  put_bytes(b, &v, sizeof v);
}
void put_string(std::string& b, const std::string& s) {
  put<uint64_t>(b, s.size());
  b += s;
}
template <class T>
T get(const std::string& b, size_t& at) {
  T v;
  if (at + sizeof v > b.size()) throw Error("sweep: a truncated message between MPI ranks");
  std::memcpy(&v, b.data() + at, sizeof v);
  at += sizeof v;
  return v;
}
std::string get_string(const std::string& b, size_t& at) {
  const auto n = get<uint64_t>(b, at);
  if (at + n > b.size()) throw Error("sweep: a truncated message between MPI ranks");
  std::string s = b.substr(at, n);
  at += n;
  return s;
}

// A finished point as bytes: id, wall, ok, error, fields (name, type, value); values bit-exact.
std::string encode(int64_t id, double wall, const Outcome& o) {
  std::string b;
  put<int64_t>(b, id);
  put<double>(b, wall);
  put<uint8_t>(b, o.ok ? 1 : 0);
  put_string(b, o.error);
  put<uint64_t>(b, o.fields.size());
  for (const auto& f : o.fields) {
    put_string(b, f.name);
    put<uint8_t>(b, static_cast<uint8_t>(f.value.index()));
    if (std::holds_alternative<int64_t>(f.value)) put<int64_t>(b, std::get<int64_t>(f.value));
    else if (std::holds_alternative<double>(f.value)) put<double>(b, std::get<double>(f.value));
    else if (std::holds_alternative<std::string>(f.value)) put_string(b, std::get<std::string>(f.value));
  }
  return b;
}

Outcome decode(const std::string& b, int64_t& id, double& wall) {
  size_t at = 0;
  id = get<int64_t>(b, at);
  wall = get<double>(b, at);
  Outcome o;
  o.ok = get<uint8_t>(b, at) != 0;
  o.error = get_string(b, at);
  const auto n = get<uint64_t>(b, at);
  for (uint64_t k = 0; k < n; ++k) {
    Field f;
    f.name = get_string(b, at);
    switch (get<uint8_t>(b, at)) {
      case 1: f.value = get<int64_t>(b, at); break;
      case 2: f.value = get<double>(b, at); break;
      case 3: f.value = get_string(b, at); break;
      default: break;
    }
    o.fields.push_back(std::move(f));
  }
  return o;
}

constexpr int kTagResult = 1, kTagWork = 2;

SweepStats run_mpi(const SweepSpec& spec, const std::string& db_path, const Evaluate& evaluate,
                   const SweepProgress& progress) {
  MPI_Init(nullptr, nullptr);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  SweepStats stats;
  if (rank == 0) {
    // The coordinator: a worker's message is its last result (id -1 for none); the reply is the id
    // of the next point to run (-1: stop). It polls (MPI_Iprobe + 1 ms sleep) rather than spinning in MPI_Recv.
    std::unique_ptr<Store> store;
    std::string fatal;
    try {
      store = std::make_unique<Store>(spec, db_path, progress);
    } catch (const std::exception& e) {
      fatal = e.what();
    }
    const std::vector<const SweepPoint*> empty;
    const auto& todo = store ? store->todo() : empty;
    std::map<int64_t, const SweepPoint*> by_id;
    for (const auto* p : todo) by_id[p->id] = p;
    size_t next = 0;
    int stopped = 0;
    while (stopped < size - 1) {
      int ready = 0;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, kTagResult, MPI_COMM_WORLD, &ready, &st);
      if (!ready) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      int n = 0;
      MPI_Get_count(&st, MPI_BYTE, &n);
      std::string buf(static_cast<size_t>(n), '\0');
      MPI_Recv(buf.data(), n, MPI_BYTE, st.MPI_SOURCE, kTagResult, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      int64_t id = -1;
      double wall = 0;
      const Outcome o = decode(buf, id, wall);
      if (id >= 0 && fatal.empty()) {
        try {
          store->store(*by_id.at(id), o, wall);
        } catch (const std::exception& e) {
          fatal = e.what();  // stop handing out work; report once every worker has stopped
        }
      }
      int64_t work = -1;
      if (fatal.empty() && next < todo.size()) work = todo[next++]->id;
      else ++stopped;
      MPI_Send(&work, 1, MPI_INT64_T, st.MPI_SOURCE, kTagWork, MPI_COMM_WORLD);
    }
    if (store) stats = store->stats();
    MPI_Finalize();
    if (!fatal.empty()) throw InputError(fatal);
    stats.ranks = size;
    return stats;
  }
  // A worker: needs the grid only (the coordinator owns the database).
  const std::vector<SweepPoint> points = cartesian(spec.axes);
  std::string msg = encode(-1, 0, Outcome{});
  for (;;) {
    MPI_Send(msg.data(), static_cast<int>(msg.size()), MPI_BYTE, 0, kTagResult, MPI_COMM_WORLD);
    int64_t id = -1;
    MPI_Recv(&id, 1, MPI_INT64_T, 0, kTagWork, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (id < 0) break;
    double wall = 0;
    const Outcome o = evaluate_one(evaluate, points[static_cast<size_t>(id)], wall);
    msg = encode(id, wall, o);
  }
  MPI_Finalize();
  stats.reporter = false;
  stats.ranks = size;
  return stats;
}

}  // namespace

int mpi_ranks() { return mpi::launched_ranks(); }

SweepStats run_sweep(const SweepSpec& spec, const std::string& db_path, const Evaluate& evaluate, int jobs,
                     const SweepProgress& progress) {
  if (jobs < 1) throw InputError(fmt::format("-j {}: expected at least 1 thread", jobs));
  if (mpi_ranks() > 1) return run_mpi(spec, db_path, evaluate, progress);
  Store store(spec, db_path, progress);
  const auto& todo = store.todo();
  std::mutex mu;  // guards store
  // A point's study error is its outcome (evaluate_one); a database error stops the sweep.
  parallel_for(todo.size(), static_cast<size_t>(jobs), [&](size_t i) {
    double wall = 0;
    const Outcome o = evaluate_one(evaluate, *todo[i], wall);
    const std::lock_guard<std::mutex> lock(mu);
    store.store(*todo[i], o, wall);
  });
  return store.stats();
}

ResultTable read_results(const std::string& db_path, bool timing) {
  Db db(db_path, false);
  std::vector<std::string> cols = db.columns("points");
  if (cols.empty() || db.columns("meta").empty() || db.meta("format").rfind("podnet-sweep", 0) != 0)
    throw InputError(fmt::format("{}: not a podnet sweep database", db_path));
  std::vector<std::string> axes;
  {
    const std::string text = db.meta("axes");
    size_t s = 0;
    for (size_t e; (e = text.find('\n', s)) != std::string::npos; s = e + 1) axes.push_back(text.substr(s, e - s));
  }
  std::set<std::string> fixed(axes.begin(), axes.end());
  for (const char* f : kFixed) fixed.insert(f);
  std::vector<std::string> results;
  for (const auto& c : cols)
    if (!fixed.count(c)) results.push_back(c);
  std::sort(results.begin(), results.end());
  ResultTable t;
  t.axes = axes;
  const std::string def = db.meta("definition");
  if (def.rfind("study=", 0) == 0) t.study = def.substr(6, def.find('\n') - 6);
  t.columns.push_back("id");
  t.columns.insert(t.columns.end(), axes.begin(), axes.end());
  t.columns.push_back("status");
  t.columns.push_back("error");
  if (timing) t.columns.push_back("wall_seconds");
  t.columns.insert(t.columns.end(), results.begin(), results.end());
  std::string sql = "SELECT ";
  for (size_t i = 0; i < t.columns.size(); ++i) sql += (i ? ", " : "") + quote(t.columns[i]);
  sql += " FROM points ORDER BY id";
  sqlite3_stmt* st = db.prepare(sql);
  while (sqlite3_step(st) == SQLITE_ROW) {
    std::vector<Value> row;
    for (size_t i = 0; i < t.columns.size(); ++i) row.push_back(column_value(st, static_cast<int>(i)));
    t.rows.push_back(std::move(row));
  }
  sqlite3_finalize(st);
  return t;
}

}  // namespace podnet::study
