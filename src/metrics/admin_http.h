// AdminHttpServer: the admin endpoint of a master process (cpp-httplib).
//   GET /metrics  Prometheus text (master_metrics.h)
//   GET /health   "ok" with 200 once the master can store (a segment is
//                 mounted); 503 with the reason until then, so that nothing
//                 waiting for readiness puts into a master with no space
//                 at all (a node not mounted yet, or refused: another secret)
// Anything else is 404. It binds in Start() (so a busy port is an error there),
// then serves on its own thread until Stop(). Short timeouts and a larger worker
// pool keep idle or slow clients from starving it; admin_http.cc says how far.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "crescent/status.h"
#include "master/master_service.h"

namespace httplib {
class Server;
}

namespace crescent::metrics {

class AdminHttpServer {
 public:
  // port 0 picks a free port. `master` must outlive the server.
  static StatusOr<std::unique_ptr<AdminHttpServer>> Start(const std::string& host, int port,
                                                          const master::MasterService& master);
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
