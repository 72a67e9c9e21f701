// rivetkit::net::http_request against the project's own HttpServer on an ephemeral loopback port.
// Server and client run on separate io_contexts (one thread each); every wait is bounded.

#include "net/http_client.hpp"

#include "net/http_server.hpp"
#include "util/log.hpp"
#include <rivetkit/task.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
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

constexpr auto kWaitLimit = 30s;

/// Runs `task` on `io` (run by another thread) and waits for its result, bounded.
template <class T>
T run_on(asio::io_context& io, Task<T> task) {
  auto fut = asio::co_spawn(io, std::move(task), asio::use_future);
  if (fut.wait_for(kWaitLimit) != std::future_status::ready) {
    throw std::runtime_error("task did not finish in time");
  }
  return fut.get();
}

/// A loopback port with nothing listening (bound once, then released).
std::uint16_t unused_port() {
  asio::io_context io;
  asio::ip::tcp::acceptor a(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const auto port = a.local_endpoint().port();
  a.close();
  return port;
}

class HttpClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rivetkit::log::init();
    net::HttpHandlers handlers;
    handlers.on_http = [](net::HttpRequest req) {
      return on_http(std::move(req));
    };
    server_ =
        std::make_unique<net::HttpServer>(server_io_, net::HttpServerConfig{}, std::move(handlers));
    auto port = server_->listen("127.0.0.1", 0);
    ASSERT_TRUE(port.has_value()) << port.error().message;
    port_ = *port;
    server_thread_ = std::thread([this] { server_io_.run(); });
    client_thread_ = std::thread([this] { client_io_.run(); });
  }

  void TearDown() override {
    if (server_) {
      server_->stop_accepting();
      server_->close_all();
    }
    server_work_.reset();
    client_work_.reset();
    server_io_.stop();
    client_io_.stop();
    if (server_thread_.joinable()) {
      server_thread_.join();
    }
    if (client_thread_.joinable()) {
      client_thread_.join();
    }
    server_.reset();
  }

  static Task<net::HttpResponse> on_http(net::HttpRequest req) {
    net::HttpResponse res;
    if (req.target.rfind("/echo", 0) == 0) {
      res.set_header("content-type", "text/plain");
      res.set_header("x-method", req.method);
      res.set_header("x-target", req.target);
      if (auto v = req.header("x-custom")) {
        res.set_header("x-custom-echo", std::string(*v));
      }
      if (auto v = req.header("host")) {
        res.set_header("x-host", std::string(*v));
      }
      res.body = req.body;
    } else if (req.target == "/slow") {
      auto ex = co_await asio::this_coro::executor;
      asio::steady_timer timer(ex, 5s);
      auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      (void)ec;
      res.body = "late";
    } else {
      res.status = 404;
      res.body = R"({"code":"not_found"})";
    }
    co_return res;
  }

  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

  Result<net::HttpResponse> request(net::HttpClientRequest req) {
    return run_on(client_io_, net::http_request(client_io_.get_executor(), std::move(req)));
  }

  asio::io_context server_io_;
  asio::io_context client_io_;
  asio::executor_work_guard<asio::io_context::executor_type> server_work_ =
      asio::make_work_guard(server_io_);
  asio::executor_work_guard<asio::io_context::executor_type> client_work_ =
      asio::make_work_guard(client_io_);
  std::unique_ptr<net::HttpServer> server_;
  std::uint16_t port_ = 0;
  std::thread server_thread_;
  std::thread client_thread_;
};

