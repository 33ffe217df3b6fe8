#include "common/endpoint.h"

#include <charconv>

namespace crescent {

std::string Endpoint::ToString() const {
  std::string out = host + ":" + std::to_string(port);
  if (!shm_name.empty()) out += ";shm=" + shm_name;
  return out;
}

StatusOr<Endpoint> ParseEndpoint(std::string_view text) {
  auto bad = [&](const char* why) {
    return Status(ErrorCode::kInvalidArgument,
                  std::string("bad endpoint '") + std::string(text) + "': " + why);
  };
  Endpoint ep;
  std::string_view tcp = text;
  if (size_t semi = text.find(';'); semi != std::string_view::npos) {
    tcp = text.substr(0, semi);
    std::string_view opt = text.substr(semi + 1);
    if (!opt.starts_with("shm=") || opt.size() == 4) return bad("expected ';shm=NAME'");
    ep.shm_name = std::string(opt.substr(4));
    if (ep.shm_name.size() > 100) return bad("shm name longer than 100 bytes");
  }
  size_t colon = tcp.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return bad("expected HOST:PORT");
  std::string_view host = tcp.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);  // [v6]:port
  }
  std::string_view port = tcp.substr(colon + 1);
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || ptr != port.data() + port.size() || value == 0 || value > 65535) {
    return bad("port must be 1..65535");
  }
  ep.host = std::string(host);
  ep.port = static_cast<uint16_t>(value);
  return ep;
}

}  // namespace crescent
