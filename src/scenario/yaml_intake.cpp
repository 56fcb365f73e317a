#include "scenario/yaml_intake.hpp"

#include <fmt/format.h>
#include <map>
#include <sstream>
#include <vector>
#include <yaml-cpp/eventhandler.h>

#include "core/error.hpp"
#include "core/units.hpp"

namespace podnet::scenario {
namespace {

// Counts, per anchored node, how many nodes it stands for once every alias in
// it is expanded; an alias then costs its anchor's count, not a walk.
class Counter : public YAML::EventHandler {
 public:
  Counter(const std::string& source, const YamlLimits& limits) : source_(source), limits_(limits) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    ++documents_;
    if (limits_.one_document && documents_ > 1)
      throw InputError(
          fmt::format("{}: a second YAML document (after '---'); expected one document per file", where(mark)));
    sizes_.clear();
    names_.clear();
  }
  void OnDocumentEnd() override {}
  void OnAnchor(const YAML::Mark&, const std::string& name) override { pending_name_ = name; }
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    for (const char c : value) {
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\n' && c != '\t' && c != '\r') || u == 0x7f)
        throw InputError(fmt::format("{}: a control character (byte 0x{:02x}) in the value '{}'; expected printable "
                                     "text",
                                     where(mark), u, value));
    }
    leaf(mark, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    for (const Frame& f : open_)
      if (f.anchor == anchor && anchor != YAML::NullAnchor)
        throw InputError(fmt::format("{}: alias *{} is inside its own anchor &{} (line {}); a value cannot contain "
                                     "itself",
                                     where(mark), name(anchor), name(anchor), f.mark.line + 1));
    const auto it = sizes_.find(anchor);
    add(mark, it == sizes_.end() ? 1 : it->second);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    YAML::anchor_t anchor;
    YAML::Mark mark;
    size_t count;  // nodes below this one, expanded
  };

  std::string where(const YAML::Mark& mark) const {
    return mark.is_null() ? source_ : fmt::format("{}:{}:{}", source_, mark.line + 1, mark.column + 1);
  }
  std::string name(YAML::anchor_t anchor) const {
    const auto it = names_.find(anchor);
    return it == names_.end() ? fmt::format("{}", anchor) : it->second;
  }
  void remember(YAML::anchor_t anchor) {
    if (anchor == YAML::NullAnchor) return;
    names_[anchor] = pending_name_;
    pending_name_.clear();
  }
  [[noreturn]] void too_big(const YAML::Mark& mark) const {
    throw InputError(fmt::format("{}: the document expands to over {} values (aliases count once per use); "
                                 "expected a smaller document, or fewer nested aliases",
                                 where(mark), thousands(static_cast<int64_t>(limits_.max_nodes))));
  }
  // Adds `n` expanded nodes at `mark` to the enclosing collection and to the document's total.
  void add(const YAML::Mark& mark, size_t n) {
    total_ += n;
    if (total_ > limits_.max_nodes || n > limits_.max_nodes) too_big(mark);
    if (!open_.empty()) open_.back().count += n;
  }
  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    remember(anchor);
    if (anchor != YAML::NullAnchor) sizes_[anchor] = 1;
    add(mark, 1);
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    remember(anchor);
    if (static_cast<int>(open_.size()) >= limits_.max_depth)
      throw InputError(fmt::format("{}: nested over {} levels deep; expected at most {}", where(mark),
                                   limits_.max_depth, limits_.max_depth));
    open_.push_back({anchor, mark, 0});
  }
  void close() {
    const Frame f = open_.back();
    open_.pop_back();
    if (f.anchor != YAML::NullAnchor) sizes_[f.anchor] = f.count + 1;
    // Its children were counted as they came (in the total, and here for the enclosing collection);
    // the collection's own node now, at its start.
    if (!open_.empty()) open_.back().count += f.count;
    add(f.mark, 1);
  }

  const std::string& source_;
  const YamlLimits& limits_;
  std::vector<Frame> open_;
  std::map<YAML::anchor_t, size_t> sizes_;
  std::map<YAML::anchor_t, std::string> names_;
  std::string pending_name_;
  size_t total_ = 0;
  int documents_ = 0;
};

}  // namespace

YAML::Node parse_yaml(const std::string& text, const std::string& source, const YamlLimits& limits) {
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    Counter counter(source, limits);
    while (parser.HandleNextDocument(counter)) {
    }
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    // yaml-cpp's words for the common slips, said as what to look at.
    std::string hint;
    if (e.msg.find("illegal map value") != std::string::npos) {
      hint = " (a `key: value` where none can be: is this line indented deeper than the key above it, or does a value "
             "hold ': ' that needs quotes?)";
      // A key without its ':' runs into the next line, where the parser stops: name the line above.
      if (!e.mark.is_null() && e.mark.line > 0) {
        std::istringstream lines(text);
        std::string line, above;
        int above_no = 0;
        for (int n = 0; n < e.mark.line && std::getline(lines, line); ++n) {
          const auto first = line.find_first_not_of(' ');
          if (first != std::string::npos && line[first] != '#') {
            above = line;
            above_no = n + 1;
          }
        }
        const auto first = above.find_first_not_of(' ');
        if (!above.empty() && above.find(':') == std::string::npos && above[first] != '-')
          hint = fmt::format(" (line {}, `{}`, has no ':' after its key)", above_no, above.substr(first));
      }
    } else if (e.msg.find("end of map not found") != std::string::npos ||
               e.msg.find("end of sequence not found") != std::string::npos)
      hint = " (is this line indented less than the keys beside it? keys of one section line up)";
    else if (e.msg.find("flow not found") != std::string::npos)
      hint = " (a `{` or `[` opened before this point is not closed)";
    // A tab in a line's indentation, at or above the error: YAML indents with spaces only, and yaml-cpp's own
    // words ("illegal map value") do not say so.
    {
      std::istringstream lines(text);
      std::string line;
      for (int n = 1; std::getline(lines, line) && (e.mark.is_null() || n <= e.mark.line + 1); ++n) {
        const size_t first = line.find_first_not_of(" \t");
        if (first != std::string::npos && line.find('\t') < first) {
          hint = fmt::format(" (line {} is indented with a tab: YAML indents with spaces only)", n);
          break;
        }
      }
    }
    if (e.mark.is_null()) throw InputError(fmt::format("{}: YAML syntax error: {}{}", source, e.msg, hint));
    throw InputError(
        fmt::format("{}:{}:{}: YAML syntax error: {}{}", source, e.mark.line + 1, e.mark.column + 1, e.msg, hint));
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}: not valid YAML: {}", source, e.msg));
  }
}

}  // namespace podnet::scenario
