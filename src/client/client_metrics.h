// ClientMetrics: the client's own measurements, by operation family: call
// latency (one histogram per family; a batch call is one observation), keys
// that succeeded or failed, and payload bytes put and got. The counters that
// other parts keep (retries, shared-memory and replica fallbacks, copy-ahead)
// are read from them when rendering (client.cc), so each has one owner.
//
// Concurrency: recording is lock-free (histograms and relaxed atomics), from
// any thread that calls the client.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>

#include "metrics/histogram.h"
#include "metrics/text_writer.h"

namespace crescent::client {

enum class ClientOp : uint8_t {
  kPut,          // Put, BatchPut, PutFrom, BatchPutFrom
  kGet,          // Get, BatchGet, GetInto, BatchGetInto, GetLongestPrefix
  kGetPrefix,    // GetPrefixInto
  kExists,       // Exists, BatchExists
  kQueryPrefix,  // BatchQueryPrefix
  kRemove,       // Remove, BatchRemove, RemoveByPrefix, RemoveAll
  kList,         // List
  kEndSession,   // EndSession
};
inline constexpr size_t kClientOpCount = static_cast<size_t>(ClientOp::kEndSession) + 1;
std::string_view ClientOpName(ClientOp op);

// Why a key the location cache held was asked of the master after all
// (ClientCounters::location_fallbacks_*).
enum class LocationFallback : uint8_t { kChecksum, kExpired, kRefused, kUnreachable };
inline constexpr size_t kLocationFallbackCount = 4;
std::string_view LocationFallbackName(LocationFallback reason);

class ClientMetrics {
 public:
  ClientMetrics();
  void RecordCall(ClientOp op, uint64_t ns, uint64_t ok_keys, uint64_t failed_keys) {
    Op& o = ops_[static_cast<size_t>(op)];
    o.latency->Record(ns);
    o.ok_keys.fetch_add(ok_keys, std::memory_order_relaxed);
    o.failed_keys.fetch_add(failed_keys, std::memory_order_relaxed);
  }
  void AddBytes(ClientOp op, uint64_t bytes) {
    ops_[static_cast<size_t>(op)].bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
  metrics::HistogramSnapshot Latency(ClientOp op) const {
    return ops_[static_cast<size_t>(op)].latency->Snapshot();
  }
  uint64_t Keys(ClientOp op, bool ok) const {
    const Op& o = ops_[static_cast<size_t>(op)];
    return (ok ? o.ok_keys : o.failed_keys).load(std::memory_order_relaxed);
  }
  uint64_t Bytes(ClientOp op) const {
    return ops_[static_cast<size_t>(op)].bytes.load(std::memory_order_relaxed);
  }
  // The location cache's lookups (ClientConfig::location_cache).
  void AddLocationLookups(uint64_t hits, uint64_t misses) {
    location_hits_.fetch_add(hits, std::memory_order_relaxed);
    location_misses_.fetch_add(misses, std::memory_order_relaxed);
  }
  void AddLocationFallback(LocationFallback reason) {
    location_fallbacks_[static_cast<size_t>(reason)].fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t LocationHits() const { return location_hits_.load(std::memory_order_relaxed); }
  uint64_t LocationMisses() const { return location_misses_.load(std::memory_order_relaxed); }
  uint64_t LocationFallbacks(LocationFallback reason) const {
    return location_fallbacks_[static_cast<size_t>(reason)].load(std::memory_order_relaxed);
  }
  // crescent_client_op_duration_seconds, crescent_client_keys_total,
  // crescent_client_bytes_total, crescent_client_location_cache_total.
  void Collect(metrics::TextWriter& w) const;

 private:
  struct Op {
    std::unique_ptr<metrics::Histogram> latency;
    std::atomic<uint64_t> ok_keys{0};
    std::atomic<uint64_t> failed_keys{0};
    std::atomic<uint64_t> bytes{0};
  };
  std::array<Op, kClientOpCount> ops_;
  std::atomic<uint64_t> location_hits_{0};
  std::atomic<uint64_t> location_misses_{0};
  std::array<std::atomic<uint64_t>, kLocationFallbackCount> location_fallbacks_{};
};

// Times one client call from construction; Done() records it.
class CallTimer {
 public:
  CallTimer(ClientMetrics& m, ClientOp op)
      : m_(m), op_(op), start_(std::chrono::steady_clock::now()) {}
  void Done(uint64_t ok_keys, uint64_t failed_keys) {
    m_.RecordCall(op_,
                  static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                            std::chrono::steady_clock::now() - start_)
                                            .count()),
                  ok_keys, failed_keys);
  }

 private:
  ClientMetrics& m_;
  ClientOp op_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace crescent::client
