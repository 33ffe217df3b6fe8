// checksum_perf: what verifying end-to-end checksums costs a get, in one run.
// An embedded cluster (one store node, shared memory on) and, per transport
// (shm, tcp), two clients that differ only in ClientConfig::verify_checksums.
// Each reads the same objects, which it has read once before (so same-host
// gets copy ahead, as a client reading back recent objects does).
//
//   checksum_perf [--size BYTES] [--objects N] [--calls N] [--batch B] [--reps N]
//
// Per rep the four (transport, verify) readers run in an order that rotates
// from rep to rep; each makes --calls one-object gets (GetInto) and --calls /
// --batch batch gets (BatchGetInto of --batch objects), cycling over the
// objects. Figures are medians over reps of GB/s; a ratio is the median of the
// per-rep ratios verify / no-verify (the two measured side by side). Figures
// only: the exit status is 0 unless a get failed or returned other bytes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "crescent/client.h"
#include "perf_util.h"
#include "server/local_cluster.h"

using namespace crescent;

namespace {

using crescent::perf::Now;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "checksum_perf: %s\n", what.c_str());
  std::exit(2);
}

struct Reader {
  std::string name;
  std::unique_ptr<Client> client;
  std::vector<std::byte> arena;  // registered; one object-sized slot per batch entry
  std::vector<double> single_gbs, batch_gbs;
};

}  // namespace

int main(int argc, char** argv) {
  uint64_t size = 1 << 20;
  int objects = 64, calls = 400, batch = 16, reps = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const long long v = std::atoll(argv[i + 1]);
    if (v <= 0) Die("bad value for " + flag);
    if (flag == "--size")
      size = uint64_t(v);
    else if (flag == "--objects")
      objects = int(v);
    else if (flag == "--calls")
      calls = int(v);
    else if (flag == "--batch")
      batch = int(v);
    else if (flag == "--reps")
      reps = int(v);
    else
      Die("unknown flag " + flag);
  }
  if (batch > objects) Die("--batch must not exceed --objects");

  server::LocalClusterOptions o;
  o.store_nodes = 1;
  o.segment_size = std::max<uint64_t>(uint64_t{256} << 20, 2 * size * uint64_t(objects));
  auto cluster = server::LocalCluster::Start(o);
  if (!cluster.ok()) Die("cluster: " + cluster.status().ToString());
  (*cluster)->WaitPagesWarm();

  std::vector<std::string> keys;
  std::vector<std::vector<std::byte>> values;
  {
    ClientConfig cc;
    cc.master_address = (*cluster)->master_address();
    auto writer = Client::Connect(cc);
    if (!writer.ok()) Die("connect: " + writer.status().ToString());
    for (int i = 0; i < objects; ++i) {
      keys.push_back("obj" + std::to_string(i));
      std::vector<std::byte> v(size);
      for (uint64_t b = 0; b < size; ++b)
        v[b] = std::byte(uint8_t(b * 131 + uint64_t(i) * 7 + (b >> 12)));
      if (Status s = (*writer)->Put(keys.back(), v); !s.ok()) Die("put: " + s.ToString());
      values.push_back(std::move(v));
    }
  }

  std::vector<Reader> readers;
  for (bool shm : {true, false}) {
    for (bool verify : {true, false}) {
      ClientConfig cc;
      cc.master_address = (*cluster)->master_address();
      cc.use_shared_memory = shm;
      cc.verify_checksums = verify;
      cc.transfer_timeout_ms = 60000;
      auto c = Client::Connect(cc);
      if (!c.ok()) Die("connect: " + c.status().ToString());
      Reader r{std::string(shm ? "shm" : "tcp") + (verify ? " verify" : " no-verify"),
               std::move(*c),
               std::vector<std::byte>(size * uint64_t(batch)),
               {},
               {}};
      if (Status s = r.client->RegisterBuffer(r.arena.data(), r.arena.size()); !s.ok()) {
        Die("register: " + s.ToString());
      }
      // One read of every object: its place is remembered, as after a recent read.
      for (int i = 0; i < objects; ++i) {
        auto n = r.client->GetInto(keys[i], r.arena.data(), size);
        if (!n.ok()) Die(r.name + " warm-up get: " + n.status().ToString());
        if (std::memcmp(r.arena.data(), values[i].data(), size) != 0) Die(r.name + ": wrong bytes");
      }
      readers.push_back(std::move(r));
    }
  }

  std::vector<void*> ptrs(batch);
  std::vector<size_t> caps(batch, size);
  for (int rep = 0; rep < reps; ++rep) {
    for (size_t j = 0; j < readers.size(); ++j) {
      Reader& r = readers[(j + size_t(rep)) % readers.size()];
      double t0 = Now();
      for (int c = 0; c < calls; ++c) {
        auto n = r.client->GetInto(keys[size_t(c) % keys.size()], r.arena.data(), size);
        if (!n.ok()) Die(r.name + " get: " + n.status().ToString());
      }
      r.single_gbs.push_back(double(size) * calls / (Now() - t0) / 1e9);
      const int batches = std::max(1, calls / batch);
      for (int k = 0; k < batch; ++k) ptrs[k] = r.arena.data() + uint64_t(k) * size;
      t0 = Now();
      for (int c = 0; c < batches; ++c) {
        std::vector<std::string> some;
        for (int k = 0; k < batch; ++k) some.push_back(keys[size_t(c * batch + k) % keys.size()]);
        for (const auto& n : r.client->BatchGetInto(some, ptrs, caps)) {
          if (!n.ok()) Die(r.name + " batch get: " + n.status().ToString());
        }
      }
      r.batch_gbs.push_back(double(size) * batch * batches / (Now() - t0) / 1e9);
    }
    // The last batch's bytes are its objects': nothing wrong came back.
    const int last = std::max(1, calls / batch) - 1;
    for (Reader& r : readers) {
      for (int k = 0; k < batch; ++k) {
        const auto& want = values[size_t(last * batch + k) % values.size()];
        if (std::memcmp(r.arena.data() + uint64_t(k) * size, want.data(), size) != 0) {
          Die(r.name + ": wrong bytes");
        }
      }
    }
  }

  std::printf(
      "checksum_perf: %llu-byte objects, %d objects, %d calls per phase, batch %d, %d reps\n",
      static_cast<unsigned long long>(size), objects, calls, batch, reps);
  std::printf("%-16s %14s %14s\n", "reader", "get GB/s", "batch GB/s");
  for (const Reader& r : readers) {
    std::printf("%-16s %14.2f %14.2f\n", r.name.c_str(), perf::Median(r.single_gbs),
                perf::Median(r.batch_gbs));
  }
  std::printf("\nverify / no-verify, median of per-rep ratios:\n");
  for (size_t t = 0; t < readers.size(); t += 2) {
    const Reader& v = readers[t];
    const Reader& n = readers[t + 1];
    std::vector<double> single, batched;
    for (int rep = 0; rep < reps; ++rep) {
      single.push_back(v.single_gbs[rep] / n.single_gbs[rep]);
      batched.push_back(v.batch_gbs[rep] / n.batch_gbs[rep]);
    }
    std::printf("%-16s get %.3f   batch get %.3f\n", v.name.substr(0, 3).c_str(),
                perf::Median(single), perf::Median(batched));
  }
  return 0;
}
