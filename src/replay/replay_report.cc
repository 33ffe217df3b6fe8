#include "replay/replay_report.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace crescent::replay {

double ReplayReport::hit_ratio() const {
  return page_refs == 0 ? 0.0 : static_cast<double>(hit_pages) / static_cast<double>(page_refs);
}

double ReplayReport::loaded_hit_ratio() const {
  return page_refs == 0 ? 0.0
                        : static_cast<double>(prefix_pages_got) / static_cast<double>(page_refs);
}

uint64_t ReplayReport::error_count() const {
  uint64_t n = 0;
  for (const auto& [code, count] : errors) n += count;
  return n;
}

namespace {

std::string Fmt(const char* format, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), format, args...);
  return buf;
}

double PerSecond(double x, double seconds) { return seconds > 0 ? x / seconds : 0.0; }

nlohmann::json PhaseJson(const PhaseReport& p, double seconds) {
  return {{"calls", p.latency.count},
          {"pages", p.pages},
          {"bytes", p.bytes},
          {"gb_per_s", PerSecond(static_cast<double>(p.bytes), seconds) / 1e9},
          {"latency_us",
           {{"mean", p.latency.mean_us},
            {"p50", p.latency.p50_us},
            {"p99", p.latency.p99_us},
            {"max", p.latency.max_us}}}};
}

}  // namespace

std::string FormatReplayTable(const ReplayReport& r) {
  std::string out;
  out += "trace        " + r.trace + " (" + std::to_string(r.requests) + " requests, " +
         std::to_string(r.page_refs) + " page refs, " + std::to_string(r.distinct_pages) +
         " distinct pages)\n";
  out += "cluster      " + r.cluster + "\n";
  out += Fmt("pages        %llu B, %d stream(s), %s, beyond-prefix %s\n",
             static_cast<unsigned long long>(r.page_size), r.streams,
             r.max_rate ? "max rate" : Fmt("speed %gx", r.speed).c_str(), r.beyond_prefix.c_str());
  out += Fmt("hit ratio    %.4f  (loaded %.4f: %llu of %llu hit pages got)\n", r.hit_ratio(),
             r.loaded_hit_ratio(), static_cast<unsigned long long>(r.prefix_pages_got),
             static_cast<unsigned long long>(r.hit_pages));
  out += Fmt("throughput   %.1f requests/s, %.3f GB/s (%.3f GB got, %.3f GB put) in %.2f s\n",
             PerSecond(static_cast<double>(r.requests), r.seconds),
             PerSecond(static_cast<double>(r.bytes_got() + r.bytes_put()), r.seconds) / 1e9,
             static_cast<double>(r.bytes_got()) / 1e9, static_cast<double>(r.bytes_put()) / 1e9,
             r.seconds);
  out += "phase    calls     pages     GB/s   p50 us   p99 us   max us\n";
  auto row = [&](const char* name, const PhaseReport& p) {
    out += Fmt("%-7s %6llu %9llu %8.3f %8.1f %8.1f %8.1f\n", name,
               static_cast<unsigned long long>(p.latency.count),
               static_cast<unsigned long long>(p.pages),
               PerSecond(static_cast<double>(p.bytes), r.seconds) / 1e9, p.latency.p50_us,
               p.latency.p99_us, p.latency.max_us);
  };
  row("lookup", r.lookup);
  row("get", r.get);
  row("touch", r.touch);
  row("put", r.put);
  out += Fmt("puts         %llu stored, %llu already present\n",
             static_cast<unsigned long long>(r.pages_put),
             static_cast<unsigned long long>(r.already_present));
  if (r.session_hints > 0) {
    out +=
        Fmt("hints        %llu request(s) hinted as ended (--session-hints %g), %llu page(s) "
            "marked\n",
            static_cast<unsigned long long>(r.hinted_requests), r.session_hints,
            static_cast<unsigned long long>(r.pages_hinted));
  }
  if (r.corrupt_pages > 0) {
    out += Fmt("CORRUPT      %llu page(s) read back with the wrong contents\n",
               static_cast<unsigned long long>(r.corrupt_pages));
  }
  out += "errors       ";
  if (r.errors.empty()) {
    out += "none\n";
  } else {
    bool first = true;
    for (const auto& [code, count] : r.errors) {
      out += (first ? "" : ", ") + code + " " + std::to_string(count);
      first = false;
    }
    out += "\n";
  }
  if (!r.max_rate) out += Fmt("max lag      %.1f ms behind the trace's schedule\n", r.max_lag_ms);
  return out;
}

std::string FormatReplayJson(const ReplayReport& r) {
  nlohmann::json errors = nlohmann::json::object();
  for (const auto& [code, count] : r.errors) errors[code] = count;
  nlohmann::json j = {
      {"trace", r.trace},
      {"master", r.master},
      {"cluster", r.cluster},
      {"page_size", r.page_size},
      {"streams", r.streams},
      {"max_rate", r.max_rate},
      {"speed", r.speed},
      {"beyond_prefix", r.beyond_prefix},
      {"skipped_lines", r.skipped_lines},
      {"requests", r.requests},
      {"page_refs", r.page_refs},
      {"distinct_pages", r.distinct_pages},
      {"hit_pages", r.hit_pages},
      {"hit_ratio", r.hit_ratio()},
      {"loaded_hit_ratio", r.loaded_hit_ratio()},
      {"prefix_pages_got", r.prefix_pages_got},
      {"beyond_pages_read", r.beyond_pages_read},
      {"pages_got", r.pages_got()},
      {"bytes_got", r.bytes_got()},
      {"pages_put", r.pages_put},
      {"bytes_put", r.bytes_put()},
      {"already_present", r.already_present},
      {"session_hints", r.session_hints},
      {"hinted_requests", r.hinted_requests},
      {"pages_hinted", r.pages_hinted},
      {"corrupt_pages", r.corrupt_pages},
      {"errors", errors},
      {"error_count", r.error_count()},
      {"seconds", r.seconds},
      {"requests_per_s", PerSecond(static_cast<double>(r.requests), r.seconds)},
      {"gb_per_s", PerSecond(static_cast<double>(r.bytes_got() + r.bytes_put()), r.seconds) / 1e9},
      {"max_lag_ms", r.max_lag_ms},
      {"phases",
       {{"lookup", PhaseJson(r.lookup, r.seconds)},
        {"get", PhaseJson(r.get, r.seconds)},
        {"touch", PhaseJson(r.touch, r.seconds)},
        {"put", PhaseJson(r.put, r.seconds)}}}};
  return j.dump(2) + "\n";
}

}  // namespace crescent::replay
