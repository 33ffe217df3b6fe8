// ProgressBar: a one-line bar on a terminal, redrawn in place, for long
// simulator runs. It draws nothing unless enabled, and the simulator enables it
// only when stderr is a terminal, so piped or redirected output stays clean.
// Redraws are throttled to a few per second, so Update() is cheap to call often.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace crescent::sim {

// True when file descriptor 2 is a terminal.
bool StderrIsTerminal();

class ProgressBar {
 public:
  ProgressBar(std::FILE* out, bool enabled) : out_(out), enabled_(enabled) {}
  ~ProgressBar() { Clear(); }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Shows `done` of `total` units with `label` after the bar.
  void Update(uint64_t done, uint64_t total, std::string_view label);
  // Erases the bar, e.g. before printing results.
  void Clear();

 private:
  std::FILE* out_;
  bool enabled_;
  bool drawn_ = false;
  int last_permille_ = -1;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace crescent::sim
