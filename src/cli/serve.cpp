#include "cli/serve.hpp"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>
#include <yaml-cpp/yaml.h>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "report/diff.hpp"
#include "report/html.hpp"
#include "report/json_intake.hpp"
#include "report/studies.hpp"
#include "report/web_assets.hpp"
#include "scenario/examples.hpp"

namespace podnet::cli {

namespace {

using Clock = std::chrono::steady_clock;

// Thrown from a progress hook to stop a run (cancel or time limit).
struct Stopped {
  std::string why;
};

struct Run {
  int id = 0;
  std::string study, scenario;
  std::string label;  // what the request gave: its parameters and --set overrides, for the list of runs
  Clock::time_point start = Clock::now();
  std::atomic<bool> cancel{false};
  // Under Impl::mu:
  std::string state = "queued";  // queued, running, done, failed, cancelled
  std::string what, error;
  std::string run_name;  // the current step's name ("iteration", "sweep point 5/40"), which `what` extends
  size_t done = 0, total = 0;
  double share = -1;  // of the current step's transfers done (-1: not known); the bar of a one-step run
  double seconds = 0;
  uint64_t version = 0;
  nlohmann::json payload;
  std::string resolved_yaml;   // the scenario with every default (compare's inputs)
  std::string trace;           // train with trace: the Chrome/Perfetto trace
  bool trace_dropped = false;  // a newer run's trace pushed it out (Impl::prune)
  bool terminal() const { return state == "done" || state == "failed" || state == "cancelled"; }
};

// What a POST /api/runs asked for, checked before the run starts.
struct Request {
  std::string study;
  scenario::Scenario sc;
  report::StudyArgs args;
};

constexpr size_t kKeptTraces = 4;

void answer(httplib::Response& res, int status, const nlohmann::json& j) {
  res.status = status;
  res.set_content(j.dump(), "application/json");
}

void fail(httplib::Response& res, int status, const std::string& message) { answer(res, status, {{"error", message}}); }

// A client-given file name reduced to a safe label for messages: its base name, [A-Za-z0-9._-] only.
std::string upload_name(const std::string& given) {
  std::string base = given.substr(given.find_last_of("/\\") == std::string::npos ? 0 : given.find_last_of("/\\") + 1);
  std::string out;
  for (char c : base)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') out += c;
  if (out.empty() || out.size() > 64) out = "upload.yaml";
  return out;
}

std::string string_field(const nlohmann::json& body, const char* key, const std::string& fallback) {
  if (!body.contains(key)) return fallback;
  if (!body[key].is_string()) throw InputError(fmt::format("'{}': expected a string", key));
  return body[key].get<std::string>();
}

// A study parameter's JSON value as the text its spec parses: a boolean for a Bool, a number for an Int
// or a Real, a string for the others.
std::string param_text(const report::StudyParam& p, const nlohmann::json& v) {
  const std::string& key = p.spec.name;
  switch (p.spec.type) {
    case ParamType::Bool:
      if (!v.is_boolean()) throw InputError(fmt::format("'{}': expected true or false", key));
      return v.get<bool>() ? "true" : "false";
    // A number typed into a text field arrives as a string ("fast", "16k"): parsed as the CLI parses it, so the
    // error names the field, the text and the range.
    case ParamType::Int:
      if (v.is_string()) return v.get<std::string>();
      if (!v.is_number_integer()) throw InputError(fmt::format("'{}': expected an integer", key));
      return std::to_string(v.get<int64_t>());
    case ParamType::Real:
      if (v.is_string()) return v.get<std::string>();
      if (!v.is_number()) throw InputError(fmt::format("'{}': expected a number", key));
      return fmt::format("{}", v.get<double>());
    default:
      if (!v.is_string()) throw InputError(fmt::format("'{}': expected a string", key));
      return v.get<std::string>();
  }
}

Request parse_request(const nlohmann::json& body) {
  if (!body.is_object()) throw InputError("the request body must be a JSON object");
  Request r;
  r.study = string_field(body, "study", "");
  const report::StudyDef* st = report::find_study(r.study);
  if (!st) throw InputError("'study': expected " + report::study_names() + ", got '" + r.study + "'");
  // Fields the study reads (report/studies.hpp); any other is refused (a misspelt field used to be ignored).
  std::vector<std::string> fields = {"study", "sets", "yaml", "file", "scenario"};
  std::map<std::string, std::string> given;
  for (const auto& p : st->params)
    if (p.fronts & report::kServe) {
      fields.push_back(p.spec.name);
      if (body.contains(p.spec.name)) given[p.spec.name] = param_text(p, body[p.spec.name]);
    }
  for (const auto& [key, value] : body.items())
    if (std::find(fields.begin(), fields.end(), key) == fields.end()) {
      std::string list;
      for (const auto& f : fields) list += (list.empty() ? "" : ", ") + f;
      throw InputError(fmt::format("'{}': not a field of a {} run; expected {}", key, r.study, list));
    }
  if (body.contains("yaml") && body.contains("scenario"))
    throw InputError("'yaml' and 'scenario' both given: a run takes one scenario (upload, or a built-in name)");
  std::vector<std::string> sets;
  if (body.contains("sets")) {
    if (!body["sets"].is_array()) throw InputError("'sets': expected a list of KEY=VALUE strings");
    for (const auto& s : body["sets"]) {
      if (!s.is_string()) throw InputError("'sets': expected a list of KEY=VALUE strings");
      sets.push_back(s.get<std::string>());
    }
  }
  // The study's parameters, checked now (400, not a failed run); the scenario keys they set (bench's engine,
  // routing, and algo's collective.algorithms, as podnet bench's --engine, --routing and --algo) follow the
  // client's own sets, and an error about one names both.
  r.args = report::study_args(*st, given, [](const report::StudyParam& p) { return "'" + p.spec.name + "'"; });
  sets.insert(sets.end(), r.args.sets.begin(), r.args.sets.end());
  std::map<std::string, std::string> flags;
  for (const auto& [key, label] : r.args.set_by) flags[key] = label + " (" + key + ")";
  if (body.contains("yaml")) {
    const std::string file = upload_name(string_field(body, "file", "upload.yaml"));
    const std::string stem = file.substr(0, file.find('.'));
    r.sc = scenario::load_text(string_field(body, "yaml", ""), file, stem.empty() ? "upload" : stem, sets, {}, flags);
  } else {
    // Built-in names only: a path would let a client read the server's files.
    const std::string name = string_field(body, "scenario", kDefaultScenario);
    bool builtin = false;
    std::vector<std::string> names;
    for (const auto& e : scenario::builtin_examples()) {
      builtin = builtin || name == e.name;
      names.emplace_back(e.name);
    }
    if (!builtin) {
      const std::string near = scenario::closest(name, names);
      throw InputError(fmt::format("'scenario': '{}' is not a built-in scenario{} (upload a YAML file instead)", name,
                                   near.empty() ? "" : "; did you mean '" + near + "'?"));
    }
    r.sc = scenario::load(name, sets, {}, flags);
  }
  // A key naming a file (its name ends in _file) would have the server read one of its own files for a client.
  for (const auto& sec : scenario::sections())
    for (const auto& spec : sec.params())
      if (scenario::names_a_file(spec.name) && r.sc.section(sec.name).has(spec.name))
        throw InputError(fmt::format("'{}.{}': names a file on the server, which the dashboard does not read for a "
                                     "client; run `podnet {}` with the file on your own machine",
                                     sec.name, spec.name, st->name));
  // Rules between keys (60 GPUs of 8-GPU servers) are checked now, answered 400, not as a failed run.
  const scenario::Setup checked = scenario::resolve(scenario::Scenario(r.sc));
  if (st->check) st->check(r.args, checked);
  return r;
}

nlohmann::json status_of(const Run& r) {
  nlohmann::json j = {{"id", r.id},       {"study", r.study}, {"scenario", r.scenario},
                      {"label", r.label}, {"state", r.state}, {"what", r.what},
                      {"done", r.done},   {"total", r.total}, {"seconds", r.seconds}};
  if (r.share >= 0) j["share"] = r.share;
  if (!r.error.empty()) j["error"] = r.error;
  return j;
}

// The dashboard's pages: one per study of the registry, and compare ("/(design|bench|...|compare)").
const std::string& page_pattern() {
  static const std::string p = [] {
    std::string names;
    for (const auto& st : report::studies()) names += st.name + "|";
    return "/(" + names + "compare)";
  }();
  return p;
}

// The methods a path's route takes ("GET", "POST", "GET, POST"), or "" for no route (the table of routes()).
std::string allowed_methods(const std::string& path) {
  static const std::vector<std::pair<std::regex, std::string>> kRoutes = {
      {std::regex("/"), "GET"},
      {std::regex("/favicon.ico"), "GET"},
      {std::regex(page_pattern()), "GET"},
      {std::regex("/assets/(.+)"), "GET"},
      {std::regex("/api/(studies|scenarios)"), "GET"},
      {std::regex("/api/runs"), "GET, POST"},
      {std::regex(R"(/api/runs/\d{1,9}(/result|/trace|/events)?)"), "GET"},
      {std::regex(R"(/api/runs/\d{1,9}/cancel)"), "POST"},
      {std::regex("/api/compare"), "POST"},
  };
  for (const auto& [re, methods] : kRoutes)
    if (std::regex_match(path, re)) return methods;
  return {};
}

}  // namespace

struct Server::Impl {
  ServeOptions o;
  httplib::Server http;
  std::mutex mu;
  std::condition_variable cv;
  std::map<int, std::shared_ptr<Run>> runs;
  std::map<int, std::thread> threads;
  int next_id = 1;
  int running = 0;
  bool stopping = false;
  int streams = 0;                        // open /events streams
  std::map<std::string, int> streams_of;  // per client address
  static constexpr int kStreamsPerClient = 4;

