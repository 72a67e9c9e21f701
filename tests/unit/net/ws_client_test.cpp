// rivetkit::net::connect_websocket against the project's own HttpServer on an ephemeral loopback
// port. Server and client run on separate io_contexts (one thread each), so a test can make the
// server vanish by destroying its io_context. Every wait is bounded.

#include "net/ws_client.hpp"

#include "net/http_server.hpp"
#include "util/log.hpp"
#include <rivetkit/task.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace net = rivetkit::net;
using namespace std::chrono_literals;
using rivetkit::Result;
using rivetkit::Task;

constexpr auto kWaitLimit = 20s;

template <class T>
T run_on(asio::io_context& io, Task<T> task) {
  auto fut = asio::co_spawn(io, std::move(task), asio::use_future);
  if (fut.wait_for(kWaitLimit) != std::future_status::ready) {
    throw std::runtime_error("task did not finish in time");
  }
  return fut.get();
}

std::uint16_t unused_port() {
  asio::io_context io;
  asio::ip::tcp::acceptor a(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const auto port = a.local_endpoint().port();
  a.close();
  return port;
}

class WsClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rivetkit::log::init();
    server_io_ = std::make_unique<asio::io_context>();
    server_work_.emplace(asio::make_work_guard(*server_io_));
    net::HttpHandlers handlers;
    handlers.on_http = [](net::HttpRequest) -> Task<net::HttpResponse> {
      net::HttpResponse res;
      res.status = 404;
      co_return res;
    };
    handlers.accept_websocket = [](const net::HttpRequest& req) {
      if (req.target == "/reject") {
        throw std::runtime_error("rejected on purpose");  // the server answers 500
      }
      net::WsAccept acc;
      if (req.target == "/badproto") {
        acc.subprotocol = "not-offered";
      } else if (auto p = req.header("sec-websocket-protocol");
                 p && p->find("rivet") != std::string_view::npos) {
        acc.subprotocol = "rivet";
      }
      acc.extra_headers.push_back(net::Header{"x-rivet-ray-id", "ray-123"});
      return acc;
    };
    handlers.on_websocket = [this](net::HttpRequest req, std::shared_ptr<net::WebSocket> ws) {
      return serve(std::move(req), std::move(ws));
    };
    net::HttpServerConfig cfg;
    cfg.max_ws_message_bytes = 32u << 20;
    server_ = std::make_unique<net::HttpServer>(*server_io_, cfg, std::move(handlers));
    auto port = server_->listen("127.0.0.1", 0);
    ASSERT_TRUE(port.has_value()) << port.error().message;
    port_ = *port;
    server_thread_ = std::thread([io = server_io_.get()] { io->run(); });
    client_thread_ = std::thread([this] { client_io_.run(); });
  }

  void TearDown() override {
    stop_server();
    client_work_.reset();
    client_io_.stop();
    if (client_thread_.joinable()) {
      client_thread_.join();
    }
  }

  /// Destroys the server and its io_context: open sockets are closed without a close frame.
  void stop_server() {
    if (!server_io_) {
      return;
    }
    server_work_.reset();
    server_io_->stop();
    if (server_thread_.joinable()) {
      server_thread_.join();
    }
    server_.reset();
    server_io_.reset();
  }

  /// Echo loop with text commands; records how the socket ended.
  Task<void> serve(net::HttpRequest req, std::shared_ptr<net::WebSocket> ws) {
    for (;;) {
      auto msg = co_await ws->receive();
      if (!msg) {
        break;
      }
      const std::string& d = msg->data;
      if (msg->binary || d.rfind("cmd:", 0) != 0) {
        ws->send(std::move(*msg));
        continue;
      }
      if (d.rfind("cmd:close ", 0) == 0) {
        // "cmd:close <code> <reason>"
        const auto sp = d.find(' ', 10);
        const auto code = static_cast<std::uint16_t>(std::stoi(d.substr(10, sp - 10)));
        ws->send(net::WsMessage{false, "closing"});
        ws->close(code, sp == std::string::npos ? "" : d.substr(sp + 1));
      } else if (d == "cmd:headers") {
        std::string out = "target=" + req.target + "\n";
        for (const auto& h : req.headers) {
          out += h.name + ": " + h.value + "\n";
        }
        ws->send(net::WsMessage{false, out});
      } else if (d.rfind("cmd:big ", 0) == 0) {
        ws->send(net::WsMessage{true, std::string(std::stoul(d.substr(8)), 'z')});
      }
    }
    {
      std::lock_guard lock(mu_);
      server_closes_.push_back(ws->close_info());
    }
    cv_.notify_all();
  }

  std::optional<net::WsCloseInfo> wait_server_closed() {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, kWaitLimit, [&] { return !server_closes_.empty(); })) {
      return std::nullopt;
    }
    auto info = server_closes_.front();
    server_closes_.erase(server_closes_.begin());
    return info;
  }

  std::string url(const std::string& path) const {
    return "ws://127.0.0.1:" + std::to_string(port_) + path;
  }

  Result<std::shared_ptr<net::WebSocket>> connect(net::WsConnectOptions opts) {
    return run_on(client_io_, net::connect_websocket(client_io_.get_executor(), std::move(opts)));
  }

  std::shared_ptr<net::WebSocket> connect_ok(const std::string& path = "/connect") {
    net::WsConnectOptions opts;
    opts.url = url(path);
    opts.subprotocols = {"rivet", "rivet_token.dev"};
    auto ws = connect(std::move(opts));
    if (!ws) {
      ADD_FAILURE() << ws.error().code << ": " << ws.error().message;
      return nullptr;
    }
    return *ws;
  }

  std::optional<net::WsMessage> receive(const std::shared_ptr<net::WebSocket>& ws) {
    return run_on(client_io_, ws->receive());
  }

  std::unique_ptr<asio::io_context> server_io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> server_work_;
  asio::io_context client_io_;
  asio::executor_work_guard<asio::io_context::executor_type> client_work_ =
      asio::make_work_guard(client_io_);
  std::unique_ptr<net::HttpServer> server_;
  std::uint16_t port_ = 0;
  std::thread server_thread_;
  std::thread client_thread_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<net::WsCloseInfo> server_closes_;
};

