// TLS to the master's control plane (docs/security.md, "TLS"): paths of PEM
// files. Shared by a client (ClientConfig::tls) and a master
// (rpc::MasterServerOptions::tls), which read them differently:
// - a master serves TLS when it has `cert` and `key`, and requires client
//   certificates signed by `ca` when it has that too (mutual TLS);
// - a client speaks TLS when it has `ca`, the authority the master's
//   certificate must chain to, and presents `cert` and `key` (a client
//   certificate, for a master with mutual TLS) when it has them.
#pragma once

#include <string>

namespace crescent {

struct TlsConfig {
  std::string ca;
  std::string cert;
  std::string key;
  // Client only: the name the master's certificate must carry (a DNS name or
  // an IP address of its subjectAltName); empty: the host of the master's
  // address.
  std::string server_name;
};

}  // namespace crescent
