// The four messages of the authentication handshake (handshake.h), in the
// common/coding.h codec: each starts with its kind byte, and a decoder accepts
// only the one encoding its encoder writes (no trailing bytes, no overlong
// length), so a message that decodes re-encodes to the same bytes.
//
//   ClientFirst  1 | name (length-prefixed, 1..kMaxNameBytes) | client nonce (32)
//   ServerFirst  2 | salt (32) | nonce: the client's 32 then the server's 32
//   ClientFinal  3 | nonce (64, as the server sent it) | proof (32)
//   ServerFinal  4 | code (varint ErrorCode) | then, when code is 0:
//                    server signature (32) | role (1 byte) | tenant (length-prefixed,
//                    0..kMaxNameBytes); otherwise: message (length-prefixed,
//                    at most kMaxMessageBytes)
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "auth/auth_file.h"
#include "auth/scram.h"
#include "crescent/status.h"

namespace crescent::auth::wire {

inline constexpr size_t kMaxMessageBytes = 256;
// No message is longer: a transport may refuse a longer one unread.
inline constexpr size_t kMaxHandshakeMessageBytes = 512;

struct ClientFirst {
  std::string name;
  Key client_nonce{};
};

struct Nonce {
  Key client{};
  Key server{};
};

struct ServerFirst {
  Key salt{};
  Nonce nonce;
};

struct ClientFinal {
  Nonce nonce;
  Key proof{};
};

struct ServerFinal {
  ErrorCode code = ErrorCode::kOk;
  // code == kOk:
  Key server_signature{};
  Role role = Role::kClient;
  std::string tenant;
  // code != kOk:
  std::string message;
};

std::string Encode(const ClientFirst& m);
std::string Encode(const ServerFirst& m);
std::string Encode(const ClientFinal& m);
// A message longer than kMaxMessageBytes is cut to it.
std::string Encode(const ServerFinal& m);

// nullopt for anything but the one encoding of such a message.
std::optional<ClientFirst> DecodeClientFirst(std::string_view in);
std::optional<ServerFirst> DecodeServerFirst(std::string_view in);
std::optional<ClientFinal> DecodeClientFinal(std::string_view in);
std::optional<ServerFinal> DecodeServerFinal(std::string_view in);

// What both proofs sign: a domain label, then the first two messages' fields.
std::string AuthMessage(const ClientFirst& first, const ServerFirst& reply);

}  // namespace crescent::auth::wire
