// durability_perf: what the operation log and snapshots cost the master engine
// (in-process, docs/durability.md). Figures only; it asserts nothing.
//
//   durability_perf [--objects N] [--threads T] [--seconds S] [--dir DIR] [--keep 1]
//                   [--policy NAME] [--chain L]
//   durability_perf --restore-only 1 --dir DIR [--objects N] [--policy NAME]
//                   (N: a key to read back)
//
// --policy: the engines' eviction policy (default lru); --chain L: the N
// objects are put as chains of L pages (object i's parent is object i-1
// unless i is a multiple of L; 0, the default: no parents), so snapshots hold
// chain parents and a restore links them (with prefix-lru, learned or
// adaptive).
//
// 1. PutStart+PutEnd throughput from T threads for S seconds with the log
//    off, with --log-sync 10 and with always, each on a fresh engine; ratios
//    against "off" from the same run.
// 2. Fills an engine (log on, 10 ms) with N objects, then takes a snapshot
//    while one thread keeps doing PutStart+PutEnd+GetReplicaList: snapshot
//    time, file size, bytes per object, the longest engine lock it held, and
//    that thread's slowest operation during the snapshot against its slowest
//    in an equally long window without one, each with when it began, its
//    calls' shares, and the thread's page faults and context switches over it.
// 3. Reads the snapshot back (every block checked, every record decoded): the
//    part of a restore that is built so far.
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "durability/file_log.h"
#include "durability/restore.h"
#include "durability/snapshot_file.h"
#include "durability/snapshotter.h"
#include "master/master_service.h"
#include "perf_util.h"

using namespace crescent;
namespace fs = std::filesystem;

namespace {

using crescent::perf::KeyOf;
using crescent::perf::Now;

constexpr uint64_t kOwnerToken = 7;

struct Engine {
  std::unique_ptr<durability::FileOperationLog> log;
  std::unique_ptr<master::MasterService> master;
};

// sync_ms < 0: no log.
Engine MakeEngine(const std::string& dir, int64_t sync_ms, const std::string& policy) {
  Engine e;
  master::MasterConfig config;
  config.eviction_policy = policy;
  config.heartbeat_ttl_ms = 1'000'000'000;
  config.put_timeout_ms = 1'000'000'000;
  if (sync_ms >= 0) {
    fs::remove_all(dir);
    std::vector<std::string> warnings;
    durability::FileLogOptions o;
    o.dir = dir;
    o.sync_interval_ms = sync_ms;
    auto log = durability::FileOperationLog::Open(o, &warnings);
    if (!log.ok()) {
      std::fprintf(stderr, "%s\n", log.status().ToString().c_str());
      std::exit(1);
    }
    e.log = std::move(log).value();
  }
  auto m = master::MasterService::Create(config, SteadyClock::Instance(), e.log.get());
  e.master = std::move(m).value();
  (void)e.master->MountSegment(
      {"seg", uint64_t{1} << 42, "node", "127.0.0.1:7000", master::Tier::kDram, kOwnerToken});
  return e;
}

bool PutOne(master::MasterService& m, const std::string& key, const std::string& parent = "") {
  master::PutConfig pc;
  pc.parent_key = parent;
  auto g = m.PutStart(key, 4096, pc);
  return g.ok() && m.PutEnd(key, g->token, 1).ok();
}

double PutRate(master::MasterService& m, int threads, double seconds, uint64_t base) {
  std::atomic<uint64_t> ops{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> ts;
  const double t0 = Now();
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      uint64_t n = 0;
      for (uint64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        n += PutOne(m, KeyOf(base + i * threads + t)) ? 1 : 0;
      }
      ops.fetch_add(n);
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& th : ts) th.join();
  return static_cast<double>(ops.load()) / (Now() - t0);
}

// The slowest PutStart+PutEnd+GetReplicaList of one thread while `during`
// runs, with where its time went: each call's share, and the thread's page
// faults and context switches over it (getrusage RUSAGE_THREAD: voluntary
// switches are waits for a lock or the disk, involuntary ones the CPU taken).
struct SlowestOp {
  double total_ms = 0;
  double at_s = 0;  // when it began, in seconds from the window's start
  double put_start_ms = 0;
  double put_end_ms = 0;
  double get_ms = 0;
  long minor_faults = 0;
  long major_faults = 0;
  long voluntary_switches = 0;
  long involuntary_switches = 0;
};

SlowestOp SlowestOpDuring(master::MasterService& m, uint64_t base,
                          const std::function<void()>& during) {
  std::atomic<bool> stop{false};
  SlowestOp worst;
  const double start = Now();
  std::thread prober([&] {
    for (uint64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
      const std::string key = KeyOf(base + i);
      rusage u0{};
      ::getrusage(RUSAGE_THREAD, &u0);
      const double t0 = Now();
      auto g = m.PutStart(key, 4096, {});
      const double t1 = Now();
      if (g.ok()) (void)m.PutEnd(key, g->token, 1);
      const double t2 = Now();
      (void)m.GetReplicaList(key);
      const double t3 = Now();
      if ((t3 - t0) * 1000 <= worst.total_ms) continue;
      rusage u1{};
      ::getrusage(RUSAGE_THREAD, &u1);
      worst = {(t3 - t0) * 1000,
               t0 - start,
               (t1 - t0) * 1000,
               (t2 - t1) * 1000,
               (t3 - t2) * 1000,
               u1.ru_minflt - u0.ru_minflt,
               u1.ru_majflt - u0.ru_majflt,
               u1.ru_nvcsw - u0.ru_nvcsw,
               u1.ru_nivcsw - u0.ru_nivcsw};
    }
  });
  during();
  stop = true;
  prober.join();
  return worst;
}

std::string Describe(const SlowestOp& op) {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "%.2f ms at %.2f s (PutStart %.2f, PutEnd %.2f, GetReplicaList %.2f; %ld minor "
                "and %ld major faults, %ld voluntary and %ld involuntary switches)",
                op.total_ms, op.at_s, op.put_start_ms, op.put_end_ms, op.get_ms, op.minor_faults,
                op.major_faults, op.voluntary_switches, op.involuntary_switches);
  return buf;
}

