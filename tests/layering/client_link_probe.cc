// A program linked with crescent_client alone, for scripts/check_layers.py: what
// an application that embeds the client links. It connects and asks for the
// cluster's figures, so that the client's whole object is linked in.
#include <cstdio>

#include "crescent/client.h"

int main(int argc, char** argv) {
  crescent::ClientConfig config;
  if (argc > 1) config.master_address = argv[1];
  auto client = crescent::Client::Connect(config);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", client.status().ToString().c_str());
    return 1;
  }
  auto stat = client.value()->Stat();
  std::printf("%s\n", stat.ok() ? "ok" : stat.status().ToString().c_str());
  return stat.ok() ? 0 : 1;
}
