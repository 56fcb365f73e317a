// `podnet serve`: a local web dashboard over HTTP (cpp-httplib). Pages
// design, bench, train and reliability run studies through the same library
// calls as the CLI (scenario -> study -> report, no shelling out) in
// background workers, stream their progress by server-sent events, and draw
// the result documents with the embedded assets (report/web_assets.hpp).
//
// Routes:
//   GET  /design /bench /train /reliability   the page (/ redirects to /design)
//        /diagnose /compare
//   GET  /assets/NAME                          an embedded asset (looked up by exact name: no file system)
//   GET  /api/scenarios                        the built-in scenarios {scenarios: [{name, description}]}
//   GET  /api/studies                          the study registry (report/studies.hpp): each study's name,
//                                              description, parameters (the run's JSON fields: name, type,
//                                              default, help, choices), result fields (key, label, unit,
//                                              scale, decimals, headline) and GPU-count field
//   POST /api/runs                             start a study, JSON body {study, scenario | yaml (+ file),
//                                              sets: ["a.b=c"], and the study's parameters as GET
//                                              /api/studies lists them (bench: op, algo, min, max, factor,
//                                              gpus, engine, routing; train: allow_oom, failures, sweep,
//                                              trace; diagnose: probe, duration, round, rate, evaluate, ...)}
//                                              -> 202 {id}; 400 {error} for bad input (the
//                                              scenario's file:line message), 413 past the size bound,
//                                              429 when max_running studies already run
//   GET  /api/runs                             every kept run's status, newest first
//   GET  /api/runs/ID                          one run's status {id, study, scenario, state, what, done,
//                                              total, error, seconds}
//   GET  /api/runs/ID/events                   its status as server-sent events until it ends
//   GET  /api/runs/ID/result                   the payload report/html.hpp draws; 409 until done
//   GET  /api/runs/ID/trace                    a train run's Chrome/Perfetto trace (asked with trace:
//                                              true) as a download; 404 when it kept none
//   POST /api/runs/ID/cancel                   asks the run to stop (at its next progress hook)
//   POST /api/compare                          {a, b}, each {run: ID} or {document: {...}, file} (a
//                                              --format json result): report::diff_document of the two,
//                                              what `podnet diff` prints as JSON; 400 for two studies
//
// Safe by default: loopback bind; assets only from the embedded table; a
// request body bounded by max_body; at most max_running studies at once and
// max_kept results kept; each run stopped at time_limit_s; a scenario named
// by the client must be built in (a path is refused: the server reads no
// file); every handler's exception becomes a 4xx/5xx answer. A run's memory
// is bounded by the scenario layer's input limits (topology::kMaxGpus, the
// plan caps), not by the server.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace podnet::cli {

struct ServeOptions {
  std::string bind = "127.0.0.1";
  int port = 8080;  // 0: any free port
  size_t max_body = size_t{1} << 20;
  int max_running = 2;
  size_t max_kept = 64;
  double time_limit_s = 600;
  int threads = 16;  // HTTP worker threads (each open event stream holds one)
};

class Server {
 public:
  explicit Server(ServeOptions o);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  // Binds; returns the port (Error when the address cannot be bound).
  int bind();
  // Serves until stop(); call after bind().
  void listen();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace podnet::cli
