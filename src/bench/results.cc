#include "bench/results.h"

#include <algorithm>
#include <cstdio>

namespace crescent::bench {

PhaseResult Summarize(PhaseResult r, const std::vector<RepSample>& reps) {
  r.reps = static_cast<int>(reps.size());
  std::vector<double> secs, gbps, ips, p50, p99;
  for (const RepSample& s : reps) {
    r.calls = s.calls;
    r.items = s.items;
    r.bytes_requested += s.bytes_requested;
    r.bytes_moved += s.bytes_moved;
    r.items_found += s.items_found;
    r.items_expected += s.items_expected;
    r.errors += s.errors;
    if (r.first_error.empty()) r.first_error = s.first_error;
    secs.push_back(s.seconds);
    const double t = s.seconds > 0 ? s.seconds : 1e-12;
    gbps.push_back(static_cast<double>(s.bytes_moved) / t / 1e9);
    ips.push_back(static_cast<double>(s.items) / t);
    p50.push_back(s.latency.P50());
    p99.push_back(s.latency.P99());
  }
  r.seconds = Median(secs);
  r.gb_per_s = Median(gbps);
  r.items_per_s = Median(ips);
  r.rep_gb_per_s = gbps;
  r.rep_items_per_s = ips;
  r.p50_us = Median(p50);
  r.p99_us = Median(p99);
  return r;
}

PhaseResult Reference(const char* system, const char* op, uint64_t size, int clients,
                      const std::vector<RepSample>& reps) {
  PhaseResult r;
  r.system = system;
  r.op = op;
  r.size = size;
  r.clients = clients;
  return Summarize(r, reps);
}

double PairedRatio(const PhaseResult& ours, const PhaseResult& reference, bool items) {
  if (!ours.side_by_side || !reference.side_by_side) return 0;
  const std::vector<double>& a = items ? ours.rep_items_per_s : ours.rep_gb_per_s;
  const std::vector<double>& b = items ? reference.rep_items_per_s : reference.rep_gb_per_s;
  if (a.empty() || a.size() != b.size()) return 0;
  std::vector<double> ratios;
  for (size_t i = 0; i < a.size(); ++i) {
    if (b[i] <= 0) return 0;
    ratios.push_back(a[i] / b[i]);
  }
  return Median(ratios);
}

void RepSample::Merge(const RepSample& o) {
  calls += o.calls;
  items += o.items;
  bytes_requested += o.bytes_requested;
  bytes_moved += o.bytes_moved;
  items_found += o.items_found;
  items_expected += o.items_expected;
  errors += o.errors;
  if (first_error.empty()) first_error = o.first_error;
  latency.Merge(o.latency);
}

nlohmann::json ToJson(const PhaseResult& r) {
  nlohmann::json j = {{"system", r.system},
                      {"op", r.op},
                      {"size", r.size},
                      {"clients", r.clients},
                      {"batch", r.batch},
                      {"miss", r.miss},
                      {"reps", r.reps},
                      {"calls", r.calls},
                      {"items", r.items},
                      {"bytes_requested", r.bytes_requested},
                      {"bytes_moved", r.bytes_moved},
                      {"items_found", r.items_found},
                      {"items_expected", r.items_expected},
                      {"errors", r.errors},
                      {"seconds", r.seconds},
                      {"gb_per_s", r.gb_per_s},
                      {"items_per_s", r.items_per_s},
                      {"p50_us", r.p50_us},
                      {"p99_us", r.p99_us},
                      {"first_error", r.first_error}};
  if (r.busy_us > 0) j["busy_us"] = r.busy_us;  // only round trips have it
  if (r.paired_ratio > 0) j["paired_ratio"] = r.paired_ratio;
  j["rep_gb_per_s"] = r.rep_gb_per_s;
  j["rep_items_per_s"] = r.rep_items_per_s;
  j["side_by_side"] = r.side_by_side;
  return j;
}

std::string Table::Render() const {
  std::vector<size_t> width(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      // Count UTF-8 code points, so ✓/✗/× do not widen a column.
      size_t n = 0;
      for (unsigned char c : row[i]) n += (c & 0xC0) != 0x80;
      width[i] = std::max(width[i], n);
    }
  };
  measure(header_);
  for (const auto& row : rows_) measure(row);
  std::string out;
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      size_t n = 0;
      for (unsigned char c : cell) n += (c & 0xC0) != 0x80;
      const std::string pad(width[i] - n, ' ');
      if (i > 0) line += "  ";
      line += i == 0 ? cell + pad : pad + cell;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  emit(header_);
  for (const auto& row : rows_) emit(row);
  return out;
}

std::string Fixed(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, value);
  return buf;
}

std::string Count(double value) {
  char buf[64];
  if (value >= 1e6) {
    std::snprintf(buf, sizeof(buf), "%.2fM", value / 1e6);
  } else if (value >= 1e3) {
    std::snprintf(buf, sizeof(buf), "%.1fk", value / 1e3);
  } else {
    std::snprintf(buf, sizeof(buf), "%.0f", value);
  }
  return buf;
}

nlohmann::json ToJson(const TargetCheck& t) {
  return {{"name", t.name}, {"ours", t.ours},     {"reference", t.reference},
          {"unit", t.unit}, {"target", t.target}, {"ratio", t.ratio()},
          {"ratio_of", t.paired > 0 ? "per rep" : "medians"}, {"met", t.met()}};
}

std::string RenderTargets(const std::vector<TargetCheck>& checks) {
  // ratio: "per rep" is the median of each repetition's ratio (the two run
  // side by side); "medians" the ratio of the two medians.
  Table t({"target", "crescent", "reference", "unit", "ratio", "of", "need", "ok"});
  for (const TargetCheck& c : checks) {
    const bool fixed = c.unit == "GB/s" || c.lower_is_better;
    t.AddRow({c.name, fixed ? Fixed(c.ours, 2) : Count(c.ours),
              fixed ? Fixed(c.reference, 2) : Count(c.reference), c.unit,
              Fixed(c.ratio(), 2) + "×", c.paired > 0 ? "per rep" : "medians",
              "≥" + Fixed(c.target, 2) + "×", c.met() ? "✓" : "✗"});
  }
  return t.Render();
}

}  // namespace crescent::bench
