// The admin endpoint over a real socket: /health, /metrics, 404, and that idle
// or slow clients do not starve it. The master's routes: master_metrics_test.
#include "metrics/admin_http.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace crescent::metrics {
namespace {

constexpr char kMetricsText[] = "# TYPE crescent_test_total counter\ncrescent_test_total 7\n";

// Routes whose readiness the test sets: "" (ready) or why not.
struct TestRoutes {
  std::mutex mu;
  std::string not_ready;  // guarded by mu

  void SetNotReady(std::string why) {
    std::lock_guard lock(mu);
    not_ready = std::move(why);
  }
  AdminRoutes Routes() {
    AdminRoutes r;
    r.metrics = [] { return std::string(kMetricsText); };
    r.not_ready_reason = [this] {
      std::lock_guard lock(mu);
      return not_ready;
    };
    return r;
  }
};

// /health answers 503 with the reason while the process is not ready (a master:
// no segment mounted), 200 once it is, and 503 again when it stops being ready.
TEST(AdminHttp, HealthFollowsReadiness) {
  TestRoutes routes;
  routes.SetNotReady("nothing to serve yet");
  auto server = AdminHttpServer::Start("127.0.0.1", 0, routes.Routes());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  httplib::Client http("127.0.0.1", server.value()->port());
  auto before = http.Get("/health");
  ASSERT_TRUE(before);
  EXPECT_EQ(before->status, 503);
  EXPECT_NE(before->body.find("nothing to serve yet"), std::string::npos) << before->body;

  routes.SetNotReady("");
  auto ready = http.Get("/health");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);
  EXPECT_EQ(ready->body, "ok\n");

  routes.SetNotReady("gone");
  auto after = http.Get("/health");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 503);
}

TEST(AdminHttp, ServesHealthAndMetrics) {
  TestRoutes routes;
  auto server = AdminHttpServer::Start("127.0.0.1", 0, routes.Routes());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  httplib::Client http("127.0.0.1", server.value()->port());

  auto health = http.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok\n");

  auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->body, kMetricsText);

  // No status JSON nor page among the routes: neither is served.
  for (const char* path : {"/nope", "/api/status", "/"}) {
    auto missing = http.Get(path);
    ASSERT_TRUE(missing) << path;
    EXPECT_EQ(missing->status, 404) << path;
  }
  server.value()->Stop();
  EXPECT_FALSE(http.Get("/health"));
}

TEST(AdminHttp, BusyPortIsAnError) {
  TestRoutes routes;
  auto first = AdminHttpServer::Start("127.0.0.1", 0, routes.Routes());
  ASSERT_TRUE(first.ok());
  auto second = AdminHttpServer::Start("127.0.0.1", first.value()->port(), routes.Routes());
  EXPECT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), ErrorCode::kUnavailable);
}

// A plain TCP connection to the server (what an idle or slow client holds).
int ConnectTo(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// A client that gives a request this long to answer at all: a hang check, not a
// latency claim (unfixed, these requests waited behind the idle connections for
// tens of seconds or forever).
httplib::Client PatientClient(int port) {
  httplib::Client http("127.0.0.1", port);
  http.set_connection_timeout(10);
  http.set_read_timeout(10);
  http.set_write_timeout(10);
  return http;
}

class AdminHttpLoad : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = AdminHttpServer::Start("127.0.0.1", 0, routes_.Routes());  // ready
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server.value());
  }
  void TearDown() override {
    for (int fd : fds_) close(fd);
    server_.reset();
  }
  // `n` connections that connect and send nothing.
  void OpenIdle(int n) {
    for (int i = 0; i < n; ++i) {
      int fd = ConnectTo(server_->port());
      ASSERT_GE(fd, 0) << "connect: " << std::strerror(errno);
      fds_.push_back(fd);
    }
  }

  TestRoutes routes_;  // before server_: the server calls into it
  std::unique_ptr<AdminHttpServer> server_;
  std::vector<int> fds_;
};

TEST_F(AdminHttpLoad, IdleConnectionsDoNotStarveHealth) {
  OpenIdle(32);
  httplib::Client http = PatientClient(server_->port());
  auto health = http.Get("/health");
  ASSERT_TRUE(health) << "no answer behind 32 idle connections: "
                      << httplib::to_string(health.error());
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok\n");
  // More idle connections than workers: the server must drop silent ones to get
  // to the request behind them.
  OpenIdle(100);
  auto again = http.Get("/health");
  ASSERT_TRUE(again) << "no answer behind 132 idle connections: "
                     << httplib::to_string(again.error());
  EXPECT_EQ(again->status, 200);
}

TEST_F(AdminHttpLoad, ServerClosesASilentConnection) {
  OpenIdle(1);
  timeval bound{10, 0};  // a hang check: recv gives up after 10 s
  ASSERT_EQ(setsockopt(fds_[0], SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound), 0);
  char byte;
  EXPECT_EQ(recv(fds_[0], &byte, 1, 0), 0) << "the server kept a silent connection open";
}

TEST_F(AdminHttpLoad, TricklingClientsDoNotStarveHealthOrMetrics) {
  // Slow clients connect first, so they hold workers: each sends a request line,
  // then one header byte every 200 ms, never finishing its headers.
  constexpr int kTricklers = 4;
  std::vector<int> tricklers;
  for (int i = 0; i < kTricklers; ++i) {
    int fd = ConnectTo(server_->port());
    ASSERT_GE(fd, 0) << "connect: " << std::strerror(errno);
    fds_.push_back(fd);
    tricklers.push_back(fd);
    const char line[] = "GET /health HTTP/1.1\r\nX-Slow: ";
    ASSERT_EQ(send(fd, line, sizeof line - 1, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof line - 1));
  }
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    while (!stop.load()) {
      for (int fd : tricklers) send(fd, "a", 1, MSG_NOSIGNAL);  // errors: the server gave up
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  // Behind them, idle connections that would take every remaining worker.
  OpenIdle(32);
  httplib::Client http = PatientClient(server_->port());
  auto health = http.Get("/health");
  auto metrics = http.Get("/metrics");
  stop = true;
  trickle.join();
  ASSERT_TRUE(health) << "no answer behind trickling clients: "
                      << httplib::to_string(health.error());
  EXPECT_EQ(health->status, 200);
  ASSERT_TRUE(metrics) << httplib::to_string(metrics.error());
  EXPECT_EQ(metrics->status, 200);
}

}  // namespace
}  // namespace crescent::metrics
