// The durability tests' scratch directory: one per test, under the system's
// temp dir, named by the suite, the process and the running test, and empty.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace crescent::durability {

inline std::string FreshTestDir(const std::string& suite) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("crescent_" + suite + "_" + std::to_string(::getpid()) + "_" +
       ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  return dir.string();
}

}  // namespace crescent::durability