// CPU seconds (user + system) of the whole process so far.
double CpuSeconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

// Restore: a new engine from the snapshot in `dir` and the log after it, as
// a restarted master does before it serves; then the node takes its segment
// back and the objects are readable.
int MeasureRestore(const std::string& dir, uint64_t objects, const std::string& policy) {
  const double t0 = Now();
  const double cpu0 = CpuSeconds();
  std::vector<std::string> warnings;
  durability::FileLogOptions lo;
  lo.dir = dir;
  lo.start_position = durability::LogStartForDir(dir);
  auto log = durability::FileOperationLog::Open(lo, &warnings);
  if (!log.ok()) {
    std::fprintf(stderr, "restore: %s\n", log.status().ToString().c_str());
    return 1;
  }
  master::MasterConfig config;
  config.heartbeat_ttl_ms = 1'000'000'000;
  config.eviction_policy = policy;
  auto restored = durability::RestoreMaster({dir, false, 1'000'000}, **log, [&] {
    return master::MasterService::Create(config, SteadyClock::Instance(), log->get());
  });
  if (!restored.ok()) {
    std::fprintf(stderr, "restore: %s\n", restored.status().ToString().c_str());
    return 1;
  }
  const double restore_s = Now() - t0;
  const double restore_cpu = CpuSeconds() - cpu0;
  master::PreviousMount prev{"127.0.0.1:7000", kOwnerToken};
  bool adopted = false;
  const double a0 = Now();
  (void)restored->master->MountSegment(
      {"seg", uint64_t{1} << 42, "node", "127.0.0.1:7000", master::Tier::kDram, kOwnerToken}, &prev,
      &adopted);
  const double adopt_ms = (Now() - a0) * 1000;
  const bool readable = restored->master->GetReplicaList(KeyOf(objects / 2)).ok();
  // The completion (policy fill, key indexes, Bloom filter) goes on while the
  // engine serves; the process waits for it here.
  const bool completed_at_serve = restored->master->RestoreCompleted();
  restored->master->AwaitRestoreCompleted();
  const double complete_s = Now() - t0;
  const double complete_cpu = CpuSeconds() - cpu0;
  std::printf("restore: %" PRIu64
              " objects in %.2f s to serve, %.2f s of CPU (%s); node took the segment "
              "back in %.2f ms%s\n",
              restored->summary.objects, restore_s, restore_cpu,
              durability::DescribeRestore(*restored).c_str(), adopt_ms,
              adopted && readable ? "" : " FAILED: not adopted or not readable");
  const master::MasterCounters& c = restored->master->counters();
  auto done_s = [&](const std::atomic<uint64_t>& us) {
    return static_cast<double>(us.load()) / 1e6;
  };
  std::printf(
      "restore: everything built (policy fill, key indexes, Bloom filter) %.2f s after "
      "the start, %.2f s of CPU%s; the completion's steps done after it began: allocators "
      "%.2f s, policies %.2f s | key indexes %.2f s, Bloom filter %.2f s\n",
      complete_s, complete_cpu, completed_at_serve ? " (already at serve)" : "",
      done_s(c.restore_allocators_done_us), done_s(c.restore_policies_done_us),
      done_s(c.restore_key_indexes_done_us), done_s(c.restore_bloom_done_us));
  return adopted && readable ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t objects = 1'000'000;
  int threads = 2;
  double seconds = 3;
  std::string dir = "/tmp/crescent_durability_perf_" + std::to_string(::getpid());
  bool keep = false;          // --keep 1: leave the data dir for --restore-only
  bool restore_only = false;  // --restore-only 1: only restore from --dir
  std::string policy = "lru";
  uint64_t chain = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--objects")) objects = std::stoull(argv[i + 1]);
    if (!std::strcmp(argv[i], "--threads")) threads = std::stoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--seconds")) seconds = std::stod(argv[i + 1]);
    if (!std::strcmp(argv[i], "--dir")) dir = argv[i + 1];
    if (!std::strcmp(argv[i], "--keep")) keep = std::strcmp(argv[i + 1], "0") != 0;
    if (!std::strcmp(argv[i], "--restore-only")) restore_only = std::strcmp(argv[i + 1], "0") != 0;
    if (!std::strcmp(argv[i], "--policy")) policy = argv[i + 1];
    if (!std::strcmp(argv[i], "--chain")) chain = std::stoull(argv[i + 1]);
  }
  if (restore_only) return MeasureRestore(dir, objects, policy);

  std::printf("PutStart+PutEnd, %d threads, %.1f s each\n", threads, seconds);
  double off = 0;
  for (int64_t sync : {int64_t{-1}, int64_t{10}, int64_t{0}}) {
    Engine e = MakeEngine(dir, sync, policy);
    const double rate = PutRate(*e.master, threads, seconds, 0);
    if (sync < 0) off = rate;
    const char* name = sync < 0 ? "log off" : sync == 0 ? "log always" : "log 10 ms";
    std::printf("  %-11s %10.0f puts/s  %.2fx\n", name, rate, rate / off);
  }

  Engine e = MakeEngine(dir, 10, policy);
  double t0 = Now();
  std::vector<std::thread> fill;
  for (int t = 0; t < threads; ++t) {
    fill.emplace_back([&, t] {
      for (uint64_t i = t; i < objects; i += threads) {
        PutOne(*e.master, KeyOf(i), chain != 0 && i % chain != 0 ? KeyOf(i - 1) : "");
      }
    });
  }
  for (auto& th : fill) th.join();
  std::printf("filled %" PRIu64 " objects in %.1f s\n", objects, Now() - t0);

  durability::Snapshotter snap(*e.master, e.log.get(), {dir, 2});
  StatusOr<durability::SnapshotInfo> info = Status::Ok();
  double snap_s = 0;
  const SlowestOp during = SlowestOpDuring(*e.master, objects, [&] {
    const double s0 = Now();
    info = snap.TakeNow();
    snap_s = Now() - s0;
  });
  if (!info.ok()) {
    std::fprintf(stderr, "snapshot: %s\n", info.status().ToString().c_str());
    return 1;
  }
  const SlowestOp quiet = SlowestOpDuring(*e.master, objects * 2, [&] {
    std::this_thread::sleep_for(std::chrono::duration<double>(snap_s));
  });
  const durability::SnapshotStats st = snap.Stats();
  std::printf("snapshot: %" PRIu64 " objects in %.2f s, %" PRIu64
              " bytes (%.1f B/object), "
              "longest engine lock %.2f ms (policy lock to copy the order: %.2f ms)\n",
              st.last_objects, snap_s, st.last_bytes,
              static_cast<double>(st.last_bytes) / static_cast<double>(st.last_objects),
              st.last_longest_lock_ms, st.last_order_lock_ms);
  std::printf(
      "slowest put+get of one thread: %.2fx during the snapshot against as long without one\n"
      "  during:  %s\n  without: %s\n",
      during.total_ms / quiet.total_ms, Describe(during).c_str(), Describe(quiet).c_str());

  t0 = Now();
  uint64_t records = 0;
  auto read = durability::ReadSnapshot(info->path, [&](master::LogRecord) {
    ++records;
    return Status::Ok();
  });
  std::printf("read back (check + decode): %" PRIu64 " records in %.2f s%s\n", records, Now() - t0,
              read.ok() ? "" : (" FAILED: " + read.status().ToString()).c_str());
  e.master.reset();
  e.log.reset();
  const int rc = MeasureRestore(dir, objects, policy);
  if (!keep) fs::remove_all(dir);
  return rc;
}
