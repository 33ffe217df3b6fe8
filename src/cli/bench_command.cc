// `crescent bench`: throughput and latency of a Crescent cluster beside the
// physical references (loopback TCP, memcpy) and Redis, measured in one run.
//
//   crescent bench put-get   --size 64KiB,1MiB,4MiB --batch 16 --clients 1 --transport tcp|shm
//   crescent bench exists    --batch 1,16,128,1024 --miss 0,0.5,0.9 --clients 1
//   crescent bench prefix    (the exists calls as BatchQueryPrefix; same flags)
//   crescent bench baseline  --size ... --clients N
//   crescent bench floors    --size ...  (raw one-object put/get shapes, round trips)
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

#include "bench/baseline.h"
#include "bench/crescent_backend.h"
#include "bench/driver.h"
#include "bench/raw_shapes.h"
#include "bench/redis_backend.h"
#include "bench/round_trips.h"
#include "bench/suite.h"
#include "cli/cli_util.h"
#include "cli/command.h"
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
  bool no_rpc_metrics = false;  // the embedded master times no RPC (MasterServerOptions)
  std::string redis_server = "redis-server";
};

enum class Mode { kPutGet, kExists, kPrefix, kBaseline, kFloors, kVsRedis, kAll };

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
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string out;
  for (char ch : all) out += ch == '\0' ? ' ' : ch;
  while (!out.empty() && out.back() == ' ') out.pop_back();
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
void WarnIfTooSmall(const std::string& master, uint64_t need) {
  ClientConfig cc;
  cc.master_address = master;
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

int RunBench(Mode mode, const BenchFlags& f) {
  using namespace crescent::bench;
  nlohmann::json doc;
  doc["command"] = CommandLine();
  doc["machine"] = DescribeMachine();
  std::vector<PhaseResult> all;  // every row, for the target checks
  uint64_t failed = 0;
  try {
    const bool want_putget = mode == Mode::kPutGet || mode == Mode::kVsRedis || mode == Mode::kAll;
    const bool want_exists = mode == Mode::kExists || mode == Mode::kVsRedis || mode == Mode::kAll;
    const bool want_prefix = mode == Mode::kPrefix || mode == Mode::kAll;
    const bool want_baseline = mode == Mode::kBaseline || mode == Mode::kAll;
    const bool want_floors = mode == Mode::kFloors || mode == Mode::kAll;
    const bool want_redis = mode == Mode::kVsRedis || mode == Mode::kAll;
    std::vector<std::string> transports;
    if (mode == Mode::kPutGet) transports = {f.transport};
    if (mode == Mode::kVsRedis || mode == Mode::kAll) transports = {"tcp", "shm"};

    WorkloadOptions o;
    o.clients = f.clients;
    o.reps = f.reps;
    if (mode != Mode::kExists && mode != Mode::kPrefix) o.sizes = ParseSizes(f.sizes);
    o.batches = {f.batch};
    std::vector<int> exists_batches;
    if (want_exists || want_prefix) {
      exists_batches = ParseInts(f.exists_batches);
      o.misses = ParseMisses(f.misses);
    }
    o.bytes_per_client = Must(ParseByteSize(f.bytes_per_client), "--bytes-per-client");
    o.tcp_congestion = f.tcp_congestion;
    o.verify_checksums = !f.no_verify;
    o.lean_control = !f.grpc_control;
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
    WorkloadOptions eo = o;  // exists: the exists batches
    eo.batches = exists_batches;

    // Progress: one step per measured phase and repetition.
    const uint64_t nsizes = o.sizes.size(), reps = uint64_t(o.reps);
    const uint64_t pg = nsizes * reps * kPutGetPhases;
    const uint64_t ex = exists_batches.size() * o.misses.size() * reps;
    const uint64_t streams = f.clients > 1 ? 2 : 1;
    uint64_t total = 0;
    if (want_putget) total += pg * transports.size();
    // The memcpy phases beside the shm gets, the raw streams beside the tcp batches.
    for (const std::string& t : transports) total += (t == "shm" ? 2 : 1) * nsizes * reps;
    if (want_exists) total += ex;
    if (want_prefix) total += ex;
    if (want_baseline) total += 2 * nsizes * streams * reps;
    if (want_floors) total += 2 * nsizes * reps + 2 * reps;
    if (want_redis) total += pg + ex;
    Progress progress(total);
    o.on_phase = eo.on_phase = [&progress](const std::string& l) { progress.Step(l); };

    nlohmann::json opts = {{"clients", o.clients},
                           {"reps", o.reps},
                           {"sizes", o.sizes},
                           {"batch", o.batch()},
                           {"exists_batches", exists_batches},
                           {"misses", o.misses},
                           {"bytes_per_client", o.bytes_per_client},
                           {"quick", f.quick},
                           {"lanes", f.lanes},
                           {"tcp_congestion", o.tcp_congestion},
                           {"verify_checksums", o.verify_checksums},
                           {"lean_control", o.lean_control}};
    doc["options"] = opts;

    // The cluster: the one at --master, or an embedded one.
    std::unique_ptr<server::LocalCluster> cluster;
    std::string master = f.master;
    const bool need_cluster = want_putget || want_exists || want_prefix || want_floors;
    // Bytes the put-get phases hold at once: each size's single and batched
    // objects, for every client, until the rep's cleanup.
    uint64_t need = 0;
    for (uint64_t s : want_putget ? o.sizes : std::vector<uint64_t>{}) {
      const uint64_t n = o.OpsFor(s);
      const uint64_t nb = std::max<uint64_t>(kMinBatchCalls, n / uint64_t(std::max(1, o.batch())));
      need = std::max(need, uint64_t(o.clients) * (n + nb * uint64_t(o.batch())) * s);
    }
    if (want_putget) {
      // The transports run side by side, each holding its own objects at once.
      need *= transports.size();
    }
    if (need_cluster && master.empty()) {
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
      master = cluster->master_address();
      doc["cluster"] = {{"kind", "embedded"},
                        {"store_nodes", f.nodes},
                        {"segment_size", lo.segment_size},
                        {"master", master}};
      std::cout << "cluster: embedded, master + " << f.nodes << " store node(s), "
                << FormatBytes(lo.segment_size) << " segment each, at " << master << "\n";
    } else if (need_cluster) {
      doc["cluster"] = {{"kind", "external"}, {"master", master}};
      std::cout << "cluster: " << master << "\n";
      if (want_putget) WarnIfTooSmall(master, need);
    }
    std::cout << MachineLine(doc["machine"]) << std::flush;

    std::ostringstream text;  // tables, printed after the progress bar is cleared
    auto count_failed = [&](const std::vector<PhaseResult>& rows) {
      for (const PhaseResult& r : rows) failed += r.errors;
    };

    if (want_baseline) {
      std::vector<PhaseResult> rows = Must(MeasureTcpStreams(o), "raw TCP");
      std::vector<PhaseResult> mc = MeasureMemcpy(o);
      rows.insert(rows.end(), mc.begin(), mc.end());
      doc["baseline"] = nlohmann::json::array();
      for (const auto& r : rows) doc["baseline"].push_back(ToJson(r));
      text << "\n== baseline: the physical references ==\n"
           << RenderBaseline(rows) << HowBaselineMeasured(o);
      doc["references"]["baseline"] = HowBaselineMeasured(o);
      all.insert(all.end(), rows.begin(), rows.end());
    }

    if (want_floors) {
      std::vector<PhaseResult> shapes = Must(MeasureRawShapes(o), "raw one-object shapes");
      std::vector<PhaseResult> trips = Must(MeasureRoundTrips(master, o), "round trips");
      count_failed(shapes);
      count_failed(trips);
      doc["floors"] = nlohmann::json::array();
      for (const auto& r : shapes) doc["floors"].push_back(ToJson(r));
      for (const auto& r : trips) doc["floors"].push_back(ToJson(r));
      text << "\n== floors: one object per call over raw loopback sockets (no gRPC) ==\n"
           << RenderRawShapes(shapes) << "\n== floors: one round trip, tight and after "
           << Fixed(kCallerBusyUs, 0) << " µs of caller CPU work ==\n"
           << RenderRoundTrips(trips);
    }

    // Redis runs side by side with Crescent (driver.h), phase by phase.
    std::unique_ptr<RedisServer> redis;
    std::unique_ptr<RedisBackend> redis_putget, redis_exists;
    if (want_redis) {
      redis = Must(RedisServer::Start(f.redis_server), "redis-server");
      redis_putget = Must(RedisBackend::Connect(redis->port(), o), "redis");
      redis_exists = Must(RedisBackend::Connect(redis->port(), eo), "redis");
    }
    std::vector<PhaseResult> crescent_rows, redis_rows;
    size_t redis_putget_rows = 0;
    if (want_putget) {
      doc["put_get"] = nlohmann::json::array();
      std::vector<std::unique_ptr<CrescentBackend>> backends;
      std::vector<Contender> contenders;
      for (const std::string& t : transports) {
        backends.push_back(Must(CrescentBackend::Connect(master, o, t == "shm", f.lanes), "connect"));
        contenders.push_back({backends.back().get(), t == "shm", t == "tcp"});
      }
      if (redis_putget) contenders.push_back({redis_putget.get(), false, false});
      std::vector<PhaseResult> rows = Must(RunPutGet(contenders, o), "put-get");
      count_failed(rows);
      for (const std::string& t : transports) {
        // Each transport's rows with the references measured beside them.
        const std::string reference = t == "shm" ? "memcpy" : "tcp";
        std::vector<PhaseResult> mine;
        for (const PhaseResult& r : rows) {
          if (r.system == "crescent-" + t || r.system == reference) mine.push_back(r);
        }
        for (const auto& r : mine) doc["put_get"].push_back(ToJson(r));
        text << "\n== put-get: crescent over " << t << " ==\n" << RenderPutGet(mine);
        if (t == "shm") {
          text << HowMemcpyBesideGetsMeasured(o);
          doc["references"]["memcpy_beside_shm_gets"] = HowMemcpyBesideGetsMeasured(o);
        } else {
          text << HowStreamBesideBatchesMeasured(o);
          doc["references"]["stream_beside_tcp_batches"] = HowStreamBesideBatchesMeasured(o);
        }
      }
      for (const PhaseResult& r : rows) {
        if (r.system == "redis")
          redis_rows.push_back(r);
        else if (r.system.starts_with("crescent"))
          crescent_rows.push_back(r);
        else
          all.push_back(r);  // the references beside
      }
      redis_putget_rows = redis_rows.size();
    }
    if (want_exists) {
      auto w = Must(CrescentBackend::Connect(master, eo, false, f.lanes), "connect");
      std::vector<Backend*> sides = {w.get()};
      if (redis_exists) sides.push_back(redis_exists.get());
      std::vector<PhaseResult> rows = Must(RunExists(sides, eo), "exists");
      count_failed(rows);
      doc["exists"] = nlohmann::json::array();
      std::vector<PhaseResult> mine;
      for (const PhaseResult& r : rows) {
        if (r.system == "redis") {
          redis_rows.push_back(r);
          continue;
        }
        mine.push_back(r);
        doc["exists"].push_back(ToJson(r));
      }
      text << "\n== exists: crescent BatchExists ==\n" << RenderExists(mine);
      crescent_rows.insert(crescent_rows.end(), mine.begin(), mine.end());
    }
    all.insert(all.end(), crescent_rows.begin(), crescent_rows.end());
    if (want_prefix) {
      auto w = Must(CrescentBackend::Connect(master, eo, false, f.lanes), "connect");
      std::vector<PhaseResult> rows = Must(RunExists(*w, eo, Op::kPrefix), "prefix");
      count_failed(rows);
      doc["prefix"] = nlohmann::json::array();
      for (const auto& r : rows) doc["prefix"].push_back(ToJson(r));
      text << "\n== prefix: crescent BatchQueryPrefix (stored keys first; a miss ends the run) ==\n"
           << RenderExists(rows);
      all.insert(all.end(), rows.begin(), rows.end());  // its p50 target
    }

    if (redis) {
      doc["redis"] = {{"version", redis->version()},
                      {"port", redis->port()},
                      {"rows", nlohmann::json::array()}};
      for (const auto& r : redis_rows) doc["redis"]["rows"].push_back(ToJson(r));
      text << "\n== redis " << redis->version() << " (hiredis; batches pipelined) ==\n"
           << RenderPutGet(std::vector<PhaseResult>(redis_rows.begin(),
                                                    redis_rows.begin() + long(redis_putget_rows)))
           << "\n"
           << RenderExists(std::vector<PhaseResult>(redis_rows.begin() + long(redis_putget_rows),
                                                    redis_rows.end()))
           << HowRedisMeasured(o, redis->version())
           << "\n== crescent vs redis (same sizes, clients, batches) ==\n"
           << RenderVersus(crescent_rows, redis_rows);
      doc["references"]["redis"] = HowRedisMeasured(o, redis->version());
      all.insert(all.end(), redis_rows.begin(), redis_rows.end());
    }

    std::vector<TargetCheck> checks = CheckTargets(all);
    doc["targets"] = nlohmann::json::array();
    for (const auto& c : checks) doc["targets"].push_back(ToJson(c));
    if (!checks.empty())
      text << "\n== targets (ratios from this run) ==\n" << RenderTargets(checks);
    doc["errors"] = failed;
    doc["machine_after"] = DescribeMachine();
    progress.Clear();
    std::cout << text.str() << std::flush;
  } catch (const BenchError& e) {
    std::cerr << "crescent bench: " << e.message << "\n";
    return 2;
  }
  if (!f.json.empty()) {
    std::ofstream out(f.json, std::ios::trunc);
    out << doc.dump(2) << "\n";
    if (!out) {
      std::cerr << "crescent bench: cannot write '" << f.json << "'\n";
      return 2;
    }
  }
  if (failed > 0) {
    std::cerr << "crescent bench: " << failed << " operation(s) failed\n";
    return 2;
  }
  return 0;
}

// clients: whether the workload runs several clients over Crescent's data plane
// (floors times one call at a time).
void AddCommon(CLI::App* cmd, BenchFlags& f, bool clients = true) {
  cmd->add_option("--json", f.json, "Also write every figure as JSON to this file");
  cmd->add_option("--master", f.master,
                  "Benchmark the cluster at this master (default: start an embedded one)");
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
                "gains; docs/network.md)");
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