TEST_F(WsClientTest, EchoTextAndBinary) {
  auto ws = connect_ok();
  ASSERT_TRUE(ws);
  ws->send(net::WsMessage{false, "hello"});
  auto m = receive(ws);
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->binary);
  EXPECT_EQ(m->data, "hello");

  const std::string bin("\x00\x01\x02\xff\x00", 5);
  ws->send(net::WsMessage{true, bin});
  m = receive(ws);
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(m->binary);
  EXPECT_EQ(m->data, bin);

  ws->send(net::WsMessage{true, ""});
  m = receive(ws);
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(m->binary);
  EXPECT_EQ(m->data, "");

  ws->close(1000, "done");
  EXPECT_FALSE(receive(ws).has_value());
  EXPECT_EQ(ws->close_info().code, 1000);
  EXPECT_EQ(ws->close_info().reason, "done");
  auto info = wait_server_closed();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->code, 1000);
  EXPECT_EQ(info->reason, "done");
}

TEST_F(WsClientTest, SubprotocolNegotiatedAndHeadersSent) {
  net::WsConnectOptions opts;
  opts.url = url("/connect?protocol_version=8&namespace=default");
  opts.subprotocols = {"rivet", "rivet_token.dev"};
  opts.headers.push_back(net::Header{"X-Extra", "extra value"});
  std::optional<net::HttpResponse> handshake;
  opts.on_handshake_response = [&](const net::HttpResponse& r) {
    handshake = r;
  };
  auto ws = connect(std::move(opts));
  ASSERT_TRUE(ws.has_value()) << ws.error().message;
  ASSERT_TRUE(handshake.has_value());
  EXPECT_EQ(handshake->status, 101u);
  ASSERT_TRUE(net::find_header(handshake->headers, "sec-websocket-protocol"));
  EXPECT_EQ(*net::find_header(handshake->headers, "sec-websocket-protocol"), "rivet");
  EXPECT_EQ(*net::find_header(handshake->headers, "x-rivet-ray-id"), "ray-123");

  (*ws)->send(net::WsMessage{false, "cmd:headers"});
  auto m = receive(*ws);
  ASSERT_TRUE(m.has_value());
  EXPECT_NE(m->data.find("target=/connect?protocol_version=8&namespace=default\n"),
            std::string::npos)
      << m->data;
  EXPECT_NE(m->data.find("sec-websocket-protocol: rivet, rivet_token.dev\n"), std::string::npos)
      << m->data;
  EXPECT_NE(m->data.find("x-extra: extra value\n"), std::string::npos) << m->data;
  EXPECT_NE(m->data.find("host: 127.0.0.1:" + std::to_string(port_) + "\n"), std::string::npos)
      << m->data;
  EXPECT_EQ(m->data.find("permessage-deflate"), std::string::npos) << m->data;
}

