// The credentials of `crescent master --auth-file` and `crescent serve
// --auth-file` (docs/security.md): the auth file loaded at start and read
// again on SIGHUP, and, for serve, the node token its embedded store node
// authenticates with, held in memory only.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "auth/auth_file_io.h"
#include "auth/handshake.h"
#include "auth/token.h"
#include "crescent/status.h"

namespace crescent::cli {

class ServerAuth {
 public:
  using Credentials = std::shared_ptr<const auth::ServerCredentials>;

  // Loads `path` (auth::LoadServerCredentials). `internal_node`: also a fresh
  // node token that this process alone holds (internal_token()).
  static StatusOr<std::unique_ptr<ServerAuth>> Load(const std::string& path, bool internal_node);

  const Credentials& credentials() const { return credentials_; }
  // "NAME:SECRET" of the in-memory node token; empty without one.
  std::string internal_token() const;
  // One line: the file, its tokens and tenants.
  std::string Describe() const;
  // Reads the file again (SIGHUP): on success hands the new credentials to
  // `apply` and says so on stdout; on failure keeps the old ones and says why
  // on stderr. `verb` names the command in both ("master", "serve").
  void Reload(const char* verb, const std::function<void(Credentials)>& apply);

 private:
  std::string path_;
  std::optional<auth::Token> internal_;
  std::optional<auth::InternalUser> internal_user_;  // internal_'s verifier, kept across reloads
  auth::Key mock_key_{};
  Credentials credentials_;
};

}  // namespace crescent::cli
