#include "sim/progress.h"

#include <unistd.h>

#include <algorithm>

namespace crescent::sim {

namespace {
constexpr int kBarWidth = 30;
constexpr auto kMinRedraw = std::chrono::milliseconds(100);
}  // namespace

bool StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

void ProgressBar::Update(uint64_t done, uint64_t total, std::string_view label) {
  if (!enabled_) return;
  const int permille =
      total == 0 ? 1000 : static_cast<int>(std::min<uint64_t>(done, total) * 1000 / total);
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && (permille == last_permille_ || now - last_draw_ < kMinRedraw)) return;
  last_permille_ = permille;
  last_draw_ = now;
  drawn_ = true;

  const int filled = permille * kBarWidth / 1000;
  std::string bar(static_cast<size_t>(filled), '#');
  bar.append(static_cast<size_t>(kBarWidth - filled), '.');
  // \r returns to column 0; \033[K erases what a longer previous label left.
  std::fprintf(out_, "\r[%s] %3d%% %.*s\033[K", bar.c_str(), permille / 10,
               static_cast<int>(label.size()), label.data());
  std::fflush(out_);
}

void ProgressBar::Clear() {
  if (!enabled_ || !drawn_) return;
  std::fputs("\r\033[K", out_);
  std::fflush(out_);
  drawn_ = false;
  last_permille_ = -1;
}

}  // namespace crescent::sim