TEST_F(WsClientTest, ServerCloseCodeAndReasonSeenByClient) {
  auto ws = connect_ok();
  ASSERT_TRUE(ws);
  ws->send(net::WsMessage{false, "cmd:close 1000 ws.eviction#ray-42"});
  auto m = receive(ws);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->data, "closing");  // queued before the close frame, so received before it
  EXPECT_FALSE(receive(ws).has_value());
  const auto info = ws->close_info();
  EXPECT_EQ(info.code, 1000);
  EXPECT_EQ(info.reason, "ws.eviction#ray-42");
  EXPECT_FALSE(receive(ws).has_value());           // stays ended
  ws->send(net::WsMessage{false, "after close"});  // dropped, no crash
  auto server = wait_server_closed();
  ASSERT_TRUE(server.has_value());
  EXPECT_EQ(server->code, 1000);
}

TEST_F(WsClientTest, ServerErrorCloseSeenByClient) {
  auto ws = connect_ok();
  ASSERT_TRUE(ws);
  ws->send(net::WsMessage{false, "cmd:close 1011 ws.no_runner_config#abc"});
  ASSERT_TRUE(receive(ws).has_value());
  EXPECT_FALSE(receive(ws).has_value());
  EXPECT_EQ(ws->close_info().code, 1011);
  EXPECT_EQ(ws->close_info().reason, "ws.no_runner_config#abc");
}

TEST_F(WsClientTest, ClientCloseSeenByServer) {
  auto ws = connect_ok();
  ASSERT_TRUE(ws);
  ws->send(net::WsMessage{false, "last"});
  ws->close(4001, "client bye");
  ws->send(net::WsMessage{false, "dropped"});
  // The echo of "last" may or may not arrive before the server's close reply.
  for (int i = 0; i < 3; ++i) {
    auto m = receive(ws);
    if (!m) {
      break;
    }
    EXPECT_EQ(m->data, "last");
  }
  EXPECT_EQ(ws->close_info().code, 4001);
  EXPECT_EQ(ws->close_info().reason, "client bye");
  auto info = wait_server_closed();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->code, 4001);
  EXPECT_EQ(info->reason, "client bye");
}

TEST_F(WsClientTest, DroppingTheSocketClosesIt) {
  {
    auto ws = connect_ok();
    ASSERT_TRUE(ws);
    ws->send(net::WsMessage{false, "x"});
  }
  auto info = wait_server_closed();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->code, 1000);
}

TEST_F(WsClientTest, LargeMessagesBothWays) {
  auto ws = connect_ok();
  ASSERT_TRUE(ws);
  std::string big(8u << 20, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) {
    big[i] = static_cast<char>((i * 31) & 0xFF);
  }
  ws->send(net::WsMessage{true, big});
  auto m = receive(ws);
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(m->binary);
  EXPECT_EQ(m->data.size(), big.size());
  EXPECT_TRUE(m->data == big);
  EXPECT_EQ(ws->buffered_bytes(), 0u);
}

