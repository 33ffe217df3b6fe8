// net_perf: Crescent's data and control plane against their hardware baselines,
// in one run, on an in-process LocalCluster (real gRPC, TCP and shared memory
// over loopback).
//
//   net_perf [--reps N] [--mib-per-phase M] [--calls C] [--lanes L]
//            [--rpc-threads T] [--tcp-congestion NAME] [--quick]
//            [--only base|data|prefix] [--json FILE]
//
// --tcp-congestion sets the TCP congestion control of every data connection,
// Crescent's and the raw references' alike (default: the system's).
// --only runs one part (baselines, data plane, prefix queries), for profiling;
// targets whose rows were not measured then show as missed.
// Every figure is the median of --reps repetitions (after one unmeasured
// warm-up), printed next to its baseline with the ratio (baseline and figure
// are measured in alternation, rep by rep; the ratio is the median of per-rep
// ratios):
//   raw loopback TCP stream (one socket pair)  <- Crescent TCP put/get, 1 and 4 MiB
//   single-thread memcpy (cold buffers)        <- Crescent shared-memory get
//   the raw one-object shapes: a put's control ping-pong, data exchange and
//   control ping-pong, a get's ping-pong and exchange, over blocking sockets
//   with threads for "master" and "store" (the floor of one-object calls)
//   BatchQueryPrefix(128 keys): p50/p99 with 1 client, keys/s with 4 threads;
//   and one Exists round trip next to a raw loopback ping-pong (the floor), both
//   also after the caller spent 300 us on CPU work (a one-object put's shape).
// It then prints the targets as ✓/✗ lines, for one object per call and for
// batches of 8, with the raw one-object shape next to one-object calls. Figures only: the exit
// status is 0 unless something failed outright (a put, a get, a wrong byte).
#include <atomic>
#include <cinttypes>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "crescent/client.h"
#include "net_perf_util.h"
#include "server/local_cluster.h"

using namespace crescent;
using namespace netperf;

namespace {

struct Flags {
  int reps = 5;
  size_t mib = 256;        // bytes moved per measured phase, MiB
  int calls = 2000;        // BatchQueryPrefix calls per latency rep
  int lanes = 0;           // TCP lanes per store node; 0: the client's default
  std::string congestion;  // TCP congestion control, both sides; "": system default
  int rpc_threads = 0;     // master gRPC threads; 0: the server's default
  bool quick = false;
  std::string only;  // "", "base", "data" or "prefix": run one part (for profiling)
  std::string json;
};

Flags Parse(int argc, char** argv) {
  Flags f;
  bool reps = false, mib = false, calls = false;
  auto usage = [] {
    Die("usage: net_perf [--reps N] [--mib-per-phase M] [--calls C] [--lanes L] [--rpc-threads T]\n"
        "               [--tcp-congestion NAME] [--quick] [--only "
        "base|data|prefix]\n"
        "               [--json FILE]");
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--reps") {
      f.reps = std::max(1, std::atoi(next()));
      reps = true;
    } else if (a == "--mib-per-phase") {
      f.mib = std::max<size_t>(8, std::strtoull(next(), nullptr, 10));
      mib = true;
    } else if (a == "--calls") {
      f.calls = std::max(10, std::atoi(next()));
      calls = true;
    } else if (a == "--rpc-threads") {
      f.rpc_threads = std::max(1, std::atoi(next()));
    } else if (a == "--lanes") {
      f.lanes = std::max(1, std::atoi(next()));
    } else if (a == "--tcp-congestion") {
      f.congestion = next();
    } else if (a == "--quick") {
      f.quick = true;
    } else if (a == "--only") {
      f.only = next();
      if (f.only != "base" && f.only != "data" && f.only != "prefix") usage();
    } else if (a == "--json") {
      f.json = next();
    } else {
      usage();
    }
  }
  if (f.quick) {
    if (!reps) f.reps = 1;
    if (!mib) f.mib = 16;
    if (!calls) f.calls = 200;
  }
  return f;
}

void Check(const Status& s, const std::string& what) {
  if (!s.ok()) Die(what + ": " + s.ToString());
}

int g_lanes = 0;

std::unique_ptr<Client> Connect(const std::string& master, bool shm) {
  ClientConfig cc;
  if (g_lanes > 0) cc.tcp_lanes = g_lanes;
  cc.tcp_congestion = RawCongestion();
  cc.master_address = master;
  cc.use_shared_memory = shm;
  auto c = Client::Connect(cc);
  if (!c.ok()) Die("connect: " + c.status().ToString());
  return std::move(c.value());
}

