// The workload shapes `crescent bench` runs (driver.h) against every system:
// options, key layouts, payload stamps, buffers and the parallel start, built
// here once so Crescent and Redis see the same keys and sizes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bench/results.h"
#include "crescent/tls_config.h"

namespace crescent::bench {

struct WorkloadOptions {
  std::vector<uint64_t> sizes;              // put-get object sizes
  std::vector<int> batches = {16};          // put-get: first entry; exists: every entry
  std::vector<double> misses = {0};         // exists miss ratios
  int clients = 1;                          // client threads
  int reps = 3;                             // repetitions (medians are reported)
  uint64_t bytes_per_client = 64ull << 20;  // put-get: bytes per client per phase
  uint64_t min_ops = 4;                     // put-get: objects per client per phase, at least
  uint64_t max_ops = 4096;                  // ... and at most
  uint64_t keys_per_client = 100000;        // exists: keys per client per setting
  uint64_t min_calls = 20;                  // exists: calls per client, at least
  uint64_t max_calls = 2000;                // ... and at most
  uint64_t exists_value_size = 64;          // exists: value size of the stored keys
  // TCP congestion control of Crescent's data connections and of the raw
  // references alike, so their ratios compare like with like ("": the system's).
  std::string tcp_congestion;
  // Crescent gets verify end-to-end checksums (ClientConfig::verify_checksums).
  bool verify_checksums = true;
  // Crescent's hot control calls use the lean control protocol
  // (ClientConfig::lean_control); false: gRPC, to measure what it gains.
  bool lean_control = true;
  // Crescent's clients' location cache (ClientConfig::location_cache), in
  // keys; 0: off, every get asks the master.
  size_t location_cache = 0;
  // Crescent's clients' token (ClientConfig::token); empty: none.
  std::string token;
  // Their TLS to the master (ClientConfig::tls); none by default.
  TlsConfig tls;
  // Called after each measured phase with a label, for a progress bar.
  std::function<void(const std::string&)> on_phase;

  int batch() const { return batches.empty() ? 1 : batches.front(); }
  uint64_t OpsFor(uint64_t size) const;     // objects per client per phase
  uint64_t CallsFor(uint64_t batch) const;  // exists calls per client
};

// Phases the drivers report, for progress totals.
inline constexpr int kPutGetPhases = 4;  // put, get, batch_put, batch_get

// Batch phases make at least this many calls per client, so their p50/p99 mean
// something even when few objects fill the byte budget.
inline constexpr uint64_t kMinBatchCalls = 4;

// Runs body(c) for c in [0, clients) on threads released together; returns the
// wall time in seconds from the release to the last thread's end.
double RunParallel(int clients, const std::function<void(int)>& body);

// A unique key prefix for this process and run ("bench-PID-NANOS").
std::string RunPrefix();

// The stamp a put writes into the first 8 bytes of an object (0 < size < 8:
// nothing is stamped).
uint64_t Stamp(uint64_t size, int rep, int client, uint64_t index, int kind);

// An aligned, pre-faulted buffer.
struct Buffer {
  explicit Buffer(size_t size);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  std::span<std::byte> span() { return {data_, size_}; }

 private:
  std::byte* data_;
  size_t size_;
};
// Bytes of one client's buffer: a batch of the largest size (0: no sizes).
size_t ClientBufferSize(const WorkloadOptions& o);

// The keys one exists call asks: `hits` from the stored pool, the rest absent.
// Deterministic in (client, call) so Crescent and Redis ask the same keys.
std::vector<std::string> ExistsKeys(const std::string& prefix, uint64_t pool, int batch, int hits,
                                    int client, uint64_t call);
// Per client, the keys of one put/get repetition under `base`: `n` for the
// single-object phases and `batched` for the batch phases. Built before
// timing, the same for Crescent and Redis.
struct PutGetKeys {
  std::vector<std::vector<std::string>> single, batched;
};
PutGetKeys MakePutGetKeys(const std::string& base, int clients, uint64_t n, uint64_t batched);

// Per client, a rotating set of min(calls, 64) call key lists built before
// timing: call k of client c asks plans[c][k % plans[c].size()].
std::vector<std::vector<std::vector<std::string>>> ExistsPlans(const std::string& prefix,
                                                               uint64_t pool, int batch, int hits,
                                                               int clients, uint64_t calls);
std::string ExistsPoolKey(const std::string& prefix, uint64_t i);
uint64_t ExistsPoolSize(const WorkloadOptions& o);
int ExistsHits(int batch, double miss);

}  // namespace crescent::bench
