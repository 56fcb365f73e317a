// The packet engine's ProbeSession (engine/packet_view.hpp): a PacketSim in probe mode.
#include "engine/packet/packet_backend.hpp"
#include "engine/packet/packet_sim.hpp"
#include "engine/packet_view.hpp"

namespace podnet::engine {

namespace {

class PacketProbeSession final : public ProbeSession {
 public:
  PacketProbeSession(const topology::Topology& t, const NetworkOptions& net)
      : sim_(t, net, packet::default_packet_options(net)) {}
  int32_t add_path(const std::vector<routing::DirLink>& fwd, const std::vector<routing::DirLink>& back,
                   int32_t wire_bytes) override {
    return sim_.add_probe_path(fwd, back, wire_bytes);
  }
  void add_timer(Time at, uint64_t tag) override { sim_.add_timer(at, tag); }
  void send_probe(int32_t path) override { sim_.send_probe(path); }
  void run(const std::function<void(uint64_t tag)>& on_timer) override {
    sim_.run([&](const packet::SimEvent& e) {
      if (e.timer) on_timer(e.tag);
    });
  }
  const std::vector<ProbeRecord>& probes() const override { return sim_.probes(); }

 private:
  packet::PacketSim sim_;
};

}  // namespace

std::unique_ptr<ProbeSession> make_probe_session(const topology::Topology& t, const NetworkOptions& net) {
  return std::make_unique<PacketProbeSession>(t, net);
}

}  // namespace podnet::engine
