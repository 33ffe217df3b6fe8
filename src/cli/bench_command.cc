// `crescent bench`: throughput and latency of a Crescent cluster beside the
// physical references (loopback TCP, memcpy) and Redis, measured in one run.
//
//   crescent bench put-get   --size 64KiB,1MiB,4MiB --batch 16 --clients 1 --transport tcp|shm
//   crescent bench exists    --batch 1,16,128,1024 --miss 0,0.5,0.9 --clients 1
//   crescent bench prefix    (the exists calls as BatchQueryPrefix; same flags)
//   crescent bench prefix-get --size 4KiB,64KiB --pages 32 --transport tcp,shm
//                            (GetPrefixInto of a chain, location cache off vs on)
//   crescent bench baseline  --size ... --clients N
//   crescent bench floors    --size ...  (raw one-object put/get shapes, round trips)
//   crescent bench clients   --clients 1,4,16,64  (one process per client; bench_clients.cc)
//   crescent bench vs-redis  (put-get over tcp and shm, exists, and the same through Redis)
//   crescent bench [all]     (every one of the above, then the target checks)
//
// Each runs against `--master ADDR`, or starts an embedded cluster (a master and
// `--nodes` store nodes in this process, over real gRPC/TCP/shm). Tables go to
// stdout, `--json FILE` writes every figure, and a progress bar is drawn on
// stderr when it is a terminal. All the logic lives in src/bench.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "auth/token_file.h"
#include "bench/baseline.h"
#include "bench/crescent_backend.h"
#include "bench/driver.h"
#include "bench/prefix_get.h"
#include "bench/raw_shapes.h"
#include "bench/redis_backend.h"
#include "bench/round_trips.h"
#include "bench/suite.h"
#include "cli/bench_clients.h"
#include "cli/bench_multi_buffer.h"
#include "cli/cli_util.h"
#include "cli/client_flags.h"
#include "cli/command.h"
#include "cli/tls_flags.h"
#include "server/local_cluster.h"
#include "sim/progress.h"
#include "transfer/congestion.h"

namespace crescent::cli {
namespace {

struct BenchFlags {
  std::string json;
  std::string master;
  int nodes = 1;
  std::string segment_size;  // embedded; empty: sized to the workload
  int reps = 3;
  int clients = 1;
  bool quick = false;
  std::string bytes_per_client = "64MiB";
  std::string sizes = "64KiB,1MiB,4MiB";
  int batch = 16;  // put-get batch
  std::string exists_batches = "1,16,128,1024";
  std::string misses = "0,0.5,0.9";
  std::string transport = "tcp";
  int lanes = 4;
  std::string tcp_congestion;   // "": $CRESCENT_TCP_CONGESTION, else the system's
  bool no_verify = false;       // gets skip the checksum check (ClientConfig::verify_checksums)
  bool grpc_control = false;    // hot calls over gRPC (ClientConfig::lean_control off)
  size_t location_cache = 0;    // ClientConfig::location_cache (0: off)
  bool no_rpc_metrics = false;  // the embedded master times no RPC (MasterServerOptions)
  std::string redis_server = "redis-server";
  std::string prefix_sizes = "4KiB,64KiB";  // prefix-get: page sizes
  int pages = 32;                           // prefix-get: pages in the chain
  int calls = 200;                          // prefix-get: calls per side and repetition
  std::string prefix_transports = "tcp,shm";
  std::string token_file;  // with --master ("": $CRESCENT_TOKEN, else none)
  TlsConfig tls;           // with --master
};

enum class Mode { kPutGet, kExists, kPrefix, kPrefixGet, kBaseline, kFloors, kVsRedis, kAll };

class BenchError {
 public:
  explicit BenchError(std::string m) : message(std::move(m)) {}
  std::string message;
};

std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) throw BenchError("empty item in '" + list + "'");
    out.push_back(item);
  }
  if (out.empty()) throw BenchError("empty list");
  return out;
}

std::vector<uint64_t> ParseSizes(const std::string& list) {
  std::vector<uint64_t> out;
  for (const std::string& s : SplitList(list)) {
    StatusOr<uint64_t> v = ParseByteSize(s);
    if (!v.ok()) throw BenchError("--size: " + v.status().message());
    if (v.value() == 0) throw BenchError("--size: objects of 0 bytes cannot be stored");
    out.push_back(v.value());
  }
  return out;
}

std::vector<int> ParseInts(const std::string& list) {
  std::vector<int> out;
  for (const std::string& s : SplitList(list)) {
    size_t pos = 0;
    int v = 0;
    try {
      v = std::stoi(s, &pos);
    } catch (...) {
      pos = 0;
    }
    if (pos != s.size() || v < 1 || v > 100000) throw BenchError("bad batch size '" + s + "'");
    out.push_back(v);
  }
  return out;
}

