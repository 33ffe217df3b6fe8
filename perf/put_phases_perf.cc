// put_phases_perf: where a single one-object TCP put's time goes, and what a
// put whose store node ended it inside the master's process would save (the
// "one wait" put: docs/control-plane.md, "Design decisions"). An embedded
// cluster (server::LocalCluster: the master and one store node in this
// process, reached over the master's lean control connection and the node's
// TCP port, as `crescent bench` and `crescent serve` reach them).
//
//   put_phases_perf [--size BYTES] [--puts N] [--reps N]
//
// Per rep, three loops of --puts puts of fresh keys each, in an order that
// rotates from rep to rep (each loop's objects removed, untimed, after it):
//  - "client":   Client::PutFrom from a registered buffer (the product);
//  - "phases":   the same put made of the parts the client makes it of, each
//                timed: BatchPutStart of the key (MasterClient, lean
//                protocol), the write (the TCP transport, the value's XXH3
//                taken as its bytes leave), and BatchPutEnd with that
//                checksum;
//  - "one-wait": PutStart and the write as in "phases", then MasterService::
//                PutEnd called in this process, as a store node in the
//                master's process could call it before answering the write:
//                the floor of a put whose client waits for no end of its own
//                (the node's reactor running the end, which such a put would
//                also pay, is not in it).
// Beside them: the XXH3 of one value alone, once per rep.
// Figures are medians over reps of each loop's per-put p50 (µs) and of its
// objects/s; ratios are medians of per-rep ratios. /proc/loadavg is printed
// before and after (the figures are only comparable within one run). Figures
// only: the exit status is 0 unless a put failed.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/value_hash.h"
#include "crescent/client.h"
#include "perf_util.h"
#include "rpc/master_client.h"
#include "server/local_cluster.h"
#include "transfer/tcp_transport.h"

using namespace crescent;

namespace {

using crescent::perf::Median;
using crescent::perf::Now;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "put_phases_perf: %s\n", what.c_str());
  std::exit(2);
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

// One loop's per-put times in µs, by step ("client" fills `total` only).
struct Steps {
  std::vector<double> start, write, end, total;
};

// One loop's figures, one per rep.
struct Loop {
  std::string name;
  std::vector<double> p50_us, start_us, write_us, end_us, objects_per_s;
};

struct Flags {
  uint64_t size = 1 << 20;
  int puts = 64;
  int reps = 5;
};

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) Die("usage: put_phases_perf [--size BYTES] [--puts N] [--reps N]");
    const long long v = std::atoll(argv[i + 1]);
    if (v <= 0) Die("bad value for " + flag);
    if (flag == "--size")
      f.size = uint64_t(v);
    else if (flag == "--puts")
      f.puts = int(v);
    else if (flag == "--reps")
      f.reps = int(v);
    else
      Die("unknown flag " + flag);
  }
  return f;
}

// The three ways to put one key, on one cluster.
class Putter {
 public:
  Putter(server::LocalCluster& cluster, uint64_t size) : cluster_(cluster), value_(size) {
    for (uint64_t b = 0; b < size; ++b) value_[b] = std::byte(uint8_t(b * 131 + (b >> 12)));
    ClientConfig cc;
    cc.master_address = cluster.master_address();
    cc.use_shared_memory = false;
    auto client = Client::Connect(cc);
    if (!client.ok()) Die("connect: " + client.status().ToString());
    client_ = std::move(client).value();
    if (Status s = client_->RegisterBuffer(value_.data(), value_.size()); !s.ok()) {
      Die("register: " + s.ToString());
    }
    rpc::MasterClientOptions mo;
    mo.address = cluster.master_address();
    auto mc = rpc::MasterClient::Create(mo);
    if (!mc.ok()) Die("master client: " + mc.status().ToString());
    master_ = std::move(mc).value();
    tcp_ = transfer::MakeTcpTransport();
  }

  void Product(const std::string& key, Steps& steps) {
    const double t0 = Now();
    if (Status s = client_->PutFrom(key, value_.data(), value_.size()); !s.ok()) {
      Die("put: " + s.ToString());
    }
    steps.total.push_back((Now() - t0) * 1e6);
  }

  // The client's parts; `in_process` ends the put with a direct call.
  void Stepped(const std::string& key, bool in_process, Steps& steps) {
    const double t0 = Now();
    const std::vector<uint64_t> sizes = {value_.size()};
    std::vector<StatusOr<rpc::RemotePut>> started =
        master_->BatchPutStart(std::span<const std::string>(&key, 1), sizes, {}, false);
    if (!started[0].ok()) Die("put start: " + started[0].status().ToString());
    if (started[0]->replicas.size() != 1) Die("expected one replica");
    const double t1 = Now();
    const rpc::RemoteReplica& r = started[0]->replicas[0];
    uint64_t checksum = 0;
    transfer::TransferOp op(r.endpoint, r.cap, value_.data());
    op.checksum_out = &checksum;
    const Status written = tcp_->Execute(std::span<const transfer::TransferOp>(&op, 1), 10000)[0];
    if (!written.ok()) Die("write: " + written.ToString());
    const double t2 = Now();
    const uint64_t token = started[0]->token;
    const Status ended = in_process
                             ? cluster_.master().PutEnd(key, token, checksum)
                             : master_->BatchPutEnd(std::span<const std::string>(&key, 1),
                                                    std::span<const uint64_t>(&token, 1),
                                                    std::span<const uint64_t>(&checksum, 1))[0];
    if (!ended.ok()) Die("put end: " + ended.ToString());
    const double t3 = Now();
    steps.start.push_back((t1 - t0) * 1e6);
    steps.write.push_back((t2 - t1) * 1e6);
    steps.end.push_back((t3 - t2) * 1e6);
    steps.total.push_back((t3 - t0) * 1e6);
  }