TEST_F(HttpClientTest, GetRoundTrip) {
  net::HttpClientRequest req;
  req.url = url("/echo?a=1&b=two");
  auto res = request(std::move(req));
  ASSERT_TRUE(res.has_value()) << res.error().message;
  EXPECT_EQ(res->status, 200u);
  EXPECT_EQ(res->body, "");
  ASSERT_TRUE(net::find_header(res->headers, "x-method"));
  EXPECT_EQ(*net::find_header(res->headers, "x-method"), "GET");
  EXPECT_EQ(*net::find_header(res->headers, "x-target"), "/echo?a=1&b=two");
  EXPECT_EQ(*net::find_header(res->headers, "x-host"), "127.0.0.1:" + std::to_string(port_));
  // Header names come back lower-cased.
  EXPECT_EQ(*net::find_header(res->headers, "content-type"), "text/plain");
  for (const auto& h : res->headers) {
    for (char c : h.name) {
      EXPECT_FALSE(c >= 'A' && c <= 'Z') << h.name;
    }
  }
}

TEST_F(HttpClientTest, PostRoundTripWithHeadersAndBody) {
  net::HttpClientRequest req;
  req.method = "POST";
  req.url = url("/echo");
  req.headers.push_back(net::Header{"X-Custom", "value 1"});
  req.headers.push_back(net::Header{"content-type", "application/json"});
  req.body = R"({"hello":"world"})";
  auto res = request(std::move(req));
  ASSERT_TRUE(res.has_value()) << res.error().message;
  EXPECT_EQ(res->status, 200u);
  EXPECT_EQ(res->body, R"({"hello":"world"})");
  EXPECT_EQ(*net::find_header(res->headers, "x-method"), "POST");
  EXPECT_EQ(*net::find_header(res->headers, "x-custom-echo"), "value 1");
}

TEST_F(HttpClientTest, PutWithLargeBody) {
  net::HttpClientRequest req;
  req.method = "PUT";
  req.url = url("/echo");
  req.body.resize(3u << 20);
  for (std::size_t i = 0; i < req.body.size(); ++i) {
    req.body[i] = static_cast<char>(i * 7 % 251);
  }
  const std::string expected = req.body;
  auto res = request(std::move(req));
  ASSERT_TRUE(res.has_value()) << res.error().message;
  EXPECT_EQ(res->status, 200u);
  EXPECT_EQ(*net::find_header(res->headers, "x-method"), "PUT");
  EXPECT_TRUE(res->body == expected);
}

TEST_F(HttpClientTest, ErrorStatusIsAResponseNotAnError) {
  net::HttpClientRequest req;
  req.url = url("/missing");
  auto res = request(std::move(req));
  ASSERT_TRUE(res.has_value()) << res.error().message;
  EXPECT_EQ(res->status, 404u);
  EXPECT_EQ(res->body, R"({"code":"not_found"})");
}

TEST_F(HttpClientTest, HeadHasNoBody) {
  net::HttpClientRequest req;
  req.method = "HEAD";
  req.url = url("/echo");
  auto res = request(std::move(req));
  ASSERT_TRUE(res.has_value()) << res.error().message;
  EXPECT_EQ(res->status, 200u);
  EXPECT_EQ(res->body, "");
}

TEST_F(HttpClientTest, LocalhostNameIsResolved) {
  net::HttpClientRequest req;
  req.url = "http://localhost:" + std::to_string(port_) + "/echo";
  auto res = request(std::move(req));
  ASSERT_TRUE(res.has_value()) << res.error().message;
  EXPECT_EQ(res->status, 200u);
  EXPECT_EQ(*net::find_header(res->headers, "x-host"), "localhost:" + std::to_string(port_));
}

TEST_F(HttpClientTest, TimeoutWhileWaitingForTheResponse) {
  net::HttpClientRequest req;
  req.url = url("/slow");
  req.timeout = 300ms;
  const auto start = std::chrono::steady_clock::now();
  auto res = request(std::move(req));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(res.has_value());
  EXPECT_EQ(res.error().group, "net");
  EXPECT_EQ(res.error().code, "timeout") << res.error().message;
  EXPECT_LT(elapsed, 3s);
  EXPECT_GE(elapsed, 250ms);
}

