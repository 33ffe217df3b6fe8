// TextWriter: builds Prometheus text exposition (format 0.0.4) one family at a
// time. A family's # HELP and # TYPE lines come once, before its first sample;
// label values are escaped; histograms are written cumulatively with the
// +Inf bucket, _sum and _count, in the family's base unit (a latency recorded in
// nanoseconds is written in seconds by passing scale 1e9).
//
// Not thread-safe: one writer per rendering.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics/histogram.h"

namespace crescent::metrics {

using Label = std::pair<std::string_view, std::string_view>;
using Labels = std::initializer_list<Label>;

class TextWriter {
 public:
  // Starts a family; every sample until the next Family() belongs to it.
  // type: "counter", "gauge" or "histogram".
  void Family(std::string_view name, std::string_view type, std::string_view help);
  void Sample(Labels labels, uint64_t value) { Sample(labels, static_cast<double>(value)); }
  void Sample(Labels labels, double value);
  void Sample(const std::vector<Label>& labels, double value);
  // The current family must be a histogram. Values are divided by `scale`.
  void Histogram(Labels labels, const HistogramSnapshot& h, double scale = 1);
  void Histogram(const std::vector<Label>& labels, const HistogramSnapshot& h, double scale = 1);
  // Text already in the exposition format (e.g. master/master_metrics.h).
  void Raw(std::string_view text) { out_ += text; }

  const std::string& text() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void Line(std::string_view suffix, const Label* begin, const Label* end, const Label* extra,
            double value);
  std::string family_;
  std::string out_;
};

// The shortest text that reads back as `v` ("0.0001", "1e-06", "42", "+Inf").
std::string FormatValue(double v);

}  // namespace crescent::metrics
