// etcd_log_perf: what the operation log in etcd (durability/etcd_log.h) costs
// against the file log with sync "always", and what it holds in etcd. It
// starts a one-member etcd of its own (Debian's /usr/bin/etcd, its data dir
// under --dir). Figures only; it asserts nothing.
//
//   etcd_log_perf [--seconds S] [--records N] [--dir DIR] [--in-flight K]
//                 [--txn-delay-us D]
//
// 1. Append+WaitDurable per second from 1, 8 and 32 threads for S seconds
//    (default 3) each, on the etcd log (K batches in flight at most; default
//    EtcdLogOptions') and on a FileOperationLog with sync_interval_ms 0 in
//    DIR, side by side, with the ratio, the records per transaction (etcd) or
//    per sync (file) and a transaction's mean time, sent to answered. The
//    record is a typical kPutEnded: a page key, one replica, a parent key.
//    With D, each transaction waits D us before it is sent (the log's
//    before_txn): a model of an etcd a network hop away, where a
//    transaction's time is mostly the round trip, not etcd's own work.
// 2. etcd's size: its db (MemberStatus's dbSize and dbSizeInUse) before and
//    after N more records (default 200000), per million records; then after
//    TruncateBefore(end) and a physical compaction; then after a second round
//    two more rounds of N records, each trimmed and compacted the same way
//    (the steady state: the freed pages are used again, so the file stops
//    growing; only etcd's defrag would shrink it).
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "durability/etcd_log.h"
#include "durability/file_log.h"
#include "etcd/cluster_keys.h"
#include "integration/etcd_cluster.h"
#include "master/log_record.h"
#include "perf_util.h"

using namespace crescent;
namespace fs = std::filesystem;