  explicit Impl(ServeOptions opt) : o(std::move(opt)) {}

  ~Impl() {
    {
      std::lock_guard lk(mu);
      stopping = true;
      for (auto& [id, r] : runs) r->cancel = true;
    }
    cv.notify_all();
    http.stop();
    for (auto& [id, t] : threads)
      if (t.joinable()) t.join();
  }

  void update(Run& r, const std::function<void(Run&)>& f) {
    {
      std::lock_guard lk(mu);
      f(r);
      r.seconds = std::chrono::duration<double>(Clock::now() - r.start).count();
      ++r.version;
    }
    cv.notify_all();
  }

  void check(const Run& r) const {
    if (r.cancel) throw Stopped{"cancelled"};
    const double s = std::chrono::duration<double>(Clock::now() - r.start).count();
    if (s > o.time_limit_s) throw Stopped{fmt::format("stopped at the time limit of {:g} s", o.time_limit_s)};
  }

  void work(const std::shared_ptr<Run>& run, Request req) {
    Run& r = *run;
    update(r, [](Run& x) { x.state = "running"; });
    try {
      study::Progress p;
      p.run = [&](const std::string& what) {
        check(r);
        update(r, [&](Run& x) {
          x.what = x.run_name = what;
          x.share = -1;
        });
      };
      p.step = [&](size_t done, size_t total, const std::string& what) {
        check(r);
        update(r, [&](Run& x) {
          x.done = done;
          x.total = total;
          x.what = what + " done";
        });
      };
      nlohmann::json payload = {{"kind", req.study}};
      const report::StudyDef& st = *report::find_study(req.study);
      check(r);
      std::string resolved;
      report::StudyOutput out = report::run_study(
          st, req.sc, req.args, p,
          [&](scenario::Setup& s) {
            resolved = s.scenario.resolved_yaml();
            // As the CLI's progress lines say it: "61% of 2,735 transfers done, simulated 2,692.80 ms".
            s.network.observers.progress_every = 64;
            s.network.observers.progress = [&r, this, last = Clock::time_point{}](int64_t done, int64_t total,
                                                                                  Time now) mutable {
              check(r);
              if (total <= 0 || Clock::now() - last < std::chrono::milliseconds(500)) return;
              last = Clock::now();
              update(r, [&](Run& x) {
                x.share = static_cast<double>(done) / static_cast<double>(total);
                x.what = fmt::format("{}: {:.0f}% of {} transfers done{}", x.run_name, 100 * x.share,
                                     report::thousands(total),
                                     now.ps > 0 ? ", simulated " + report::fixed(now.seconds() * 1e3, 2) + " ms" : "");
              });
            };
            // A run of a few large transfers reaches no progress hook for minutes: the engines' heartbeat
            // stops it too, and says how far it has simulated (at most once a second).
            s.network.observers.heartbeat = [&r, this, last = Clock::now()](Time now) mutable {
              check(r);
              if (now.ps <= 0 || Clock::now() - last < std::chrono::seconds(1)) return;
              last = Clock::now();
              update(r, [&](Run& x) {
                x.what =
                    fmt::format("{}: simulated {} so far", x.run_name, report::fixed(now.seconds() * 1e3, 2) + " ms");
              });
            };
            check(r);
          },
          true);
      if (resolved.empty()) resolved = req.sc.resolved_yaml();
      payload["document"] = std::move(out.document);
      for (auto it = out.extras.begin(); it != out.extras.end(); ++it) payload[it.key()] = it.value();
      std::string trace = std::move(out.trace);
      {
        std::lock_guard lk(mu);
        r.resolved_yaml = std::move(resolved);
        r.trace = std::move(trace);
      }
      finish(r, "done", {}, std::move(payload));
    } catch (const Stopped& e) {
      finish(r, "cancelled", e.why, {});
    } catch (const std::exception& e) {
      finish(r, "failed", e.what(), {});
    }
  }