std::vector<double> ParseMisses(const std::string& list) {
  std::vector<double> out;
  for (const std::string& s : SplitList(list)) {
    size_t pos = 0;
    double v = -1;
    try {
      v = std::stod(s, &pos);
    } catch (...) {
      pos = 0;
    }
    if (pos != s.size() || v < 0 || v > 1) throw BenchError("bad miss ratio '" + s + "'");
    out.push_back(v);
  }
  return out;
}

std::string CommandLine() {
  std::string out;
  for (const std::string& arg : OwnArguments()) out += (out.empty() ? "" : " ") + arg;
  return out;
}

template <typename T>
T Must(StatusOr<T> v, const std::string& what) {
  if (!v.ok()) throw BenchError(what + ": " + v.status().ToString());
  return std::move(v.value());
}

class Progress {
 public:
  explicit Progress(uint64_t total) : bar_(stderr, sim::StderrIsTerminal()), total_(total) {}
  void Step(const std::string& label) { bar_.Update(++done_, total_, label); }
  void Clear() { bar_.Clear(); }

 private:
  sim::ProgressBar bar_;
  uint64_t total_;
  uint64_t done_ = 0;
};

// An external cluster with less free space than the put-get phases hold at
// once evicts objects before they are read back: the gets then fail with
// OBJECT_NOT_FOUND. Say so before the run (the run still goes ahead: eviction
// may be what is being measured). Silent when the master cannot be asked; the
// phases report that themselves.
void WarnIfTooSmall(const std::string& master, const std::string& token, const TlsConfig& tls,
                    uint64_t need) {
  ClientConfig cc;
  cc.master_address = master;
  cc.token = token;
  cc.tls = tls;
  cc.rpc_attempts = 1;
  auto client = Client::Connect(cc);
  if (!client.ok()) return;
  StatusOr<ClusterStat> st = client.value()->Stat();
  if (!st.ok()) return;
  const uint64_t free =
      st->capacity_bytes > st->used_bytes ? st->capacity_bytes - st->used_bytes : 0;
  // Eviction starts near the high watermark (0.95 by default): keep a margin.
  if (need + need / 16 <= free) return;
  std::cerr << "crescent bench: warning: the put-get phases hold up to " << FormatBytes(need)
            << " at once, but the cluster has " << FormatBytes(free) << " free of "
            << FormatBytes(st->capacity_bytes)
            << "; eviction will remove objects before they are read back (their gets fail). "
               "Use a smaller --bytes-per-client or --size, or a larger cluster.\n";
}

// Which parts a mode runs.
struct Wants {
  bool putget, exists, prefix, prefix_get, baseline, floors, redis;
  std::vector<std::string> transports;  // put-get's (side by side) or prefix-get's
};

Wants WantsFor(Mode mode, const BenchFlags& f) {
  Wants w;
  w.putget = mode == Mode::kPutGet || mode == Mode::kVsRedis || mode == Mode::kAll;
  w.exists = mode == Mode::kExists || mode == Mode::kVsRedis || mode == Mode::kAll;
  w.prefix = mode == Mode::kPrefix || mode == Mode::kAll;
  w.prefix_get = mode == Mode::kPrefixGet;
  w.baseline = mode == Mode::kBaseline || mode == Mode::kAll;
  w.floors = mode == Mode::kFloors || mode == Mode::kAll;
  w.redis = mode == Mode::kVsRedis || mode == Mode::kAll;
  if (mode == Mode::kPutGet) w.transports = {f.transport};
  if (mode == Mode::kVsRedis || mode == Mode::kAll) w.transports = {"tcp", "shm"};
  if (w.prefix_get) w.transports = SplitList(f.prefix_transports);
  for (const std::string& t : w.transports) {
    if (t != "tcp" && t != "shm") throw BenchError("--transport: '" + t + "' is not tcp or shm");
  }
  return w;
}

// The workloads the flags ask for: put-get's (and the references'), and the
// exists and prefix calls' (the same with the exists batches). Throws
// BenchError on a bad flag.
struct Workloads {
  bench::WorkloadOptions o, eo;
};

