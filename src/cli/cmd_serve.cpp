// `podnet serve`: the web dashboard (cli/serve.hpp) on loopback by default.
#include <cmath>
#include <fmt/format.h>
#include <iostream>

#include "cli/common.hpp"
#include "cli/serve.hpp"
#include "core/error.hpp"
#include "core/process.hpp"
#include "report/web_assets.hpp"

namespace podnet::cli {

namespace {

int cmd_serve(const ServeOptions& o) {
  podnet::return_freed_memory();  // a long-running server hands freed memory back (core/process.hpp)
  if (!report::dashboard_installed()) std::cerr << "podnet serve: warning: " << report::kDashboardMissing << "\n";
  if (o.port < 0 || o.port > 65535) throw InputError("--port " + std::to_string(o.port) + ": expected 0..65535");
  if (o.max_running < 1) throw InputError("--max-runs: expected at least 1");
  if (!(o.time_limit_s > 0) || !std::isfinite(o.time_limit_s))
    throw InputError(fmt::format("--time-limit {}: expected seconds above 0", o.time_limit_s));
  Server server(o);
  const int port = server.bind();
  const std::string host = o.bind.find(':') != std::string::npos ? "[" + o.bind + "]" : o.bind;
  std::cout << "podnet serve: http://" << host << ":" << port << "/ (Ctrl-C to stop)" << std::endl;
  if (o.bind != "127.0.0.1" && o.bind != "localhost" && o.bind != "::1")
    std::cerr << "podnet serve: warning: listening on " << o.bind
              << ", not loopback: anyone who reaches this address can run studies\n";
  server.listen();
  return kExitOk;
}

}  // namespace

void add_serve_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<ServeOptions>();
  auto* serve = app.add_subcommand(
      "serve", "a local web dashboard: a page per study (design, bench, train, reliability, diagnose, jobs, inference, "
               "plan-upgrade) that runs it and draws the result; a compare page");
  serve->add_option("--bind", o->bind, "address to listen on (loopback unless told otherwise)")->capture_default_str();
  serve->add_option("--port", o->port, "TCP port (0: any free port, printed at start)")->capture_default_str();
  serve->add_option("--max-runs", o->max_running, "studies running at once (more are answered 429)")
      ->capture_default_str();
  serve->add_option("--time-limit", o->time_limit_s, "seconds after which a study is stopped")->capture_default_str();
  serve->footer("Examples:\n  podnet serve            # then open http://127.0.0.1:8080/\n  podnet serve --port 0");
  serve->callback([&action, o] { action = [o] { return cmd_serve(*o); }; });
}

}  // namespace podnet::cli
