#pragma once
// A small scripted engine for the envoy link's tests, on the project's own HttpServer over
// loopback: it accepts envoy connections, answers the metadata with ToEnvoyInit and records what
// the link sends. KV requests are answered only when the test says so. The real rivet-engine
// cannot be told to withhold an answer, or be asked what exactly it received.

#include "engine/envoy_link.hpp"
#include "net/http_server.hpp"
#include "protocol/envoy/codec.hpp"
#include <rivetkit/task.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace rivetkit::engine {

inline constexpr auto kWaitLimit =
    std::chrono::seconds(20);  // real time; only a broken link ever waits this long

/// Polls `pred` (real time, bounded): what it watches changes on other threads.
inline bool eventually(const std::function<bool()>& pred) {
  const auto until = std::chrono::steady_clock::now() + kWaitLimit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Accepts envoy connections, answers the metadata with ToEnvoyInit and records what the link
// sends. KV requests are answered only when the test says so.
class ScriptedEngine {
 public:
  explicit ScriptedEngine(envoy::ProtocolMetadata metadata) : metadata_(metadata) {
    net::HttpHandlers handlers;
    handlers.on_http = [](net::HttpRequest) -> Task<net::HttpResponse> {
      net::HttpResponse res;
      res.status = 404;
      co_return res;
    };
    handlers.accept_websocket = [this](const net::HttpRequest& req) {
      if (req.target.rfind("/envoys/connect?", 0) != 0 || refusing_) {
        throw std::runtime_error("not accepting envoys");  // answered 500: the link retries
      }
      net::WsAccept accept;
      accept.subprotocol = "rivet";
      return accept;
    };
    handlers.on_websocket = [this](net::HttpRequest, std::shared_ptr<net::WebSocket> ws) {
      return serve(std::move(ws));
    };
    server_ = std::make_unique<net::HttpServer>(io_, net::HttpServerConfig{}, std::move(handlers));
    auto port = server_->listen("127.0.0.1", 0);
    if (!port) {
      throw std::runtime_error(port.error().message);
    }
    port_ = *port;
    thread_ = std::thread([this] { io_.run(); });
  }
  ~ScriptedEngine() {
    work_.reset();
    io_.stop();
    thread_.join();
  }

  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

  int connections() {
    std::lock_guard lock(mutex_);
    return connections_;
  }
  std::vector<envoy::ToRivetKvRequest> kv_requests() {
    std::lock_guard lock(mutex_);
    return kv_requests_;
  }
  std::vector<envoy::ToRivetTunnelMessage> tunnel_messages() {
    std::lock_guard lock(mutex_);
    return tunnel_;
  }
  bool first_was_metadata() {
    std::lock_guard lock(mutex_);
    return !firsts_.empty()
           && std::all_of(firsts_.begin(), firsts_.end(), [](const envoy::ToRivet& m) {
                return std::holds_alternative<envoy::ToRivetMetadata>(m);
              });
  }

  void answer(std::uint32_t request_id, envoy::KvResponseData data) {
    send(envoy::ToEnvoy{envoy::ToEnvoyKvResponse{request_id, std::move(data)}});
  }
  /// Closes the current connection (not an eviction) and, with `refuse`, every later one.
  void drop(bool refuse) {
    refusing_ = refuse;
    std::shared_ptr<net::WebSocket> socket;
    {
      std::lock_guard lock(mutex_);
      socket = current_;
    }
    if (socket) {
      socket->close(1011, "scripted.drop");
    }
  }

 private:
  void send(envoy::ToEnvoy message) {
    std::shared_ptr<net::WebSocket> socket;
    {
      std::lock_guard lock(mutex_);
      socket = current_;
    }
    if (socket) {
      socket->send(net::WsMessage{true, envoy::encode(message)});
    }
  }

  Task<void> serve(std::shared_ptr<net::WebSocket> ws) {
    {
      std::lock_guard lock(mutex_);
      ++connections_;
      current_ = ws;
    }
    bool first = true;
    for (;;) {
      auto receive_op = ws->receive();
      auto msg = co_await std::move(receive_op);
      if (!msg) {
        break;
      }
      auto decoded = envoy::decode_to_rivet(msg->data);
      if (!decoded) {
        continue;
      }
      {
        std::lock_guard lock(mutex_);
        if (first) {
          firsts_.push_back(*decoded);
        }
        if (auto* kv = std::get_if<envoy::ToRivetKvRequest>(&*decoded)) {
          kv_requests_.push_back(*kv);
        }
        if (auto* tunnel = std::get_if<envoy::ToRivetTunnelMessage>(&*decoded)) {
          tunnel_.push_back(*tunnel);
        }
      }
      if (first) {
        first = false;
        ws->send(
            net::WsMessage{true, envoy::encode(envoy::ToEnvoy{envoy::ToEnvoyInit{metadata_}})});
      }
    }
    {
      std::lock_guard lock(mutex_);
      if (current_ == ws) {
        current_.reset();
      }
    }
  }

  envoy::ProtocolMetadata metadata_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ =
      boost::asio::make_work_guard(io_);
  std::unique_ptr<net::HttpServer> server_;
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<bool> refusing_{false};
  std::mutex mutex_;
  int connections_ = 0;
  std::shared_ptr<net::WebSocket> current_;
  std::vector<envoy::ToRivet> firsts_;
  std::vector<envoy::ToRivetKvRequest> kv_requests_;
  std::vector<envoy::ToRivetTunnelMessage> tunnel_;
};

class RecordingHandler final : public EnvoyLinkHandler {
 public:
  void on_commands(std::vector<envoy::CommandWrapper>) override {}
  void on_tunnel(envoy::ToEnvoyTunnelMessage) override {}
  void on_lost() override { lost = true; }
  void on_evicted() override { evicted = true; }
  std::atomic<bool> lost{false};
  std::atomic<bool> evicted{false};
};

}  // namespace rivetkit::engine