TEST_F(WsClientTest, OversizeIncomingMessageFailsWith1009) {
  net::WsConnectOptions opts;
  opts.url = url("/connect");
  opts.max_message_size = 1024;
  auto ws = connect(std::move(opts));
  ASSERT_TRUE(ws.has_value()) << ws.error().message;
  (*ws)->send(net::WsMessage{false, "cmd:big 4096"});
  EXPECT_FALSE(receive(*ws).has_value());
  EXPECT_EQ((*ws)->close_info().code, 1009);
}

TEST_F(WsClientTest, FramesLeaveInCallOrderFromAnotherThread) {
  auto ws = connect_ok();
  ASSERT_TRUE(ws);
  constexpr int kCount = 500;
  std::thread sender([ws] {
    for (int k = 0; k < kCount; ++k) {
      ws->send(net::WsMessage{k % 2 == 1, "m" + std::to_string(k)});
    }
  });
  sender.join();
  for (int k = 0; k < kCount; ++k) {
    auto m = receive(ws);
    ASSERT_TRUE(m.has_value()) << k;
    ASSERT_EQ(m->data, "m" + std::to_string(k));
    ASSERT_EQ(m->binary, k % 2 == 1);
  }
}

TEST_F(WsClientTest, NonSwitchingResponseIsAnErrorWithTheStatus) {
  net::WsConnectOptions opts;
  opts.url = url("/reject");
  auto ws = connect(std::move(opts));
  ASSERT_FALSE(ws.has_value());
  EXPECT_EQ(ws.error().group, "net");
  EXPECT_EQ(ws.error().code, "handshake_rejected");
  EXPECT_NE(ws.error().message.find("500"), std::string::npos) << ws.error().message;
  ASSERT_TRUE(ws.error().metadata.has_value());
  const auto* status = ws.error().metadata->find("status");
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->as_int(), 500);
}

TEST_F(WsClientTest, UnofferedSubprotocolFailsTheHandshake) {
  net::WsConnectOptions opts;
  opts.url = url("/badproto");
  opts.subprotocols = {"rivet"};
  auto ws = connect(std::move(opts));
  ASSERT_FALSE(ws.has_value());
  EXPECT_EQ(ws.error().code, "handshake_failed") << ws.error().message;
}

TEST_F(WsClientTest, ConnectionRefused) {
  net::WsConnectOptions opts;
  opts.url = "ws://127.0.0.1:" + std::to_string(unused_port()) + "/";
  auto ws = connect(std::move(opts));
  ASSERT_FALSE(ws.has_value());
  EXPECT_EQ(ws.error().code, "connect_failed") << ws.error().message;
}

TEST_F(WsClientTest, HandshakeTimeout) {
  // A listener that never accepts: the kernel completes the TCP handshake, nobody answers.
  asio::io_context io;
  asio::ip::tcp::acceptor silent(io,
                                 asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  net::WsConnectOptions opts;
  opts.url = "ws://127.0.0.1:" + std::to_string(silent.local_endpoint().port()) + "/";
  opts.timeout = 300ms;
  const auto start = std::chrono::steady_clock::now();
  auto ws = connect(std::move(opts));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(ws.has_value());
  EXPECT_EQ(ws.error().code, "timeout") << ws.error().message;
  EXPECT_LT(elapsed, 5s);
}

TEST_F(WsClientTest, InvalidUrl) {
  net::WsConnectOptions opts;
  opts.url = "wss://127.0.0.1:1/";
  auto ws = connect(std::move(opts));
  ASSERT_FALSE(ws.has_value());
  EXPECT_EQ(ws.error().code, "invalid_url");
}

TEST_F(WsClientTest, PeerVanishingEndsTheSocketWith1006) {
  auto ws = connect_ok();
  ASSERT_TRUE(ws);
  ws->send(net::WsMessage{false, "ping"});
  ASSERT_TRUE(receive(ws).has_value());
  stop_server();  // sockets closed without a close frame
  EXPECT_FALSE(receive(ws).has_value());
  EXPECT_EQ(ws->close_info().code, 1006);
  // Using the dead socket is harmless.
  ws->send(net::WsMessage{false, "into the void"});
  ws->close(1000, "");
  EXPECT_FALSE(receive(ws).has_value());
  EXPECT_EQ(ws->close_info().code, 1006);
}

}  // namespace
