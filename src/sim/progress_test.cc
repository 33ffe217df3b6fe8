#include "sim/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace crescent::sim {
namespace {

std::string Contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string out;
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  return out;
}

TEST(ProgressBarTest, DisabledWritesNothing) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressBar bar(f, /*enabled=*/false);
    bar.Update(5, 10, "half");
    bar.Clear();
  }
  EXPECT_EQ(Contents(f), "");
  std::fclose(f);
}

TEST(ProgressBarTest, EnabledDrawsInPlaceAndClears) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressBar bar(f, /*enabled=*/true);
    bar.Update(5, 10, "lru @ 5%");
    bar.Update(5, 10, "lru @ 5%");  // no change: no redraw
  }                                 // the destructor clears the line
  const std::string out = Contents(f);
  EXPECT_EQ(out.find('\n'), std::string::npos);
  EXPECT_NE(out.find(" 50% lru @ 5%"), std::string::npos) << out;
  EXPECT_EQ(out.find(" 50% lru @ 5%"), out.rfind(" 50% lru @ 5%"));
  EXPECT_EQ(out.substr(out.size() - 4), "\r\033[K");
  std::fclose(f);
}

}  // namespace
}  // namespace crescent::sim