  // The run's last update: after it the worker touches nothing (prune joins it under mu).
  void finish(Run& r, const char* state, const std::string& error, nlohmann::json payload) {
    {
      std::lock_guard lk(mu);
      r.state = state;
      r.error = error;
      r.what.clear();
      r.payload = std::move(payload);
      r.seconds = std::chrono::duration<double>(Clock::now() - r.start).count();
      ++r.version;
      --running;
    }
    cv.notify_all();
  }

  // Under mu: joins finished workers and forgets the oldest finished runs past max_kept.
  void prune() {
    for (auto it = threads.begin(); it != threads.end();) {
      auto r = runs.find(it->first);
      if (r == runs.end() || r->second->terminal()) {
        // terminal under mu: the worker is past its last update; join is short.
        it->second.join();
        it = threads.erase(it);
      } else {
        ++it;
      }
    }
    // Traces are large (megabytes): only the newest kKeptTraces keep theirs.
    size_t traces = 0;
    for (auto it = runs.rbegin(); it != runs.rend(); ++it)
      if (it->second->terminal() && !it->second->trace.empty() && ++traces > kKeptTraces) {
        it->second->trace.clear();
        it->second->trace.shrink_to_fit();
        it->second->trace_dropped = true;
      }
    for (auto it = runs.begin(); runs.size() > o.max_kept && it != runs.end();) {
      if (it->second->terminal() && !threads.count(it->first)) it = runs.erase(it);
      else ++it;
    }
  }

