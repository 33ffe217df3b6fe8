#include "common/endpoint.h"

#include <charconv>

namespace crescent {

std::string HostPort(std::string_view host, uint16_t port) {
  const bool v6 = host.find(':') != std::string_view::npos && !host.starts_with('[');
  return (v6 ? "[" + std::string(host) + "]" : std::string(host)) + ":" + std::to_string(port);
}

std::string Endpoint::ToString() const {
  std::string out = HostPort(host, port);
  if (!shm_name.empty()) out += ";shm=" + shm_name;
  if (epoch != 0) {
    char hex[17];
    auto [end, ec] = std::to_chars(hex, hex + sizeof hex, epoch, 16);
    out += ";epoch=" + std::string(hex, end);
  }
  return out;
}

StatusOr<Endpoint> ParseEndpoint(std::string_view text) {
  auto bad = [&](const char* why) {
    return Status(ErrorCode::kInvalidArgument,
                  std::string("bad endpoint '") + std::string(text) + "': " + why);
  };
  Endpoint ep;
  std::string_view tcp = text.substr(0, text.find(';'));
  std::string_view opts = text.substr(tcp.size());  // "" or ";..."
  bool seen_shm = false, seen_epoch = false;
  while (!opts.empty()) {
    opts.remove_prefix(1);  // the ';'
    std::string_view opt = opts.substr(0, opts.find(';'));
    opts.remove_prefix(opt.size());
    if (opt.starts_with("shm=") && !seen_shm) {
      seen_shm = true;
      ep.shm_name = std::string(opt.substr(4));
      if (ep.shm_name.empty()) return bad("empty shm name");
      if (ep.shm_name.size() > 100) return bad("shm name longer than 100 bytes");
    } else if (opt.starts_with("epoch=") && !seen_epoch) {
      seen_epoch = true;
      std::string_view hex = opt.substr(6);
      auto [ptr, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), ep.epoch, 16);
      if (hex.empty() || ec != std::errc() || ptr != hex.data() + hex.size() || ep.epoch == 0) {
        return bad("epoch must be a non-zero 64-bit hex number");
      }
    } else {
      return bad("expected ';shm=NAME' or ';epoch=HEX', each at most once");
    }
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
