// shm_get_perf: where a single same-host get's time goes, against a memcpy of
// the same bytes measured right before it (docs/control-plane.md, "Polling and
// the shared CPU"). One client thread, shared memory, an embedded one-node cluster.
//
// Each repetition copies every object once with glibc memcpy out of a region
// as large as the objects (cold in cache, pages touched before), then gets
// every object once into the same destination with GetInto. It also times
// one-key Exists calls (the control round trip alone). Figures are medians
// over the repetitions of per-call p50 and mean.
//
// --pin 1 puts the client thread on CPU 0 and every other thread (the
// master's, the store node's) on CPU 1, so that the client never shares a CPU
// with the master: what a get costs where the master runs beside it rather
// than on its CPU. --server-spin-us and --server-spin-max-us set the master's
// --control-spin-us and --control-spin-max-us.
//
//   build/bin/shm_get_perf --size 1048576 --objects 128 --reps 7 [--no-verify 1]
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "crescent/client.h"
#include "perf_util.h"
#include "server/local_cluster.h"
#include "transfer/copy_hash.h"

namespace crescent::perf {
namespace {

struct Flags {
  uint64_t size = 1 << 20;
  int objects = 128;
  int reps = 7;
  bool verify = true;
  int loops = 1;            // get phases per repetition (a longer run to profile)
  bool pin = false;         // the client thread on CPU 0, every other thread on CPU 1
  int server_spin_us = -1;      // the master's --control-spin-us (-1: its default)
  int server_spin_max_us = -1;  // the master's --control-spin-max-us (-1: its default)
};

struct Phase {
  std::vector<double> us;
  void Add(double s) { us.push_back(s * 1e6); }
  double P50() const { return Median(us); }
  double Mean() const {
    double t = 0;
    for (double u : us) t += u;
    return us.empty() ? 0 : t / static_cast<double>(us.size());
  }
};

int Run(const Flags& f) {
  const uint64_t total = f.size * static_cast<uint64_t>(f.objects);
  server::LocalClusterOptions o;
  o.store_nodes = 1;
  o.segment_size = total + total / 4 + (4 << 20);
  if (f.server_spin_us >= 0) o.master.rpc.control_spin_us = f.server_spin_us;
  if (f.server_spin_max_us >= 0) o.master.rpc.control_spin_max_us = f.server_spin_max_us;
  auto cluster = server::LocalCluster::Start(o);
  if (!cluster.ok()) {
    std::fprintf(stderr, "cluster: %s\n", cluster.status().ToString().c_str());
    return 1;
  }
  (*cluster)->WaitPagesWarm();
  ClientConfig cc;
  cc.master_address = (*cluster)->master_address();
  cc.use_shared_memory = true;
  cc.verify_checksums = f.verify;
  auto connected = Client::Connect(cc);
  if (!connected.ok()) {
    std::fprintf(stderr, "client: %s\n", connected.status().ToString().c_str());
    return 1;
  }
  Client& client = **connected;
  std::vector<std::byte> src(total), dst(f.size), region(total);
  for (size_t i = 0; i < total; ++i) src[i] = static_cast<std::byte>(i * 131 + 7);
  std::memset(dst.data(), 1, dst.size());
  std::memset(region.data(), 2, region.size());
  (void)client.RegisterBuffer(src.data(), src.size());
  (void)client.RegisterBuffer(dst.data(), dst.size());
  std::vector<std::string> keys;
  for (int i = 0; i < f.objects; ++i) {
    keys.push_back(KeyOf(static_cast<uint64_t>(i)));
    if (Status s = client.PutFrom(keys.back(), src.data() + size_t(i) * f.size, f.size); !s.ok()) {
      std::fprintf(stderr, "put: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  // Wait for the client's own mapping to be read once (first-touch traps).
  for (int i = 0; i < 12000; ++i) {
    const ClientCounters n = client.Counters();
    if (n.shm_warmed_bytes >= n.shm_mapped_bytes) break;
    usleep(10'000);
  }
  if (f.pin) {
    cpu_set_t one, other;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    CPU_ZERO(&other);
    CPU_SET(1, &other);
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
      const pid_t tid = std::stoi(e.path().filename().string());
      sched_setaffinity(tid, sizeof(cpu_set_t), tid == getpid() ? &one : &other);
    }
  }
  std::vector<double> get_p50, get_mean, copy_p50, copy_mean, hash_p50, exists_p50, ratio;
  uint64_t sink = 0;
  for (int r = 0; r < f.reps; ++r) {
    Phase copy, hashed, get, exists;
    for (int i = 0; i < f.objects; ++i) {
      const double t0 = Now();
      std::memcpy(dst.data(), region.data() + size_t(i) * f.size, f.size);
      asm volatile("" : : "r"(dst.data()) : "memory");
      copy.Add(Now() - t0);
    }
    // The copy a verified get makes, alone: the same cold source pattern.
    for (int i = 0; i < f.objects; ++i) {
      const double t0 = Now();
      sink += transfer::CopyAndHash(dst.data(), region.data() + size_t(i) * f.size, f.size);
      hashed.Add(Now() - t0);
    }
    for (int l = 0; l < f.loops; ++l) {
      for (int i = 0; i < f.objects; ++i) {
        const double t0 = Now();
        StatusOr<size_t> got = client.GetInto(keys[size_t(i)], dst.data(), dst.size());
        get.Add(Now() - t0);
        if (!got.ok() || *got != f.size) {
          std::fprintf(stderr, "get: %s\n", got.status().ToString().c_str());
          return 1;
        }
      }
    }
    for (int i = 0; i < f.objects; ++i) {
      const double t0 = Now();
      (void)client.Exists(keys[size_t(i)]);
      exists.Add(Now() - t0);
    }
    get_p50.push_back(get.P50());
    get_mean.push_back(get.Mean());
    copy_p50.push_back(copy.P50());
    copy_mean.push_back(copy.Mean());
    hash_p50.push_back(hashed.P50());
    exists_p50.push_back(exists.P50());
    ratio.push_back(copy.Mean() / get.Mean());
  }
  const ClientCounters n = client.Counters();
  std::printf("shm_get_perf: %d objects of %llu bytes, %d reps, verify %s\n", f.objects,
              static_cast<unsigned long long>(f.size), f.reps, f.verify ? "on" : "off");
  std::printf("get     p50 %8.1f us  mean %8.1f us\n", Median(get_p50), Median(get_mean));
  std::printf("memcpy  p50 %8.1f us  mean %8.1f us\n", Median(copy_p50), Median(copy_mean));
  std::printf("copy+hash alone p50 %8.1f us (the copy of a verified get)\n", Median(hash_p50));
  std::printf("exists  p50 %8.1f us\n", Median(exists_p50));
  std::printf("get / memcpy (GB/s, median of reps): %.2fx\n", Median(ratio));
  std::printf("copy ahead kept %llu, discarded %llu\n",
              static_cast<unsigned long long>(n.copy_ahead_kept),
              static_cast<unsigned long long>(n.copy_ahead_discarded));
  return sink == 42 ? 3 : 0;  // keeps the hashes
}

}  // namespace
}  // namespace crescent::perf

int main(int argc, char** argv) {
  crescent::perf::Flags f;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--size")
      f.size = std::stoull(v);
    else if (k == "--objects")
      f.objects = std::stoi(v);
    else if (k == "--reps")
      f.reps = std::stoi(v);
    else if (k == "--no-verify")
      f.verify = v == "0";
    else if (k == "--loops")
      f.loops = std::stoi(v);
    else if (k == "--pin")
      f.pin = v != "0";
    else if (k == "--server-spin-us")
      f.server_spin_us = std::stoi(v);
    else if (k == "--server-spin-max-us")
      f.server_spin_max_us = std::stoi(v);
    else {
      std::fprintf(stderr,
                   "usage: shm_get_perf [--size BYTES] [--objects N] [--reps N] [--no-verify 0|1] "
                   "[--loops N] [--pin 0|1] [--server-spin-us N] [--server-spin-max-us N]\n");
      return 2;
    }
  }
  return crescent::perf::Run(f);
}
