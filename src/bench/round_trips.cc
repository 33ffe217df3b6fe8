#include "bench/round_trips.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "bench/loopback.h"
#include "crescent/client.h"

namespace crescent::bench {

namespace {

using Clock = std::chrono::steady_clock;

void SpinUs(double us) {
  const auto until = Clock::now() + std::chrono::duration<double, std::micro>(us);
  while (Clock::now() < until) {
  }
}

}  // namespace

RepSample TimeCalls(uint64_t calls, double busy_us, const std::function<Status()>& call) {
  RepSample s;
  s.latency.Reserve(calls);
  for (uint64_t i = 0; i < calls; ++i) {
    if (busy_us > 0) SpinUs(busy_us);
    const auto t0 = Clock::now();
    Status st = call();
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    s.latency.Add(us);
    s.seconds += us / 1e6;
    if (!st.ok()) {
      ++s.errors;
      if (s.first_error.empty()) s.first_error = st.ToString();
    }
  }
  s.calls = s.items = calls;
  return s;
}

namespace {

StatusOr<RepSample> PingPong(uint64_t calls, double busy_us, const std::string& congestion) {
  auto pairs = LoopbackPairs(1, congestion);
  if (!pairs.ok()) return pairs.status();
  SocketPair& p = *(*pairs)[0];
  std::thread echo([&] {
    std::byte b[64];
    for (uint64_t i = 0; i < calls; ++i) {
      if (!ReadAll(p.server.get(), b, sizeof(b)) || !WriteAll(p.server.get(), b, sizeof(b))) return;
    }
  });
  std::byte b[64] = {};
  RepSample s = TimeCalls(calls, busy_us, [&] {
    if (WriteAll(p.client.get(), b, sizeof(b)) && ReadAll(p.client.get(), b, sizeof(b)))
      return Status::Ok();
    p.Shutdown();  // the echo thread stops too
    return Status(ErrorCode::kIoError, "raw ping-pong failed");
  });
  echo.join();
  return s;
}

PhaseResult Row(const char* system, const char* op, double busy_us,
                const std::vector<RepSample>& reps) {
  PhaseResult r;
  r.system = system;
  r.op = op;
  r.busy_us = busy_us;
  return Summarize(r, reps);
}

}  // namespace

StatusOr<std::vector<PhaseResult>> MeasureRoundTrips(const std::string& master,
                                                     const WorkloadOptions& o) {
  ClientConfig cfg;
  cfg.master_address = master;
  cfg.lean_control = o.lean_control;
  cfg.token = o.token;
  cfg.tls = o.tls;
  auto client = Client::Connect(cfg);
  if (!client.ok()) return client.status();
  Client& c = *client.value();
  const std::string key = RunPrefix() + "/round-trip";
  const std::vector<std::byte> value(o.exists_value_size, std::byte{0x42});
  if (Status s = c.Put(key, value); !s.ok()) return s;
  auto exists = [&] {
    StatusOr<bool> got = c.Exists(key);
    if (!got.ok()) return got.status();
    return *got ? Status::Ok() : Status(ErrorCode::kInternal, "a stored key is absent");
  };
  std::vector<PhaseResult> out;
  const uint64_t tight = o.CallsFor(1);
  for (double busy : {0.0, kCallerBusyUs}) {
    const uint64_t calls = busy > 0 ? std::max(o.min_calls, tight / 4) : tight;
    std::vector<RepSample> ping, one;
    for (int rep = 0; rep < o.reps; ++rep) {
      StatusOr<RepSample> p = PingPong(calls, busy, o.tcp_congestion);
      if (!p.ok()) return p.status();
      ping.push_back(std::move(p.value()));
      one.push_back(TimeCalls(calls, busy, exists));
      if (o.on_phase)
        o.on_phase("round trips after " + Fixed(busy, 0) + " µs of CPU, rep " +
                   std::to_string(rep + 1));
    }
    out.push_back(Row("raw-tcp", "ping_pong", busy, ping));
    out.push_back(Row("crescent", "exists_one", busy, one));
  }
  (void)c.Remove(key, true);
  return out;
}

}  // namespace crescent::bench
