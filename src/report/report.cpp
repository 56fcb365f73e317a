#include "report/report.hpp"

#include <cctype>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <map>
#include <ostream>
#include <set>

#include "core/units.hpp"
#include "core/version.hpp"

namespace podnet::report {

RunContext context_of(const scenario::Scenario& sc, const std::string& command) {
  return {command, sc.name, sc.source, sc.seed, sc.overrides, sc.fragments};
}

nlohmann::json run_json(const RunContext& ctx) {
  nlohmann::json j = {{"podnet_version", version()}, {"git_sha", git_sha()}, {"command", ctx.command},
                      {"scenario", ctx.scenario},    {"source", ctx.source}, {"seed", ctx.seed}};
  // What the scenario file alone does not say, so the run can be repeated from the document.
  if (!ctx.overrides.empty()) j["overrides"] = ctx.overrides;
  if (!ctx.fragments.empty()) j["config_add"] = ctx.fragments;
  return j;
}

nlohmann::json new_document(const RunContext& ctx) {
  return {{"schema_version", kSchemaVersion}, {"run", run_json(ctx)}};
}

double round_to(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  double r = std::round(v * scale) / scale;
  return r == 0 ? 0.0 : r;  // no "-0"
}

void write_json(const nlohmann::json& doc, std::ostream& out) { out << doc.dump(2) << "\n"; }

namespace {
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}
void flatten(const nlohmann::json& j, const std::string& prefix, std::ostream& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) flatten(j[i], prefix + "." + std::to_string(i), out);
  } else {
    out << csv_field(prefix) << "," << csv_field(j.is_string() ? j.get<std::string>() : j.dump()) << "\n";
  }
}
}  // namespace

void write_flat_csv(const nlohmann::json& doc, std::ostream& out) {
  out << "key,value\n";
  flatten(doc, "", out);
}

namespace {

void flatten_row(const nlohmann::json& o, const std::string& prefix, std::map<std::string, std::string>& row) {
  for (auto it = o.begin(); it != o.end(); ++it) {
    const std::string name = prefix.empty() ? it.key() : prefix + "." + it.key();
    // A distribution (fct.cdf_us: 101 points) is the JSON's; one CSV cell of 101 numbers helps nobody.
    if (it->is_array() && name.size() >= 6 && name.compare(name.size() - 6, 6, "cdf_us") == 0) continue;
    if (it->is_object()) flatten_row(*it, name, row);
    else if (it->is_string()) row[name] = it->get<std::string>();
    else if (it->is_null()) row[name] = "";
    else row[name] = it->dump();
  }
}

}  // namespace

