// What the perf programs share: a clock in seconds and the page-key shape.
#pragma once

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace crescent::perf {

// The median of `v` (the mean of the middle two for an even count); 0 if empty.
inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// This process's resident memory, bytes (/proc/self/statm).
inline uint64_t RssBytes() {
  std::ifstream f("/proc/self/statm");
  uint64_t pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// Steady-clock seconds, for intervals.
inline double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// This thread's CPU time, ns: an interval on it leaves out the time the
// thread waited for a core (on a busy host the steady clock counts that as a
// pause). A system call each.
inline uint64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

// 32 hex chars + "_0_k": the shape of an SGLang HiCache page key (~36 bytes),
// distinct for each i.
inline std::string KeyOf(uint64_t i) {
  char buf[64];
  const uint64_t a = i * 0x9E3779B97F4A7C15ull, b = (i + 1) * 0xC2B2AE3D27D4EB4Full;
  std::snprintf(buf, sizeof(buf), "%016" PRIx64 "%016" PRIx64 "_0_k", a, b);
  return buf;
}

}  // namespace crescent::perf