  std::shared_ptr<Run> find(const httplib::Request& req) {
    const int id = std::stoi(req.matches[1].str());
    std::lock_guard lk(mu);
    auto it = runs.find(id);
    return it == runs.end() ? nullptr : it->second;
  }

  void start(const httplib::Request& req, httplib::Response& res) {
    Request parsed;
    try {
      parsed = parse_request(report::parse_json(req.body, "the request body"));
    } catch (const InputError& e) {
      return fail(res, 400, e.what());
    }
    std::lock_guard lk(mu);
    if (stopping) return fail(res, 503, "the server is stopping");
    if (running >= o.max_running)
      return fail(res, 429,
                  fmt::format("{} studies are running (the limit); wait for one to end or cancel it", running));
    prune();
    auto run = std::make_shared<Run>();
    run->id = next_id++;
    run->study = parsed.study;
    run->scenario = parsed.sc.name;
    {  // the parameters given and the overrides, so that two runs of one scenario read apart
      std::vector<std::string> parts;
      // Those that change something: not empty, not the study's default.
      const report::StudyDef& def = *report::find_study(parsed.study);
      for (const auto& [name, text] : parsed.args.given) {
        const report::StudyParam* p = report::find_param(def, name);
        if (text.empty() || (p && p->spec.default_text == text)) continue;
        parts.push_back(name + "=" + text);
      }
      for (const auto& o : parsed.sc.overrides)
        if (std::find(parsed.args.sets.begin(), parsed.args.sets.end(), o) == parsed.args.sets.end())
          parts.push_back(o);
      for (size_t i = 0; i < parts.size(); ++i) run->label += (i ? "; " : "") + parts[i];
    }
    runs[run->id] = run;
    ++running;
    threads.emplace(run->id, std::thread([this, run, p = std::move(parsed)]() mutable { work(run, std::move(p)); }));
    answer(res, 202, {{"id", run->id}});
  }

