// tcp_path_perf: the TCP data plane alone (TcpDataServer on a segment, the TCP
// transport client, capabilities signed locally; no master) against raw
// loopback TCP, in one run. It separates the data path's own cost from the
// control round trip that every Crescent put and get also pays (`crescent
// bench floors` measures the raw shape with its round trips, `crescent bench
// put-get` the two together).
//
//   tcp_path_perf [--reps N] [--mib-per-phase M] [--batch B] [--tcp-congestion NAME]
//
// Per object size (1 and 4 MiB) and per rep (after one unmeasured warm-up):
// a raw stream (the reference), a raw request/response exchange shaped like a
// put, and the transport's puts and gets, one op per call and B per call. The
// phases run in a different order each rep, so none always follows another.
// Figures are medians [min .. max]; a ratio is the median of per-rep ratios
// against the raw stream. Then the first pass of puts into a fresh segment,
// with its pages untouched and warmed (page_warmer.h). Figures only: the exit status is 0 unless a
// transfer failed or a byte read back differs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/baseline.h"
#include "bench/raw_shapes.h"
#include "bench/suite.h"
#include "perf_util.h"
#include "transfer/congestion.h"
#include "transfer/page_warmer.h"
#include "transfer/segment_memory.h"
#include "transfer/tcp_server.h"
#include "transfer/tcp_transport.h"

using namespace crescent;
using namespace crescent::transfer;
using crescent::bench::Buffer;
using crescent::bench::Fixed;

namespace {

using crescent::perf::Now;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "tcp_path_perf: %s\n", what.c_str());
  std::exit(2);
}

// GB/s of one raw repetition.
double GBs(StatusOr<bench::RepSample> s) {
  if (!s.ok()) Die("raw reference: " + s.status().ToString());
  if (s->errors > 0) Die("raw reference: " + s->first_error);
  return double(s->bytes_moved) / s->seconds / 1e9;
}

std::string CongestionLine(const std::string& name) {
  if (!name.empty()) return "TCP congestion control: " + name;
  std::ifstream f("/proc/sys/net/ipv4/tcp_congestion_control");
  std::string def = "unknown";
  f >> def;
  return "TCP congestion control: " + def + " (the system default)";
}

// Rows of GB/s figures over reps: median [min .. max], and against a baseline
// row the median of the per-rep ratios (rows measured side by side).
class Rows {
 public:
  void Add(const std::string& name, const std::vector<double>& reps, const std::string& base = "") {
    reps_.emplace_back(name, reps);
    std::string ratio;
    if (!base.empty()) {
      for (const auto& [n, b] : reps_) {
        if (n != base || b.size() != reps.size()) continue;
        std::vector<double> q;
        for (size_t i = 0; i < reps.size(); ++i) {
          if (b[i] > 0) q.push_back(reps[i] / b[i]);
        }
        ratio = Fixed(bench::Median(q), 2) + "× " + base;
      }
    }
    std::string range;
    if (!reps.empty()) {
      const auto [lo, hi] = std::minmax_element(reps.begin(), reps.end());
      range = Fixed(*lo, 3) + " .. " + Fixed(*hi, 3);
    }
    table_.AddRow({name, Fixed(bench::Median(reps), 3), range, ratio});
  }
  // Prints the rows added since the last Print.
  void Print() {
    std::printf("%s", table_.Render().c_str());
    table_ = bench::Table({"phase", "GB/s", "min .. max", "ratio"});
  }

 private:
  bench::Table table_{{"phase", "GB/s", "min .. max", "ratio"}};
  std::vector<std::pair<std::string, std::vector<double>>> reps_;
};

struct Flags {
  int reps = 7;
  size_t mib = 128;
  size_t batch = 8;
  std::string congestion;  // both ends and the raw references; "": system default
};

Flags Parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char* usage =
        "usage: tcp_path_perf [--reps N] [--mib-per-phase M] [--batch B] [--tcp-congestion NAME]";
    if (i + 1 >= argc) Die(usage);
    const char* v = argv[++i];
    if (a == "--reps") {
      f.reps = std::max(1, std::atoi(v));
    } else if (a == "--mib-per-phase") {
      f.mib = std::max<size_t>(8, std::strtoull(v, nullptr, 10));
    } else if (a == "--batch") {
      f.batch = std::max<size_t>(1, std::strtoull(v, nullptr, 10));
    } else if (a == "--tcp-congestion") {
      f.congestion = v;
    } else {
      Die(usage);
    }
  }
  return f;
}

template <typename T>
T Must(StatusOr<T> v, const char* what) {
  if (!v.ok()) Die(std::string(what) + ": " + v.status().ToString());
  return std::move(v.value());
}

}  // namespace

