#include "integration/cluster.h"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <optional>
#include <random>
#include <regex>
#include <thread>

#include "integration/raw_socket.h"

namespace crescent::itest {
namespace {

// "crescent master: master (gRPC) listening on 127.0.0.1:PORT, ..."
const std::regex kMasterLine(R"(listening on ([0-9.]+):([0-9]+))");
// "crescent store: store node ID: segment NAME (SIZE) at ENDPOINT"
const std::regex kStoreLine(R"(store node (\S+): segment (\S+) \(.*\) at (([0-9.]+):([0-9]+)\S*))");

std::string Tail(const std::string& text, size_t n) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

testing::AssertionResult NotReady(const std::string& what, Process& p) {
  return testing::AssertionFailure()
         << what << " did not become ready; its log (" << p.log_path() << "):\n"
         << Tail(p.Output(), 4000);
}

}  // namespace

std::vector<std::byte> RandomBytes(size_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> out(size);
  size_t i = 0;
  for (; i + 4 <= size; i += 4) {
    uint32_t v = rng();
    std::memcpy(out.data() + i, &v, 4);
  }
  for (; i < size; ++i) out[i] = static_cast<std::byte>(rng());
  return out;
}

std::string RandomString(size_t size, uint32_t seed) {
  std::vector<std::byte> b = RandomBytes(size, seed);
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

testing::AssertionResult StartServe(TempDir& dir, const std::vector<std::string>& extra,
                                    ServeProcess* out) {
  std::optional<std::vector<std::string>> m;
  for (int attempt = 0; attempt < 5; ++attempt) {
    out->http_port = PickFreePort();
    if (out->http_port == 0) return testing::AssertionFailure() << "no free port";
    std::vector<std::string> argv{CrescentBin(), "serve",       "--port",
                                  "0",           "--http-port", std::to_string(out->http_port)};
    if (std::find(extra.begin(), extra.end(), "--segment-size") == extra.end()) {
      argv.insert(argv.end(), {"--segment-size", "64MiB"});
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    out->proc = std::make_unique<Process>(argv, dir.File("serve.log"));
    if (!out->proc->started()) return testing::AssertionFailure() << "serve did not start";
    m = out->proc->WaitForMatch(std::regex(R"(listening on ([0-9.]+:[0-9]+))"), kStartTimeout);
    if (out->proc->WaitForLine("ready", kStartTimeout)) break;
    // Not ready: it exited (or is about to). Its last words reach the log
    // only as it ends, so wait for that before reading why.
    (void)out->proc->Wait(kStartTimeout);
    if (out->proc->Output().find("admin HTTP cannot listen") == std::string::npos) break;
    m.reset();
  }
  if (!m.has_value() || !out->proc->WaitForLine("ready", kStartTimeout)) {
    return testing::AssertionFailure() << "serve is not ready:\n" << out->proc->Output();
  }
  out->master = (*m)[1];
  return testing::AssertionSuccess();
}

CommandResult RunCrescent(const std::vector<std::string>& args, const std::string& scratch_dir,
                          const std::string& stdin_data) {
  std::vector<std::string> argv = {CrescentBin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, stdin_data, scratch_dir, milliseconds(60000));
}

Cluster::Cluster(ClusterOptions options) : options_(std::move(options)) {
  secret_file_ = dir_.File("secret");
  WriteFile(secret_file_, "integration-test-secret-0123456789abcdef\n");
}

Cluster::~Cluster() {
  const testing::TestInfo* info = testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr || !info->result()->Failed()) return;
  dir_.keep();
  std::cerr << "---- cluster logs kept in " << dir_.path() << "\n";
  if (master_) std::cerr << "---- master:\n" << Tail(master_->Output(), 3000) << "\n";
  for (size_t i = 0; i < stores_.size(); ++i) {
    std::cerr << "---- store " << i << ":\n" << Tail(stores_[i].proc->Output(), 3000) << "\n";
  }
}

testing::AssertionResult Cluster::Start() {
  if (auto r = StartMaster(); !r) return r;
  for (int i = 0; i < options_.stores; ++i) {
    if (auto r = AddStore(); !r) return r;
  }
  return testing::AssertionSuccess();
}

testing::AssertionResult Cluster::StartMaster(uint16_t port) {
  std::vector<std::string> argv = {CrescentBin(),
                                   "master",
                                   "--host",
                                   "127.0.0.1",
                                   "--port",
                                   std::to_string(port),
                                   "--http-port",
                                   "0",
                                   "--secret-file",
                                   secret_file_,
                                   "--heartbeat-ttl-ms",
                                   std::to_string(options_.heartbeat_ttl_ms)};
  argv.insert(argv.end(), options_.master_flags.begin(), options_.master_flags.end());
  master_.reset();  // reaps a previous master, if any
  master_ =
      std::make_unique<Process>(argv, dir_.File("master" + std::to_string(++spawned_) + ".log"));
  if (!master_->started()) return testing::AssertionFailure() << "cannot spawn the master";
  auto m = master_->WaitForMatch(kMasterLine, kStartTimeout);
  if (!m || !master_->WaitForLine("ready", kStartTimeout)) return NotReady("master", *master_);
  master_address_ = (*m)[1] + ":" + (*m)[2];
  master_port_ = static_cast<uint16_t>(std::stoi((*m)[2]));
  if (master_port_ == 0) {
    return testing::AssertionFailure() << "master printed port 0: " << master_->Output();
  }
  return testing::AssertionSuccess();
}

testing::AssertionResult Cluster::AddStore(const std::vector<std::string>& extra_flags,
                                           const std::vector<std::string>& env) {
  std::vector<std::string> argv = {CrescentBin(),
                                   "store",
                                   "--master",
                                   master_address_,
                                   "--secret-file",
                                   secret_file_,
                                   "--segment-size",
                                   options_.segment_size,
                                   "--heartbeat-interval-ms",
                                   std::to_string(options_.heartbeat_interval_ms)};
  if (!options_.store_shm) argv.push_back("--no-shm");
  argv.insert(argv.end(), options_.store_flags.begin(), options_.store_flags.end());
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  if (!env.empty()) {
    argv.insert(argv.begin(), env.begin(), env.end());
    argv.insert(argv.begin(), "/usr/bin/env");
  }
  StoreProcess s;
  s.proc =
      std::make_unique<Process>(argv, dir_.File("store" + std::to_string(++spawned_) + ".log"));
  if (!s.proc->started()) return testing::AssertionFailure() << "cannot spawn a store node";
  auto m = s.proc->WaitForMatch(kStoreLine, kStartTimeout);
  if (!m || !s.proc->WaitForLine("ready", kStartTimeout)) return NotReady("store node", *s.proc);
  s.node_id = (*m)[1];
  s.segment = (*m)[2];
  s.endpoint = (*m)[3];
  s.host = (*m)[4];
  s.data_port = static_cast<uint16_t>(std::stoi((*m)[5]));
  stores_.push_back(std::move(s));
  return testing::AssertionSuccess();
}

ClientConfig Cluster::ClientConfigFor(bool use_shm) const {
  ClientConfig c;
  c.master_address = master_address_;
  c.use_shared_memory = use_shm;
  // Bounded but generous: a loaded 2-core CI box must not turn into flakes.
  c.rpc_timeout_ms = 5000;
  c.transfer_timeout_ms = 10000;
  return c;
}

std::unique_ptr<Client> Cluster::Connect(bool use_shm) const {
  auto c = Client::Connect(ClientConfigFor(use_shm));
  if (!c.ok()) {
    ADD_FAILURE() << "Client::Connect: " << c.status().ToString();
    return nullptr;
  }
  return std::move(c.value());
}

testing::AssertionResult Cluster::WaitForSegments(Client& client, size_t n,
                                                  milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last;
  while (true) {
    StatusOr<ClusterStat> st = client.Stat();
    if (st.ok() && st.value().segments.size() == n) return testing::AssertionSuccess();
    last =
        st.ok() ? std::to_string(st.value().segments.size()) + " segments" : st.status().ToString();
    if (std::chrono::steady_clock::now() >= deadline) {
      return testing::AssertionFailure()
             << "wanted " << n << " segments within " << timeout.count() << " ms; last: " << last;
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
}

testing::AssertionResult WaitForVerified(Client& client, milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last;
  while (true) {
    StatusOr<ClusterStat> st = client.Stat();
    if (st.ok()) {
      auto it = st.value().counters.find("crescent_pmem_verifications_pending");
      const uint64_t pending = it == st.value().counters.end() ? 0 : it->second;
      if (pending == 0) return testing::AssertionSuccess();
      last = std::to_string(pending) + " pending";
    } else {
      last = st.status().ToString();
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return testing::AssertionFailure()
             << "verifications not settled within " << timeout.count() << " ms; last: " << last;
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
}

}  // namespace crescent::itest