  // One side of a comparison: {"run": ID} (a finished run of this server) or {"document": {...}, "file": NAME}
  // (a result document written by --format json).
  report::DiffSide compare_side(const nlohmann::json& body, const char* key) {
    if (!body.contains(key) || !body[key].is_object())
      throw InputError(fmt::format("'{}': expected {{\"run\": ID}} or {{\"document\": {{...}}}}", key));
    const nlohmann::json& side = body[key];
    if (side.contains("document"))
      return report::document_side(upload_name(string_field(side, "file", "upload.json")), side["document"]);
    if (!side.contains("run") || !side["run"].is_number_integer())
      throw InputError(fmt::format("'{}.run': expected the id of a finished run", key));
    const int id = side["run"].get<int>();
    std::lock_guard lk(mu);
    const auto it = runs.find(id);
    if (it == runs.end()) throw InputError(fmt::format("'{}.run': no run {}", key, id));
    const Run& r = *it->second;
    if (r.state != "done") throw InputError(fmt::format("'{}.run': run {} is {}", key, id, r.state));
    report::DiffSide d;
    d.label = fmt::format("#{} {} {}", r.id, r.study, r.scenario);
    d.resolved_yaml = r.resolved_yaml;
    d.documents.push_back({r.study, r.payload.at("document")});
    return d;
  }

  void compare(const httplib::Request& req, httplib::Response& res) {
    nlohmann::json body;
    try {
      body = report::parse_json(req.body, "the request body");
    } catch (const InputError& e) {
      return fail(res, 400, e.what());
    }
    if (!body.is_object()) return fail(res, 400, "the request body must be a JSON object");
    const report::DiffSide a = compare_side(body, "a"), b = compare_side(body, "b");
    if (a.documents[0].first != b.documents[0].first)
      return fail(res, 400,
                  fmt::format("cannot compare the {} result with the {} result", a.documents[0].first,
                              b.documents[0].first));
    answer(res, 200, report::diff_document(a, b));
  }