int main(int argc, char** argv) {
  const Flags f = Parse(argc, argv);
  const size_t phase = f.mib << 20;
  auto signer = Must(CapabilitySigner::Create("tcp-path-perf-secret"), "signer");
  auto segment = Must(SegmentMemory::Create("tcp-path-perf", phase), "segment");
  if (Status s = CheckCongestionControl(f.congestion); !s.ok()) Die(s.ToString());
  auto server =
      Must(TcpDataServer::Start({.congestion = f.congestion}, *segment, signer), "server");
  const std::string endpoint = "127.0.0.1:" + std::to_string(server->port());
  segment->SetBinding(endpoint);
  segment->SetId(1);
  std::unique_ptr<Transport> tcp = MakeTcpTransport({.congestion = f.congestion});

  Buffer src(phase), dst(phase);  // pre-faulted
  for (size_t i = 0; i < phase; i += 64) src.data()[i] = std::byte(i * 131 + (i >> 20));

  // `n` objects of `size` bytes, `batch` per Execute: puts from src into the
  // segment, or gets from the segment into dst. GB/s.
  auto transfer = [&](AccessOp op, size_t size, size_t batch) {
    const size_t n = phase / size;
    std::vector<TransferOp> ops;
    double t0 = Now();
    for (size_t i = 0; i < n; ++i) {
      std::byte* buf = (op == AccessOp::kRead ? dst : src).data() + i * size;
      ops.push_back(
          {endpoint, signer.Sign(endpoint, 1, i * size, size, op, UnixNowMs() + 60000), buf});
      if (ops.size() < batch && i + 1 < n) continue;
      for (const Status& s : tcp->Execute(ops, 10000)) {
        if (!s.ok()) Die("transfer failed: " + s.ToString());
      }
      ops.clear();
    }
    double gbs = n * size / (Now() - t0) / 1e9;
    if (op == AccessOp::kRead) {
      if (std::memcmp(src.data(), dst.data(), n * size) != 0) Die("read bytes differ");
      std::memset(dst.data(), 1, n * size);
    }
    return gbs;
  };

  std::printf("tcp_path_perf: %s  %s\n", bench::MachineLine(bench::DescribeMachine()).c_str(),
              CongestionLine(f.congestion).c_str());
  std::printf("  reps %d (median shown, [min .. max]), %zu MiB per phase, batches of %zu\n", f.reps,
              f.mib, f.batch);
  Rows t;
  const std::string b = std::to_string(f.batch);
  for (size_t size : {size_t{1} << 20, size_t{4} << 20}) {
    const std::string m = std::to_string(size >> 20) + " MiB";
    const uint64_t n = phase / size;
    // The raw stream between two warm object-sized buffers, as the baseline's.
    bench::Buffer sink(size);
    const bench::StreamEnds ends[] = {{src.bytes(), sink.span()}};
    struct Phase {
      std::string name;
      std::function<double()> run;
      std::vector<double> got;
    };
    // Puts come before gets within a rep (gets read what the puts wrote), so
    // put and get each form one phase; the four phases rotate.
    std::vector<Phase> phases = {
        {"raw TCP stream, " + m + " writes",
         [&] { return GBs(bench::TcpStreamsOnce(size, n, ends, f.congestion)); },
         {}},
        {"raw TCP request/response, " + m,
         [&] { return GBs(bench::RawShapeOnce({}, size, n, src.bytes(), f.congestion)); },
         {}},
        {"transport put+get, 1 per call", nullptr, {}},
        {"transport put+get, " + b + " per call", nullptr, {}}};
    std::vector<double> put1, get1, putb, getb;
    phases[2].run = [&] {
      put1.push_back(transfer(AccessOp::kWrite, size, 1));
      get1.push_back(transfer(AccessOp::kRead, size, 1));
      return 0.0;
    };
    phases[3].run = [&] {
      putb.push_back(transfer(AccessOp::kWrite, size, f.batch));
      getb.push_back(transfer(AccessOp::kRead, size, f.batch));
      return 0.0;
    };
    for (int r = -1; r < f.reps; ++r) {
      for (size_t k = 0; k < phases.size(); ++k) {
        Phase& p = phases[(k + static_cast<size_t>(r + 1)) % phases.size()];
        double v = p.run();
        if (r >= 0) p.got.push_back(v);
      }
      if (r < 0) put1.clear(), get1.clear(), putb.clear(), getb.clear();  // the warm-up
    }
    std::printf("\nObjects of %s\n", m.c_str());
    const std::string& base = phases[0].name;
    t.Add(base, phases[0].got);
    t.Add(phases[1].name, phases[1].got, base);
    t.Add("TCP transport put, " + m, put1, base);
    t.Add("TCP transport get, " + m, get1, base);
    t.Add("TCP transport put batch " + b + ", " + m, putb, base);
    t.Add("TCP transport get batch " + b + ", " + m, getb, base);
    t.Print();
  }
  // The first pass of 1 MiB puts into a fresh segment, as a new store node
  // sees it: with its pages untouched, and after a PageWarmer touched them
  // (what StoreNode does in the background). Cold and warmed alternate per rep.
  std::vector<double> cold, warmed;
  const size_t first = size_t{1} << 20;
  for (int r = 0; r < f.reps; ++r) {
    for (bool warm : {r % 2 == 0, r % 2 != 0}) {
      auto fresh = Must(SegmentMemory::Create("tcp-path-perf-fresh", phase), "fresh segment");
      if (warm) PageWarmer(fresh->data(), fresh->size()).Wait();
      auto srv = Must(TcpDataServer::Start({.congestion = f.congestion}, *fresh, signer), "server");
      const std::string ep = "127.0.0.1:" + std::to_string(srv->port());
      fresh->SetBinding(ep);
      fresh->SetId(1);
      double t0 = Now();
      for (size_t off = 0; off + first <= phase; off += first) {
        TransferOp op{ep, signer.Sign(ep, 1, off, first, AccessOp::kWrite, UnixNowMs() + 60000),
                      src.data() + off};
        for (const Status& st : tcp->Execute({&op, 1}, 10000)) {
          if (!st.ok()) Die("fresh-segment put failed: " + st.ToString());
        }
      }
      (warm ? warmed : cold).push_back(phase / (Now() - t0) / 1e9);
      srv->Stop();
    }
  }
  std::printf("\nFirst pass into a fresh segment, 1 MiB puts, 1 per call\n");
  const std::string cold_row = "fresh segment, pages untouched";
  t.Add(cold_row, cold);
  t.Add("fresh segment, pages warmed first (PageWarmer)", warmed, cold_row);
  t.Print();

  std::printf("\nat end: %s", bench::MachineLine(bench::DescribeMachine()).c_str());
  return 0;
}