Workloads WorkloadsFor(Mode mode, const Wants& w, const BenchFlags& f) {
  bench::WorkloadOptions o;
  o.clients = f.clients;
  o.reps = f.reps;
  if (mode != Mode::kExists && mode != Mode::kPrefix)
    o.sizes = ParseSizes(mode == Mode::kPrefixGet ? f.prefix_sizes : f.sizes);
  o.batches = {mode == Mode::kPrefixGet ? f.pages : f.batch};
  if (mode == Mode::kPrefixGet) o.min_calls = o.max_calls = uint64_t(f.calls);
  std::vector<int> exists_batches;
  if (w.exists || w.prefix) {
    exists_batches = ParseInts(f.exists_batches);
    o.misses = ParseMisses(f.misses);
  }
  o.bytes_per_client = Must(ParseByteSize(f.bytes_per_client), "--bytes-per-client");
  o.tcp_congestion = f.tcp_congestion;
  o.verify_checksums = !f.no_verify;
  o.lean_control = !f.grpc_control;
  o.location_cache = f.location_cache;
  // The embedded cluster authenticates nobody: a token is for --master's.
  if (!f.master.empty()) {
    o.token = Must(auth::LoadClientToken(f.token_file), "--token-file");
    o.tls = f.tls;
  } else if (!f.tls.ca.empty()) {
    throw BenchError("--tls-ca is for --master's cluster (the embedded one serves no TLS)");
  }
  if (const char* env = std::getenv("CRESCENT_TCP_CONGESTION"); o.tcp_congestion.empty() && env)
    o.tcp_congestion = env;  // as the client would, so the references follow it too
  if (Status s = transfer::CheckCongestionControl(o.tcp_congestion); !s.ok())
    throw BenchError("--tcp-congestion: " + s.message());
  if (f.quick) {
    o.reps = 1;
    o.bytes_per_client = 0;
    o.min_ops = 2;
    o.max_ops = 4;
    o.keys_per_client = 0;
    o.min_calls = 3;
    o.max_calls = 3;
  }
  bench::WorkloadOptions eo = o;
  eo.batches = exists_batches;
  return {o, eo};
}

// Progress steps: one per measured phase and repetition.
uint64_t ProgressSteps(const Wants& w, const BenchFlags& f, const bench::WorkloadOptions& o,
                       const bench::WorkloadOptions& eo) {
  const uint64_t nsizes = o.sizes.size(), reps = uint64_t(o.reps);
  const uint64_t pg = nsizes * reps * bench::kPutGetPhases;
  const uint64_t ex = eo.batches.size() * o.misses.size() * reps;
  const uint64_t streams = f.clients > 1 ? 2 : 1;
  uint64_t total = 0;
  if (w.putget) total += pg * w.transports.size();
  // The memcpy phases beside the shm gets, the raw streams beside the tcp batches.
  for (const std::string& t : w.transports) {
    if (w.putget) total += (t == "shm" ? 2 : 1) * nsizes * reps;
  }
  if (w.prefix_get) total += nsizes * reps * w.transports.size();
  if (w.exists) total += ex;
  if (w.prefix) total += ex;
  if (w.baseline) total += 2 * nsizes * streams * reps;
  if (w.floors) total += 2 * nsizes * reps + 2 * reps;
  if (w.redis) total += pg + ex;
  return total;
}

nlohmann::json OptionsJson(const BenchFlags& f, const bench::WorkloadOptions& o,
                           const bench::WorkloadOptions& eo) {
  return {{"clients", o.clients},
          {"reps", o.reps},
          {"sizes", o.sizes},
          {"batch", o.batch()},
          {"exists_batches", eo.batches},
          {"misses", o.misses},
          {"bytes_per_client", o.bytes_per_client},
          {"quick", f.quick},
          {"lanes", f.lanes},
          {"tcp_congestion", o.tcp_congestion},
          {"verify_checksums", o.verify_checksums},
          {"lean_control", o.lean_control},
          {"location_cache", o.location_cache}};
}

// Bytes the put-get phases hold at once: each size's single and batched
// objects, for every client, until the rep's cleanup; the transports run side
// by side, each holding its own objects at once.
uint64_t PutGetHeldBytes(const Wants& w, const bench::WorkloadOptions& o) {
  if (!w.putget) return 0;
  uint64_t need = 0;
  for (uint64_t s : o.sizes) {
    const uint64_t n = o.OpsFor(s);
    const uint64_t nb =
        std::max<uint64_t>(bench::kMinBatchCalls, n / uint64_t(std::max(1, o.batch())));
    need = std::max(need, uint64_t(o.clients) * (n + nb * uint64_t(o.batch())) * s);
  }
  return need * w.transports.size();
}

// What the phases add to: the JSON document, the tables (printed after the
// progress bar is cleared), every row for the target checks, and the count of
// failed operations.
struct BenchReport {
  nlohmann::json doc;
  std::ostringstream text;
  std::vector<bench::PhaseResult> all;
  std::vector<bench::TargetCheck> checks;  // besides CheckTargets(all)'s
  uint64_t failed = 0;

  void CountFailed(const std::vector<bench::PhaseResult>& rows) {
    for (const bench::PhaseResult& r : rows) failed += r.errors;
  }
};

