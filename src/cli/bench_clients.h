// `crescent bench clients` and its hidden worker subcommand (bench_clients.cc).
#pragma once

#include <CLI/CLI.hpp>

namespace crescent::cli {

// Adds both under `bench`.
void AddClientsBench(CLI::App* bench);

}  // namespace crescent::cli
