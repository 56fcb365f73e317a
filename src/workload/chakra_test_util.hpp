// A small Chakra trace writer for the tests (header-only, tests only): nodes
// built with podnet's schema (chakra_et.proto) and written as Chakra frames
// them - GlobalMetadata, then each Node, every message preceded by its length
// as a varint - by protobuf's own delimited writer
// (google/protobuf/util/delimited_message_util.h), not by podnet's reader code.
#pragma once

#include <google/protobuf/util/delimited_message_util.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "workload/chakra_et.pb.h"

namespace podnet::workload::chakra::testing {

using NodeMsg = podnet::chakra_et::Node;

inline void int_attr(NodeMsg& n, const std::string& name, int64_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}

inline NodeMsg comp(uint64_t id, uint64_t micros, std::initializer_list<uint64_t> data_deps = {},
                    std::initializer_list<uint64_t> ctrl_deps = {}) {
  NodeMsg n;
  n.set_id(id);
  n.set_name("comp" + std::to_string(id));
  n.set_type(4);  // COMP_NODE
  n.set_duration_micros(micros);
  for (auto d : data_deps) n.add_data_deps(d);
  for (auto d : ctrl_deps) n.add_ctrl_deps(d);
  return n;
}

// comm_type: Chakra's CollectiveCommType (0 all-reduce, 2 all-gather, 6 all-to-all, 7 reduce-scatter, ...).
inline NodeMsg coll(uint64_t id, int64_t comm_type, int64_t bytes, std::initializer_list<uint64_t> data_deps = {},
                    const std::string& pg = "") {
  NodeMsg n;
  n.set_id(id);
  n.set_name("coll" + std::to_string(id));
  n.set_type(7);  // COMM_COLL_NODE
  for (auto d : data_deps) n.add_data_deps(d);
  int_attr(n, "comm_type", comm_type);
  int_attr(n, "comm_size", bytes);
  if (!pg.empty()) {
    auto* a = n.add_attr();
    a->set_name("pg_name");
    a->set_string_val(pg);
  }
  return n;
}

inline NodeMsg send(uint64_t id, int64_t dst, int64_t bytes, std::initializer_list<uint64_t> data_deps = {},
                    int64_t tag = 0) {
  NodeMsg n;
  n.set_id(id);
  n.set_name("send" + std::to_string(id));
  n.set_type(5);  // COMM_SEND_NODE
  for (auto d : data_deps) n.add_data_deps(d);
  int_attr(n, "comm_dst", dst);
  int_attr(n, "comm_size", bytes);
  int_attr(n, "comm_tag", tag);
  return n;
}

inline NodeMsg recv(uint64_t id, int64_t src, int64_t bytes, std::initializer_list<uint64_t> data_deps = {},
                    int64_t tag = 0) {
  NodeMsg n;
  n.set_id(id);
  n.set_name("recv" + std::to_string(id));
  n.set_type(6);  // COMM_RECV_NODE
  for (auto d : data_deps) n.add_data_deps(d);
  int_attr(n, "comm_src", src);
  int_attr(n, "comm_size", bytes);
  int_attr(n, "comm_tag", tag);
  return n;
}

// One rank's file as bytes.
inline std::string encode(const std::vector<NodeMsg>& nodes, const std::string& version = "0.0.4") {
  std::ostringstream out;
  podnet::chakra_et::GlobalMetadata meta;
  meta.set_version(version);
  google::protobuf::util::SerializeDelimitedToOstream(meta, &out);
  for (const auto& n : nodes) google::protobuf::util::SerializeDelimitedToOstream(n, &out);
  return out.str();
}

// A fresh directory under the system's temporary directory with PREFIX.<rank>.et for each rank.
inline std::string write_dir(const std::string& name, const std::vector<std::vector<NodeMsg>>& ranks,
                             const std::string& prefix = "trace") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("podnet-chakra-test-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (size_t r = 0; r < ranks.size(); ++r) {
    std::ofstream out(dir / (prefix + "." + std::to_string(r) + ".et"), std::ios::binary);
    out << encode(ranks[r]);
  }
  return dir.string();
}

}  // namespace podnet::workload::chakra::testing
