#include "cli/command.h"

namespace crescent::cli {

namespace {
int g_exit_code = 0;
}  // namespace

std::vector<CommandRegistration>& Commands() {
  static std::vector<CommandRegistration> commands;
  return commands;
}

void SetExitCode(int code) { g_exit_code = code; }
int ExitCode() { return g_exit_code; }

}  // namespace crescent::cli