// The cluster the phases run against: the one at --master, or an embedded one
// (started here, into `cluster`, sized to hold `need` bytes at once). Returns
// the master's address.
std::string SetUpCluster(const BenchFlags& f, const Wants& w, const bench::WorkloadOptions& o,
                         std::unique_ptr<server::LocalCluster>& cluster, BenchReport& report) {
  const uint64_t need = PutGetHeldBytes(w, o);
  const bool need_cluster = w.putget || w.exists || w.prefix || w.prefix_get || w.floors;
  if (!need_cluster) return f.master;
  if (!f.master.empty()) {
    report.doc["cluster"] = {{"kind", "external"}, {"master", f.master}};
    std::cout << "cluster: " << f.master << "\n";
    if (w.putget) WarnIfTooSmall(f.master, o.token, o.tls, need);
    return f.master;
  }
  server::LocalClusterOptions lo;
  lo.store_nodes = f.nodes;
  lo.tcp_congestion = o.tcp_congestion;
  // Between repetitions the bench removes what it read, whose space the
  // master holds until the reads' leases end: a short lease keeps that
  // wait short. Every get still finishes far inside it.
  lo.master.config.lease_ms = 1000;
  lo.master.rpc.record_metrics = !f.no_rpc_metrics;
  lo.segment_size = f.segment_size.empty()
                        ? std::max<uint64_t>(256ull << 20, need + need / 2 + (64ull << 20))
                        : Must(ParseByteSize(f.segment_size), "--segment-size");
  cluster = Must(server::LocalCluster::Start(lo), "starting the embedded cluster");
  cluster->WaitPagesWarm();  // untimed: the warmer would compete with the phases
  const std::string master = cluster->master_address();
  report.doc["cluster"] = {{"kind", "embedded"},
                           {"store_nodes", f.nodes},
                           {"segment_size", lo.segment_size},
                           {"master", master}};
  std::cout << "cluster: embedded, master + " << f.nodes << " store node(s), "
            << FormatBytes(lo.segment_size) << " segment each, at " << master << "\n";
  return master;
}

void RunBaseline(const bench::WorkloadOptions& o, BenchReport& report) {
  using namespace crescent::bench;
  std::vector<PhaseResult> rows = Must(MeasureTcpStreams(o), "raw TCP");
  std::vector<PhaseResult> mc = MeasureMemcpy(o);
  rows.insert(rows.end(), mc.begin(), mc.end());
  report.doc["baseline"] = nlohmann::json::array();
  for (const auto& r : rows) report.doc["baseline"].push_back(ToJson(r));
  report.text << "\n== baseline: the physical references ==\n"
              << RenderBaseline(rows) << HowBaselineMeasured(o);
  report.doc["references"]["baseline"] = HowBaselineMeasured(o);
  report.all.insert(report.all.end(), rows.begin(), rows.end());
}

void RunFloors(const std::string& master, const bench::WorkloadOptions& o, BenchReport& report) {
  using namespace crescent::bench;
  std::vector<PhaseResult> shapes = Must(MeasureRawShapes(o), "raw one-object shapes");
  std::vector<PhaseResult> trips = Must(MeasureRoundTrips(master, o), "round trips");
  report.CountFailed(shapes);
  report.CountFailed(trips);
  report.doc["floors"] = nlohmann::json::array();
  for (const auto& r : shapes) report.doc["floors"].push_back(ToJson(r));
  for (const auto& r : trips) report.doc["floors"].push_back(ToJson(r));
  report.text << "\n== floors: one object per call over raw loopback sockets (no gRPC) ==\n"
              << RenderRawShapes(shapes) << "\n== floors: one round trip, tight and after "
              << Fixed(kCallerBusyUs, 0) << " µs of caller CPU work ==\n"
              << RenderRoundTrips(trips);
}

// Redis runs side by side with Crescent (driver.h), phase by phase; its rows
// and Crescent's are set beside each other at the end.
struct Contenders {
  std::unique_ptr<bench::RedisServer> redis;  // null: no Redis
  std::unique_ptr<bench::RedisBackend> redis_putget, redis_exists;
  std::vector<bench::PhaseResult> crescent_rows, redis_rows;
  size_t redis_putget_rows = 0;  // the first rows of redis_rows are put-get's
};

void StartRedis(const BenchFlags& f, const bench::WorkloadOptions& o,
                const bench::WorkloadOptions& eo, Contenders& c) {
  using namespace crescent::bench;
  c.redis = Must(RedisServer::Start(f.redis_server), "redis-server");
  c.redis_putget = Must(RedisBackend::Connect(c.redis->port(), o), "redis");
  c.redis_exists = Must(RedisBackend::Connect(c.redis->port(), eo), "redis");
}