namespace {

using namespace std::chrono_literals;

[[noreturn]] void Die(const std::string& what, const Status& s) {
  std::fprintf(stderr, "%s: %s\n", what.c_str(), s.ToString().c_str());
  std::exit(1);
}

std::string TypicalPutRecord(uint64_t i) {
  master::LogRecord r;
  r.type = master::LogRecordType::kPutEnded;
  r.key = perf::KeyOf(i);
  r.parent_key = perf::KeyOf(i - 1);
  r.size = 64 << 10;
  r.checksum = i * 0x9E3779B97F4A7C15ull;
  r.replicas.push_back({.segment = 1, .alloc_node = 7, .alloc_generation = 1, .offset = i << 16});
  return master::EncodeLogRecord(r);
}

struct Rate {
  double per_second = 0;
  uint64_t records = 0;
};

// Append+WaitDurable from `threads` threads for `seconds`.
Rate Measure(master::OperationLog& log, int threads, double seconds) {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> done{0};
  std::vector<std::thread> pool;
  const double start = perf::Now();
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (uint64_t i = t * 1'000'000'000ull; !stop.load(std::memory_order_relaxed); ++i) {
        StatusOr<uint64_t> end = log.Append(TypicalPutRecord(i));
        if (!end.ok()) Die("append", end.status());
        if (Status s = log.WaitDurable(*end); !s.ok()) Die("wait", s);
        done.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : pool) t.join();
  return {static_cast<double>(done.load()) / (perf::Now() - start), done.load()};
}

struct DbSize {
  int64_t total = 0;
  int64_t in_use = 0;
};

// etcd commits its backend every 100 ms, and bolt counts the pages a
// compaction freed as free only once a later write began: two small writes
// (outside the log) and pauses first.
DbSize Db(etcd::EtcdClient& etcd) {
  for (int i = 0; i < 2; ++i) {
    etcdserverpb::PutRequest touch;
    touch.set_key("/etcd_log_perf/touch");
    touch.set_value(std::to_string(i));
    if (auto r = etcd.Put(touch); !r.ok()) Die("etcd put", r.status());
    std::this_thread::sleep_for(1s);
  }
  StatusOr<etcdserverpb::StatusResponse> s = etcd.MemberStatus();
  if (!s.ok()) Die("etcd status", s.status());
  return {s->dbsize(), s->dbsizeinuse()};
}

void PrintDb(const char* what, const DbSize& d) {
  std::printf("  %-44s db %8.1f MiB, in use %8.1f MiB\n", what, d.total / 1048576.0,
              d.in_use / 1048576.0);
}

// N records from 32 threads, without waiting for each (as a busy master).
void Fill(durability::EtcdOperationLog& log, uint64_t n) {
  std::vector<std::thread> pool;
  for (uint64_t t = 0; t < 32; ++t) {
    pool.emplace_back([&, t] {
      for (uint64_t i = t; i < n; i += 32) {
        if (StatusOr<uint64_t> end = log.Append(TypicalPutRecord(i)); !end.ok()) {
          Die("append", end.status());
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  if (Status s = log.WaitDurable(log.end_position()); !s.ok()) Die("wait", s);
}

void TrimAndCompact(durability::EtcdOperationLog& log, etcd::EtcdClient& etcd) {
  if (Status s = log.TruncateBefore(log.end_position()); !s.ok()) Die("trim", s);
  StatusOr<etcdserverpb::StatusResponse> now = etcd.MemberStatus();
  if (!now.ok()) Die("etcd status", now.status());
  if (Status s = etcd.Compact(now->header().revision(), true); !s.ok()) Die("compact", s);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3;
  uint64_t records = 200'000;
  int in_flight = durability::EtcdLogOptions().max_in_flight;
  int delay_us = 0;
  std::string dir = fs::temp_directory_path() / ("etcd_log_perf." + std::to_string(getpid()));
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--seconds"))
      seconds = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--records"))
      records = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--dir"))
      dir = argv[i + 1];
    else if (!std::strcmp(argv[i], "--in-flight"))
      in_flight = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--txn-delay-us"))
      delay_us = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr,
                   "usage: etcd_log_perf [--seconds S] [--records N] [--dir DIR] "
                   "[--in-flight K] [--txn-delay-us D]\n");
      return 2;
    }
  }
  fs::create_directories(dir);
  itest::EtcdCluster cluster;
  std::string why;
  if (!cluster.Start(1, dir, &why)) Die("etcd", Status(ErrorCode::kUnavailable, why));
  auto client = etcd::EtcdClient::Create({{cluster.endpoint(0)}, 10s});
  if (!client.ok()) Die("etcd client", client.status());
  std::shared_ptr<etcd::EtcdClient> etcd(std::move(client.value()));
  auto leader = etcd::Leadership::Campaign(etcd, {etcd::LeaderKey("perf"), "perf", 2000ms},
                                           etcd::Clock::now() + 30s);
  if (!leader.ok()) Die("campaign", leader.status());
  durability::EtcdLogOptions o{.etcd = etcd,
                               .leadership = std::shared_ptr<etcd::Leadership>(std::move(*leader)),
                               .cluster = "perf",
                               .max_in_flight = in_flight};
  if (delay_us > 0) {
    o.before_txn = [delay_us](uint64_t) {
      std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    };
  }
  auto opened = durability::EtcdOperationLog::Open(o);
  if (!opened.ok()) Die("open", opened.status());
  durability::EtcdOperationLog& log = **opened;
  std::printf("record: a kPutEnded of %zu bytes (+%" PRIu64 " of frame); etcd data in %s\n",
              TypicalPutRecord(1).size(), durability::kFrameBytes, dir.c_str());

  std::printf(
      "\n1. Append+WaitDurable per second, %.0f s each, %d batches in flight at most%s\n", seconds,
      in_flight,
      delay_us > 0 ? (", each transaction " + std::to_string(delay_us) + " us later").c_str() : "");
  std::printf("  %7s %12s %10s %8s %12s %10s %7s\n", "threads", "etcd/s", "rec/txn", "txn ms",
              "file/s", "rec/sync", "ratio");
  for (int threads : {1, 8, 32}) {
    const uint64_t txns = log.Stats().txns;
    const metrics::HistogramSnapshot latency = log.CommitLatency();
    const Rate e = Measure(log, threads, seconds);
    const metrics::HistogramSnapshot latency_after = log.CommitLatency();
    const double txn_ms = static_cast<double>(latency_after.sum - latency.sum) / 1e6 /
                          std::max<uint64_t>(1, latency_after.count - latency.count);
    const std::string file_dir = dir + "/file-log-" + std::to_string(threads);
    std::vector<std::string> warnings;
    auto file =
        durability::FileOperationLog::Open({.dir = file_dir, .sync_interval_ms = 0}, &warnings);
    if (!file.ok()) Die("file log", file.status());
    const Rate f = Measure(**file, threads, seconds);
    const uint64_t syncs = (*file)->Stats().syncs;
    std::printf("  %7d %12.0f %10.1f %8.2f %12.0f %10.1f %7.2f\n", threads, e.per_second,
                static_cast<double>(e.records) / std::max<uint64_t>(1, log.Stats().txns - txns),
                txn_ms, f.per_second, static_cast<double>(f.records) / std::max<uint64_t>(1, syncs),
                e.per_second / f.per_second);
    file->reset();
    fs::remove_all(file_dir);
  }

  const durability::EtcdLogStats stats = log.Stats();
  std::printf("  (etcd: at most %" PRIu64 " batches were in flight at once; %" PRIu64
              " arrived before their predecessor and were sent again)\n",
              stats.max_in_flight, stats.reordered);

  std::printf("\n2. etcd's size, %" PRIu64 " records a round\n", records);
  TrimAndCompact(log, *etcd);  // from what part 1 left
  const DbSize base = Db(*etcd);
  PrintDb("start (part 1's records trimmed, compacted)", base);
  Fill(log, records);
  const DbSize full = Db(*etcd);
  PrintDb("after the records", full);
  std::printf("  %-44s %8.1f MiB per million records (the db file's growth)\n", "",
              (full.total - base.total) / 1048576.0 * 1e6 / records);
  std::printf("  %-44s %8.1f MiB per million records (in use)\n", "",
              (full.in_use - base.in_use) / 1048576.0 * 1e6 / records);
  TrimAndCompact(log, *etcd);
  PrintDb("trimmed and compacted", Db(*etcd));
  for (int round = 2; round <= 3; ++round) {
    Fill(log, records);
    PrintDb(("round " + std::to_string(round)).c_str(), Db(*etcd));
    TrimAndCompact(log, *etcd);
    PrintDb("trimmed and compacted", Db(*etcd));
  }
  std::printf("  (the db file shrinks only by etcd's defrag; its free pages are used again)\n");
  opened->reset();
  fs::remove_all(dir);
  return 0;
}
