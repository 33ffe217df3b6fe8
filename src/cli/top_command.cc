// `crescent top`: a live terminal view of a master's /api/status (the JSON the
// status page draws; server/status_report.h), refreshed every second like
// `redis-cli --stat`; `--once` prints one frame and exits, for scripts. Rates
// come from the last two points of the master's own history, so one request
// gives a full frame. The admin port is the one the master names in its Stats
// reply (--master, like every client verb), or given outright (--http).
#include <httplib.h>
#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/cli_util.h"
#include "cli/client_flags.h"
#include "cli/command.h"
#include "common/endpoint.h"
#include "common/listen_check.h"
#include "etcd/leader_follower.h"

namespace crescent::cli {
namespace {

using nlohmann::json;

struct TopFlags {
  ClientFlags client;
  std::string http;  // empty: the port the master names, on its host
  bool once = false;
  int interval_ms = 1000;
};

constexpr int kConnectTimeoutS = 2;

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

// The string `key` of `j`, escaped (EscapeText): names come from store nodes,
// and none may write a terminal escape to the operator's screen.
std::string Text(const json& j, const char* key) {
  return EscapeText(j.at(key).get<std::string>());
}

// One frame of the report; throws json::exception on a reply of another shape.
// The tenants' rows (none without tenants).
std::string TenantRows(const json& s) {
  if (!s.contains("tenants") || s.at("tenants").empty()) return {};
  std::ostringstream out;
  char line[1024];
  std::snprintf(line, sizeof line, "%-20s %-22s %12s %12s %10s %10s %10s %10s\n", "TENANT",
                "QUOTA FILL", "USED", "QUOTA", "OBJECTS", "HITS", "MISSES", "EVICTIONS");
  out << line;
  for (const json& t : s.at("tenants")) {
    const uint64_t used = t.at("bytes").get<uint64_t>();
    const uint64_t quota = t.at("quota_bytes").get<uint64_t>();
    const double fill = quota ? std::min(1.0, static_cast<double>(used) / quota) : 0;
    std::snprintf(line, sizeof line, "%-20s %-22s %12s %12s %10llu %10llu %10llu %10llu\n",
                  Text(t, "tenant").c_str(), Fill(fill, 20).c_str(), FormatBytes(used).c_str(),
                  quota ? FormatBytes(quota).c_str() : "none",
                  static_cast<unsigned long long>(t.at("objects").get<uint64_t>()),
                  static_cast<unsigned long long>(t.at("hits").get<uint64_t>()),
                  static_cast<unsigned long long>(t.at("misses").get<uint64_t>()),
                  static_cast<unsigned long long>(t.at("evictions").get<uint64_t>()));
    out << line;
  }
  out << "\n";
  return out.str();
}

std::string Frame(const json& s) {
  const json& sum = s.at("summary");
  std::ostringstream out;
  char line[4096];  // a row with two names of 256 bytes, each escaped to up to 4x
  out << "crescent top - master " << Text(s.at("master"), "address") << ", eviction "
      << Text(s.at("master"), "eviction_policy") << "\n";
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
    std::snprintf(line, sizeof line, "%-28s %-20s %-5s %-22s %12s %12s\n", Text(g, "name").c_str(),
                  Text(g, "node").c_str(), Text(g, "tier").c_str(),
                  Fill(gc ? static_cast<double>(gu) / static_cast<double>(gc) : 0, 20).c_str(),
                  FormatBytes(gu).c_str(), FormatBytes(gc).c_str());
    out << line;
  }
  out << "\n" << TenantRows(s);
  std::snprintf(line, sizeof line, "%-22s %10s %11s %11s %8s\n", "METHOD", "CALLS", "P50", "P99",
                "ERRORS");
  out << line;
  for (const json& m : s.at("rpc")) {
    std::snprintf(line, sizeof line, "%-22s %10llu %11s %11s %8llu\n", Text(m, "method").c_str(),
                  static_cast<unsigned long long>(m.at("count").get<uint64_t>()),
                  Micros(m.at("p50_us").get<double>()).c_str(),
                  Micros(m.at("p99_us").get<double>()).c_str(),
                  static_cast<unsigned long long>(m.at("errors").get<uint64_t>()));
    out << line;
  }
  if (!s.at("errors").empty()) {
    out << "\nERRORS\n";
    for (const json& e : s.at("errors")) {
      std::snprintf(line, sizeof line, "  %-22s %-24s %10llu\n", Text(e, "method").c_str(),
                    Text(e, "code").c_str(),
                    static_cast<unsigned long long>(e.at("count").get<uint64_t>()));
      out << line;
    }
  }
  return out.str();
}

// Why a request to `ep` got no answer. httplib names only the step that
// failed ("Connection", or "Read" for a connection refused as it was made), so
// the connection is tried once more here for the system's reason: "Connection refused", "No route to host",
// no answer within the timeout, or a peer that took the connection and closed
// it without answering.
std::string WhyNoAnswer(const Endpoint& ep, httplib::Error error) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(ep.host.c_str(), std::to_string(ep.port).c_str(), &hints, &res);
      rc != 0) {
    return gai_strerror(rc);
  }
  const int err = TryEachAddress(res, [](int fd, const addrinfo& a) {
    timeval limit{kConnectTimeoutS, 0};  // a blocking connect gives up after SO_SNDTIMEO
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    return connect(fd, a.ai_addr, a.ai_addrlen) == 0 ? 0 : errno;
  });
  freeaddrinfo(res);
  if (err == EINPROGRESS || err == EAGAIN || err == ETIMEDOUT) {
    return "no answer to the connection within " + std::to_string(kConnectTimeoutS) + " s";
  }
  if (err != 0) return std::strerror(err);
  return "it took the connection but sent no HTTP answer (" + httplib::to_string(error) +
         " failed; is this a master's admin port?)";
}

