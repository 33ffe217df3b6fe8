// crescent: the one command-line binary. Each subcommand lives in its own
// *_command.cc and registers itself through RegisterCommand().
#include <grpc/support/log.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdlib>
#include <iostream>

#include "cli/command.h"

int main(int argc, char** argv) {
  // Past a file size limit (ulimit -f), write(2) then fails with EFBIG and the
  // command reports it and cleans up, instead of being killed half way.
  std::signal(SIGXFSZ, SIG_IGN);
  // Likewise a reader that goes away (crescent get k - | head -c 10): the
  // write fails with EPIPE and the command exits 2 with a message, instead of
  // dying of SIGPIPE outside the 0/1/2 exit codes.
  std::signal(SIGPIPE, SIG_IGN);
  // gRPC's own log lines ("E1201 ... chttp2_server.cc:1045] UNKNOWN:...") are
  // not for the user: every failure they describe comes back to the command,
  // which says it in its own message. GRPC_VERBOSITY or GRPC_TRACE in the
  // environment keep them, for debugging gRPC itself.
  if (std::getenv("GRPC_VERBOSITY") == nullptr && std::getenv("GRPC_TRACE") == nullptr) {
    gpr_set_log_function([](gpr_log_func_args*) {});
  }
  CLI::App app{"Crescent: a prefix-aware distributed KV-cache store for LLM serving"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "crescent 0.1.0");
  for (const auto& reg : crescent::cli::Commands()) reg(app);
  // CLI11 would answer a mistyped command with "A subcommand is required".
  if (argc > 1 && argv[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      found = found || sub->check_name(argv[1]);
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (!found) {
      std::cerr << "crescent: unknown command '" << argv[1] << "' (commands: " << known << ")\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 returns 0 for --help/--version; usage errors become exit code 2.
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return crescent::cli::ExitCode();
}