  void routes() {
    http.set_payload_max_length(o.max_body);
    http.set_read_timeout(10, 0);
    http.set_write_timeout(10, 0);
    http.set_keep_alive_timeout(2);
    const int threads_n = o.threads;
    http.new_task_queue = [threads_n] { return new httplib::ThreadPool(static_cast<size_t>(threads_n)); };
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
      try {
        std::rethrow_exception(ep);
      } catch (const InputError& e) {
        fail(res, 400, e.what());
      } catch (const std::exception& e) {
        fail(res, 500, e.what());
      } catch (...) {
        fail(res, 500, "internal error");
      }
    });
    http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      if (res.status == 404) {
        // A route that exists for other methods: 405 with the methods it takes (RFC 9110 15.5.6).
        const std::string allow = allowed_methods(req.path);
        if (!allow.empty()) {
          res.set_header("Allow", allow);
          return fail(res, 405, fmt::format("{} takes {}, not {}", req.path, allow, req.method));
        }
      }
      // httplib refuses a POST that gives no Content-Length before any route sees it: say what to send.
      if (res.status == 400 && req.method == "POST" && !req.has_header("Content-Length"))
        return fail(res, 400,
                    fmt::format("POST {}: no Content-Length; send a body (a JSON object) or an empty one (curl -X POST "
                                "-d '' ...)",
                                req.path));
      fail(res, res.status, res.status == 404 ? "not found" : "HTTP " + std::to_string(res.status));
    });

    http.Get("/", [](const httplib::Request&, httplib::Response& res) { res.set_redirect("/design"); });
    // Browsers ask for an icon on every page: none, and no 404 in their console.
    http.Get("/favicon.ico", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
    http.Get(page_pattern(), [](const httplib::Request&, httplib::Response& res) {
      const report::WebAsset* page = report::find_web_asset("index.html");
      if (!page || !report::dashboard_installed()) {
        res.status = 503;
        res.set_content(std::string("podnet serve: ") + report::kDashboardMissing + "\n", "text/plain");
        return;
      }
      res.set_content(std::string(page->data), std::string(page->content_type));
    });
    http.Get("/assets/(.+)", [](const httplib::Request& req, httplib::Response& res) {
      const report::WebAsset* a = report::find_web_asset(req.matches[1].str());
      if (!a) return fail(res, 404, "no such asset");
      res.set_header("Cache-Control", "max-age=3600");
      res.set_content(std::string(a->data), std::string(a->content_type));
    });
    // The studies a run may ask for: their parameters (JSON fields), defaults, result fields, labels, units.
    http.Get("/api/studies", [](const httplib::Request&, httplib::Response& res) {
      answer(res, 200, report::studies_json(report::kServe));
    });
    http.Get("/api/scenarios", [](const httplib::Request&, httplib::Response& res) {
      // The built-ins never change: listed once. Whether each has jobs: (the jobs page opens on one that does).
      static const nlohmann::json list = [] {
        nlohmann::json l = nlohmann::json::array();
        for (const auto& e : scenario::builtin_examples())
          l.push_back(
              {{"name", e.name}, {"description", e.description}, {"jobs", YAML::Load(e.text)["jobs"].IsDefined()}});
        return l;
      }();
      answer(res, 200, {{"scenarios", list}});
    });
    http.Post("/api/runs", [this](const httplib::Request& req, httplib::Response& res) { start(req, res); });
    http.Post("/api/compare", [this](const httplib::Request& req, httplib::Response& res) { compare(req, res); });
    http.Get("/api/runs", [this](const httplib::Request&, httplib::Response& res) {
      nlohmann::json list = nlohmann::json::array();
      std::lock_guard lk(mu);
      for (auto it = runs.rbegin(); it != runs.rend(); ++it) list.push_back(status_of(*it->second));
      answer(res, 200, {{"runs", list}});
    });
    http.Get(R"(/api/runs/(\d{1,9}))", [this](const httplib::Request& req, httplib::Response& res) {
      auto r = find(req);
      if (!r) return fail(res, 404, "no such run");
      std::lock_guard lk(mu);
      answer(res, 200, status_of(*r));
    });
    http.Get(R"(/api/runs/(\d{1,9})/result)", [this](const httplib::Request& req, httplib::Response& res) {
      auto r = find(req);
      if (!r) return fail(res, 404, "no such run");
      std::lock_guard lk(mu);
      if (r->state != "done") return fail(res, 409, "run " + std::to_string(r->id) + " is " + r->state);
      answer(res, 200, r->payload);
    });
    http.Get(R"(/api/runs/(\d{1,9})/trace)", [this](const httplib::Request& req, httplib::Response& res) {
      auto r = find(req);
      if (!r) return fail(res, 404, "no such run");
      std::lock_guard lk(mu);
      if (r->state != "done") return fail(res, 409, "run " + std::to_string(r->id) + " is " + r->state);
      if (r->trace.empty())
        return fail(res, 404,
                    "run " + std::to_string(r->id) +
                        (r->trace_dropped ? "'s trace was dropped (only the newest 4 are kept); run it again"
                                          : " kept no trace (run train with trace)"));
      res.set_header("Content-Disposition", fmt::format("attachment; filename=\"podnet-train-{}.json\"", r->id));
      res.set_content(r->trace, "application/json");
    });
    http.Post(R"(/api/runs/(\d{1,9})/cancel)", [this](const httplib::Request& req, httplib::Response& res) {
      auto r = find(req);
      if (!r) return fail(res, 404, "no such run");
      {
        std::lock_guard lk(mu);
        if (r->terminal()) return fail(res, 409, fmt::format("run {} has already ended ({})", r->id, r->state));
      }
      r->cancel = true;
      answer(res, 202, {{"id", r->id}});
    });
    http.Get(R"(/api/runs/(\d{1,9})/events)", [this](const httplib::Request& req, httplib::Response& res) {
      auto r = find(req);
      if (!r) return fail(res, 404, "no such run");
      // Each open stream holds a worker thread until its run ends: at most half the workers stream, and at
      // most kStreamsPerClient for one client address, so the other half always answers.
      {
        std::lock_guard lk(mu);
        const int total_cap = std::max(1, o.threads / 2);
        int& mine = streams_of[req.remote_addr];
        if (streams >= total_cap || mine >= kStreamsPerClient) {
          if (mine == 0) streams_of.erase(req.remote_addr);
          res.set_header("Retry-After", "1");
          res.set_header("Connection", "close");  // the refused client's connection holds no worker either
          return fail(res, 503,
                      fmt::format("{} progress streams are open (the limit: {} in all, {} per client); follow the "
                                  "run with GET /api/runs/{}",
                                  streams >= total_cap ? streams : mine, total_cap, kStreamsPerClient, r->id));
        }
        ++streams;
        ++mine;
      }
      auto seen = std::make_shared<uint64_t>(UINT64_MAX);
      res.set_header("Cache-Control", "no-store");
      res.set_chunked_content_provider(
          "text/event-stream",
          [this, r, seen](size_t, httplib::DataSink& sink) {
            std::unique_lock lk(mu);
            cv.wait_for(lk, std::chrono::seconds(1), [&] { return r->version != *seen || stopping; });
            std::string msg = ": keep-alive\n\n";
            if (r->version != *seen) {
              *seen = r->version;
              msg = "data: " + status_of(*r).dump() + "\n\n";
            }
            const bool end = r->terminal() || stopping;
            lk.unlock();
            if (!sink.write(msg.data(), msg.size())) return false;
            if (end) sink.done();
            return true;
          },
          [this, client = req.remote_addr](bool) {
            std::lock_guard lk(mu);
            --streams;
            if (--streams_of[client] <= 0) streams_of.erase(client);
          });
    });
  }
};