// Fetches and renders one frame, or says why not.
StatusOr<std::string> FetchFrame(httplib::Client& http, const Endpoint& ep,
                                 const std::string& where) {
  auto r = http.Get("/api/status");
  if (!r) {
    return Status(ErrorCode::kUnavailable,
                  "cannot reach " + where + ": " + WhyNoAnswer(ep, r.error()));
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

// The admin HTTP address to read: --http, or the master's host (of --master)
// with the port its Stats reply names. For a cluster (an etcd:// --master),
// its leader's, as the leader published it (docs/ha.md).
StatusOr<std::string> AdminAddress(const TopFlags& flags) {
  if (!flags.http.empty()) return flags.http;
  StatusOr<Client*> client = flags.client.Connect();
  if (!client.ok()) return client.status();
  std::string master = (*client)->master_address();
  StatusOr<ClusterStat> stat = (*client)->Stat();
  if (!stat.ok()) return stat.status();  // it names the master
  if (stat->admin_port == 0) {
    return Status(ErrorCode::kUnavailable,
                  "the master at " + master + " serves no admin HTTP port (--http-port 0)");
  }
  if (etcd::IsEtcdAddress(master)) {
    StatusOr<std::unique_ptr<etcd::LeaderFollower>> follower = etcd::LeaderFollower::Start(master);
    if (!follower.ok()) return follower.status();
    StatusOr<etcd::FollowedLeader> leader = (*follower)->Leader(
        etcd::Clock::now() + std::chrono::milliseconds(flags.client.timeout_ms));
    if (!leader.ok()) return leader.status();
    if (!leader->info.http.empty()) return leader->info.http;
    master = leader->info.grpc;
  }
  // A master on a Unix socket is on this host.
  std::string host = "127.0.0.1";
  if (!master.starts_with("unix:")) {
    StatusOr<Endpoint> ep = ParseEndpoint(master);
    if (!ep.ok()) return Status(ErrorCode::kInvalidArgument, "--master: " + ep.status().message());
    host = ep->host;
  }
  return HostPort(host, static_cast<uint16_t>(stat->admin_port));
}

void AddTop(CLI::App& root) {
  auto* app = root.add_subcommand(
      "top", "Live view of a master: usage, hit ratio, request rate, latencies, errors");
  auto flags = std::make_shared<TopFlags>();
  flags->client.Add(*app);
  app->add_option("--http", flags->http,
                  "The master's admin HTTP address (HOST:PORT), instead of asking the master "
                  "for its port")
      ->excludes(app->get_option("--master"));
  app->add_flag("--once", flags->once, "Print one frame and exit (for scripts)");
  app->add_option("--interval-ms", flags->interval_ms, "Refresh period")
      ->capture_default_str()
      ->check(CLI::Range(100, 3'600'000));
  app->callback([flags] {
    StatusOr<std::string> address = AdminAddress(*flags);
    if (!address.ok()) return SetExitCode(Report("top", address.status()));
    StatusOr<Endpoint> ep = ParseEndpoint(*address);
    if (!ep.ok())
      return SetExitCode(
          Report("top", Status(ErrorCode::kInvalidArgument, "--http: " + ep.status().message())));
    httplib::Client http(ep->host, ep->port);
    http.set_connection_timeout(kConnectTimeoutS);
    http.set_read_timeout(5);
    const std::string where = "http://" + *address;
    if (flags->once) {
      StatusOr<std::string> frame = FetchFrame(http, *ep, where);
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
      StatusOr<std::string> frame = FetchFrame(http, *ep, where);
      // Home, clear, then the frame: one write per refresh, no flicker.
      std::cout << "\x1b[H\x1b[2J"
                << (frame.ok() ? *frame : EscapeText(frame.status().ToString()) + "\n")
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
