// Subcommand registry for the crescent binary. A command file defines a static
// Registrar that adds its CLI11 subcommand; the subcommand's callback stores the
// process exit code with SetExitCode() (0 ok, 1 not found, 2 usage/other error).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <vector>

namespace crescent::cli {

using CommandRegistration = std::function<void(CLI::App&)>;

std::vector<CommandRegistration>& Commands();
void SetExitCode(int code);
int ExitCode();

struct Registrar {
  explicit Registrar(CommandRegistration reg) { Commands().push_back(std::move(reg)); }
};

}  // namespace crescent::cli
