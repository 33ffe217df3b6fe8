// tier_perf: the persistent tier's figures (docs/persistent-tier.md), each a
// ratio against a baseline measured in the same run.
//  1. Put and get throughput on a file-backed segment (a file in --dir, tmpfs
//     by default) against the same on the DRAM segment, over TCP and shared
//     memory: one client thread, `--objects` values of `--size` bytes, batch
//     calls of the registered-buffer API, median of `--reps`.
//  2. Demotion throughput (DRAM victims copied into the persistent tier by
//     their node, the replica switched) against a plain single-thread memcpy
//     of the same bytes in the same sizes, source and target warm.
//
//   build/bin/tier_perf --size 1MiB --objects 64 --reps 5 --dir /dev/shm
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "crescent/client.h"
#include "perf_util.h"
#include "server/local_cluster.h"
#include "transfer/pmem_file.h"

namespace crescent::perf {
namespace {

struct Flags {
  uint64_t size = 1 << 20;
  int objects = 64;
  int reps = 5;
  std::string dir = "/dev/shm";
};

std::string TierSegment(Client& client, const std::string& tier) {
  StatusOr<ClusterStat> st = client.Stat();
  if (!st.ok()) return "";
  for (const SegmentUsage& s : st->segments) {
    if (s.tier == tier) return s.name;
  }
  return "";
}

// GB/s of a batch put and a batch get of every object on `segment`.
std::pair<double, double> PutGet(Client& client, const std::string& segment, const Flags& f,
                                 std::vector<std::byte>& src, std::vector<std::byte>& dst) {
  std::vector<std::string> keys;
  std::vector<void*> sptr, dptr;
  std::vector<size_t> sizes;
  for (int i = 0; i < f.objects; ++i) {
    keys.push_back(KeyOf(static_cast<uint64_t>(i)));
    sptr.push_back(src.data() + static_cast<size_t>(i) * f.size);
    dptr.push_back(dst.data() + static_cast<size_t>(i) * f.size);
    sizes.push_back(f.size);
  }
  PutOptions o;
  o.preferred_segment = segment;
  const double bytes = static_cast<double>(f.size) * f.objects;
  const double t0 = Now();
  for (const Status& s : client.BatchPutFrom(keys, sptr, sizes, o)) {
    if (!s.ok()) std::fprintf(stderr, "put: %s\n", s.ToString().c_str());
  }
  const double t1 = Now();
  for (const auto& r : client.BatchGetInto(keys, dptr, sizes)) {
    if (!r.ok()) std::fprintf(stderr, "get: %s\n", r.status().ToString().c_str());
  }
  const double t2 = Now();
  for (const std::string& k : keys) (void)client.Remove(k, true);
  usleep(300'000);  // past the leases: the held space is released
  return {bytes / (t1 - t0) / 1e9, bytes / (t2 - t1) / 1e9};
}

int Run(const Flags& f) {
  namespace fs = std::filesystem;
  const std::string dir = f.dir + "/tier-perf-" + std::to_string(getpid());
  fs::create_directories(dir);
  const uint64_t total = f.size * static_cast<uint64_t>(f.objects);
  server::LocalClusterOptions o;
  o.store_nodes = 1;
  o.segment_size = total + total / 4 + (1 << 20);
  o.pmem_file_size = (o.segment_size + 4095) / 4096 * 4096 + transfer::PmemFile::kHeaderBytes;
  o.pmem_dir = dir;
  // Space of a removed object (and a demotion's source) is free moments later:
  // each rep reuses it.
  o.master.config.lease_ms = 200;
  o.master.config.capability_grace_ms = 0;
  auto cluster = server::LocalCluster::Start(o);
  if (!cluster.ok()) {
    std::fprintf(stderr, "cluster: %s\n", cluster.status().ToString().c_str());
    return 1;
  }
  (*cluster)->WaitPagesWarm();
  std::vector<std::byte> src(total), dst(total);
  for (size_t i = 0; i < total; ++i) src[i] = static_cast<std::byte>(i * 131 + 7);
  std::memset(dst.data(), 1, total);

  std::printf("tier_perf: %d objects of %llu bytes, %d reps (medians), file in %s\n", f.objects,
              static_cast<unsigned long long>(f.size), f.reps, f.dir.c_str());
  std::printf("%-6s %-5s %10s %10s\n", "path", "tier", "put GB/s", "get GB/s");
  for (bool shm : {false, true}) {
    ClientConfig cc;
    cc.master_address = (*cluster)->master_address();
    cc.use_shared_memory = shm;
    auto client = Client::Connect(cc);
    if (!client.ok()) return 1;
    (void)(*client)->RegisterBuffer(src.data(), src.size());
    (void)(*client)->RegisterBuffer(dst.data(), dst.size());
    double put[2], get[2];
    for (int t = 0; t < 2; ++t) {
      const std::string segment = TierSegment(**client, t == 0 ? "dram" : "pmem");
      std::vector<double> ps, gs;
      for (int r = 0; r < f.reps; ++r) {
        auto [p, g] = PutGet(**client, segment, f, src, dst);
        ps.push_back(p);
        gs.push_back(g);
      }
      put[t] = Median(ps);
      get[t] = Median(gs);
      std::printf("%-6s %-5s %10.2f %10.2f\n", shm ? "shm" : "tcp", t == 0 ? "dram" : "pmem",
                  put[t], get[t]);
    }
    std::printf("%-6s pmem/dram: put %.2fx, get %.2fx\n", shm ? "shm" : "tcp", put[1] / put[0],
                get[1] / get[0]);
  }

  // Demotion against memcpy, rep by rep.
  ClientConfig cc;
  cc.master_address = (*cluster)->master_address();
  auto client = Client::Connect(cc);
  if (!client.ok()) return 1;
  (void)(*client)->RegisterBuffer(src.data(), src.size());
  const std::string dram = TierSegment(**client, "dram");
  std::vector<double> demote, copy;
  master::MasterService& m = (*cluster)->master();
  for (int r = 0; r < f.reps; ++r) {
    std::vector<std::string> keys;
    std::vector<void*> ptrs;
    std::vector<size_t> sizes;
    for (int i = 0; i < f.objects; ++i) {
      keys.push_back("demote-" + std::to_string(r) + "-" + std::to_string(i));
      ptrs.push_back(src.data() + static_cast<size_t>(i) * f.size);
      sizes.push_back(f.size);
    }
    PutOptions po;
    po.preferred_segment = dram;
    for (const Status& s : (*client)->BatchPutFrom(keys, ptrs, sizes, po)) {
      if (!s.ok()) std::fprintf(stderr, "put: %s\n", s.ToString().c_str());
    }
    usleep(20'000);  // past the puts' leases
    const uint64_t before = m.counters().demoted_bytes.load();
    const double t0 = Now();
    m.EvictBytes(total);
    const double t1 = Now();
    const uint64_t moved = m.counters().demoted_bytes.load() - before;
    if (moved != total) {
      std::fprintf(stderr, "demoted %llu of %llu bytes\n", static_cast<unsigned long long>(moved),
                   static_cast<unsigned long long>(total));
    }
    demote.push_back(static_cast<double>(moved) / (t1 - t0) / 1e9);
    const double c0 = Now();
    for (int i = 0; i < f.objects; ++i) {
      std::memcpy(dst.data() + static_cast<size_t>(i) * f.size,
                  src.data() + static_cast<size_t>(i) * f.size, f.size);
    }
    const double c1 = Now();
    copy.push_back(static_cast<double>(total) / (c1 - c0) / 1e9);
    for (const std::string& k : keys) (void)(*client)->Remove(k, true);
    usleep(20'000);
  }
  const double d = Median(demote), c = Median(copy);
  std::printf("demotion %.2f GB/s, memcpy %.2f GB/s: %.2fx\n", d, c, d / c);
  client->reset();
  cluster->reset();
  fs::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace crescent::perf

int main(int argc, char** argv) {
  crescent::perf::Flags f;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--size") f.size = std::stoull(v);
    else if (k == "--objects") f.objects = std::stoi(v);
    else if (k == "--reps") f.reps = std::stoi(v);
    else if (k == "--dir") f.dir = v;
    else {
      std::fprintf(stderr, "usage: tier_perf [--size BYTES] [--objects N] [--reps N] [--dir D]\n");
      return 2;
    }
  }
  return crescent::perf::Run(f);
}
