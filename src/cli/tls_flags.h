// The TLS flags (docs/security.md, "TLS"), spelt and documented once: a
// master's (`crescent master`, `serve`) and a client's (every client verb,
// store, snapshot, bench, replay).
#pragma once

#include <CLI/CLI.hpp>

#include "crescent/tls_config.h"

namespace crescent::cli {

// --tls-cert, --tls-key, --tls-ca for a master.
inline void AddServerTlsFlags(CLI::App& app, TlsConfig& tls) {
  app.add_option("--tls-cert", tls.cert,
                 "PEM certificate (chain) to serve TLS with on the gRPC, lean control and "
                 "liveness ports (needs --tls-key; the Unix sockets stay plain; "
                 "docs/security.md)");
  app.add_option("--tls-key", tls.key, "PEM private key of --tls-cert");
  app.add_option("--tls-ca", tls.ca,
                 "PEM CA certificate(s): with --tls-cert, require a client certificate signed "
                 "by one of them on every TCP connection (mutual TLS)");
}

// --tls-ca, --tls-cert, --tls-key, --tls-server-name for a client.
inline void AddClientTlsFlags(CLI::App& app, TlsConfig& tls) {
  app.add_option("--tls-ca", tls.ca,
                 "Talk TLS to the master (started with --tls-cert), whose certificate must be "
                 "signed by a CA of this PEM file (docs/security.md)");
  app.add_option("--tls-cert", tls.cert,
                 "PEM client certificate, for a master with mutual TLS (needs --tls-ca and "
                 "--tls-key)");
  app.add_option("--tls-key", tls.key, "PEM private key of --tls-cert");
  app.add_option("--tls-server-name", tls.server_name,
                 "Name (DNS or IP) the master's certificate must carry (default: the host of "
                 "--master)");
}

}  // namespace crescent::cli
