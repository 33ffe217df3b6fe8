// crescent: the one command-line binary. Each subcommand lives in its own
// *_command.cc and registers itself through RegisterCommand().
#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>

#include "cli/command.h"

int main(int argc, char** argv) {
  // Past a file size limit (ulimit -f), write(2) then fails with EFBIG and the
  // command reports it and cleans up, instead of being killed half way.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"Crescent: a prefix-aware distributed KV-cache store for LLM serving"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "crescent 0.1.0");
  for (const auto& reg : crescent::cli::Commands()) reg(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 returns 0 for --help/--version; usage errors become exit code 2.
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return crescent::cli::ExitCode();
}