void RunPutGetPhases(const std::string& master, const BenchFlags& f, const Wants& w,
                     const bench::WorkloadOptions& o, Contenders& c, BenchReport& report) {
  using namespace crescent::bench;
  report.doc["put_get"] = nlohmann::json::array();
  std::vector<std::unique_ptr<CrescentBackend>> backends;
  std::vector<Contender> contenders;
  for (const std::string& t : w.transports) {
    backends.push_back(Must(CrescentBackend::Connect(master, o, t == "shm", f.lanes), "connect"));
    contenders.push_back({backends.back().get(), t == "shm", t == "tcp"});
  }
  if (c.redis_putget) contenders.push_back({c.redis_putget.get(), false, false});
  std::vector<PhaseResult> rows = Must(RunPutGet(contenders, o), "put-get");
  report.CountFailed(rows);
  for (const std::string& t : w.transports) {
    // Each transport's rows with the references measured beside them.
    const std::string reference = t == "shm" ? "memcpy" : "tcp";
    std::vector<PhaseResult> mine;
    for (const PhaseResult& r : rows) {
      if (r.system == "crescent-" + t || r.system == reference) mine.push_back(r);
    }
    for (const auto& r : mine) report.doc["put_get"].push_back(ToJson(r));
    report.text << "\n== put-get: crescent over " << t << " ==\n" << RenderPutGet(mine);
    if (t == "shm") {
      report.text << HowMemcpyBesideGetsMeasured(o);
      report.doc["references"]["memcpy_beside_shm_gets"] = HowMemcpyBesideGetsMeasured(o);
    } else {
      report.text << HowStreamBesideBatchesMeasured(o);
      report.doc["references"]["stream_beside_tcp_batches"] = HowStreamBesideBatchesMeasured(o);
    }
  }
  for (const PhaseResult& r : rows) {
    if (r.system == "redis")
      c.redis_rows.push_back(r);
    else if (r.system.starts_with("crescent"))
      c.crescent_rows.push_back(r);
    else
      report.all.push_back(r);  // the references beside
  }
  c.redis_putget_rows = c.redis_rows.size();
}

void RunExistsPhases(const std::string& master, const BenchFlags& f,
                     const bench::WorkloadOptions& eo, Contenders& c, BenchReport& report) {
  using namespace crescent::bench;
  auto w = Must(CrescentBackend::Connect(master, eo, false, f.lanes), "connect");
  std::vector<Backend*> sides = {w.get()};
  if (c.redis_exists) sides.push_back(c.redis_exists.get());
  std::vector<PhaseResult> rows = Must(RunExists(sides, eo), "exists");
  report.CountFailed(rows);
  report.doc["exists"] = nlohmann::json::array();
  std::vector<PhaseResult> mine;
  for (const PhaseResult& r : rows) {
    if (r.system == "redis") {
      c.redis_rows.push_back(r);
      continue;
    }
    mine.push_back(r);
    report.doc["exists"].push_back(ToJson(r));
  }
  report.text << "\n== exists: crescent BatchExists ==\n" << RenderExists(mine);
  c.crescent_rows.insert(c.crescent_rows.end(), mine.begin(), mine.end());
}

void RunPrefixPhases(const std::string& master, const BenchFlags& f,
                     const bench::WorkloadOptions& eo, BenchReport& report) {
  using namespace crescent::bench;
  auto w = Must(CrescentBackend::Connect(master, eo, false, f.lanes), "connect");
  std::vector<PhaseResult> rows = Must(RunExists(*w, eo, Op::kPrefix), "prefix");
  report.CountFailed(rows);
  report.doc["prefix"] = nlohmann::json::array();
  for (const auto& r : rows) report.doc["prefix"].push_back(ToJson(r));
  report.text << "\n== prefix: crescent BatchQueryPrefix (stored keys first; a miss ends the "
                 "run) ==\n"
              << RenderExists(rows);
  report.all.insert(report.all.end(), rows.begin(), rows.end());  // its p50 target
}

