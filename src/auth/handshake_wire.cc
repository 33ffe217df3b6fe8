#include "auth/handshake_wire.h"

#include <algorithm>

#include "auth/token.h"
#include "common/coding.h"

namespace crescent::auth::wire {
namespace {

enum Kind : uint8_t { kClientFirst = 1, kServerFirst = 2, kClientFinal = 3, kServerFinal = 4 };

void PutKey(std::string& out, const Key& k) { out.append(View(k)); }

bool ReadKey(ByteReader& r, Key* k) {
  std::string_view bytes;
  if (!r.Bytes(k->size(), &bytes)) return false;
  std::copy(bytes.begin(), bytes.end(), k->begin());
  return true;
}

// Reads the kind byte and checks it.
bool ReadKind(ByteReader& r, Kind want) {
  uint8_t kind = 0;
  return r.Byte(&kind) && kind == want;
}

}  // namespace

std::string Encode(const ClientFirst& m) {
  std::string out(1, static_cast<char>(kClientFirst));
  PutLengthPrefixed(out, m.name);
  PutKey(out, m.client_nonce);
  return out;
}

std::string Encode(const ServerFirst& m) {
  std::string out(1, static_cast<char>(kServerFirst));
  PutKey(out, m.salt);
  PutKey(out, m.nonce.client);
  PutKey(out, m.nonce.server);
  return out;
}

std::string Encode(const ClientFinal& m) {
  std::string out(1, static_cast<char>(kClientFinal));
  PutKey(out, m.nonce.client);
  PutKey(out, m.nonce.server);
  PutKey(out, m.proof);
  return out;
}

std::string Encode(const ServerFinal& m) {
  std::string out(1, static_cast<char>(kServerFinal));
  PutVarint(out, static_cast<uint32_t>(m.code));
  if (m.code == ErrorCode::kOk) {
    PutKey(out, m.server_signature);
    out.push_back(static_cast<char>(m.role));
    PutLengthPrefixed(out, m.tenant);
  } else {
    PutLengthPrefixed(out, std::string_view(m.message).substr(0, kMaxMessageBytes));
  }
  return out;
}

std::optional<ClientFirst> DecodeClientFirst(std::string_view in) {
  ByteReader r(in);
  ClientFirst m;
  if (!ReadKind(r, kClientFirst) || !r.LengthPrefixed(&m.name, kMaxNameBytes) ||
      !ReadKey(r, &m.client_nonce) || !r.done() || m.name.empty()) {
    return std::nullopt;
  }
  return m;
}

std::optional<ServerFirst> DecodeServerFirst(std::string_view in) {
  ByteReader r(in);
  ServerFirst m;
  if (!ReadKind(r, kServerFirst) || !ReadKey(r, &m.salt) || !ReadKey(r, &m.nonce.client) ||
      !ReadKey(r, &m.nonce.server) || !r.done()) {
    return std::nullopt;
  }
  return m;
}

std::optional<ClientFinal> DecodeClientFinal(std::string_view in) {
  ByteReader r(in);
  ClientFinal m;
  if (!ReadKind(r, kClientFinal) || !ReadKey(r, &m.nonce.client) || !ReadKey(r, &m.nonce.server) ||
      !ReadKey(r, &m.proof) || !r.done()) {
    return std::nullopt;
  }
  return m;
}

std::optional<ServerFinal> DecodeServerFinal(std::string_view in) {
  ByteReader r(in);
  ServerFinal m;
  uint32_t code = 0;
  if (!ReadKind(r, kServerFinal) || !r.Varint32(&code) ||
      code > static_cast<uint32_t>(kLastErrorCode)) {
    return std::nullopt;
  }
  m.code = static_cast<ErrorCode>(code);
  if (m.code == ErrorCode::kOk) {
    uint8_t role = 0;
    if (!ReadKey(r, &m.server_signature) || !r.Byte(&role) ||
        !r.LengthPrefixed(&m.tenant, kMaxNameBytes)) {
      return std::nullopt;
    }
    if (role < static_cast<uint8_t>(Role::kAdmin) || role > static_cast<uint8_t>(Role::kNode)) {
      return std::nullopt;
    }
    m.role = static_cast<Role>(role);
  } else if (!r.LengthPrefixed(&m.message, kMaxMessageBytes)) {
    return std::nullopt;
  }
  if (!r.done()) return std::nullopt;
  return m;
}

std::string AuthMessage(const ClientFirst& first, const ServerFirst& reply) {
  std::string out = "crescent-auth-v1";
  PutLengthPrefixed(out, first.name);
  PutKey(out, first.client_nonce);
  PutKey(out, reply.salt);
  PutKey(out, reply.nonce.client);
  PutKey(out, reply.nonce.server);
  return out;
}

}  // namespace crescent::auth::wire