std::string csv_cell(const std::string& v) {
  if (v.find_first_of(",\"\n") == std::string::npos) return v;
  std::string q = "\"";
  for (char ch : v) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

void write_tidy_csv(const nlohmann::json& doc, const std::string& key, const std::string& key_column, std::ostream& out,
                    const std::vector<std::string>& first) {
  if (!doc.contains(key) || !(doc[key].is_array() || doc[key].is_object()) || doc[key].empty()) {
    write_flat_csv(doc, out);
    return;
  }
  const nlohmann::json& t = doc[key];
  std::vector<std::map<std::string, std::string>> rows;
  std::set<std::string> cols;
  for (auto it = t.begin(); it != t.end(); ++it) {
    std::map<std::string, std::string> row;
    if (t.is_object()) row[key_column] = it.key();
    if (it->is_object()) flatten_row(*it, "", row);
    else row["value"] = it->is_string() ? it->get<std::string>() : it->dump();
    for (const auto& [c, v] : row)
      if (c != key_column || !t.is_object()) cols.insert(c);
    rows.push_back(std::move(row));
  }
  std::vector<std::string> order;
  if (t.is_object() || cols.count(key_column)) order.push_back(key_column);
  for (const auto& c : first)
    if (c != key_column && cols.count(c)) order.push_back(c);
  for (const auto& c : cols)
    if (c != key_column && std::find(first.begin(), first.end(), c) == first.end()) order.push_back(c);
  for (size_t i = 0; i < order.size(); ++i) out << (i ? "," : "") << csv_cell(order[i]);
  out << "\n";
  for (const auto& row : rows) {
    for (size_t i = 0; i < order.size(); ++i) {
      auto f = row.find(order[i]);
      out << (i ? "," : "") << (f == row.end() ? std::string() : csv_cell(f->second));
    }
    out << "\n";
  }
}

namespace {
// A cell that reads as a number ("16,384", "1.5", "99.0%", "3 / 4", "-2") is right-aligned. So is a quantity: a
// number with a leading '$' and/or one short unit after a space or a slash ("$70,400", "92,160 m", "$2/m",
// "$0.080/kWh", "265,663 MWh"), so that a column of amounts in units lines up on its right edge.
bool numeric(const std::string& c) {
  if (c.empty() || c == "-") return true;  // a placeholder takes its column's alignment, as an empty cell does
  size_t i = c[0] == '$' ? 1 : 0;
  bool digit = false;
  for (; i < c.size(); ++i) {
    const char ch = c[i];
    if (std::isdigit(static_cast<unsigned char>(ch))) digit = true;
    else if (!std::strchr(",.%-+:/() x", ch)) break;
  }
  if (!digit) return false;
  if (i == c.size()) return true;
  // A unit: letters only, at most 4, after a space or a slash that follows a digit ("92,160 m", "$2/m").
  const char before = c[i - 1];
  if (before != ' ' && before != '/') return false;
  if (i < 2 || !std::isdigit(static_cast<unsigned char>(c[i - 2]))) return false;
  const size_t unit = c.size() - i;
  if (unit > 4) return false;
  for (; i < c.size(); ++i)
    if (!std::isalpha(static_cast<unsigned char>(c[i]))) return false;
  return true;
}
}  // namespace

void append_wrapped(std::string& out, std::string_view line, size_t keep, size_t hang_width) {
  constexpr size_t width = Table::kTableWidth;
  const std::string hang(hang_width, ' ');
  bool first = true;
  while (true) {
    const size_t lead = first ? 0 : hang.size();
    if (lead + line.size() <= width) break;
    // The last space that fits (past `keep` on the first line), else the first one after (a long word stays
    // whole). A number keeps its unit ("189,815.49 ms"): no break between a digit and a short word of letters.
    size_t cut = line.rfind(' ', width - lead);
    const auto unit_after = [&](size_t at) {
      if (at == 0 || !std::isdigit(static_cast<unsigned char>(line[at - 1]))) return false;
      size_t end = at + 1;
      while (end < line.size() && std::isalpha(static_cast<unsigned char>(line[end]))) ++end;
      return end > at + 1 && end - at - 1 <= 4 &&
             (end == line.size() || !std::isalnum(static_cast<unsigned char>(line[end])));
    };
    while (cut != std::string_view::npos && cut > 0 && unit_after(cut)) cut = line.rfind(' ', cut - 1);
    if (cut == std::string_view::npos || cut <= (first ? keep : 0)) cut = line.find(' ', width - lead);
    if (cut == std::string_view::npos) break;
    if (!first) out += hang;
    out.append(line.substr(0, cut));
    out += '\n';
    line.remove_prefix(cut + 1);
    first = false;
  }
  if (!first) out += hang;
  out.append(line);
}

std::string wrap_prose(const std::string& text) {
  std::string out;
  out.reserve(text.size() + text.size() / 32);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    const bool newline = end != std::string::npos;
    if (!newline) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    const size_t indent = line.find_first_not_of(' ');
    const bool prose = line.size() > Table::kTableWidth && indent != std::string_view::npos &&
                       line.find("  ", indent) == std::string_view::npos;
    if (prose) append_wrapped(out, line, indent, indent + 2);
    else out.append(line);
    if (newline) out += '\n';
    start = end + 1;
  }
  return out;
}

