// What one benchmark phase measured, after taking medians over repetitions,
// plus the table and JSON renderings shared by every `crescent bench` subcommand.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/stats.h"
#include "common/format_bytes.h"

namespace crescent::bench {

// One measured phase (e.g. "get" of 1 MiB objects with 2 clients), medians of
// `reps` repetitions. Byte and item counts are totals over all repetitions, so
// bytes_moved == bytes_requested means every requested byte was moved.
struct PhaseResult {
  std::string system;  // "crescent-tcp", "crescent-shm", "crescent", "redis", "tcp", "memcpy", ...
  std::string op;      // put, get, batch_put, batch_get, exists, stream, copy, ping_pong, ...
  uint64_t size = 0;   // object size in bytes (0 for exists)
  int clients = 1;     // client threads (streams, copy threads)
  int batch = 1;       // items per call
  double miss = 0;     // exists: fraction of keys absent
  double busy_us = 0;  // round trips: untimed caller CPU work before each call
  int reps = 0;
  uint64_t calls = 0;            // calls per repetition
  uint64_t items = 0;            // objects or keys per repetition
  uint64_t bytes_requested = 0;  // over all repetitions
  uint64_t bytes_moved = 0;      // over all repetitions
  uint64_t items_found = 0;      // exists: keys reported present, over all repetitions
  uint64_t items_expected = 0;   // exists: keys that were present, over all repetitions
  uint64_t errors = 0;           // failed calls or mismatched payloads, over all repetitions
  double seconds = 0;            // median wall time of one repetition
  double gb_per_s = 0;           // median, 1e9 bytes per second
  double items_per_s = 0;        // median objects (or keys) per second
  double p50_us = 0;             // median over repetitions of the per-call p50
  double p99_us = 0;             // median over repetitions of the per-call p99
  // Rows measured rep by rep beside a reference (the shm get phases beside
  // memcpy, driver.h): the median over repetitions of this rep's GB/s over the
  // reference's GB/s in the same repetition; 0 when there is none.
  double paired_ratio = 0;
  // Each repetition's GB/s and items/s, in order. Rows run side by side
  // (driver.h: every contender's phase, then the next phase) can be compared
  // repetition by repetition (PairedRatio), so the machine's drift between
  // repetitions cancels out of the ratio.
  std::vector<double> rep_gb_per_s;
  std::vector<double> rep_items_per_s;
  bool side_by_side = false;  // its repetitions ran interleaved with the other contenders'
  std::string first_error;  // the first failure seen, if any
};

// One repetition's raw figures; Summarize() turns several into a PhaseResult.
struct RepSample {
  double seconds = 0;
  uint64_t calls = 0;
  uint64_t items = 0;
  uint64_t bytes_requested = 0;
  uint64_t bytes_moved = 0;
  uint64_t items_found = 0;
  uint64_t items_expected = 0;
  uint64_t errors = 0;
  std::string first_error;
  LatencyRecorder latency;
  // Adds another thread's counters and latencies.
  void Merge(const RepSample& o);
};

// Fills the measured fields of `base` (whose labels are already set) from reps.
PhaseResult Summarize(PhaseResult base, const std::vector<RepSample>& reps);
// A reference's row (a raw stream, a memcpy): its labels, then Summarize().
PhaseResult Reference(const char* system, const char* op, uint64_t size, int clients,
                      const std::vector<RepSample>& reps);

// The median over repetitions of ours / reference, each repetition's figure
// over the reference's in the same repetition (GB/s, or items/s with `items`).
// 0 unless both were run side by side with as many repetitions.
double PairedRatio(const PhaseResult& ours, const PhaseResult& reference, bool items = false);

nlohmann::json ToJson(const PhaseResult& r);

// A plain-text table: a header row, then rows; columns are right-aligned except
// the first, and separated by two spaces.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string Render() const;
  size_t rows() const { return rows_.size(); }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Fixed-point with `digits` decimals.
std::string Fixed(double value, int digits);
// 1234567 -> "1.23M", 12345 -> "12.3k".
std::string Count(double value);

// A comparison of two measured figures against a target ratio.
struct TargetCheck {
  std::string name;      // "TCP get 1MiB vs raw TCP (1 stream)"
  double ours = 0;       // Crescent's figure
  double reference = 0;  // the reference figure
  std::string unit;      // "GB/s", "keys/s"
  double target = 0;     // required ratio ours/reference
  // When set (> 0), the ratio: the median of per-repetition ratios, the two
  // measured side by side (PairedRatio), instead of ours / reference.
  double paired = 0;
  // A latency bound: `reference` is the most `ours` may be, and the ratio is
  // reference / ours.
  bool lower_is_better = false;
  double ratio() const {
    if (paired > 0) return paired;
    if (lower_is_better) return ours > 0 ? reference / ours : 0;
    return reference > 0 ? ours / reference : 0;
  }
  bool met() const { return reference > 0 && ratio() >= target; }
};
nlohmann::json ToJson(const TargetCheck& t);
std::string RenderTargets(const std::vector<TargetCheck>& checks);

}  // namespace crescent::bench
