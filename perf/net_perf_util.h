// Helpers of net_perf: timing, medians, the machine line, the raw loopback TCP
// and memcpy baselines, and the result table (text and JSON).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "transfer/congestion.h"

namespace netperf {

inline double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

inline double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * (v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

[[noreturn]] inline void Die(const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, what.c_str());
  std::exit(2);
}

inline std::string CpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t c = line.find(':');
      return c == std::string::npos ? line : line.substr(c + 2);
    }
  }
  return "unknown";
}

inline std::string LoadAvg() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

// A buffer of `bytes`, every page written once so no fault lands in a timed phase.
inline std::vector<char> Touched(size_t bytes, char fill) {
  std::vector<char> v(bytes);
  for (size_t i = 0; i < bytes; i += 4096) v[i] = fill;
  std::memset(v.data(), fill, bytes);
  return v;
}

// ---- Raw loopback TCP ----

// TCP_CONGESTION for every raw pair ("" = system default), so that a reference
// runs under the same congestion control as the Crescent connections it is
// compared with.
inline std::string& RawCongestion() {
  static std::string name;
  return name;
}

// "TCP congestion control: NAME" for a report's header: RawCongestion(), or
// the system default.
inline std::string CongestionLine() {
  if (!RawCongestion().empty()) return "TCP congestion control: " + RawCongestion();
  std::ifstream f("/proc/sys/net/ipv4/tcp_congestion_control");
  std::string name = "unknown";
  f >> name;
  return "TCP congestion control: " + name + " (the system default)";
}

// A connected pair over 127.0.0.1: {client fd, server fd}.
inline std::pair<int, int> LoopbackPair() {
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  if (ls < 0) Die("socket failed");
  int one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  if (bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || listen(ls, 1) != 0) {
    Die("bind/listen failed");
  }
  socklen_t len = sizeof(a);
  getsockname(ls, reinterpret_cast<sockaddr*>(&a), &len);
  int c = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(c, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) Die("connect failed");
  int s = accept(ls, nullptr, nullptr);
  if (s < 0) Die("accept failed");
  close(ls);
  setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  for (int fd : {c, s}) {
    crescent::Status set = crescent::transfer::SetCongestionControl(fd, RawCongestion());
    if (!set.ok()) Die("raw pair: " + set.message());
  }
  return {c, s};
}

inline bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

