// A study registered in the registry alone (report/studies.hpp), with no edit
// in cli/: `podnet sweep` and `podnet diff` offer it and its option, and
// `podnet serve` lists it in GET /api/studies and runs it. In-process (the
// registration lives in this test's process).
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/cli.hpp"
#include "cli/serve.hpp"
#include "cli/test_util.hpp"
#include "core/error.hpp"
#include "report/report.hpp"
#include "report/studies.hpp"

namespace podnet::cli {
namespace {

namespace fs = std::filesystem;

// "toy": the scenario's seed times --scale, on no Setup; its GPU count the fabric's.
void register_toy() {
  if (report::find_study("toy")) return;
  report::StudyDef d;
  d.name = "toy";
  d.description = "a test's study: seed x scale";
  report::StudyParam p;
  p.spec = {"scale", ParamType::Real, "2", "the factor"};
  d.params = {p};
  d.needs_setup = false;
  d.gpus_field = "toy.gpus";
  d.fields = {{"toy.gpus", "GPUs", "", 1, 0}, {"value", "seed x scale", "units", 1, 1, true}};
  d.run = [](const report::StudyRun& r) {
    report::StudyOutput o;
    o.document = report::new_document(report::context_of(*r.scenario, "toy"));
    o.document["toy"] = {{"gpus", r.scenario->build_topology().gpus.size()}};
    o.document["value"] = static_cast<double>(r.scenario->seed) * r.args->values.get_real("scale");
    return o;
  };
  report::register_study(std::move(d));
}

struct Captured {
  int status = 0;
  std::string out;
};

Captured podnet(std::vector<std::string> args) {
  args.insert(args.begin(), "podnet");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  auto* old_out = std::cout.rdbuf(out.rdbuf());
  auto* old_err = std::cerr.rdbuf(err.rdbuf());
  Captured c;
  c.status = run(static_cast<int>(argv.size()), argv.data());
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  c.out = out.str() + err.str();
  return c;
}

TEST(StudyRegistry, AStudyRegisteredOnlyThereSweepsAndDiffs) {
  register_toy();
  const fs::path dir = testing::temp_dir("podnet_registry_test");
  const std::string db = (dir / "toy.db").string();
  for (const char* s : {"", "-wal", "-shm"}) fs::remove(db + s);
  // Seeds 1 and 3 at scale 5: 5 and 15; leafspine-8k has 8,192 GPUs at both.
  Captured r =
      podnet({"sweep", "leafspine-8k", "--study", "toy", "--scale", "5", "--vary", "seed=1,3", "--results", db});
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("toy study, 2 points stored, 0 with an error"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("seed x scale (units)"), std::string::npos) << r.out;  // the field's label
  EXPECT_NE(r.out.find(" 15.0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("8,192"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
  // The GPU count varied by an axis that sizes the fabric: noted, naming it (a sizing sweep's point).
  const std::string db2 = (dir / "toy-gpus.db").string();
  for (const char* s : {"", "-wal", "-shm"}) fs::remove(db2 + s);
  r = podnet({"sweep", "leafspine-8k", "--study", "toy", "--vary", "topology.gpus=4096,8192", "--results", db2});
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("note: topology.gpus sets the job's GPU count (4,096 to 8,192 GPUs; column \"GPUs\", toy.gpus)"),
            std::string::npos)
      << r.out;
  // An option of another study is refused, naming whose it is.
  r = podnet({"sweep", "leafspine-8k", "--study", "toy", "--evaluate", "3", "--vary", "seed=1,3", "--results", db});
  EXPECT_EQ(r.status, kExitBadInput) << r.out;
  EXPECT_NE(r.out.find("--evaluate 3: not an option of the toy study (it is diagnose's)"), std::string::npos) << r.out;
  // diff: the study is a --study choice, its option applies to both sides.
  r = podnet({"diff", "leafspine-8k", "leafspine-8k", "--study", "toy", "--scale", "3", "--set-b", "seed=2"});
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("toy: 1 figure changed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on 8,192 GPUs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("6.0 units"), std::string::npos) << r.out;  // seed 2 x 3
  r = podnet({"diff", "leafspine-8k", "leafspine-8k", "--study", "toy,nope"});
  EXPECT_EQ(r.status, kExitBadInput) << r.out;
  EXPECT_NE(
      r.out.find(
          "--study nope: expected design, bench, train, reliability, diagnose, jobs, inference, plan-upgrade or toy"),
      std::string::npos)
      << r.out;
}

TEST(StudyRegistry, ServeListsAndRunsAStudyRegisteredOnlyThere) {
  register_toy();
  ServeOptions o;
  o.port = 0;
  o.threads = 2;
  Server server(o);
  const int port = server.bind();
  std::thread t([&] { server.listen(); });
  struct Join {  // stops and joins the server however the test ends
    Server& s;
    std::thread& t;
    ~Join() {
      s.stop();
      t.join();
    }
  } join{server, t};
  httplib::Client client("127.0.0.1", port);
  auto res = client.Get("/api/studies");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const nlohmann::json list = nlohmann::json::parse(res->body);
  std::vector<std::string> names;
  nlohmann::json toy;
  for (const auto& s : list["studies"]) {
    names.push_back(s["name"]);
    if (s["name"] == "toy") toy = s;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"design", "bench", "train", "reliability", "diagnose", "jobs", "inference",
                                             "plan-upgrade", "toy"}));
  ASSERT_TRUE(toy.is_object());
  EXPECT_EQ(toy["params"][0]["name"], "scale");
  EXPECT_EQ(toy["params"][0]["default"], "2");
  EXPECT_EQ(toy["fields"][1]["unit"], "units");
  // plan-upgrade's options set maintenance keys: each carries the key's default, which the page's empty field
  // shows ("scenario's; default spine"; it showed "scenario's" alone).
  for (const auto& s : list["studies"]) {
    if (s["name"] != "plan-upgrade") continue;
    std::map<std::string, std::string> defaults;
    for (const auto& p : s["params"]) defaults[p["name"]] = p.value("key_default", "");
    EXPECT_EQ(defaults["tier"], "spine");
    EXPECT_EQ(defaults["step_time"], "30min");
    EXPECT_EQ(defaults["runs"], "4");
  }
  // bench's parameters as the page reads them: one set of defaults.
  for (const auto& s : list["studies"]) {
    if (s["name"] != "bench") continue;
    for (const auto& p : s["params"]) {
      if (p["name"] == "min") {
        EXPECT_EQ(p["default"], "8B");
      }
    }
  }

  res = client.Post("/api/runs", R"({"study": "toy", "scenario": "leafspine-8k", "scale": 4, "sets": ["seed=3"]})",
                    "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 202) << res->body;
  const int id = nlohmann::json::parse(res->body)["id"];
  nlohmann::json result;
  for (int i = 0; i < 200; ++i) {
    res = client.Get("/api/runs/" + std::to_string(id) + "/result");
    if (res && res->status == 200) {
      result = nlohmann::json::parse(res->body);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(result.is_object()) << (res ? res->body : "no answer");
  EXPECT_EQ(result["kind"], "toy");
  EXPECT_DOUBLE_EQ(result["document"]["value"].get<double>(), 12.0);
  // Cancelling a run that has ended: 409, naming its state.
  res = client.Post("/api/runs/" + std::to_string(id) + "/cancel", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 409);
  EXPECT_NE(res->body.find("has already ended (done)"), std::string::npos) << res->body;
  // A field of another study is refused, listing the toy's.
  res = client.Post("/api/runs", R"({"study": "toy", "scenario": "leafspine-8k", "op": "allreduce"})",
                    "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("'op': not a field of a toy run; expected study, sets, yaml, file, scenario, scale"),
            std::string::npos)
      << res->body;
}

}  // namespace
}  // namespace podnet::cli