namespace {

// `text` in lines of at most `width` characters. A list whose items each fit ("tp 4, pp 4, interleave 5") breaks
// only between items, so that no key is parted from its value. Other text breaks at spaces: after a comma where
// that fills two thirds of the line, else at the last space that fits. A word longer than the width keeps a line
// of its own, whole: names and keys are never cut.
std::vector<std::string> wrap_cell(const std::string& text, size_t width) {
  if (text.size() <= width) return {text};
  {
    std::vector<std::string> items;  // each with its comma
    for (size_t at = 0; at < text.size();) {
      size_t end = text.find(", ", at);
      end = end == std::string::npos ? text.size() : end + 1;
      items.push_back(text.substr(at, end - at));
      at = end == text.size() ? end : end + 1;
    }
    if (items.size() > 1 &&
        std::all_of(items.begin(), items.end(), [&](const std::string& i) { return i.size() <= width; })) {
      std::vector<std::string> lines(1);
      for (const std::string& item : items) {
        if (!lines.back().empty() && lines.back().size() + 1 + item.size() > width) lines.emplace_back();
        lines.back() += (lines.back().empty() ? "" : " ") + item;
      }
      return lines;
    }
  }
  std::vector<std::string> words;
  for (size_t at = 0; at <= text.size();) {
    size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    if (end > at) words.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  std::vector<std::string> lines;
  std::vector<std::string> line;  // the words of the line being filled
  size_t length = 0;
  const auto flush = [&](size_t n) {  // the first n words of `line` make a line
    std::string s;
    for (size_t i = 0; i < n; ++i) s += (i ? " " : "") + line[i];
    lines.push_back(s);
    line.erase(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(n));
    length = 0;
    for (size_t i = 0; i < line.size(); ++i) length += line[i].size() + (i ? 1 : 0);
  };
  for (const std::string& word : words) {
    if (!line.empty() && length + 1 + word.size() > width) {
      size_t cut = line.size(), at = 0, best = 0;
      for (size_t i = 0; i < line.size(); ++i) {
        at += line[i].size() + (i ? 1 : 0);
        if (line[i].back() == ',' && 3 * at >= 2 * width) best = i + 1;
      }
      if (best != 0) cut = best;
      flush(cut);
    }
    length += word.size() + (line.empty() ? 0 : 1);
    line.push_back(word);
  }
  if (!line.empty()) flush(line.size());
  return lines;
}

}  // namespace

void Table::write(std::ostream& out, const std::string& indent) const {
  const size_t cols = header_.size();
  std::vector<size_t> w(cols, 0);
  std::vector<bool> right(cols, true);
  auto widen = [&](const std::vector<std::string>& r) {
    for (size_t i = 0; i < r.size() && i < cols; ++i) w[i] = std::max(w[i], r[i].size());
  };
  widen(header_);
  for (const auto& r : rows_) {
    widen(r);
    for (size_t i = 0; i < r.size() && i < cols; ++i) right[i] = right[i] && numeric(r[i]);
  }
  right[0] = false;
  // Wider than kTableWidth: the widest text columns (left-aligned, not the first) narrow to fit, down to
  // kWrapWidth each, and their cells wrap at spaces. Then columns whose header is wider than their cells (a
  // number under "total goodput (Gb/s)") narrow to their widest cell or header word, the header wrapping. The
  // first column and the numbers themselves keep their width.
  const auto total = [&] {
    size_t t = indent.size();
    for (size_t i = 0; i < cols; ++i) t += w[i] + (i > 0 ? 2 : 0);
    return t;
  };
  // The longest word of a text (where wrapping at spaces must stop).
  const auto longest_word = [](const std::string& text) {
    size_t longest = 0;
    for (size_t at = 0; at <= text.size();) {
      const size_t end = std::min(text.find(' ', at), text.size());
      longest = std::max(longest, end - at);
      at = end + 1;
    }
    return longest;
  };
  std::vector<size_t> floor(cols, 0);  // how far a column's header may wrap: its widest cell, its longest word
  for (size_t i = 0; i < cols; ++i) {
    for (const auto& r : rows_)
      if (i < r.size()) floor[i] = std::max(floor[i], r[i].size());
    floor[i] = std::max(floor[i], longest_word(header_[i]));
  }
  // Last, a first column wider than half the table (a failure named by both ends of its link) wraps, down to that
  // half, once the other columns and headers have narrowed: the table had stayed wider than kTableWidth. Not below
  // its longest word either (a word is never cut): a name without spaces keeps its width.
  size_t first_floor = kTableWidth / 2;
  for (const auto& r : rows_)
    if (!r.empty()) first_floor = std::max(first_floor, longest_word(r[0]));
  for (size_t t = total(); t > kTableWidth; t = total()) {
    size_t widest = 0;
    for (size_t i = 1; i < cols; ++i)
      if (!right[i] && w[i] > kWrapWidth && (widest == 0 || w[i] > w[widest])) widest = i;
    if (widest == 0)  // headers next: the one with the most room to give
      for (size_t i = 1; i < cols; ++i)
        if (w[i] > floor[i] && (widest == 0 || w[i] - floor[i] > w[widest] - floor[widest])) widest = i;
    if (widest == 0 && w[0] > first_floor) {  // then the first column
      --w[0];
      continue;
    }
    if (widest == 0) break;
    --w[widest];  // a character at a time from the widest: the wide columns end up alike
  }
  auto line = [&](const std::vector<std::string>& r) {
    std::vector<std::vector<std::string>> cells(cols);
    size_t height = 1;
    for (size_t i = 0; i < cols; ++i) {
      cells[i] = wrap_cell(i < r.size() ? r[i] : "", w[i]);
      height = std::max(height, cells[i].size());
    }
    for (size_t k = 0; k < height; ++k) {
      std::string s = indent;
      for (size_t i = 0; i < cols; ++i) {
        const std::string& cell = k < cells[i].size() ? cells[i][k] : std::string();
        if (i > 0) s += "  ";
        s += right[i] ? fmt::format("{:>{}}", cell, w[i]) : fmt::format("{:<{}}", cell, w[i]);
      }
      while (!s.empty() && s.back() == ' ') s.pop_back();
      out << s << "\n";
    }
  };
  bool has_header = false;
  for (const auto& h : header_) has_header = has_header || !h.empty();
  if (has_header) {
    line(header_);
    out << indent << std::string(total() - indent.size(), '-') << "\n";
  }
  // A row of several lines stands apart: a blank line before and after it.
  const auto wraps = [&](const std::vector<std::string>& r) {
    for (size_t i = 0; i < r.size() && i < cols; ++i)
      if (r[i].size() > w[i]) return true;
    return false;
  };
  for (size_t k = 0; k < rows_.size(); ++k) {
    if (k > 0 && (wraps(rows_[k]) || wraps(rows_[k - 1]))) out << "\n";
    line(rows_[k]);
  }
}

std::string thousands(int64_t v) { return podnet::thousands(v); }

std::string breakdown_label(const std::string& key) {
  static const std::map<std::string, std::string> k = {{"compute", "compute"},
                                                       {"tp", "TP (exposed)"},
                                                       {"pp", "PP (exposed)"},
                                                       {"dp", "DP (exposed)"},
                                                       {"ep", "EP (exposed)"},
                                                       {"cp", "CP (exposed)"},
                                                       {"bubble", "bubble"},
                                                       {"optimizer", "optimizer step"},
                                                       {"grad_norm", "gradient norm"},
                                                       {"loss", "loss all-reduce"},
                                                       {"step_overhead", "step overhead"},
                                                       {"collective", "collective (exposed)"},
                                                       {"p2p", "P2P (exposed)"},
                                                       {"idle", "idle"},
                                                       {"failures", "failures"}};
  const auto it = k.find(key);
  return it == k.end() ? key : it->second;
}

std::string event_text(const std::string& what, const std::string& before) {
  const size_t open = what.find(" (");
  const size_t close = open == std::string::npos ? std::string::npos : what.find(')', open);
  if (close == std::string::npos) return what;
  const std::string share = what.substr(open, close + 1 - open);
  if (before.find(share) == std::string::npos) return what;
  return what.substr(0, open) + what.substr(close + 1);
}

std::string size_text(Bytes b) {
  std::string s = format_bytes(b);  // "4MiB"
  s.insert(s.find_first_not_of("0123456789"), " ");
  return s;
}

std::string ratio_text(double v) { return format_number(v, kRatioDecimals) + ":1"; }

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "-";  // tables print no inf or nan: an unknown figure is "-"
  std::string s = fmt::format("{:.{}f}", round_to(v, decimals), decimals);
  auto dot = s.find('.');
  std::string ip = dot == std::string::npos ? s : s.substr(0, dot);
  bool neg = !ip.empty() && ip[0] == '-';
  if (neg) ip = ip.substr(1);
  // Group the integer digits by thousands as text: any magnitude (a double's integer part can
  // exceed int64, which a number conversion would not survive).
  std::string out;
  for (size_t i = 0; i < ip.size(); ++i) {
    if (i && (ip.size() - i) % 3 == 0) out += ',';
    out += ip[i];
  }
  if (neg) out = "-" + out;
  return dot == std::string::npos ? out : out + s.substr(dot);
}

std::string fixed_or_exp(double v, int decimals) {
  if (std::isfinite(v) && std::fabs(v) >= 1e15) return fmt::format("{:.2e}", v);
  return fixed(v, decimals);
}

std::string minutes_text(double minutes) {
  return minutes < 120 ? fixed(minutes, 1) + " min" : fixed(minutes / 60, 2) + " h";  // 3.00 h, not 180.0 min
}

std::string checkpoint_minutes_text(double minutes) {
  if (minutes > 0 && minutes < 1) return fixed(minutes * 60, minutes < 1.0 / 6 ? 2 : 1) + " s";
  return minutes_text(minutes);
}

}  // namespace podnet::report