// One put phase then one get phase of n objects of `size` bytes, `batch` per
// call (1: PutFrom/GetInto). Puts read src[i*size], gets write dst[i*size];
// afterwards the bytes are compared and the keys removed (outside the timing).
struct RoundResult {
  double put_gbs = 0, get_gbs = 0;
};

RoundResult CrescentRound(Client& c, const std::string& tag, char* src, char* dst, size_t size,
                          size_t n, size_t batch) {
  std::vector<std::string> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = tag + "/" + std::to_string(i);
  std::vector<void*> sp(n), dp(n);
  std::vector<size_t> sizes(n, size);
  for (size_t i = 0; i < n; ++i) {
    sp[i] = src + i * size;
    dp[i] = dst + i * size;
  }
  RoundResult r;
  double t0 = Now();
  for (size_t i = 0; i < n; i += batch) {
    size_t m = std::min(batch, n - i);
    if (m == 1) {
      Check(c.PutFrom(keys[i], sp[i], size), "put " + keys[i]);
    } else {
      auto st = c.BatchPutFrom({keys.data() + i, m}, {sp.data() + i, m}, {sizes.data() + i, m});
      for (size_t k = 0; k < m; ++k) Check(st[k], "batch put " + keys[i + k]);
    }
  }
  double t1 = Now();
  for (size_t i = 0; i < n; i += batch) {
    size_t m = std::min(batch, n - i);
    if (m == 1) {
      auto got = c.GetInto(keys[i], dp[i], size);
      if (!got.ok() || *got != size) Die("get " + keys[i] + ": " + got.status().ToString());
    } else {
      auto got = c.BatchGetInto({keys.data() + i, m}, {dp.data() + i, m}, {sizes.data() + i, m});
      for (size_t k = 0; k < m; ++k) {
        if (!got[k].ok() || *got[k] != size) {
          Die("batch get " + keys[i + k] + ": " + got[k].status().ToString());
        }
      }
    }
  }
  double t2 = Now();
  if (std::memcmp(src, dst, n * size) != 0) Die(tag + ": read bytes differ from written bytes");
  std::memset(dst, 0, n * size);
  for (const Status& s : c.BatchRemove(keys, /*force=*/true)) Check(s, "remove " + tag);
  // The gets' leases hold the removed objects' space until they end (the
  // master hands out no range a reader may still copy): wait, untimed.
  for (int i = 0;; ++i) {
    StatusOr<ClusterStat> st = c.Stat();
    if (st.ok() && st->held_bytes == 0) break;
    if (i == 500) Die(tag + ": removed objects' space still held after 10 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.put_gbs = n * size / (t1 - t0) / 1e9;
  r.get_gbs = n * size / (t2 - t1) / 1e9;
  return r;
}

std::string Mib(size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

int main(int argc, char** argv) {
  Flags f = Parse(argc, argv);
  g_lanes = f.lanes;
  RawCongestion() = f.congestion;
  const size_t phase = f.mib << 20;
  const std::vector<size_t> sizes = {size_t{1} << 20, size_t{4} << 20};
  std::string machine = std::to_string(std::thread::hardware_concurrency()) + " x " + CpuModel();
  std::string load0 = LoadAvg();
  std::printf("net_perf: %s\n  load average at start: %s\n  %s\n", machine.c_str(), load0.c_str(),
              CongestionLine().c_str());
  std::printf(
      "  reps %d (median shown, [min .. max]), %zu MiB per phase, %d prefix calls/rep%s\n\n",
      f.reps, f.mib, f.calls, f.quick ? ", --quick" : "");

  // One pool for everything: [src | dst], each `phase` bytes, pages touched.
  std::vector<char> pool = Touched(2 * phase, 0);
  for (size_t i = 0; i < phase; i += 64) pool[i] = static_cast<char>(i * 131 + (i >> 20));
  char* src = pool.data();
  char* dst = pool.data() + phase;
  std::vector<char> src_v(src, src + phase);  // for the raw baselines (own buffer)
  std::vector<char> dst_v = Touched(phase, 1);
  Table t;

  auto want = [&](const char* part) { return f.only.empty() || f.only == part; };

  server::LocalClusterOptions lo;
  lo.store_nodes = 1;
  lo.segment_size = phase + (uint64_t{64} << 20);
  lo.shared_memory = true;
  lo.tcp_congestion = f.congestion;
  lo.master.config.lease_ms = 500;  // see CrescentRound: removed space waits for it
  // The master also listens on a Unix socket: the prefix rows are repeated over it.
  const std::string uds = "/tmp/net_perf_" + std::to_string(getpid()) + ".sock";
  lo.master.rpc.unix_socket = uds;
  if (f.rpc_threads > 0) lo.master.rpc.threads = f.rpc_threads;
  auto cluster = server::LocalCluster::Start(lo);
  if (!cluster.ok()) Die("cluster: " + cluster.status().ToString());
  (*cluster)->WaitPagesWarm();  // its warmer would compete with every figure
  const std::string master = (*cluster)->master_address();
  auto tcp = Connect(master, /*shm=*/false);
  auto shm = Connect(master, /*shm=*/true);
  Check(tcp->RegisterBuffer(pool.data(), pool.size()), "register");
  Check(shm->RegisterBuffer(pool.data(), pool.size()), "register");

  // Baselines and Crescent phases are interleaved rep by rep, so a figure and
  // its baseline see the same machine (load on a shared box drifts), and each
  // ratio is the median of the per-rep ratios.
  int round = 0;
  for (size_t s : sizes) {
    const std::string m = Mib(s);
    std::printf("%sObjects / writes of %s\n", s == sizes[0] ? "" : "\n", m.c_str());
    // The Crescent phases: one object per call and batches of 8, over each transport.
    struct Phase {
      const char* tag;    // key prefix
      const char* label;  // row label, before ", <size>"
      Client* client;
      size_t batch;
      bool shm;
      std::vector<double> put, get;
    };
    std::vector<Phase> phases = {{"tcp", "TCP", tcp.get(), 1, false, {}, {}},
                                 {"tcp8", "TCP", tcp.get(), 8, false, {}, {}},
                                 {"shm", "shm", shm.get(), 1, true, {}, {}},
                                 {"shm8", "shm", shm.get(), 8, true, {}, {}}};
    std::vector<double> stream, rr, copy, put_floor, get_floor;
    for (int r = -1; r < f.reps; ++r) {  // r = -1: warm-up, not counted
      auto keep = [&](std::vector<double>& v, double x) {
        if (r >= 0) v.push_back(x);
      };
      if (want("base") || want("data")) {
        keep(stream, RawStreamGBs(src_v, s, phase));
        keep(copy, MemcpyGBs(dst_v, src_v, s, phase));
      }
      if (want("base")) keep(rr, RawRequestResponseGBs(src_v, s, phase));
      if (want("base") || want("data")) {
        keep(put_floor, RawObjectsGBs(src_v, s, phase, {.control_before = 1, .control_after = 1}));
        keep(get_floor, RawObjectsGBs(src_v, s, phase, {.get = true, .control_before = 1}));
      }
      if (want("data")) {
        for (Phase& p : phases) {
          std::string key = std::string(p.tag) + "/" + std::to_string(round++);
          RoundResult res = CrescentRound(*p.client, key, src, dst, s, phase / s, p.batch);
          keep(p.put, res.put_gbs);
          keep(p.get, res.get_gbs);
        }
      }
    }
    const std::string base = "raw TCP stream, " + m + " writes", mc = "memcpy 1 thread, " + m;
    if (!stream.empty()) t.Add(base, "GB/s", stream);
    if (!copy.empty()) t.Add(mc, "GB/s", copy);
    if (!rr.empty()) t.Add("raw TCP request/response, " + m, "GB/s", rr, base);
    if (!put_floor.empty()) {
      t.Add("raw one-object put (ctl, data, ctl), " + m, "GB/s", put_floor, base);
      t.Add("raw one-object get (ctl, data), " + m, "GB/s", get_floor, base);
    }
    for (const Phase& p : phases) {
      if (p.put.empty()) continue;
      std::string batch = p.batch > 1 ? " batch " + std::to_string(p.batch) : "";
      const std::string& ref = p.shm ? mc : base;
      t.Add(std::string(p.label) + " put" + batch + ", " + m, "GB/s", p.put, ref);
      t.Add(std::string(p.label) + " get" + batch + ", " + m, "GB/s", p.get, ref);
    }
  }
  src_v = {};
  dst_v = {};

  // ---- BatchQueryPrefix(128) ----
  bool prefix = want("prefix");
  if (prefix) std::printf("\nBatchQueryPrefix, 128 keys (a stored chain of 4 KiB pages)\n");
  const size_t kPages = 128, kPage = 4096;
  std::vector<std::string> chain(kPages), miss90(kPages);
  std::vector<void*> cp(kPages);
  std::vector<size_t> cs(kPages, kPage);
  for (size_t i = 0; i < kPages; ++i) {
    char key[64];
    std::snprintf(key, sizeof(key), "%016" PRIx64 "%016" PRIx64 "_0_k",
                  uint64_t(i * 0x9E3779B97F4A7C15ull), uint64_t((i + 1) * 0xC2B2AE3D27D4EB4Full));
    chain[i] = key;
    miss90[i] = i < 13 ? chain[i] : "absent/" + chain[i];
    cp[i] = src + i * kPage;
  }
  for (const Status& s : tcp->BatchPutFrom(chain, cp, cs, {}, /*chain=*/true))
    Check(s, "chain put");
  auto q = tcp->BatchQueryPrefix(chain);
  if (!q.ok() || *q != kPages) Die("BatchQueryPrefix of the stored chain did not answer 128");

  auto latency = [&](Client& c, const std::vector<std::string>& keys, size_t want,
                     std::vector<double>& p50, std::vector<double>& p99) {
    for (int r = -1; r < f.reps; ++r) {
      std::vector<double> us(f.calls);
      for (int i = 0; i < f.calls; ++i) {
        double a = Now();
        auto got = c.BatchQueryPrefix(keys);
        us[i] = (Now() - a) * 1e6;
        if (!got.ok() || *got != want) Die("BatchQueryPrefix: unexpected answer");
      }
      if (r < 0) continue;
      p50.push_back(Percentile(us, 0.5));
      p99.push_back(Percentile(us, 0.99));
    }
  };
  if (prefix) {
    // The floor: what one round trip costs here before gRPC adds anything;
    // `calls` trips per rep, each after `busy_us` of CPU work by the caller.
    auto round_trips = [&](int calls, double busy_us, const std::string& after) {
      std::vector<double> raw, one;
      for (int r = -1; r < f.reps; ++r) {
        std::vector<double> ping = RawPingPongUs(calls, busy_us), ex(calls);
        for (int i = 0; i < calls; ++i) {
          if (busy_us > 0) SpinUs(busy_us);
          double a = Now();
          auto got = tcp->Exists(chain[0]);
          ex[i] = (Now() - a) * 1e6;
          if (!got.ok() || !*got) Die("Exists of a stored key failed");
        }
        if (r < 0) continue;
        raw.push_back(Percentile(ping, 0.5));
        one.push_back(Percentile(ex, 0.5));
      }
      t.Add("raw TCP ping-pong" + (after.empty() ? ", 64 B" : after) + ": p50", "us", raw);
      t.Add((after.empty() ? "Exists (one gRPC round trip)" : "Exists" + after) + ": p50", "us",
            one);
    };
    round_trips(f.calls, 0, "");
    // The same after the caller kept its CPU busy for 300 us, as a one-object
    // put does between PutStart and PutEnd while it sends the bytes. On a VM,
    // waking the peer's idle vCPU can then cost far more (docs/performance.md).
    round_trips(std::max(10, f.calls / 4), 300, " after 300 us of caller CPU work");
    std::vector<double> p50, p99, m50, m99;
    latency(*tcp, chain, kPages, p50, p99);
    t.Add("prefix 128 keys, 1 client: p50", "us", p50);
    t.Add("prefix 128 keys, 1 client: p99", "us", p99);
    latency(*tcp, miss90, 13, m50, m99);
    t.Add("prefix 128 keys 90% miss, 1 client: p50", "us", m50);
    t.Add("prefix 128 keys 90% miss, 1 client: p99", "us", m99);
  }
  const int kThreads = 4;
  std::vector<std::unique_ptr<Client>> own;
  for (int i = 0; i < kThreads; ++i) own.push_back(Connect(master, false));
  auto throughput = [&](bool shared) {
    int per_thread = std::max(50, f.calls / 2);
    std::vector<double> v;
    for (int r = -1; r < f.reps; ++r) {
      std::atomic<int> ready{0};
      std::atomic<bool> go{false}, bad{false};
      std::vector<std::thread> ts;
      for (int k = 0; k < kThreads; ++k) {
        ts.emplace_back([&, k] {
          Client& c = shared ? *tcp : *own[k];
          ready++;
          while (!go.load()) std::this_thread::yield();
          for (int i = 0; i < per_thread; ++i) {
            auto got = c.BatchQueryPrefix(chain);
            if (!got.ok() || *got != kPages) bad = true;
          }
        });
      }
      while (ready.load() < kThreads) std::this_thread::yield();
      double a = Now();
      go = true;
      for (auto& th : ts) th.join();
      double dt = Now() - a;
      if (bad) Die("BatchQueryPrefix failed under 4 threads");
      if (r >= 0) v.push_back(double(kThreads) * per_thread * kPages / dt);
    }
    return v;
  };
  Row own_row, shared_row;
  if (prefix) {
    own_row = t.Add("prefix 128 keys, 4 threads, own clients", "keys/s", throughput(false));
    shared_row = t.Add("prefix 128 keys, 4 threads, shared client", "keys/s", throughput(true));
  }
  if (prefix) {
    auto via_uds = Connect("unix:" + uds, false);
    std::vector<double> p50, p99;
    latency(*via_uds, chain, kPages, p50, p99);
    t.Add("prefix 128 keys, 1 client, unix socket: p50", "us", p50);
    t.Add("prefix 128 keys, 1 client, unix socket: p99", "us", p99);
    for (auto& c : own) c = Connect("unix:" + uds, false);
    t.Add("prefix 128 keys, 4 threads, own clients, unix socket", "keys/s", throughput(false));
  }
  bool own_better = own_row.value >= shared_row.value;
  double best_keys = std::max(own_row.value, shared_row.value);
  (void)tcp->BatchRemove(chain, true);

  std::string load1 = LoadAvg();
  std::printf("\n  load average at end: %s\n\nTargets\n", load1.c_str());
  std::vector<Target> targets;
  auto target = [&](std::string what, double got, double want, bool at_most = false,
                    std::string context = "") {
    targets.push_back({std::move(what), got, want, at_most, std::move(context)});
  };
  // The data-plane targets, for one object per call and for batches of
  // 8 (the form HiCache and LMCache use for pages). A one-object call pays its
  // control round trips on top of the bytes; the raw rows of the same shape
  // show what those round trips leave on this machine without gRPC.
  for (size_t s : sizes) {
    std::string m = Mib(s);
    for (const char* op : {"put", "get"}) {
      const std::string floor = std::string("raw one-object ") + op +
                                (op[0] == 'p' ? " (ctl, data, ctl), " : " (ctl, data), ") + m;
      char context[96] = "";
      if (t.Find(floor) != nullptr) {
        std::snprintf(context, sizeof(context), "(raw sockets, same shape: %.2fx)", t.Ratio(floor));
      }
      target(std::string("TCP ") + op + " " + m + ", 1 per call >= 0.85x raw stream",
             t.Ratio(std::string("TCP ") + op + ", " + m), 0.85, false, context);
      target(std::string("TCP ") + op + " " + m + ", batch 8 >= 0.85x raw stream",
             t.Ratio(std::string("TCP ") + op + " batch 8, " + m), 0.85);
    }
  }
  for (size_t s : sizes) {
    std::string m = Mib(s);
    target("shm get " + m + ", 1 per call >= 0.75x memcpy", t.Ratio("shm get, " + m), 0.75);
    target("shm get " + m + ", batch 8 >= 0.75x memcpy", t.Ratio("shm get batch 8, " + m), 0.75);
  }
  target("prefix 128 keys p50 <= 100 us, 1 client", t.Value("prefix 128 keys, 1 client: p50"), 100,
         true);
  target(std::string("prefix 128 keys >= 1.5M keys/s, 4 threads (") +
             (own_better ? "own clients" : "shared client") + ")",
         best_keys, 1.5e6);
  int missed = 0, skipped = 0;
  for (const Target& g : targets) {
    if (g.got == 0) {  // its row was not measured (--only)
      ++skipped;
      std::printf("  - %-62s not measured\n", g.what.c_str());
      continue;
    }
    missed += !g.Pass();
    std::printf("  %s %-62s got %.3g %s\n", g.Pass() ? "\u2713" : "\u2717", g.what.c_str(), g.got,
                g.context.c_str());
  }
  std::printf("  %d of %zu targets met\n", int(targets.size()) - missed - skipped,
              targets.size() - skipped);
  if (!f.json.empty()) WriteJson(f.json, machine, load0, load1, f.reps, f.mib, t, targets);
  cluster->reset();
  unlink(uds.c_str());
  return 0;
}
