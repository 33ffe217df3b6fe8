// ha_failover_perf: what a `kill -9` of the leading master costs a client under
// a steady load (docs/ha.md, "Failures"). Real processes: a one-member etcd, two
// `crescent master --etcd` of one cluster on the same port (only the leader
// listens, so the client's one address follows the leader, as a virtual
// address would), and one store node. A client thread puts 4 KiB values one
// after another and, between puts, gets one put before; the main thread kills
// the leader --kills times (default 20), each after --settle seconds
// (default 1.5), and starts the killed one again as a standby.
//
// Per kill: the time from the kill to the first put that succeeds, and to the
// first get of an object acknowledged before the kill that succeeds. At the
// end every acknowledged put is read back and compared byte for byte: lost
// and mismatched objects are counted. Figures only; it asserts nothing.
//
// With --etcd-kill, etcd has three members and the kill is of one etcd
// member (the first endpoint, the one every process tries first), once: the
// time to the first put sent after it that succeeds.
//
//   ha_failover_perf [--kills N] [--settle S] [--etcd-kill]
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "crescent/client.h"
#include "integration/cluster.h"
#include "integration/etcd_cluster.h"
#include "integration/raw_socket.h"
#include "perf_util.h"

using namespace crescent;
using namespace crescent::itest;

namespace {

constexpr size_t kValueSize = 4096;

std::vector<std::byte> ValueOf(uint64_t i) {
  return RandomBytes(kValueSize, static_cast<uint32_t>(i));
}

// The client's successes, as times (perf::Now()).
struct Load {
  std::mutex mu;
  std::vector<double> acked_at;                    // index i: when put i was acknowledged (0: not)
  std::vector<std::pair<double, double>> puts_ok;  // (when, when it was sent)
  std::vector<std::pair<double, double>> gets_ok;  // (when, when the object was acknowledged)
  std::atomic<bool> stop{false};
};

void RunLoad(Client& client, Load& load) {
  std::mt19937_64 rng(7);
  for (uint64_t i = 0; !load.stop.load(); ++i) {
    const double sent = perf::Now();
    const Status put = client.Put("ha/" + std::to_string(i), ValueOf(i));
    const double now = perf::Now();
    std::lock_guard lock(load.mu);
    load.acked_at.push_back(put.ok() ? now : 0);
    if (put.ok()) load.puts_ok.emplace_back(now, sent);
    if (i == 0) continue;
    const uint64_t j = rng() % i;
    if (load.acked_at[j] == 0) continue;
    const double acked = load.acked_at[j];
    load.mu.unlock();
    auto got = client.Get("ha/" + std::to_string(j));
    load.mu.lock();
    if (got.ok() && *got == ValueOf(j)) load.gets_ok.emplace_back(perf::Now(), acked);
  }
}

// The first success after `t` (a put sent after `t`; or a get of an object
// acknowledged before `t`), as seconds after `t`; -1 if none yet.
double FirstAfter(Load& load, double t, bool get) {
  std::lock_guard lock(load.mu);
  const auto& v = get ? load.gets_ok : load.puts_ok;
  for (const auto& [when, other] : v) {
    if (get ? when > t && other < t : other > t) return when - t;
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  int kills = 20;
  double settle = 1.5;
  bool etcd_kill = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--etcd-kill")) etcd_kill = true;
    if (i + 1 >= argc) continue;
    if (!std::strcmp(argv[i], "--kills")) kills = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--settle")) settle = std::atof(argv[i + 1]);
  }
  TempDir dir;
  EtcdCluster etcd;
  std::string why;
  if (!etcd.Start(etcd_kill ? 3 : 1, dir.path(), &why)) {
    std::fprintf(stderr, "etcd: %s\n", why.c_str());
    return 1;
  }
  const std::string secret = dir.File("secret");
  WriteFile(secret, "ha-failover-perf-secret-0123456789abcdef\n");
  const uint16_t port = PickFreePort();
  int spawned = 0;
  auto start_master = [&] {
    return std::make_unique<Process>(
        std::vector<std::string>{CrescentBin(), "master", "--port", std::to_string(port),
                                 "--http-port", "0", "--secret-file", secret, "--etcd",
                                 etcd.endpoints(), "--cluster", "perf"},
        dir.File("master" + std::to_string(++spawned) + ".log"));
  };
  std::unique_ptr<Process> masters[2];
  masters[0] = start_master();
  if (!masters[0]->WaitForLine("ready", kStartTimeout)) {
    std::fprintf(stderr, "the first master did not lead:\n%s\n", masters[0]->Output().c_str());
    return 1;
  }
  masters[1] = start_master();
  masters[1]->WaitForLine("standby of cluster", kStartTimeout);
  Process store(
      {CrescentBin(), "store", "--master", "127.0.0.1:" + std::to_string(port), "--secret-file",
       secret, "--segment-size", "256MiB", "--http-port", "0", "--no-shm"},
      dir.File("store.log"));
  if (!store.WaitForLine("ready", kStartTimeout)) {
    std::fprintf(stderr, "the store node did not start:\n%s\n", store.Output().c_str());
    return 1;
  }
  ClientConfig config;
  config.master_address = "127.0.0.1:" + std::to_string(port);
  auto client = Client::Connect(config);
  if (!client.ok()) {
    std::fprintf(stderr, "client: %s\n", client.status().ToString().c_str());
    return 1;
  }
  Load load;
  std::thread loader([&] { RunLoad(**client, load); });
  std::vector<double> put_gaps, get_gaps;
  int leader = 0;
  if (etcd_kill) {
    std::this_thread::sleep_for(std::chrono::duration<double>(settle));
    const double t = perf::Now();
    etcd.Kill(0);
    double put_gap = -1;
    while (put_gap < 0 && perf::Now() < t + 60) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      put_gap = FirstAfter(load, t, false);
    }
    std::printf("etcd member killed: puts again after %.3f s\n", put_gap);
    kills = 0;
  }
  for (int k = 0; k < kills; ++k) {
    std::this_thread::sleep_for(std::chrono::duration<double>(settle));
    const double t = perf::Now();
    masters[leader]->Kill(SIGKILL);
    masters[leader]->Wait(kExitTimeout);
    double put_gap = -1, get_gap = -1;
    while ((put_gap < 0 || get_gap < 0) && perf::Now() < t + 60) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      put_gap = FirstAfter(load, t, false);
      get_gap = FirstAfter(load, t, true);
    }
    put_gaps.push_back(put_gap);
    get_gaps.push_back(get_gap);
    std::printf("kill %2d: puts again after %.2f s, gets after %.2f s\n", k + 1, put_gap, get_gap);
    if (getenv("HA_PERF_DEBUG")) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      auto stat = (*client)->Stat();
      if (stat.ok()) {
        std::printf("  objects %llu\n", static_cast<unsigned long long>(stat->objects));
        for (const auto& [name, v] : stat->counters) {
          if (v != 0 && (name.find("restore") != std::string::npos ||
                         name.find("drop") != std::string::npos)) {
            std::printf("  %s %llu\n", name.c_str(), static_cast<unsigned long long>(v));
          }
        }
      }
    }
    std::fflush(stdout);
    masters[leader] = start_master();  // the killed one, back as a standby
    masters[leader]->WaitForLine("standby of cluster", kStartTimeout);
    leader = 1 - leader;
  }
  load.stop = true;
  loader.join();
  uint64_t acked = 0, lost = 0, mismatched = 0;
  for (size_t i = 0; i < load.acked_at.size(); ++i) {
    if (load.acked_at[i] == 0) continue;
    ++acked;
    auto got = (*client)->Get("ha/" + std::to_string(i));
    if (!got.ok()) {
      if (lost < 3) std::printf("lost ha/%zu: %s\n", i, got.status().ToString().c_str());
      ++lost;
    } else if (*got != ValueOf(i)) {
      ++mismatched;
    }
  }
  auto worst = [](const std::vector<double>& v) {
    return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
  };
  if (kills > 0) {
    std::printf(
        "%d kills: puts succeed again after median %.2f s, worst %.2f s; gets of objects "
        "acknowledged before the kill after median %.2f s, worst %.2f s\n",
        kills, perf::Median(put_gaps), worst(put_gaps), perf::Median(get_gaps), worst(get_gaps));
  }
  if (lost + mismatched > 0) {
    dir.keep();
    std::printf("the processes' logs are kept in %s\n", dir.path().c_str());
  }
  std::printf("%llu puts acknowledged: %llu lost, %llu read back different\n",
              static_cast<unsigned long long>(acked), static_cast<unsigned long long>(lost),
              static_cast<unsigned long long>(mismatched));
  return 0;
}
