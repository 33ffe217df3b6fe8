// `crescent bench multi-buffer`: what a key put from (and read into) many
// slices costs against the same bytes in one buffer, side by side, over TCP
// and shared memory, on an embedded cluster. The slices are laid out as an
// engine's layer-first KV cache holds a page (the vLLM and SGLang
// multi-buffer calls): slice j of key k at layer region j, offset k. A third
// leg gathers the slices into a staging buffer and puts that (and reads into
// it and scatters), the copy the multi-buffer calls do without.
#include "cli/bench_multi_buffer.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "bench/stats.h"
#include "cli/cli_util.h"
#include "common/format_bytes.h"
#include "crescent/client.h"
#include "server/local_cluster.h"

namespace crescent::cli {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

struct Layout {
  size_t keys, slices, slice;
  std::vector<std::byte> layers;  // slices × keys × slice: the "KV cache"
  std::vector<std::byte> whole;   // keys × (slices × slice): one buffer per key
  std::vector<std::byte> staging;
  std::vector<std::vector<MemorySlice>> Slices() {
    std::vector<std::vector<MemorySlice>> out(keys);
    for (size_t k = 0; k < keys; ++k) {
      for (size_t j = 0; j < slices; ++j) {
        out[k].push_back({layers.data() + (j * keys + k) * slice, slice});
      }
    }
    return out;
  }
  size_t KeyBytes() const { return slices * slice; }
};

// GB/s of one call moving `bytes`, or why it failed.
struct Leg {
  std::map<std::string, std::vector<double>> gbps;  // "put"/"get" -> per round
};

// Whether every key succeeded; the first failure goes to stderr.
bool AllOk(const std::vector<Status>& r) {
  for (const Status& s : r) {
    if (!s.ok()) {
      std::cerr << "crescent bench multi-buffer: " << s.ToString() << "\n";
      return false;
    }
  }
  return true;
}
bool AllOk(const std::vector<StatusOr<size_t>>& r) {
  for (const StatusOr<size_t>& s : r) {
    if (!s.ok()) return AllOk(std::vector<Status>{s.status()});
  }
  return true;
}

std::vector<std::string> Keys(const std::string& prefix, size_t n, int round) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(prefix + "/" + std::to_string(round) + "/" + std::to_string(i));
  }
  return out;
}

// One round of one leg: a batch put then a batch get of every key; false on a failure.
bool RunLeg(Client& c, Layout& l, const std::string& leg, int round, Leg& out) {
  const std::vector<std::string> keys = Keys("mb-" + leg, l.keys, round);
  const double bytes = static_cast<double>(l.keys * l.KeyBytes());
  const std::vector<std::vector<MemorySlice>> sliced = l.Slices();
  std::vector<void*> ptrs;
  std::vector<size_t> sizes(l.keys, l.KeyBytes());
  for (size_t k = 0; k < l.keys; ++k) {
    ptrs.push_back((leg == "staged" ? l.staging.data() : l.whole.data()) + k * l.KeyBytes());
  }
  auto t = Clock::now();
  bool ok = true;
  if (leg == "sliced") {
    ok = AllOk(c.BatchPutFromSlices(keys, sliced));
  } else {
    if (leg == "staged") {  // gather, then one buffer per key
      for (size_t k = 0; k < l.keys; ++k) {
        for (size_t j = 0; j < l.slices; ++j) {
          std::memcpy(l.staging.data() + k * l.KeyBytes() + j * l.slice, sliced[k][j].data,
                      l.slice);
        }
      }
    }
    ok = AllOk(c.BatchPutFrom(keys, ptrs, sizes));
  }
  out.gbps["put"].push_back(bytes / Seconds(t) / 1e9);
  t = Clock::now();
  if (leg == "sliced") {
    ok = ok && AllOk(c.BatchGetIntoSlices(keys, sliced));
  } else {
    ok = ok && AllOk(c.BatchGetInto(keys, ptrs, sizes));
    if (leg == "staged") {  // scatter
      for (size_t k = 0; k < l.keys; ++k) {
        for (size_t j = 0; j < l.slices; ++j) {
          std::memcpy(sliced[k][j].data, l.staging.data() + k * l.KeyBytes() + j * l.slice,
                      l.slice);
        }
      }
    }
  }
  out.gbps["get"].push_back(bytes / Seconds(t) / 1e9);
  (void)c.BatchRemove(keys, true);
  return ok;
}

}  // namespace

