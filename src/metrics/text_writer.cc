#include "metrics/text_writer.h"

#include <charconv>
#include <cmath>

namespace crescent::metrics {
namespace {

void AppendEscaped(std::string& out, std::string_view value) {
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

}  // namespace

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  // Fixed notation where it stays short ("0.0001", not "1e-04"): bucket
  // bounds read as written in docs and dashboards; shortest round-trip digits.
  char buf[400];
  const double a = std::fabs(v);
  const bool fixed = a == 0 || (a >= 1e-9 && a < 1e21);
  auto [end, ec] = fixed ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed)
                         : std::to_chars(buf, buf + sizeof buf, v);
  if (ec != std::errc()) return "NaN";
  return std::string(buf, end);
}

void TextWriter::Family(std::string_view name, std::string_view type, std::string_view help) {
  family_ = name;
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  out_ += help;
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void TextWriter::Line(std::string_view suffix, const Label* begin, const Label* end,
                      const Label* extra, double value) {
  out_ += family_;
  out_ += suffix;
  if (begin != end || extra != nullptr) {
    out_ += '{';
    bool first = true;
    auto add = [&](const Label& l) {
      if (!first) out_ += ',';
      first = false;
      out_ += l.first;
      out_ += "=\"";
      AppendEscaped(out_, l.second);
      out_ += '"';
    };
    for (const Label* l = begin; l != end; ++l) add(*l);
    if (extra != nullptr) add(*extra);
    out_ += '}';
  }
  out_ += ' ';
  out_ += FormatValue(value);
  out_ += '\n';
}

void TextWriter::Sample(Labels labels, double value) {
  Line({}, labels.begin(), labels.end(), nullptr, value);
}

void TextWriter::Sample(const std::vector<Label>& labels, double value) {
  Line({}, labels.data(), labels.data() + labels.size(), nullptr, value);
}

void TextWriter::Histogram(Labels labels, const HistogramSnapshot& h, double scale) {
  std::vector<Label> v(labels);
  Histogram(v, h, scale);
}

void TextWriter::Histogram(const std::vector<Label>& labels, const HistogramSnapshot& h,
                           double scale) {
  const Label* b = labels.data();
  const Label* e = b + labels.size();
  uint64_t cumulative = 0;
  for (size_t i = 0; i < h.counts.size(); ++i) {
    cumulative += h.counts[i];
    std::string le = i < h.bounds.size() ? FormatValue(static_cast<double>(h.bounds[i]) / scale)
                                         : std::string("+Inf");
    Label extra{"le", le};
    Line("_bucket", b, e, &extra, static_cast<double>(cumulative));
  }
  Line("_sum", b, e, nullptr, static_cast<double>(h.sum) / scale);
  Line("_count", b, e, nullptr, static_cast<double>(h.count));
}

}  // namespace crescent::metrics