Server::Server(ServeOptions o) : impl_(std::make_unique<Impl>(std::move(o))) { impl_->routes(); }
Server::~Server() = default;

int Server::bind() {
  // SO_REUSEADDR only (a restarted dashboard binds again past TIME_WAIT): cpp-httplib's default, SO_REUSEPORT,
  // let a second `podnet serve` on a port in use start and share its connections with the first.
  impl_->http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  const std::string& host = impl_->o.bind;
  in_addr a4{};
  in6_addr a6{};
  const bool v4 = inet_pton(AF_INET, host.c_str(), &a4) == 1, v6 = inet_pton(AF_INET6, host.c_str(), &a6) == 1;
  if (!v4 && !v6 && host != "localhost")
    throw InputError(fmt::format("--bind {}: not an IP address; expected an address of this machine (127.0.0.1: "
                                 "this machine only, 0.0.0.0: every interface, ::1, or localhost)",
                                 host));
  const int port = impl_->o.port == 0 ? impl_->http.bind_to_any_port(host)
                                      : (impl_->http.bind_to_port(host, impl_->o.port) ? impl_->o.port : -1);
  if (port <= 0) {
    // Either the address is not this machine's, or the port is taken: a bind to any port of it tells which.
    bool local = true;
    if (v4 || v6) {
      const int fd = socket(v4 ? AF_INET : AF_INET6, SOCK_STREAM, 0);
      if (fd >= 0) {
        int rc = 0;
        if (v4) {
          sockaddr_in sa{};
          sa.sin_family = AF_INET;
          sa.sin_addr = a4;
          rc = ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
        } else {
          sockaddr_in6 sa{};
          sa.sin6_family = AF_INET6;
          sa.sin6_addr = a6;
          rc = ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
        }
        local = !(rc != 0 && errno == EADDRNOTAVAIL);
        ::close(fd);
      }
    }
    if (!local)
      throw InputError(fmt::format("--bind {}: not an address of this machine; expected one of its own (127.0.0.1: "
                                   "this machine only, 0.0.0.0: every interface)",
                                   host));
    throw InputError(fmt::format("cannot listen on {}:{} (is another server, perhaps another podnet serve, using it? "
                                 "--port 0 picks a free one)",
                                 host, impl_->o.port));
  }
  return port;
}

void Server::listen() { impl_->http.listen_after_bind(); }
void Server::stop() { impl_->http.stop(); }

}  // namespace podnet::cli