  void Remove(const std::vector<std::string>& keys) {
    for (const Status& s : client_->BatchRemove(keys)) {
      if (!s.ok()) Die("remove: " + s.ToString());
    }
  }

  double HashUs() const {
    const double t0 = Now();
    volatile uint64_t h = HashValue(value_.data(), value_.size());
    (void)h;
    return (Now() - t0) * 1e6;
  }

 private:
  server::LocalCluster& cluster_;
  std::vector<std::byte> value_;
  std::unique_ptr<Client> client_;
  std::unique_ptr<rpc::MasterClient> master_;
  std::unique_ptr<transfer::Transport> tcp_;
};

double RatioOfMedians(const Loop& a, const Loop& b, std::vector<double> Loop::*field) {
  std::vector<double> r;
  for (size_t rep = 0; rep < (a.*field).size(); ++rep)
    r.push_back((a.*field)[rep] / (b.*field)[rep]);
  return Median(r);
}

void Report(const Flags& f, const std::vector<Loop>& loops, const std::vector<double>& hash_us) {
  std::printf("%-10s %10s %10s %12s %12s %12s\n", "loop", "objects/s", "p50 µs", "start p50",
              "write p50", "end p50");
  for (const Loop& l : loops) {
    std::printf("%-10s %10.0f %10.1f", l.name.c_str(), Median(l.objects_per_s), Median(l.p50_us));
    if (l.start_us.empty()) {
      std::printf(" %12s %12s %12s\n", "-", "-", "-");
    } else {
      std::printf(" %12.1f %12.1f %12.1f\n", Median(l.start_us), Median(l.write_us),
                  Median(l.end_us));
    }
  }
  std::printf("XXH3 of one %llu-byte value alone: %.1f µs\n",
              static_cast<unsigned long long>(f.size), Median(hash_us));
  const Loop &client = loops[0], &phases = loops[1], &one = loops[2];
  std::printf("median of per-rep ratios, objects/s: one-wait / phases %.3f, phases / client %.3f\n",
              RatioOfMedians(one, phases, &Loop::objects_per_s),
              RatioOfMedians(phases, client, &Loop::objects_per_s));
  std::printf("median of per-rep ratios, p50: one-wait / phases %.3f, phases / client %.3f\n",
              RatioOfMedians(one, phases, &Loop::p50_us),
              RatioOfMedians(phases, client, &Loop::p50_us));
}

}  // namespace

int main(int argc, char** argv) {
  const Flags f = ParseFlags(argc, argv);
  server::LocalClusterOptions o;
  o.store_nodes = 1;
  o.segment_size = std::max<uint64_t>(uint64_t{256} << 20, 2 * f.size * uint64_t(f.puts));
  auto cluster = server::LocalCluster::Start(o);
  if (!cluster.ok()) Die("cluster: " + cluster.status().ToString());
  (*cluster)->WaitPagesWarm();
  Putter putter(**cluster, f.size);

  std::printf("put_phases_perf: %llu-byte values, %d puts per loop, %d reps; load %s\n",
              static_cast<unsigned long long>(f.size), f.puts, f.reps, LoadAverage().c_str());
  std::vector<Loop> loops(3);
  loops[0].name = "client";
  loops[1].name = "phases";
  loops[2].name = "one-wait";
  std::vector<double> hash_us;
  uint64_t serial = 0;
  for (int rep = 0; rep < f.reps; ++rep) {
    for (size_t j = 0; j < loops.size(); ++j) {
      const size_t which = (j + size_t(rep)) % loops.size();
      Loop& loop = loops[which];
      std::vector<std::string> keys;
      for (int p = 0; p < f.puts; ++p) keys.push_back("put" + std::to_string(serial++));
      Steps steps;
      const double t0 = Now();
      for (const std::string& key : keys) {
        if (which == 0)
          putter.Product(key, steps);
        else
          putter.Stepped(key, which == 2, steps);
      }
      loop.objects_per_s.push_back(f.puts / (Now() - t0));
      loop.p50_us.push_back(Median(steps.total));
      if (which != 0) {
        loop.start_us.push_back(Median(steps.start));
        loop.write_us.push_back(Median(steps.write));
        loop.end_us.push_back(Median(steps.end));
      }
      putter.Remove(keys);
    }
    hash_us.push_back(putter.HashUs());
  }
  Report(f, loops, hash_us);
  std::printf("load after: %s\n", LoadAverage().c_str());
  return 0;
}
