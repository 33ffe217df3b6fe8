// AdminHttpServer: the admin endpoint of a Crescent process (cpp-httplib).
//   GET /metrics     Prometheus text (AdminRoutes::metrics)
//   GET /health      "ok" with 200 when AdminRoutes::health says ready; 503
//                    with the reason until then (a master: until a segment is
//                    mounted, so that nothing waiting for readiness puts into
//                    a master with no space at all)
//   GET /api/status  JSON (AdminRoutes::status_json), where the process has one
//   GET /            the status page (AdminRoutes::status_page), likewise
// Anything else is 404. It binds in Start() (so a busy port is an error there),
// then serves on its own thread until Stop(). Short timeouts and a larger worker
// pool keep idle or slow clients from starving it; admin_http.cc says how far.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "crescent/status.h"

namespace httplib {
class Server;
}

namespace crescent::metrics {

struct AdminRoutes {
  std::function<std::string()> metrics;  // Prometheus text; required
  // Empty reason: ready. Empty function: always ready.
  std::function<std::string()> not_ready_reason;
  std::function<std::string()> status_json;  // empty: no /api/status
  std::string status_page;                   // HTML; empty: no page at /
};

class AdminHttpServer {
 public:
  // port 0 picks a free port. What the routes refer to must outlive the server.
  static StatusOr<std::unique_ptr<AdminHttpServer>> Start(const std::string& host, int port,
                                                          AdminRoutes routes);
  ~AdminHttpServer();  // Stop()s
  int port() const { return port_; }
  void Stop();

 private:
  AdminHttpServer() = default;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace crescent::metrics