int RunMultiBufferBench(const MultiBufferFlags& f) {
  StatusOr<uint64_t> slice = ParseByteSize(f.slice_size);
  if (!slice.ok() || *slice == 0) {
    std::cerr << "crescent bench multi-buffer: --slice-size: "
              << (slice.ok() ? "must be above 0" : slice.status().message()) << "\n";
    return 2;
  }
  Layout l{static_cast<size_t>(f.batch),
           static_cast<size_t>(f.slices),
           static_cast<size_t>(*slice),
           {},
           {},
           {}};
  const size_t total = l.keys * l.KeyBytes();
  l.layers.resize(total);
  l.whole.resize(total);
  l.staging.resize(total);
  for (size_t i = 0; i < total; ++i) {
    l.layers[i] = l.whole[i] = static_cast<std::byte>((i * 131) >> 3);
  }
  server::LocalClusterOptions lo;
  // Removed objects' space stays held until their read capabilities expire
  // (seconds): room for every round's objects.
  lo.segment_size = 3 * total * static_cast<uint64_t>(f.rounds + 1) * 2 + (64ull << 20);
  lo.master.config.lease_ms = 1000;
  auto cluster = server::LocalCluster::Start(lo);
  if (!cluster.ok()) {
    std::cerr << "crescent bench multi-buffer: " << cluster.status().ToString() << "\n";
    return 2;
  }
  (*cluster)->WaitPagesWarm();
  nlohmann::json doc;
  std::ostringstream text;
  text << "multi-buffer: " << l.keys << " keys per call, each " << l.slices << " slices of "
       << FormatBytes(l.slice) << " (" << FormatBytes(l.KeyBytes()) << " a key), " << f.rounds
       << " alternating rounds, medians (GB/s)\n";
  text << "transport  op    one buffer   sliced   staged   sliced/one   staged/one\n";
  std::vector<std::string> transports;
  for (std::stringstream in(f.transports); in.good();) {
    std::string t;
    std::getline(in, t, ',');
    if (t != "tcp" && t != "shm") {
      std::cerr << "crescent bench multi-buffer: --transport: '" << t << "' is not tcp or shm\n";
      return 2;
    }
    transports.push_back(t);
  }
  for (const std::string& transport : transports) {
    ClientConfig cc;
    cc.master_address = (*cluster)->master_address();
    cc.use_shared_memory = transport == "shm";
    auto client = Client::Connect(cc);
    if (!client.ok()) {
      std::cerr << "crescent bench multi-buffer: " << client.status().ToString() << "\n";
      return 2;
    }
    Client& c = **client;
    for (auto* region : {&l.layers, &l.whole, &l.staging}) {
      if (Status s = c.RegisterBuffer(region->data(), region->size()); !s.ok()) {
        std::cerr << "crescent bench multi-buffer: " << s.ToString() << "\n";
        return 2;
      }
    }
    std::map<std::string, Leg> legs;
    const std::vector<std::string> order = {"one", "sliced", "staged"};
    for (int round = -1; round < f.rounds; ++round) {  // round -1 warms up, untimed
      for (size_t i = 0; i < order.size(); ++i) {
        const std::string& leg = order[(i + static_cast<size_t>(round + 1)) % order.size()];
        Leg scratch;
        if (!RunLeg(c, l, leg, round, round < 0 ? scratch : legs[leg])) {
          std::cerr << "crescent bench multi-buffer: a " << leg << " call over " << transport
                    << " failed\n";
          return 2;
        }
      }
    }
    for (const std::string op : {"put", "get"}) {
      const double one = bench::Median(legs["one"].gbps[op]);
      const double sliced = bench::Median(legs["sliced"].gbps[op]);
      const double staged = bench::Median(legs["staged"].gbps[op]);
      char line[160];
      std::snprintf(line, sizeof line, "%-10s %-4s %10.2f %8.2f %8.2f %12.3f %12.3f\n",
                    transport.c_str(), op.c_str(), one, sliced, staged, sliced / one, staged / one);
      text << line;
      doc["rows"].push_back({{"transport", transport},
                             {"op", op},
                             {"one_gbps", one},
                             {"sliced_gbps", sliced},
                             {"staged_gbps", staged},
                             {"sliced_ratio", sliced / one},
                             {"staged_ratio", staged / one}});
    }
  }
  std::cout << text.str() << std::flush;
  if (!f.json.empty()) std::ofstream(f.json) << doc.dump(2) << "\n";
  return 0;
}

}  // namespace crescent::cli