void RunPrefixGetPhases(const std::string& master, const BenchFlags& f, const Wants& w,
                        const bench::WorkloadOptions& o, BenchReport& report) {
  using namespace crescent::bench;
  report.doc["prefix_get"] = nlohmann::json::array();
  std::vector<PhaseResult> rows;
  WorkloadOptions off = o, on = o;
  off.location_cache = 0;
  on.location_cache = o.location_cache > 0 ? o.location_cache : 65536;
  for (const std::string& t : w.transports) {
    auto m = Must(CrescentBackend::Connect(master, off, t == "shm", f.lanes), "connect");
    auto c = Must(CrescentBackend::Connect(master, on, t == "shm", f.lanes), "connect");
    std::vector<PhaseResult> mine = Must(RunPrefixGet({m.get(), c.get()}, o), "prefix-get");
    rows.insert(rows.end(), mine.begin(), mine.end());
  }
  report.CountFailed(rows);
  for (const auto& r : rows) report.doc["prefix_get"].push_back(ToJson(r));
  report.text << "\n== prefix-get: GetPrefixInto of a stored chain, location cache off (every "
                 "call asks the master) and on ("
              << on.location_cache << " keys) ==\n"
              << RenderPrefixGet(rows);
  std::vector<TargetCheck> checks = PrefixGetTargets(rows);
  report.checks.insert(report.checks.end(), checks.begin(), checks.end());
}

void ReportRedis(const bench::WorkloadOptions& o, const Contenders& c, BenchReport& report) {
  using namespace crescent::bench;
  const std::vector<PhaseResult>& rows = c.redis_rows;
  const long putget_rows = long(c.redis_putget_rows);
  report.doc["redis"] = {{"version", c.redis->version()},
                         {"port", c.redis->port()},
                         {"rows", nlohmann::json::array()}};
  for (const auto& r : rows) report.doc["redis"]["rows"].push_back(ToJson(r));
  report.text << "\n== redis " << c.redis->version() << " (hiredis; batches pipelined) ==\n"
              << RenderPutGet(std::vector<PhaseResult>(rows.begin(), rows.begin() + putget_rows))
              << "\n"
              << RenderExists(std::vector<PhaseResult>(rows.begin() + putget_rows, rows.end()))
              << HowRedisMeasured(o, c.redis->version())
              << "\n== crescent vs redis (same sizes, clients, batches) ==\n"
              << RenderVersus(c.crescent_rows, rows);
  report.doc["references"]["redis"] = HowRedisMeasured(o, c.redis->version());
  report.all.insert(report.all.end(), rows.begin(), rows.end());
}

void ReportTargets(BenchReport& report) {
  std::vector<bench::TargetCheck> checks = bench::CheckTargets(report.all);
  checks.insert(checks.end(), report.checks.begin(), report.checks.end());
  report.doc["targets"] = nlohmann::json::array();
  for (const auto& c : checks) report.doc["targets"].push_back(bench::ToJson(c));
  if (!checks.empty())
    report.text << "\n== targets (ratios from this run) ==\n" << bench::RenderTargets(checks);
}

// Every phase the mode asks for, in order, into `report`; throws BenchError.
void RunPhases(Mode mode, const BenchFlags& f, BenchReport& report) {
  const Wants w = WantsFor(mode, f);
  auto [o, eo] = WorkloadsFor(mode, w, f);
  Progress progress(ProgressSteps(w, f, o, eo));
  o.on_phase = eo.on_phase = [&progress](const std::string& l) { progress.Step(l); };
  report.doc["options"] = OptionsJson(f, o, eo);

  std::unique_ptr<server::LocalCluster> cluster;
  const std::string master = SetUpCluster(f, w, o, cluster, report);
  std::cout << bench::MachineLine(report.doc["machine"]) << std::flush;

  if (w.baseline) RunBaseline(o, report);
  if (w.floors) RunFloors(master, o, report);
  Contenders c;
  if (w.redis) StartRedis(f, o, eo, c);
  if (w.putget) RunPutGetPhases(master, f, w, o, c, report);
  if (w.exists) RunExistsPhases(master, f, eo, c, report);
  report.all.insert(report.all.end(), c.crescent_rows.begin(), c.crescent_rows.end());
  if (w.prefix) RunPrefixPhases(master, f, eo, report);
  if (w.prefix_get) RunPrefixGetPhases(master, f, w, o, report);
  if (c.redis) ReportRedis(o, c, report);

  ReportTargets(report);
  report.doc["errors"] = report.failed;
  report.doc["machine_after"] = bench::DescribeMachine();
  progress.Clear();
  std::cout << report.text.str() << std::flush;
}

int RunBench(Mode mode, const BenchFlags& f) {
  BenchReport report;
  report.doc["command"] = CommandLine();
  report.doc["machine"] = bench::DescribeMachine();
  try {
    RunPhases(mode, f, report);
  } catch (const BenchError& e) {
    std::cerr << "crescent bench: " << e.message << "\n";
    return 2;
  }
  if (!f.json.empty()) {
    std::ofstream out(f.json, std::ios::trunc);
    out << report.doc.dump(2) << "\n";
    if (!out) {
      std::cerr << "crescent bench: cannot write '" << f.json << "'\n";
      return 2;
    }
  }
  if (report.failed > 0) {
    std::cerr << "crescent bench: " << report.failed << " operation(s) failed\n";
    return 2;
  }
  return 0;
}

