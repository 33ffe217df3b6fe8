#include "sim/report.h"

#include <algorithm>
#include <cstdio>

namespace crescent::sim {

namespace {

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

// 12345678 -> "12.3M".
std::string Rate(double per_sec) {
  if (per_sec >= 1e9) return Fixed(per_sec / 1e9, 2) + "G";
  if (per_sec >= 1e6) return Fixed(per_sec / 1e6, 2) + "M";
  if (per_sec >= 1e3) return Fixed(per_sec / 1e3, 2) + "K";
  return Fixed(per_sec, 0);
}

std::string PadLeft(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string PadRight(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

}  // namespace

ScheduleTrace TraceOf(const cache::AdaptivePolicy& policy) {
  ScheduleTrace trace;
  for (const cache::AdaptiveCandidate& c : policy.Candidates()) {
    trace.labels.push_back(c.label);
  }
  trace.points = policy.Timeline();
  trace.followed = trace.labels[policy.Followed()];
  trace.moves = policy.Moves();
  trace.rejected_moves = policy.RejectedMoves();
  if (const std::optional<size_t> target = policy.Rehearsing()) {
    trace.rehearsing = trace.labels[*target];
  }
  trace.sample_rate = policy.SampleRate();
  return trace;
}

nlohmann::ordered_json RunToJson(const SimReport& report, size_t p, size_t c) {
  const RunResult& run = report.At(p, c);
  nlohmann::ordered_json json{
      {"trace", report.trace},
      {"policy", report.policies[p]},
      {"capacity", report.capacities[c].label},
      {"capacity_blocks", report.capacities[c].blocks},
      {"distinct_blocks", report.distinct_blocks},
      {"requests", run.stats.requests},
      {"block_refs", run.stats.block_refs},
      {"hit_blocks", run.stats.hit_blocks},
      {"hit_ratio", run.stats.hit_ratio()},
      {"seconds", run.seconds},
      {"refs_per_sec", run.refs_per_sec()},
      {"skipped_lines", report.skipped_lines},
  };
  if (run.schedule) {
    json["followed"] = run.schedule->followed;
    json["moves"] = run.schedule->moves;
    json["rejected_moves"] = run.schedule->rejected_moves;
    json["rehearsing"] = run.schedule->rehearsing;
    json["sample_rate"] = run.schedule->sample_rate;
  }
  return json;
}

std::string FormatJsonLines(const SimReport& report) {
  std::string out;
  for (size_t p = 0; p < report.policies.size(); ++p) {
    for (size_t c = 0; c < report.capacities.size(); ++c) {
      out += RunToJson(report, p, c).dump();
      out += '\n';
    }
  }
  return out;
}

std::string FormatTable(const SimReport& report) {
  std::string out = "trace " + report.trace + ": " + std::to_string(report.requests) +
                    " requests, " + std::to_string(report.block_refs) + " block refs, " +
                    std::to_string(report.distinct_blocks) + " distinct blocks";
  if (report.skipped_lines > 0) {
    out += ", " + std::to_string(report.skipped_lines) + " malformed lines skipped";
  }
  out += "\nprefix hit ratio by capacity (blocks)\n\n";

  size_t name_width = std::string("policy").size();
  for (const std::string& p : report.policies) name_width = std::max(name_width, p.size());
  std::vector<std::string> blocks_row;
  std::vector<size_t> widths;
  for (const Capacity& cap : report.capacities) {
    // Appended piecewise: "(" + std::to_string(...) trips a GCC 12 -Wrestrict false positive.
    std::string blocks = "(";
    blocks += std::to_string(cap.blocks);
    blocks += ')';
    blocks_row.push_back(std::move(blocks));
    widths.push_back(std::max<size_t>({cap.label.size(), blocks_row.back().size(), 6}));
  }
  const size_t rate_width = std::string("refs/s").size() + 2;

  std::string line1 = PadRight("policy", name_width);
  std::string line2 = std::string(name_width, ' ');
  for (size_t c = 0; c < report.capacities.size(); ++c) {
    line1 += "  " + PadLeft(report.capacities[c].label, widths[c]);
    line2 += "  " + PadLeft(blocks_row[c], widths[c]);
  }
  line1 += "  " + PadLeft("refs/s", rate_width);
  out += line1 + "\n" + line2 + "\n";

  uint64_t total_refs = 0;
  double total_seconds = 0;
  for (size_t p = 0; p < report.policies.size(); ++p) {
    std::string row = PadRight(report.policies[p], name_width);
    uint64_t refs = 0;
    double seconds = 0;
    for (size_t c = 0; c < report.capacities.size(); ++c) {
      const RunResult& run = report.At(p, c);
      row += "  " + PadLeft(Fixed(run.stats.hit_ratio(), 4), widths[c]);
      refs += run.stats.block_refs;
      seconds += run.seconds;
    }
    row += "  " + PadLeft(seconds > 0 ? Rate(refs / seconds) : "-", rate_width);
    out += row + "\n";
    total_refs += refs;
    total_seconds += seconds;
  }
  std::string schedules;
  for (size_t p = 0; p < report.policies.size(); ++p) {
    for (size_t c = 0; c < report.capacities.size(); ++c) {
      const std::optional<ScheduleTrace>& s = report.At(p, c).schedule;
      if (!s) continue;
      schedules +=
          report.policies[p] + " @ " + report.capacities[c].label + ": followed " + s->followed +
          " at the end, " + std::to_string(s->moves) + " move" + (s->moves == 1 ? "" : "s") +
          (s->rejected_moves == 0
               ? std::string()
               : " (" + std::to_string(s->rejected_moves) + " rehearsed and not made)") +
          (s->rehearsing.empty() ? std::string() : ", rehearsing a move to " + s->rehearsing) +
          ", sampling " + Fixed(100 * s->sample_rate, 1) + "% of keys\n";
    }
  }
  if (!schedules.empty()) out += "\n" + schedules;
  out += "\nsimulated " + std::to_string(total_refs) + " block refs in " + Fixed(total_seconds, 3) +
         " s (" + (total_seconds > 0 ? Rate(total_refs / total_seconds) : std::string("-")) +
         " refs/s)\n";
  return out;
}

}  // namespace crescent::sim
