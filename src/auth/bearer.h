// A token presented whole, as gRPC carries it (docs/security.md, "gRPC"): the
// `authorization` metadata of each call, "Bearer NAME:SECRET", which a server
// accepts only over TLS, where nothing on the path can read it. The lean
// protocol never sends a token: it proves one by the handshake (handshake.h).
#pragma once

#include <string_view>

#include "auth/handshake.h"
#include "crescent/status.h"

namespace crescent::auth {

// The metadata key and the scheme before the token.
inline constexpr std::string_view kBearerHeader = "authorization";
inline constexpr std::string_view kBearerScheme = "Bearer ";

// Who `value` ("Bearer NAME:SECRET") authenticates as under `credentials`;
// UNAUTHENTICATED with kUnknownTokenMessage for an unknown name and a wrong
// secret alike (both do the same work: an unknown name is checked against a
// verifier derived from it), and naming the scheme for text that is not one.
StatusOr<Identity> VerifyBearer(const ServerCredentials& credentials, std::string_view value);

}  // namespace crescent::auth
