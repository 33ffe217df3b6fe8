#include "cli/server_auth.h"

#include <iostream>

#include "auth/auth_file_io.h"
#include "cli/cli_util.h"

namespace crescent::cli {

StatusOr<std::unique_ptr<ServerAuth>> ServerAuth::Load(const std::string& path,
                                                       bool internal_node) {
  std::unique_ptr<ServerAuth> a(new ServerAuth());
  a->path_ = path;
  a->mock_key_ = auth::RandomKey();
  if (internal_node) {
    // A name the file's own are unlikely to take (LoadServerCredentials
    // refuses a clash rather than shadow a token of the file).
    const auth::Key suffix = auth::RandomKey();
    a->internal_ = auth::NewToken("serve-node-" + auth::ToHex(auth::View(suffix)).substr(0, 16));
    a->internal_user_ = auth::InternalNodeUser(*a->internal_);
  }
  auto creds = auth::LoadServerCredentials(
      path, a->internal_user_ ? &*a->internal_user_ : nullptr, a->mock_key_);
  if (!creds.ok()) return creds.status();
  a->credentials_ = std::move(*creds);
  return a;
}

std::string ServerAuth::internal_token() const {
  return internal_ ? auth::FormatToken(*internal_) : std::string();
}

std::string ServerAuth::Describe() const {
  const auth::AuthFile& f = credentials_->file();
  const size_t tokens = f.users.size() - (internal_ ? 1 : 0);
  return "auth file " + path_ + ": " + std::to_string(tokens) + " token(s), " +
         std::to_string(f.tenant_quotas.size()) +
         " tenant(s); every connection authenticates (gRPC answers only ControlEndpoints)\n";
}

void ServerAuth::Reload(const char* verb, const std::function<void(Credentials)>& apply) {
  auto creds =
      auth::LoadServerCredentials(path_, internal_user_ ? &*internal_user_ : nullptr, mock_key_);
  if (!creds.ok()) {
    std::cerr << "crescent " << verb << ": SIGHUP: cannot reload the auth file, keeping the "
              << "credentials loaded before: " << EscapeText(creds.status().ToString()) << "\n"
              << std::flush;
    return;
  }
  credentials_ = std::move(*creds);
  apply(credentials_);
  std::cout << "crescent " << verb << ": SIGHUP: reloaded " << Describe() << std::flush;
}

}  // namespace crescent::cli
