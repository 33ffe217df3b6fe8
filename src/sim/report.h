// SimReport: the results of one `crescent sim` invocation (every policy ×
// capacity run over one trace), and the two text forms it prints: a readable
// table (policies as rows, capacities as columns) and JSON lines (one object
// per run, for scripts). The SVG curve lives in mrc_plot.h.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cache/adaptive_policy.h"
#include "sim/capacity.h"
#include "sim/simulator.h"

namespace crescent::sim {

// What the adaptive policy did during a run: its candidates, the timeline of
// their windowed hit ratios and which one it followed, and its sampling rate.
struct ScheduleTrace {
  std::vector<std::string> labels;
  std::vector<cache::AdaptivePolicy::TimelinePoint> points;
  std::string followed;       // the candidate followed at the end
  size_t moves = 0;           // times the followed candidate changed
  size_t rejected_moves = 0;  // moves rehearsed and not made
  std::string rehearsing;     // the candidate a move to was being rehearsed at the end, or ""
  double sample_rate = 0;
};

struct RunResult {
  SimStats stats;
  double seconds = 0;                     // wall time of this run (policy construction + replay)
  std::optional<ScheduleTrace> schedule;  // adaptive runs of the policy engine only

  double refs_per_sec() const { return seconds > 0 ? stats.block_refs / seconds : 0.0; }
};

struct SimReport {
  std::string trace;  // the trace path as given
  uint64_t requests = 0;
  uint64_t block_refs = 0;
  uint64_t distinct_blocks = 0;
  uint64_t skipped_lines = 0;
  std::vector<std::string> policies;
  std::vector<Capacity> capacities;
  // Policy-major: the run of policies[p] at capacities[c] is runs[p * capacities.size() + c].
  std::vector<RunResult> runs;

  const RunResult& At(size_t p, size_t c) const { return runs[p * capacities.size() + c]; }
};

// One JSON object for run (p, c), keys in this order: trace, policy, capacity (the spec),
// capacity_blocks, distinct_blocks, requests, block_refs, hit_blocks, hit_ratio,
// seconds, refs_per_sec, skipped_lines; for an adaptive run also followed (the
// candidate followed at the end), moves, rejected_moves, rehearsing and
// sample_rate.
nlohmann::ordered_json RunToJson(const SimReport& report, size_t p, size_t c);

// Every run as JSON, one object per line, policy-major.
std::string FormatJsonLines(const SimReport& report);

// The aligned table, with a header naming the trace and a per-policy
// throughput column, then a line per adaptive run: what it followed at the
// end, how often it moved, and its sampling rate.
std::string FormatTable(const SimReport& report);

// What an adaptive policy has done so far, for a RunResult.
ScheduleTrace TraceOf(const cache::AdaptivePolicy& policy);

}  // namespace crescent::sim
