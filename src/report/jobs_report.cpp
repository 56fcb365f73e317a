#include "report/jobs_report.hpp"

#include <fmt/format.h>
#include <ostream>

#include "engine/backend.hpp"
#include "report/report.hpp"

namespace podnet::report {

nlohmann::json jobs_document(const scenario::Setup& s, const study::JobsStudy& st) {
  nlohmann::json doc = new_document(context_of(s.scenario, "train"));
  const auto ms = [](Time t) { return round_to(t.seconds() * 1e3, 6); };
  const auto gb = [](double b) { return round_to(b / 1e9, 6); };
  doc["engine"] = st.run.engine;
  doc["fabric_gpus"] = s.fabric.gpus.size();
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& j : st.jobs) {
    const cluster::JobOutcome& o = j.outcome;
    jobs.push_back({{"name", j.name},
                    {"model", j.job.model.name},
                    {"gpus", j.job.gpus()},
                    {"tp", j.job.tp},
                    {"cp", j.job.cp},
                    {"pp", j.job.pp},
                    {"dp", j.job.dp},
                    {"ep", j.job.ep},
                    {"global_batch", j.job.global_batch},
                    {"policy", j.policy},
                    {"first_gpu", j.gpus.empty() ? -1 : j.gpus.front()},
                    {"start_ms", ms(j.start)},
                    {"groups_spanned", j.groups_spanned},
                    {"cross_spine_fraction", round_to(j.placement.cross_spine_fraction(), 6)},
                    {"iteration_alone_ms", ms(o.alone)},
                    {"iteration_together_ms", ms(o.together)},
                    {"interference_ratio", round_to(o.ratio, 6)},
                    {"network_gbyte", gb(o.network_bytes)},
                    {"shared_gbyte", gb(o.shared_bytes)},
                    {"links", o.links},
                    {"shared_links", o.shared_links}});
  }
  doc["jobs"] = jobs;
  doc["fabric"] = {{"makespan_ms", ms(st.run.makespan)},
                   {"links_used", st.run.links_used},
                   {"shared_links", st.run.shared.size()},
                   {"flows", st.run.flows}};
  nlohmann::json shared = nlohmann::json::array();
  const auto listed = static_cast<size_t>(std::max(0, s.network.hottest_links));
  for (size_t k = 0; k < st.run.shared.size() && k < listed; ++k) {
    const cluster::SharedLink& l = st.run.shared[k];
    nlohmann::json per = nlohmann::json::object();
    for (size_t j = 0; j < st.jobs.size(); ++j)
      if (l.bytes[j] > 0) per[st.jobs[j].name] = gb(l.bytes[j]);
    shared.push_back(
        {{"link", engine::dir_link_name(s.fabric, l.link)}, {"total_gbyte", gb(l.total())}, {"gbyte_per_job", per}});
  }
  doc["shared_links"] = shared;
  const cluster::Fragmentation& f = st.fragmentation;
  doc["fragmentation"] = {{"groups", f.groups},
                          {"groups_full", f.groups_full},
                          {"groups_partial", f.groups_partial},
                          {"groups_empty", f.groups_empty},
                          {"free_gpus", f.free_gpus},
                          {"stranded_gpus", f.stranded_gpus}};
  return doc;
}

void write_jobs_table(const nlohmann::json& d, std::ostream& out) {
  const auto& jobs = d["jobs"];
  out << fmt::format("podnet train: {} jobs on one fabric ({} GPUs), {} engine\n\n", jobs.size(),
                     thousands(d["fabric_gpus"].get<int64_t>()), d["engine"].get<std::string>());
  Table t({"job", "model", "GPUs", "TP x PP x DP", "placed by", "groups", "start (ms)", "alone (ms)", "together (ms)",
           "ratio", "net GB", "shared GB", "shared links"});
  for (const auto& j : jobs)
    t.add({j["name"].get<std::string>(), j["model"].get<std::string>(), thousands(j["gpus"].get<int64_t>()),
           fmt::format("{} x {} x {}", j["tp"].get<int64_t>(), j["pp"].get<int64_t>(), j["dp"].get<int64_t>()),
           j["policy"].get<std::string>(), std::to_string(j["groups_spanned"].get<int64_t>()),
           fixed(j["start_ms"].get<double>(), 2), fixed(j["iteration_alone_ms"].get<double>(), 2),
           fixed(j["iteration_together_ms"].get<double>(), 2), fixed(j["interference_ratio"].get<double>(), 3) + "x",
           fixed(j["network_gbyte"].get<double>(), 1), fixed(j["shared_gbyte"].get<double>(), 1),
           fmt::format("{} of {}", thousands(j["shared_links"].get<int64_t>()), thousands(j["links"].get<int64_t>()))});
  t.write(out, "  ");
  const auto& fab = d["fabric"];
  out << fmt::format("\n  together: all jobs done at {} ms; {} directed links used, {} carry more than one job\n",
                     fixed(fab["makespan_ms"].get<double>(), 2), thousands(fab["links_used"].get<int64_t>()),
                     thousands(fab["shared_links"].get<int64_t>()));
  if (!d["shared_links"].empty()) {
    out << "\n  most loaded shared links (GB per job):\n";
    Table s({"link", "total GB", "per job"});
    for (const auto& l : d["shared_links"]) {
      std::string per;
      for (const auto& [name, v] : l["gbyte_per_job"].items())
        per += (per.empty() ? "" : ", ") + fmt::format("{} {}", name, fixed(v.get<double>(), 3));
      s.add({l["link"].get<std::string>(), fixed(l["total_gbyte"].get<double>(), 3), per});
    }
    s.write(out, "    ");
  }
  const auto& f = d["fragmentation"];
  out << fmt::format(
      "\n  aggregation groups: {} ({} full, {} partly used, {} empty); free GPUs {}, stranded in partly used groups "
      "{}\n",
      thousands(f["groups"].get<int64_t>()), thousands(f["groups_full"].get<int64_t>()),
      thousands(f["groups_partial"].get<int64_t>()), thousands(f["groups_empty"].get<int64_t>()),
      thousands(f["free_gpus"].get<int64_t>()), thousands(f["stranded_gpus"].get<int64_t>()));
}

}  // namespace podnet::report
