// rpc_metrics_perf: what the master's per-RPC metrics (rpc/server_metrics.h:
// a latency histogram per method, error counts, object sizes) cost in
// throughput, end to end over gRPC.
//
//   rpc_metrics_perf [--slices N] [--slice-ms MS] [--clients C] [--objects N] [--same 1]
//
// One engine, two gRPC servers in front of it: one records metrics, the other
// does not (MasterServerOptions::record_metrics). C client threads drive one
// server at a time for a slice, then the other, N times each, alternating, so
// that drift on a shared machine hits both alike. For each workload it prints
// calls/s with and without and their ratio (with / without), the CPU time per
// call of this process (clients and servers) with and without and its ratio,
// and the cost of recording one call measured alone, as a share of the CPU
// time of a call without recording (rec/call). Figures only; it
// asserts nothing. With --same 1 neither server records: the ratio of that
// A/A run is the noise floor of the machine it runs on.
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "master/master_service.h"
#include "metrics/histogram.h"
#include "perf_util.h"
#include "rpc/master_client.h"
#include "rpc/master_server.h"
#include "rpc/server_metrics.h"
#include "transfer/capability.h"

using namespace crescent;

namespace {

using crescent::perf::Now;

// CPU seconds this process has used (every thread: clients and servers).
double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Calls `call(client, i)` from every client thread for `ms`; returns calls made.
template <typename Fn>
uint64_t Slice(std::vector<std::unique_ptr<rpc::MasterClient>>& clients, int ms, Fn call) {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> calls{0};
  std::vector<std::thread> ts;
  for (size_t t = 0; t < clients.size(); ++t) {
    ts.emplace_back([&, t] {
      uint64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) call(*clients[t], n++);
      calls.fetch_add(n);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  stop = true;
  for (auto& th : ts) th.join();
  return calls.load();
}

}  // namespace

int main(int argc, char** argv) {
  int slices = 20, slice_ms = 250, clients_n = 2;
  bool same = false;  // --same 1: neither server records (an A/A run: the noise floor)
  uint64_t objects = 10000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--slices"))
      slices = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--slice-ms"))
      slice_ms = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--clients"))
      clients_n = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--same"))
      same = std::atoi(argv[i + 1]) != 0;
    else if (!std::strcmp(argv[i], "--objects"))
      objects = std::strtoull(argv[i + 1], nullptr, 10);
    else {
      std::fprintf(stderr,
                   "usage: rpc_metrics_perf [--slices N] [--slice-ms MS] [--clients C] "
                   "[--objects N] [--same 1]\n");
      return 2;
    }
  }
  if (slices < 1 || slice_ms < 1 || clients_n < 1 || objects < 128) {
    std::fprintf(stderr, "rpc_metrics_perf: every figure must be positive, --objects >= 128\n");
    return 2;
  }
  auto created = master::MasterService::Create(master::MasterConfig{});
  if (!created.ok()) return std::fprintf(stderr, "%s\n", created.status().ToString().c_str()), 2;
  master::MasterService& m = **created;
  (void)m.MountSegment({"seg", objects * 4096 * 2, "node", "127.0.0.1:9", master::Tier::kDram});
  std::vector<std::string> keys(objects);
  for (uint64_t i = 0; i < objects; ++i) {
    keys[i] = "key/" + std::to_string(i);
    auto p = m.PutStart(keys[i], 4096, {});
    if (!p.ok() || !m.PutEnd(keys[i], p->token).ok())
      return std::fprintf(stderr, "fill failed\n"), 2;
  }
  auto signer = transfer::CapabilitySigner::Create(transfer::RandomSecret());
  if (!signer.ok()) return 2;
  std::unique_ptr<rpc::MasterServer> servers[2];  // [0]: records, [1]: does not
  std::vector<std::unique_ptr<rpc::MasterClient>> clients[2];
  for (int s = 0; s < 2; ++s) {
    rpc::MasterServerOptions o;
    o.listen_address = "127.0.0.1:0";
    o.record_metrics = s == 0 && !same;
    auto server = rpc::MasterServer::Start(o, m, *signer);
    if (!server.ok()) return std::fprintf(stderr, "%s\n", server.status().ToString().c_str()), 2;
    servers[s] = std::move(server.value());
    for (int c = 0; c < clients_n; ++c) {
      rpc::MasterClientOptions co;
      co.address = "127.0.0.1:" + std::to_string(servers[s]->port());
      auto client = rpc::MasterClient::Create(co);
      if (!client.ok()) return std::fprintf(stderr, "%s\n", client.status().ToString().c_str()), 2;
      clients[s].push_back(std::move(client.value()));
    }
  }
  struct Workload {
    const char* name;
    std::function<void(rpc::MasterClient&, uint64_t)> call;
  };
  std::vector<std::string> batch(keys.begin(), keys.begin() + 128);
  const Workload workloads[] = {
      {"Exists", [&](rpc::MasterClient& c, uint64_t i) { (void)c.Exists(keys[i % objects]); }},
      {"Exists, miss", [&](rpc::MasterClient& c, uint64_t) { (void)c.Exists("absent"); }},
      {"BatchQueryPrefix(128)",
       [&](rpc::MasterClient& c, uint64_t) { (void)c.BatchQueryPrefix(batch); }},
  };
  // What the server adds per call, alone on one thread: two clock reads, one
  // histogram record and one error count (Call::Proceed).
  rpc::RpcServerMetrics alone;
  constexpr int kAlone = 2'000'000;
  const double a0 = Now();
  for (int i = 0; i < kAlone; ++i) {
    const auto start = std::chrono::steady_clock::now();
    alone.RecordError(rpc::RpcMethod::kExists, ErrorCode::kObjectNotFound);
    alone.RecordLatency(rpc::RpcMethod::kExists,
                        static_cast<uint64_t>((std::chrono::steady_clock::now() - start).count()));
  }
  const double record_ns = (Now() - a0) / kAlone * 1e9;
  std::printf("rpc_metrics_perf: %d client(s), %d slices of %d ms each way, alternating\n",
              clients_n, slices, slice_ms);
  std::printf("  recording one call alone: %.0f ns\n", record_ns);
  std::printf("  %-24s %12s %12s %8s %12s %12s %8s %10s\n", "workload", "with calls/s", "without",
              "ratio", "with CPU us", "without", "ratio", "rec/call");
  for (const Workload& w : workloads) {
    for (int s = 0; s < 2; ++s) Slice(clients[s], slice_ms, w.call);  // warm both
    uint64_t calls[2] = {0, 0};
    double secs[2] = {0, 0}, cpu[2] = {0, 0};
    for (int r = 0; r < slices; ++r) {
      for (int s = 0; s < 2; ++s) {
        const int which = (r % 2 == 0) ? s : 1 - s;  // ABBA: neither always goes first
        const double t0 = Now(), c0 = CpuSeconds();
        calls[which] += Slice(clients[which], slice_ms, w.call);
        secs[which] += Now() - t0;
        cpu[which] += CpuSeconds() - c0;
      }
    }
    const double with = calls[0] / secs[0], without = calls[1] / secs[1];
    // CPU per call (client and server together, both in this process).
    const double cpu_with = cpu[0] / calls[0] * 1e6, cpu_without = cpu[1] / calls[1] * 1e6;
    std::printf("  %-24s %12.0f %12.0f %8.4f %12.1f %12.1f %8.4f %9.2f%%\n", w.name, with, without,
                with / without, cpu_with, cpu_without, cpu_with / cpu_without,
                100 * record_ns / (cpu_without * 1e3));
  }
  return 0;
}