inline bool ReadAll(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// One stream: the client writes `total` bytes from `src` (cycled, `chunk` per
// write); a server thread reads into a `chunk` buffer and discards. GB/s
// measured until the server has read the last byte.
inline double RawStreamGBs(const std::vector<char>& src, size_t chunk, size_t total) {
  auto [c, s] = LoopbackPair();
  double t_end = 0;
  std::thread server([&, s = s] {
    std::vector<char> sink(chunk);
    size_t left = total;
    while (left > 0) {
      ssize_t r = read(s, sink.data(), std::min(left, sink.size()));
      if (r <= 0) Die("raw stream read failed");
      left -= static_cast<size_t>(r);
    }
    t_end = Now();
    char ack = 1;
    WriteAll(s, &ack, 1);
  });
  double t0 = Now();
  size_t off = 0;
  for (size_t sent = 0; sent < total; sent += chunk) {
    if (off + chunk > src.size()) off = 0;
    if (!WriteAll(c, src.data() + off, chunk)) Die("raw stream write failed");
    off += chunk;
  }
  char ack;
  ReadAll(c, &ack, 1);
  server.join();
  close(c);
  close(s);
  return total / (t_end - t0) / 1e9;
}

// The shape of one-object calls over raw blocking sockets, one outstanding:
// per object, `control_before` 64-byte ping-pongs with a "master" thread, one
// data exchange with a "store" thread, then `control_after` ping-pongs. The
// data exchange of a put sends a 64-byte header plus `chunk` bytes and waits
// for a 64-byte answer; a get sends the header and reads the answer and
// `chunk` bytes back. No gRPC, no capability, no copy beyond the sockets': the
// floor under any design whose calls make these round trips on this machine.
struct RawShape {
  bool get = false;
  int control_before = 0;
  int control_after = 0;
};

inline double RawObjectsGBs(const std::vector<char>& src, size_t chunk, size_t total,
                            RawShape shape) {
  auto [c, s] = LoopbackPair();
  auto [mc, ms] = LoopbackPair();
  const size_t n = total / chunk;
  const int trips = shape.control_before + shape.control_after;
  std::thread master([&, ms = ms] {
    char b[64];
    for (size_t i = 0; i < n * static_cast<size_t>(trips); ++i) {
      if (!ReadAll(ms, b, sizeof(b)) || !WriteAll(ms, b, sizeof(b))) Die("raw control failed");
    }
  });
  std::thread store([&, s = s] {
    std::vector<char> sink(chunk + 64);
    size_t off = 0;
    for (size_t i = 0; i < n; ++i) {
      bool ok;
      if (shape.get) {
        if (off + chunk > src.size()) off = 0;
        ok = ReadAll(s, sink.data(), 64) && WriteAll(s, sink.data(), 64) &&
             WriteAll(s, src.data() + off, chunk);
        off += chunk;
      } else {
        ok = ReadAll(s, sink.data(), chunk + 64) && WriteAll(s, sink.data(), 64);
      }
      if (!ok) Die("raw data exchange failed");
    }
  });
  std::vector<char> back(shape.get ? chunk : 0);
  char b[64] = {};
  auto control = [&](int k) {
    for (int i = 0; i < k; ++i) {
      if (!WriteAll(mc, b, sizeof(b)) || !ReadAll(mc, b, sizeof(b))) Die("raw control failed");
    }
  };
  double t0 = Now();
  size_t off = 0;
  for (size_t i = 0; i < n; ++i) {
    control(shape.control_before);
    bool ok;
    if (shape.get) {
      ok = WriteAll(c, b, sizeof(b)) && ReadAll(c, b, sizeof(b)) && ReadAll(c, back.data(), chunk);
    } else {
      if (off + chunk > src.size()) off = 0;
      ok = WriteAll(c, b, sizeof(b)) && WriteAll(c, src.data() + off, chunk) &&
           ReadAll(c, b, sizeof(b));
      off += chunk;
    }
    if (!ok) Die("raw data exchange failed");
    control(shape.control_after);
  }
  double dt = Now() - t0;
  master.join();
  store.join();
  for (int fd : {c, s, mc, ms}) close(fd);
  return n * chunk / dt / 1e9;
}

// Request/response, one outstanding: the client sends a 64-byte header plus
// `chunk` bytes and waits for a 64-byte answer (the shape of one TCP put's
// data exchange).
inline double RawRequestResponseGBs(const std::vector<char>& src, size_t chunk, size_t total) {
  return RawObjectsGBs(src, chunk, total, RawShape{});
}

// Spins on the clock for `us` microseconds: CPU work before a timed call.
inline void SpinUs(double us) {
  const double until = Now() + us * 1e-6;
  while (Now() < until) {
  }
}

// Loopback TCP ping-pong: 64 bytes out, 64 back, one outstanding; `n` round
// trips. Returns per-trip microseconds. The floor under any control-plane call.
// With `busy_us_before`, the caller spins that long before each (untimed) trip,
// as a one-object put does while it sends the bytes between its control calls.
inline std::vector<double> RawPingPongUs(int n, double busy_us_before = 0) {
  auto [c, s] = LoopbackPair();
  std::thread server([&, s = s] {
    char b[64];
    for (int i = 0; i < n; ++i) {
      if (!ReadAll(s, b, sizeof(b)) || !WriteAll(s, b, sizeof(b))) Die("raw ping-pong failed");
    }
  });
  std::vector<double> us(n);
  char b[64] = {};
  for (int i = 0; i < n; ++i) {
    if (busy_us_before > 0) SpinUs(busy_us_before);
    double a = Now();
    if (!WriteAll(c, b, sizeof(b)) || !ReadAll(c, b, sizeof(b))) Die("raw ping-pong failed");
    us[i] = (Now() - a) * 1e6;
  }
  server.join();
  close(c);
  close(s);
  return us;
}

// Single-thread memcpy of `chunk`-byte blocks, cycling through distinct source
// and destination blocks of two pools (larger than cache), `total` bytes.
inline double MemcpyGBs(std::vector<char>& dst, const std::vector<char>& src, size_t chunk,
                        size_t total) {
  size_t blocks = std::min(dst.size(), src.size()) / chunk;
  size_t n = total / chunk;
  double t0 = Now();
  for (size_t i = 0; i < n; ++i) {
    size_t b = i % blocks;
    // Different source and destination block order, so neither is the other's echo.
    size_t d = (b * 7 + 3) % blocks;
    std::memcpy(dst.data() + d * chunk, src.data() + b * chunk, chunk);
  }
  double dt = Now() - t0;
  asm volatile("" : : "r"(dst.data()) : "memory");
  return n * chunk / dt / 1e9;
}

// ---- Results ----

struct Row {
  std::string name;
  std::string unit;
  double value = 0;  // median over reps
  double lo = 0, hi = 0;
  std::string baseline;  // name of the row it is compared with ("" = none)
  double ratio = 0;      // median of per-rep ratios when the reps pair up
  std::vector<double> reps;
};

class Table {
 public:
  Row& Add(const std::string& name, const std::string& unit, const std::vector<double>& reps,
           const std::string& baseline = "") {
    Row r;
    r.name = name;
    r.unit = unit;
    r.value = Median(reps);
    r.lo = reps.empty() ? 0 : *std::min_element(reps.begin(), reps.end());
    r.hi = reps.empty() ? 0 : *std::max_element(reps.begin(), reps.end());
    r.baseline = baseline;
    r.reps = reps;
    if (!baseline.empty()) {
      const Row* b = Find(baseline);
      if (b && b->reps.size() == reps.size()) {  // measured rep by rep, side by side
        std::vector<double> q;
        for (size_t i = 0; i < reps.size(); ++i) {
          if (b->reps[i] > 0) q.push_back(reps[i] / b->reps[i]);
        }
        r.ratio = Median(q);
      } else if (b && b->value > 0) {
        r.ratio = r.value / b->value;
      }
    }
    rows_.push_back(r);
    std::printf("  %-52s %10.3f %-6s  [%.3f .. %.3f]", r.name.c_str(), r.value, r.unit.c_str(),
                r.lo, r.hi);
    if (!baseline.empty()) std::printf("  %5.2fx %s", r.ratio, baseline.c_str());
    std::printf("\n");
    std::fflush(stdout);
    return rows_.back();
  }
  const Row* Find(const std::string& name) const {
    for (const Row& r : rows_) {
      if (r.name == name) return &r;
    }
    return nullptr;
  }
  double Value(const std::string& name) const {
    const Row* r = Find(name);
    return r ? r->value : 0;
  }
  double Ratio(const std::string& name) const {
    const Row* r = Find(name);
    return r ? r->ratio : 0;
  }
  const std::vector<Row>& rows() const { return rows_; }

 private:
  std::vector<Row> rows_;
};

struct Target {
  std::string what;
  double got = 0;
  double want = 0;
  bool at_most = false;  // true: got <= want passes
  std::string context;   // printed after the figure (e.g. the raw floor of the same shape)
  bool Pass() const { return at_most ? got <= want : got >= want; }
};

inline std::string JsonEscape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

inline void WriteJson(const std::string& path, const std::string& machine, const std::string& load0,
                      const std::string& load1, int reps, size_t mib, const Table& t,
                      const std::vector<Target>& targets) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) Die("cannot write " + path);
  std::fprintf(f,
               "{\n  \"machine\": \"%s\",\n  \"load_before\": \"%s\",\n  \"load_after\": \"%s\",\n",
               JsonEscape(machine).c_str(), load0.c_str(), load1.c_str());
  std::fprintf(f, "  \"reps\": %d,\n  \"mib_per_phase\": %zu,\n  \"results\": [\n", reps, mib);
  for (size_t i = 0; i < t.rows().size(); ++i) {
    const Row& r = t.rows()[i];
    std::fprintf(f,
                 "    {\"name\": \"%s\", \"unit\": \"%s\", \"median\": %.6g, \"min\": %.6g, "
                 "\"max\": %.6g, \"baseline\": \"%s\", \"ratio\": %.4f}%s\n",
                 JsonEscape(r.name).c_str(), r.unit.c_str(), r.value, r.lo, r.hi,
                 JsonEscape(r.baseline).c_str(), r.ratio, i + 1 < t.rows().size() ? "," : "");
  }
  std::fprintf(f, "  ],\n  \"targets\": [\n");
  for (size_t i = 0; i < targets.size(); ++i) {
    const Target& g = targets[i];
    std::fprintf(f, "    {\"what\": \"%s\", \"got\": %.6g, \"want\": %.6g, \"pass\": %s}%s\n",
                 JsonEscape(g.what).c_str(), g.got, g.want, g.Pass() ? "true" : "false",
                 i + 1 < targets.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  std::fclose(f);
}

}  // namespace netperf
