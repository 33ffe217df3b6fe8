#include "metrics/admin_http.h"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>

#include "common/endpoint.h"
#include "common/listen_check.h"

namespace crescent::metrics {

namespace {

// cpp-httplib (0.11) serves each connection on one worker of a fixed pool, for as
// long as the connection lasts, and its defaults are 8 workers (more on hosts
// with more cores) and 5 s read and keep-alive timeouts: 8 idle connections
// held /health for seconds, 16 made it time out, and clients trickling header
// bytes held it forever. The requests here are a few hundred bytes, so:
// - a worker waits at most 1 s for a connection's next (or first) request, and
//   serves at most 4 requests on one connection;
// - a read or write that makes no progress for 2 s ends the connection;
// - 64 workers (idle ones cost a thread each, nothing else), and a listen
//   backlog of 128 instead of httplib's 5.
// What remains: httplib has no deadline for a whole request, so a client that
// sends a byte at least every 2 s holds its worker as long as it keeps that up,
// and 64 such clients, or more than 64 new silent connections every second, still
// starve the endpoint; and Stop() waits for every worker, so shutdown waits for
// such a client too (httplib offers no way to cut a connection short). It is an
// operator endpoint: keep it off untrusted networks.
constexpr size_t kWorkers = 64;
constexpr time_t kReadWriteTimeoutSec = 2;
constexpr time_t kKeepAliveTimeoutSec = 1;
constexpr size_t kKeepAliveMaxCount = 4;
constexpr int kListenBacklog = 128;
constexpr size_t kMaxRequestBody = 64 << 10;  // the endpoints take no body

class Server : public httplib::Server {
 public:
  // httplib listens with the backlog compiled into libcpp-httplib (5); on Linux
  // a second listen() on the listening socket changes it. Best effort.
  void RaiseBacklog(int backlog) { ::listen(svr_sock_, backlog); }
};

}  // namespace

StatusOr<std::unique_ptr<AdminHttpServer>> AdminHttpServer::Start(const std::string& host, int port,
                                                                  AdminRoutes routes) {
  if (!routes.metrics)
    return Status(ErrorCode::kInvalidArgument, "admin HTTP needs a metrics route");
  std::unique_ptr<AdminHttpServer> s(new AdminHttpServer());
  auto server = std::make_unique<Server>();
  Server* srv = server.get();
  s->server_ = std::move(server);
  s->server_->new_task_queue = [] { return new httplib::ThreadPool(kWorkers); };
  s->server_->set_read_timeout(kReadWriteTimeoutSec, 0);
  s->server_->set_write_timeout(kReadWriteTimeoutSec, 0);
  s->server_->set_keep_alive_timeout(kKeepAliveTimeoutSec);
  s->server_->set_keep_alive_max_count(kKeepAliveMaxCount);
  s->server_->set_payload_max_length(kMaxRequestBody);
  s->server_->Get("/metrics",
                  [metrics = routes.metrics](const httplib::Request&, httplib::Response& res) {
                    res.set_content(metrics(), "text/plain; version=0.0.4; charset=utf-8");
                  });
  s->server_->Get("/health", [reason = routes.not_ready_reason](const httplib::Request&,
                                                                httplib::Response& res) {
    std::string why = reason ? reason() : std::string();
    if (!why.empty()) {
      res.status = 503;
      res.set_content("not ready: " + why + "\n", "text/plain");
      return;
    }
    res.set_content("ok\n", "text/plain");
  });
  if (routes.status_json) {
    s->server_->Get("/api/status",
                    [json = routes.status_json](const httplib::Request&, httplib::Response& res) {
                      res.set_header("Cache-Control", "no-store");
                      res.set_content(json(), "application/json");
                    });
  }
  if (!routes.status_page.empty()) {
    s->server_->Get("/",
                    [page = routes.status_page](const httplib::Request&, httplib::Response& res) {
                      res.set_content(page, "text/html; charset=utf-8");
                    });
  }
  // httplib's default also sets SO_REUSEPORT, which would let a second server
  // share a busy port silently; keep only SO_REUSEADDR.
  s->server_->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // httplib only says that it failed; ask first, to say why.
  if (auto st = CheckCanListen("admin HTTP", host, static_cast<uint16_t>(port)); !st.ok()) {
    return st;
  }
  if (port == 0) {
    s->port_ = s->server_->bind_to_any_port(host);
  } else {
    s->port_ = s->server_->bind_to_port(host, port) ? port : -1;
  }
  if (s->port_ <= 0) {
    return Status(ErrorCode::kUnavailable,
                  "admin HTTP cannot listen on " + HostPort(host, static_cast<uint16_t>(port)));
  }
  srv->RaiseBacklog(kListenBacklog);
  s->thread_ = std::thread([srv] { srv->listen_after_bind(); });
  // httplib's stop() is a no-op until the listen loop has started, so a Stop()
  // right after Start() would leave the thread running forever: wait for it.
  while (!s->server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return s;
}

void AdminHttpServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

AdminHttpServer::~AdminHttpServer() { Stop(); }

}  // namespace crescent::metrics
