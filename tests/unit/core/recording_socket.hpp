#pragma once
// A socket for tests: records the frames the runtime sends and how it closes it; given a resume
// point, it stands for an engine-mode socket that can be resumed elsewhere.

#include "net/websocket.hpp"

#include <optional>
#include <string>
#include <vector>

namespace rivetkit::core::testing {

class RecordingSocket final : public net::WebSocket {
 public:
  std::vector<net::WsMessage> sent;
  std::optional<net::WsCloseInfo> closed;
  std::optional<net::WsResumePoint> point;

  void send(net::WsMessage m) override { sent.push_back(std::move(m)); }
  void close(std::uint16_t code, std::string reason) override {
    closed = net::WsCloseInfo{code, std::move(reason)};
  }
  Task<std::optional<net::WsMessage>> receive() override { co_return std::nullopt; }
  net::WsCloseInfo close_info() const override { return closed.value_or(net::WsCloseInfo{}); }
  std::size_t buffered_bytes() const override { return 0; }
  std::optional<net::WsResumePoint> resume_point() const override { return point; }
};

}  // namespace rivetkit::core::testing
