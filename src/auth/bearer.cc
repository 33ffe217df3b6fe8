#include "auth/bearer.h"

#include "auth/token.h"

namespace crescent::auth {

StatusOr<Identity> VerifyBearer(const ServerCredentials& credentials, std::string_view value) {
  if (!value.starts_with(kBearerScheme)) {
    return Status(ErrorCode::kUnauthenticated,
                  "the authorization metadata is not \"Bearer NAME:SECRET\"");
  }
  StatusOr<Token> token = ParseToken(value.substr(kBearerScheme.size()));
  if (!token.ok()) return token.status();
  const UserEntry* entry = nullptr;
  const Verifier v = credentials.VerifierOf(token->name, &entry);
  const Key stored = Sha256(View(ClientKeyOf(token->secret, v.salt)));
  if (!Equal(stored, v.stored_key) || entry == nullptr) {
    return Status(ErrorCode::kUnauthenticated, std::string(kUnknownTokenMessage));
  }
  return Identity{token->name, entry->role, entry->tenant};
}

}  // namespace crescent::auth