TEST_F(HttpClientTest, ConnectionRefused) {
  net::HttpClientRequest req;
  req.url = "http://127.0.0.1:" + std::to_string(unused_port()) + "/health";
  auto res = request(std::move(req));
  ASSERT_FALSE(res.has_value());
  EXPECT_EQ(res.error().group, "net");
  EXPECT_EQ(res.error().code, "connect_failed") << res.error().message;
}

TEST_F(HttpClientTest, UnresolvableHost) {
  net::HttpClientRequest req;
  req.url = "http://no-such-host.invalid:80/";
  req.timeout = 5s;
  auto res = request(std::move(req));
  ASSERT_FALSE(res.has_value());
  // Depending on the resolver this fails fast or hits the deadline; never a connection.
  EXPECT_TRUE(res.error().code == "resolve_failed" || res.error().code == "timeout")
      << res.error().code << ": " << res.error().message;
}

TEST_F(HttpClientTest, InvalidUrlsAndRequests) {
  for (const char* bad : {"ftp://127.0.0.1/", "127.0.0.1:80/x", "http://", "http://:80/",
                          "https://127.0.0.1/", "http://host:0/", "http://host:99999/"}) {
    net::HttpClientRequest req;
    req.url = bad;
    auto res = request(std::move(req));
    ASSERT_FALSE(res.has_value()) << bad;
    EXPECT_EQ(res.error().code, "invalid_url") << bad;
  }
  net::HttpClientRequest req;
  req.url = url("/echo");
  req.headers.push_back(net::Header{"x-bad", "a\r\nInjected: 1"});
  auto res = request(std::move(req));
  ASSERT_FALSE(res.has_value());
  EXPECT_EQ(res.error().code, "invalid_request");
}

TEST_F(HttpClientTest, ConcurrentRequests) {
  // All in flight at once on the client io_context; collected here.
  std::vector<std::future<Result<net::HttpResponse>>> futures;
  for (int i = 0; i < 16; ++i) {
    net::HttpClientRequest req;
    req.method = "POST";
    req.url = url("/echo");
    req.body = "n" + std::to_string(i);
    auto op = net::http_request(client_io_.get_executor(), std::move(req));
    futures.push_back(asio::co_spawn(client_io_, std::move(op), asio::use_future));
  }
  for (int i = 0; i < 16; ++i) {
    ASSERT_EQ(futures[static_cast<std::size_t>(i)].wait_for(kWaitLimit), std::future_status::ready);
    auto res = futures[static_cast<std::size_t>(i)].get();
    ASSERT_TRUE(res.has_value()) << res.error().message;
    EXPECT_EQ(res->body, "n" + std::to_string(i));
  }
}

TEST(ClientUrlTest, ParsesPartsAndDefaults) {
  auto u = net::parse_client_url("http://127.0.0.1:6420/registry/actors?namespace=default#frag");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->scheme, "http");
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, 6420);
  EXPECT_EQ(u->target, "/registry/actors?namespace=default");
  EXPECT_EQ(u->host_header(), "127.0.0.1:6420");

  u = net::parse_client_url("WS://Example.com");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->scheme, "ws");
  EXPECT_EQ(u->host, "Example.com");
  EXPECT_EQ(u->port, 80);
  EXPECT_EQ(u->target, "/");
  EXPECT_EQ(u->host_header(), "Example.com");

  u = net::parse_client_url("ws://[::1]:8080?x=1");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 8080);
  EXPECT_EQ(u->target, "/?x=1");
  EXPECT_EQ(u->host_header(), "[::1]:8080");

  u = net::parse_client_url("wss://api.rivet.dev/envoys/connect");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->port, 443);

  for (const char* bad : {"", "://x", "http//x", "http://user@host/", "http://[::1/", "http://h:/",
                          "http://h:12ab/", "gopher://h/"}) {
    auto r = net::parse_client_url(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().group, "net");
    EXPECT_EQ(r.error().code, "invalid_url");
  }
}

}  // namespace