// clients: whether the workload runs several clients over Crescent's data plane
// (floors times one call at a time).
void AddCommon(CLI::App* cmd, BenchFlags& f, bool clients = true) {
  cmd->add_option("--json", f.json, "Also write every figure as JSON to this file");
  cmd->add_option("--master", f.master,
                  "Benchmark the cluster at this master, host:port or unix:PATH, or "
                  "etcd://H1:2379,H2:2379/NAME for cluster NAME's leader (default: start an "
                  "embedded one)");
  AddTokenFileFlag(*cmd, f.token_file);
  AddClientTlsFlags(*cmd, f.tls);
  cmd->add_option("--nodes", f.nodes, "Embedded cluster: store nodes")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  cmd->add_option("--segment-size", f.segment_size,
                  std::string("Embedded cluster: segment per node (default: sized to the "
                              "workload)") +
                      kSizeHelp)
      ->check(ByteSizeCheck());
  cmd->add_option("--reps", f.reps, "Repetitions; medians are reported")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  if (clients) {
    cmd->add_option("--clients", f.clients, "Concurrent clients (threads, connections)")
        ->check(CLI::Range(1, 256))
        ->capture_default_str();
  }
  cmd->add_option("--bytes-per-client", f.bytes_per_client,
                  std::string("Bytes each client moves per phase (objects: 4..4096)") + kSizeHelp)
      ->capture_default_str()
      ->check(ByteSizeCheck());
  if (clients) {
    cmd->add_option("--lanes", f.lanes, "Crescent TCP connections per store node")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
  }
  cmd->add_option("--tcp-congestion", f.tcp_congestion,
                  "TCP congestion control of Crescent's data connections (the embedded store "
                  "nodes' too) and of the raw references (default: $CRESCENT_TCP_CONGESTION, "
                  "else the system's; not Redis)");
  cmd->add_flag("--quick", f.quick, "Tiny run (a few objects and calls, one repetition)");
  cmd->add_flag("--grpc-control", f.grpc_control,
                "Crescent's hot control calls (exists, prefix queries, replica lists, puts' start "
                "and end) over gRPC instead of the lean control protocol (to measure what it "
                "gains; docs/control-plane.md)");
  cmd->add_option("--location-cache", f.location_cache,
                  "Crescent clients remember where this many keys live (from their puts and "
                  "gets), so that a get of one goes straight to its store node without asking "
                  "the master (ClientConfig::location_cache; docs/network.md, \"Location "
                  "cache\"); 0: off")
      ->capture_default_str();
  cmd->add_flag("--no-rpc-metrics", f.no_rpc_metrics,
                "The embedded master times no RPC and counts no reply errors (to measure what "
                "the latency histograms cost; docs/metrics.md)");
  if (clients) {
    cmd->add_flag("--no-verify", f.no_verify,
                  "Crescent gets skip the end-to-end checksum check (to measure its cost; "
                  "puts still record checksums)");
  }
}

void AddSizes(CLI::App* cmd, BenchFlags& f) {
  cmd->add_option("--size", f.sizes, std::string("Comma-separated object sizes") + kSizeHelp)
      ->capture_default_str();
}

void AddExistsFlags(CLI::App* cmd, BenchFlags& f, const char* batch_flag) {
  cmd->add_option(batch_flag, f.exists_batches, "Comma-separated keys per call")
      ->capture_default_str();
  cmd->add_option("--miss", f.misses, "Comma-separated fractions of absent keys")
      ->capture_default_str();
}

// --transport of the subcommands that run one or both side by side.
void AddTransportsFlag(CLI::App* cmd, std::string& transports) {
  cmd->add_option("--transport", transports, "tcp, shm, or both: tcp,shm")->capture_default_str();
}

