#include "metrics/admin_http.h"

#include <httplib.h>

#include <chrono>

#include "metrics/master_metrics.h"

namespace crescent::metrics {

StatusOr<std::unique_ptr<AdminHttpServer>> AdminHttpServer::Start(
    const std::string& host, int port, const master::MasterService& master) {
  std::unique_ptr<AdminHttpServer> s(new AdminHttpServer());
  s->server_ = std::make_unique<httplib::Server>();
  s->server_->Get("/metrics", [&master](const httplib::Request&, httplib::Response& res) {
    res.set_content(RenderPrometheus(master), "text/plain; version=0.0.4; charset=utf-8");
  });
  s->server_->Get("/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  // httplib's default also sets SO_REUSEPORT, which would let a second server
  // share a busy port silently; keep only SO_REUSEADDR.
  s->server_->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  if (port == 0) {
    s->port_ = s->server_->bind_to_any_port(host);
  } else {
    s->port_ = s->server_->bind_to_port(host, port) ? port : -1;
  }
  if (s->port_ <= 0) {
    return Status(ErrorCode::kUnavailable,
                  "admin HTTP cannot listen on " + host + ":" + std::to_string(port));
  }
  s->thread_ = std::thread([srv = s->server_.get()] { srv->listen_after_bind(); });
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
