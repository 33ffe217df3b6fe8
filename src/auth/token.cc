#include "auth/token.h"

namespace crescent::auth {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

Status CheckName(std::string_view what, std::string_view name) {
  auto bad = [&](const std::string& why) {
    return Status(ErrorCode::kInvalidArgument,
                  std::string(what) + " '" + std::string(name) + "' " + why);
  };
  if (name.empty()) return Status(ErrorCode::kInvalidArgument, std::string(what) + " is empty");
  if (name.size() > kMaxNameBytes) {
    return bad("is longer than " + std::to_string(kMaxNameBytes) + " bytes");
  }
  if (!IsAlnum(name[0])) return bad("must start with a letter or a digit");
  for (char c : name) {
    if (!IsAlnum(c) && c != '.' && c != '_' && c != '-') {
      return bad("may hold only letters, digits, '.', '_' and '-'");
    }
  }
  return Status::Ok();
}

Token NewToken(std::string name) { return Token{std::move(name), RandomKey()}; }

std::string ToHex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

bool FromHex(std::string_view hex, Key* out) {
  if (hex.size() != out->size() * 2) return false;
  for (size_t i = 0; i < out->size(); ++i) {
    const int hi = HexDigit(hex[2 * i]);
    const int lo = HexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*out)[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

std::string FormatToken(const Token& token) { return token.name + ":" + ToHex(View(token.secret)); }

StatusOr<Token> ParseToken(std::string_view text) {
  const size_t b = text.find_first_not_of(" \t\r\n");
  const size_t e = text.find_last_not_of(" \t\r\n");
  text = b == std::string_view::npos ? std::string_view() : text.substr(b, e - b + 1);
  const size_t colon = text.find(':');
  Token token;
  if (colon == std::string_view::npos) {
    return Status(ErrorCode::kUnauthenticated,
                  "not a token: a token is NAME:SECRET, as `crescent token add` printed it");
  }
  token.name = std::string(text.substr(0, colon));
  if (Status s = CheckName("token name", token.name); !s.ok()) {
    return Status(ErrorCode::kUnauthenticated, "not a token: " + s.message());
  }
  if (!FromHex(text.substr(colon + 1), &token.secret)) {
    return Status(ErrorCode::kUnauthenticated,
                  "not a token: its secret (after ':') must be 64 lowercase hex digits");
  }
  return token;
}

}  // namespace crescent::auth