const Registrar kRegistrar([](CLI::App& app) {
  auto f = std::make_shared<BenchFlags>();
  CLI::App* bench =
      app.add_subcommand("bench", "Benchmark Crescent against the physical references and Redis");
  bench->require_subcommand(0, 1);

  CLI::App* pg =
      bench->add_subcommand("put-get", "GB/s, ops/s, p50/p99 of put, get, batch put, batch get");
  AddCommon(pg, *f);
  AddSizes(pg, *f);
  pg->add_option("--batch", f->batch, "Objects per batch call")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  pg->add_option("--transport", f->transport, "tcp or shm (same-host shared memory)")
      ->check(CLI::IsMember({"tcp", "shm"}))
      ->capture_default_str();
  pg->callback([f] { SetExitCode(RunBench(Mode::kPutGet, *f)); });

  CLI::App* ex = bench->add_subcommand("exists", "keys/s and p50/p99 per BatchExists call");
  AddCommon(ex, *f);
  AddExistsFlags(ex, *f, "--batch");
  ex->callback([f] { SetExitCode(RunBench(Mode::kExists, *f)); });

  CLI::App* pr = bench->add_subcommand(
      "prefix", "keys/s and p50/p99 per BatchQueryPrefix call, over the exists workload's keys");
  AddCommon(pr, *f);
  AddExistsFlags(pr, *f, "--batch");
  pr->callback([f] { SetExitCode(RunBench(Mode::kPrefix, *f)); });

  CLI::App* pgc = bench->add_subcommand(
      "prefix-get",
      "calls/s and p50/p99 of a prefix get (GetPrefixInto) of a stored chain of pages into a "
      "registered buffer, by a client without the location cache (each call asks the master) "
      "and by one with it, the two alternating within each repetition");
  pgc->add_option("--size", f->prefix_sizes, std::string("Comma-separated page sizes") + kSizeHelp)
      ->capture_default_str();
  AddCommon(pgc, *f, /*clients=*/false);
  pgc->remove_option(pgc->get_option("--bytes-per-client"));  // the chain is the workload
  pgc->get_option("--location-cache")
      ->description(
          "Keys the cached side's location cache holds (0: 65536); the other side "
          "has none (ClientConfig::location_cache; docs/network.md, \"Location "
          "cache\")");
  pgc->add_option("--pages", f->pages, "Pages in the chain (each call gets them all)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  AddTransportsFlag(pgc, f->prefix_transports);
  pgc->add_option("--calls", f->calls, "Calls per side and repetition")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  pgc->callback([f] { SetExitCode(RunBench(Mode::kPrefixGet, *f)); });

  CLI::App* bl = bench->add_subcommand(
      "baseline", "Loopback TCP (1 and N streams) and memcpy bandwidth on this machine");
  AddCommon(bl, *f);
  AddSizes(bl, *f);
  bl->callback([f] { SetExitCode(RunBench(Mode::kBaseline, *f)); });

  CLI::App* fl = bench->add_subcommand(
      "floors",
      "The floor under one-object calls: put (ctl, data, ctl) and get (ctl, data) over raw "
      "loopback sockets, and one round trip (raw ping-pong, Exists) tight and after 300 µs of "
      "caller CPU work");
  AddCommon(fl, *f, /*clients=*/false);
  AddSizes(fl, *f);
  fl->callback([f] { SetExitCode(RunBench(Mode::kFloors, *f)); });

  auto add_vs = [&](CLI::App* cmd) {
    AddCommon(cmd, *f);
    AddSizes(cmd, *f);
    cmd->add_option("--batch", f->batch, "Objects per batch call (put-get)")
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    AddExistsFlags(cmd, *f, "--exists-batch");
    cmd->add_option("--redis-server", f->redis_server, "redis-server binary")
        ->capture_default_str();
  };
  CLI::App* vs = bench->add_subcommand(
      "vs-redis", "The same workloads through a real redis-server (hiredis), side by side");
  add_vs(vs);
  vs->callback([f] { SetExitCode(RunBench(Mode::kVsRedis, *f)); });

  auto mb = std::make_shared<MultiBufferFlags>();
  CLI::App* mbc = bench->add_subcommand(
      "multi-buffer",
      "A key put from and read into many slices (a layer-first KV page) against one buffer of "
      "the same bytes, and against gathering into a staging buffer, over TCP and shm");
  mbc->add_option("--slices", mb->slices, "Slices per key")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  mbc->add_option("--slice-size", mb->slice_size, std::string("Bytes per slice") + kSizeHelp)
      ->capture_default_str();
  mbc->add_option("--batch", mb->batch, "Keys per call")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  mbc->add_option("--rounds", mb->rounds, "Alternating rounds (medians reported)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  AddTransportsFlag(mbc, mb->transports);
  mbc->add_option("--json", mb->json, "Also write the figures as JSON to this file");
  mbc->callback([mb] { SetExitCode(RunMultiBufferBench(*mb)); });

  AddClientsBench(bench);

  CLI::App* all = bench->add_subcommand(
      "all",
      "baseline, floors, put-get (tcp and shm), exists, prefix and vs-redis, then the target "
      "checks");
  add_vs(all);
  all->callback([f] { SetExitCode(RunBench(Mode::kAll, *f)); });

  // `crescent bench` alone runs everything with the defaults.
  bench->callback([f, bench] {
    if (bench->get_subcommands().empty()) SetExitCode(RunBench(Mode::kAll, *f));
  });
});

}  // namespace
}  // namespace crescent::cli
