// `crescent top`: a live terminal view of a master's /api/status (the JSON the
// status page draws; server/status_report.h), refreshed every second like
// `redis-cli --stat`; `--once` prints one frame and exits, for scripts. Rates
// come from the last two points of the master's own history, so one request
// gives a full frame.
#include <httplib.h>
#include <signal.h>
#include <time.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "common/endpoint.h"

namespace crescent::cli {
namespace {

using nlohmann::json;

struct TopFlags {
  std::string http = "127.0.0.1:9003";
  bool once = false;
  int interval_ms = 1000;
};

std::string Percent(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * r);
  return buf;
}

std::string Micros(double us) {
  char buf[32];
  if (us >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.2f s", us / 1e6);
  } else if (us >= 1e3) {
    std::snprintf(buf, sizeof buf, "%.2f ms", us / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f us", us);
  }
  return buf;
}

std::string Fill(double ratio, int width) {
  int n = static_cast<int>(ratio * width + 0.5);
  n = n < 0 ? 0 : (n > width ? width : n);
  return "[" + std::string(static_cast<size_t>(n), '#') +
         std::string(static_cast<size_t>(width - n), '.') + "]";
}

// One frame of the report; throws json::exception on a reply of another shape.
std::string Frame(const json& s) {
  const json& sum = s.at("summary");
  std::ostringstream out;
  char line[256];
  out << "crescent top - master " << s.at("master").at("address").get<std::string>()
      << ", eviction " << s.at("master").at("eviction_policy").get<std::string>() << "\n";
  const uint64_t used = sum.at("used_bytes").get<uint64_t>();
  const uint64_t capacity = sum.at("capacity_bytes").get<uint64_t>();
  out << "objects " << sum.at("objects").get<uint64_t>() << "   used " << FormatBytes(used) << " / "
      << FormatBytes(capacity) << "   pending puts " << sum.at("pending_puts").get<uint64_t>()
      << "   segments " << sum.at("segments").get<uint64_t>() << "\n";
  // Rates over the last interval of the master's history.
  double rate = 0, recent_hits = -1;
  const json& hist = s.at("history");
  const json& fields = s.at("history_fields");
  auto field = [&](const json& point, const char* name) {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (fields[i] == name) return point.at(i).get<double>();
    }
    return 0.0;
  };
  if (hist.size() >= 2) {
    const json& a = hist[hist.size() - 2];
    const json& b = hist[hist.size() - 1];
    const double dt = (field(b, "unix_ms") - field(a, "unix_ms")) / 1000;
    if (dt > 0) rate = (field(b, "rpcs") - field(a, "rpcs")) / dt;
    const double dl = field(b, "lookups") - field(a, "lookups");
    if (dl > 0) recent_hits = (field(b, "hits") - field(a, "hits")) / dl;
  }
  uint64_t errors = 0;
  for (const json& e : s.at("errors")) errors += e.at("count").get<uint64_t>();
  std::snprintf(line, sizeof line,
                "hit ratio %s (last second %s)   requests/s %.0f   errors %llu\n",
                Percent(sum.at("hit_ratio").get<double>()).c_str(),
                recent_hits < 0 ? "-" : Percent(recent_hits).c_str(), rate,
                static_cast<unsigned long long>(errors));
  out << line << "\n";
  std::snprintf(line, sizeof line, "%-28s %-20s %-5s %-22s %12s %12s\n", "SEGMENT", "NODE", "TIER",
                "FILL", "USED", "CAPACITY");
  out << line;
  for (const json& g : s.at("segments")) {
    const uint64_t gu = g.at("used_bytes").get<uint64_t>();
    const uint64_t gc = g.at("capacity_bytes").get<uint64_t>();
    std::snprintf(line, sizeof line, "%-28s %-20s %-5s %-22s %12s %12s\n",
                  g.at("name").get<std::string>().c_str(), g.at("node").get<std::string>().c_str(),
                  g.at("tier").get<std::string>().c_str(),
                  Fill(gc ? static_cast<double>(gu) / static_cast<double>(gc) : 0, 20).c_str(),
                  FormatBytes(gu).c_str(), FormatBytes(gc).c_str());
    out << line;
  }
  out << "\n";
  std::snprintf(line, sizeof line, "%-22s %10s %11s %11s %8s\n", "METHOD", "CALLS", "P50", "P99",
                "ERRORS");
  out << line;
  for (const json& m : s.at("rpc")) {
    std::snprintf(line, sizeof line, "%-22s %10llu %11s %11s %8llu\n",
                  m.at("method").get<std::string>().c_str(),
                  static_cast<unsigned long long>(m.at("count").get<uint64_t>()),
                  Micros(m.at("p50_us").get<double>()).c_str(),
                  Micros(m.at("p99_us").get<double>()).c_str(),
                  static_cast<unsigned long long>(m.at("errors").get<uint64_t>()));
    out << line;
  }
  if (!s.at("errors").empty()) {
    out << "\nERRORS\n";
    for (const json& e : s.at("errors")) {
      std::snprintf(line, sizeof line, "  %-22s %-24s %10llu\n",
                    e.at("method").get<std::string>().c_str(),
                    e.at("code").get<std::string>().c_str(),
                    static_cast<unsigned long long>(e.at("count").get<uint64_t>()));
      out << line;
    }
  }
  return out.str();
}

// Fetches and renders one frame, or says why not.
StatusOr<std::string> FetchFrame(httplib::Client& http, const std::string& where) {
  auto r = http.Get("/api/status");
  if (!r) {
    return Status(ErrorCode::kUnavailable,
                  "cannot reach " + where + ": " + httplib::to_string(r.error()));
  }
  if (r->status != 200) {
    return Status(ErrorCode::kUnavailable, where + "/api/status answered HTTP " +
                                               std::to_string(r->status) +
                                               " (is this a master's admin port?)");
  }
  json s = json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  if (s.is_discarded()) {
    return Status(ErrorCode::kParseError, where + "/api/status did not answer JSON");
  }
  try {
    return Frame(s);
  } catch (const json::exception& e) {
    return Status(ErrorCode::kParseError,
                  where + "/api/status is not a Crescent status report: " + e.what());
  }
}

void AddTop(CLI::App& root) {
  auto* app = root.add_subcommand(
      "top", "Live view of a master: usage, hit ratio, request rate, latencies, errors");
  auto flags = std::make_shared<TopFlags>();
  app->add_option("--http", flags->http, "The master's admin HTTP address (HOST:PORT)")
      ->capture_default_str();
  app->add_flag("--once", flags->once, "Print one frame and exit (for scripts)");
  app->add_option("--interval-ms", flags->interval_ms, "Refresh period")
      ->capture_default_str()
      ->check(CLI::Range(100, 3'600'000));
  app->callback([flags] {
    StatusOr<Endpoint> ep = ParseEndpoint(flags->http);
    if (!ep.ok())
      return SetExitCode(
          Report("top", Status(ErrorCode::kInvalidArgument, "--http: " + ep.status().message())));
    httplib::Client http(ep->host, ep->port);
    http.set_connection_timeout(2);
    http.set_read_timeout(5);
    const std::string where = "http://" + flags->http;
    if (flags->once) {
      StatusOr<std::string> frame = FetchFrame(http, where);
      if (!frame.ok()) return SetExitCode(Report("top", frame.status()));
      std::cout << *frame << std::flush;
      return SetExitCode(std::cout ? 0 : 2);
    }
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, nullptr);
    for (;;) {
      StatusOr<std::string> frame = FetchFrame(http, where);
      // Home, clear, then the frame: one write per refresh, no flicker.
      std::cout << "\x1b[H\x1b[2J" << (frame.ok() ? *frame : frame.status().ToString() + "\n")
                << std::flush;
      timespec wait{flags->interval_ms / 1000, (flags->interval_ms % 1000) * 1'000'000L};
      if (sigtimedwait(&stop, nullptr, &wait) > 0) break;
    }
    SetExitCode(0);
  });
}

Registrar top_registrar(AddTop);

}  // namespace
}  // namespace crescent::cli
