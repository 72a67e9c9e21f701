// End-to-end tests of rivetkit::net::HttpServer over loopback.
//
// The clients are deliberately primitive: blocking POSIX sockets with a receive timeout (so no
// test can hang), hand-written HTTP bytes and a minimal hand-rolled WebSocket client (masked
// frames). That keeps Beast out of this TU (compile cost, cpp-guide §2.1) and lets the tests send
// exactly the bytes a misbehaving peer would.

#include "net/http_server.hpp"

#include "util/log.hpp"
#include <rivetkit/task.hpp>

#include <arpa/inet.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace net = rivetkit::net;
using namespace std::chrono_literals;
using rivetkit::Task;

/// Upper bound for any single blocking read in a test client.
constexpr int kRecvTimeoutSeconds = 10;
/// Upper bound for waiting on a server-side event.
constexpr auto kEventTimeout = 10s;

// ------------------------------------------------------------------------------------------------
// Blocking TCP client

class RawClient {
 public:
  explicit RawClient(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) {
      return;
    }
    timeval tv{};
    tv.tv_sec = kRecvTimeoutSeconds;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~RawClient() { close(); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return fd_ >= 0; }

  bool send_all(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) {
        return false;
      }
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  /// Appends what arrives to the buffer. False on EOF, error or timeout.
  bool fill() {
    std::array<char, 16384> tmp{};
    const ssize_t n = ::recv(fd_, tmp.data(), tmp.size(), 0);
    if (n <= 0) {
      last_eof_ = (n == 0) || errno == ECONNRESET;
      return false;
    }
    buf_.append(tmp.data(), static_cast<std::size_t>(n));
    return true;
  }

  std::optional<std::string> read_exact(std::size_t n) {
    while (buf_.size() < n) {
      if (!fill()) {
        return std::nullopt;
      }
    }
    std::string out = buf_.substr(0, n);
    buf_.erase(0, n);
    return out;
  }

  /// Reads through `delim` (included in the result).
  std::optional<std::string> read_until(std::string_view delim) {
    for (;;) {
      if (auto pos = buf_.find(delim); pos != std::string::npos) {
        std::string out = buf_.substr(0, pos + delim.size());
        buf_.erase(0, pos + delim.size());
        return out;
      }
      if (!fill()) {
        return std::nullopt;
      }
    }
  }

  /// True if the server closed the connection (EOF or reset) before the receive timeout.
  /// Data that arrives first is discarded.
  bool wait_eof() {
    buf_.clear();
    for (int i = 0; i < 100000; ++i) {
      if (!fill()) {
        return last_eof_;
      }
      buf_.clear();
    }
    return false;
  }

  /// Everything that arrives until the server closes; nullopt on a receive timeout.
  std::optional<std::string> read_to_eof() {
    while (fill()) {
    }
    if (!last_eof_) {
      return std::nullopt;
    }
    std::string out = std::move(buf_);
    buf_.clear();
    return out;
  }

  void shutdown_write() { ::shutdown(fd_, SHUT_WR); }

  /// Closes with a TCP reset (no FIN, no WebSocket close frame).
  void abort() {
    linger l{};
    l.l_onoff = 1;
    l.l_linger = 0;
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    close();
  }

  void close() {
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }

  const std::string& buffered() const { return buf_; }

 private:
  int fd_ = -1;
  std::string buf_;
  bool last_eof_ = false;
};

// ------------------------------------------------------------------------------------------------
// HTTP/1.1 response parsing (enough for what the server sends: Content-Length framing)

std::string to_lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

struct RawResponse {
  int status = 0;
  std::string status_line;
  std::multimap<std::string, std::string> headers;  // lower-case names
  std::string body;

  std::optional<std::string> header(const std::string& name) const {
    auto it = headers.find(name);
    if (it == headers.end()) {
      return std::nullopt;
    }
    return it->second;
  }
};

std::optional<RawResponse> read_head(RawClient& c) {
  auto head = c.read_until("\r\n\r\n");
  if (!head) {
    return std::nullopt;
  }
  RawResponse r;
  std::string_view rest(*head);
  auto eol = rest.find("\r\n");
  r.status_line = std::string(rest.substr(0, eol));
  rest.remove_prefix(eol + 2);
  // "HTTP/1.1 200 OK"
  if (r.status_line.size() < 12 || r.status_line.compare(0, 5, "HTTP/") != 0) {
    return std::nullopt;
  }
  r.status = std::stoi(r.status_line.substr(9, 3));
  while (!rest.empty()) {
    eol = rest.find("\r\n");
    std::string_view line = rest.substr(0, eol);
    rest.remove_prefix(eol + 2);
    if (line.empty()) {
      break;
    }
    auto colon = line.find(':');
    std::string name = to_lower(std::string(line.substr(0, colon)));
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') {
      value.remove_prefix(1);
    }
    r.headers.emplace(std::move(name), std::string(value));
  }
  return r;
}

/// Reads one response; `head_request` suppresses the body read.
std::optional<RawResponse> read_response(RawClient& c, bool head_request = false) {
  auto r = read_head(c);
  if (!r) {
    return std::nullopt;
  }
  if (head_request || r->status == 204 || r->status == 304 || r->status < 200) {
    return r;
  }
  auto cl = r->header("content-length");
  if (!cl) {
    return std::nullopt;  // the server always frames with Content-Length
  }
  auto body = c.read_exact(static_cast<std::size_t>(std::stoul(*cl)));
  if (!body) {
    return std::nullopt;
  }
  r->body = std::move(*body);
  return r;
}

std::string get_request(std::string_view target, std::string_view extra_headers = "") {
  return "GET " + std::string(target) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
         + std::string(extra_headers) + "\r\n";
}

std::string post_request(std::string_view target, std::string_view body) {
  return "POST " + std::string(target)
         + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: "
         + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

// ------------------------------------------------------------------------------------------------
// Minimal WebSocket client (RFC 6455): masked client frames, unmasked server frames.

constexpr std::uint8_t kOpCont = 0x0;
constexpr std::uint8_t kOpText = 0x1;
constexpr std::uint8_t kOpBinary = 0x2;
constexpr std::uint8_t kOpClose = 0x8;
constexpr std::uint8_t kOpPing = 0x9;
constexpr std::uint8_t kOpPong = 0xA;

/// RFC 6455 §1.3 example key and its accept value.
constexpr std::string_view kWsKey = "dGhlIHNhbXBsZSBub25jZQ==";
constexpr std::string_view kWsAccept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

struct Frame {
  bool fin = true;
  std::uint8_t opcode = 0;
  std::string payload;

  std::uint16_t close_code() const {
    if (payload.size() < 2) {
      return 1005;
    }
    return static_cast<std::uint16_t>((static_cast<unsigned char>(payload[0]) << 8)
                                      | static_cast<unsigned char>(payload[1]));
  }
  std::string close_reason() const { return payload.size() > 2 ? payload.substr(2) : ""; }
};

class WsClient {
 public:
  explicit WsClient(std::uint16_t port) : c_(port) {}

  RawClient& raw() { return c_; }

  /// End of the closing handshake: the server closes TCP first (RFC 6455 §7.1.1), then we do.
  /// True if the server's EOF arrived.
  bool finish() {
    const bool eof = c_.wait_eof();
    c_.close();
    return eof;
  }

  std::optional<RawResponse> handshake(std::string_view target,
                                       std::string_view protocols,
                                       bool offer_deflate = true) {
    std::string req = "GET " + std::string(target)
                      + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                        "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: "
                      + std::string(kWsKey) + "\r\n";
    if (!protocols.empty()) {
      req += "Sec-WebSocket-Protocol: " + std::string(protocols) + "\r\n";
    }
    if (offer_deflate) {
      req += "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n";
    }
    req += "\r\n";
    if (!c_.send_all(req)) {
      return std::nullopt;
    }
    return read_head(c_);
  }

  bool send_frame(std::uint8_t opcode, std::string_view payload, bool fin = true) {
    std::string f;
    f.push_back(static_cast<char>((fin ? 0x80 : 0x00) | opcode));
    const std::size_t n = payload.size();
    if (n < 126) {
      f.push_back(static_cast<char>(0x80 | n));
    } else if (n <= 0xFFFF) {
      f.push_back(static_cast<char>(0x80 | 126));
      f.push_back(static_cast<char>((n >> 8) & 0xFF));
      f.push_back(static_cast<char>(n & 0xFF));
    } else {
      f.push_back(static_cast<char>(0x80 | 127));
      for (int shift = 56; shift >= 0; shift -= 8) {
        f.push_back(static_cast<char>((static_cast<std::uint64_t>(n) >> shift) & 0xFF));
      }
    }
    const std::array<unsigned char, 4> mask = {0x37, 0xfa, 0x21, 0x3d};
    for (unsigned char m : mask) {
      f.push_back(static_cast<char>(m));
    }
    for (std::size_t i = 0; i < n; ++i) {
      f.push_back(static_cast<char>(static_cast<unsigned char>(payload[i]) ^ mask[i % 4]));
    }
    return c_.send_all(f);
  }

  bool send_text(std::string_view s) { return send_frame(kOpText, s); }
  bool send_binary(std::string_view s) { return send_frame(kOpBinary, s); }
  bool send_close(std::uint16_t code, std::string_view reason) {
    std::string p;
    p.push_back(static_cast<char>(code >> 8));
    p.push_back(static_cast<char>(code & 0xFF));
    p.append(reason);
    return send_frame(kOpClose, p);
  }
  bool send_close_empty() { return send_frame(kOpClose, ""); }

  std::optional<Frame> read_frame() {
    auto h = c_.read_exact(2);
    if (!h) {
      return std::nullopt;
    }
    Frame f;
    const auto b0 = static_cast<unsigned char>((*h)[0]);
    const auto b1 = static_cast<unsigned char>((*h)[1]);
    f.fin = (b0 & 0x80) != 0;
    f.opcode = b0 & 0x0F;
    if ((b1 & 0x80) != 0) {
      return std::nullopt;  // servers never mask
    }
    std::uint64_t len = b1 & 0x7F;
    if (len == 126) {
      auto e = c_.read_exact(2);
      if (!e) {
        return std::nullopt;
      }
      len = (static_cast<std::uint64_t>(static_cast<unsigned char>((*e)[0])) << 8)
            | static_cast<unsigned char>((*e)[1]);
    } else if (len == 127) {
      auto e = c_.read_exact(8);
      if (!e) {
        return std::nullopt;
      }
      len = 0;
      for (char ch : *e) {
        len = (len << 8) | static_cast<unsigned char>(ch);
      }
    }
    auto p = c_.read_exact(static_cast<std::size_t>(len));
    if (!p) {
      return std::nullopt;
    }
    f.payload = std::move(*p);
    return f;
  }

  /// Next data message (fragments joined) or the close frame, skipping pings/pongs.
  std::optional<Frame> read_message() {
    std::optional<Frame> msg;
    for (int i = 0; i < 10000; ++i) {
      auto f = read_frame();
      if (!f) {
        return std::nullopt;
      }
      if (f->opcode == kOpPing || f->opcode == kOpPong) {
        continue;
      }
      if (f->opcode == kOpClose) {
        return f;
      }
      if (!msg) {
        msg = std::move(f);
      } else {
        msg->payload += f->payload;
        msg->fin = f->fin;
      }
      if (msg->fin) {
        return msg;
      }
    }
    return std::nullopt;
  }

 private:
  RawClient c_;
};

// ------------------------------------------------------------------------------------------------
// Fixture: a server on 127.0.0.1:0 run by two io threads, with test handlers.

class NetServerTest : public ::testing::Test {
 protected:
  static net::HttpServerConfig default_config() {
    net::HttpServerConfig cfg;
    cfg.max_body_bytes = 64 * 1024;
    cfg.max_header_bytes = 8 * 1024;
    cfg.max_ws_message_bytes = 4096;
    cfg.idle_timeout = 30s;
    cfg.header_timeout = 30s;
    return cfg;
  }

  void start(net::HttpServerConfig cfg = default_config()) {
    rivetkit::log::init();  // RIVET_LOG_LEVEL=debug shows the server's view
    net::HttpHandlers handlers;
    handlers.on_http = [this](net::HttpRequest req) {
      return on_http(std::move(req));
    };
    handlers.accept_websocket = [this](const net::HttpRequest& req) {
      return accept_ws(req);
    };
    // Refused from the head: the body is never read (nor on_http called).
    handlers.answer_head = [](const net::HttpRequest& head) -> std::optional<net::HttpResponse> {
      if (head.target != "/refuse-early") {
        return std::nullopt;
      }
      net::HttpResponse res;
      res.status = 403;
      res.body = "refused: " + std::string(head.header("x-why").value_or(""));
      return res;
    };
    handlers.on_websocket = [this](net::HttpRequest req, std::shared_ptr<net::WebSocket> ws) {
      return on_websocket(std::move(req), std::move(ws));
    };
    server_ = std::make_unique<net::HttpServer>(io_, cfg, std::move(handlers));
    auto port = server_->listen("127.0.0.1", 0);
    ASSERT_TRUE(port.has_value()) << port.error().message;
    port_ = *port;
    ASSERT_NE(port_, 0);
    for (int i = 0; i < 2; ++i) {
      threads_.emplace_back([this] { io_.run(); });
    }
  }

  void TearDown() override {
    if (server_) {
      server_->stop_accepting();
      server_->close_all();
    }
    work_.reset();
    io_.stop();
    for (auto& t : threads_) {
      t.join();
    }
    server_.reset();
  }

  /// The server still answers a fresh connection.
  void expect_server_ok() {
    RawClient c(port_);
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.send_all(post_request("/echo", "still alive")));
    auto r = read_response(c);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "still alive");
  }

  // --- server-side events, recorded for assertions ---

  std::optional<net::WsCloseInfo> wait_ws_closed() {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, kEventTimeout, [&] { return !ws_closes_.empty(); })) {
      return std::nullopt;
    }
    auto info = ws_closes_.front();
    ws_closes_.erase(ws_closes_.begin());
    return info;
  }

  bool wait_flag(const bool& flag) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kEventTimeout, [&] { return flag; });
  }

  void release_slow() {
    std::lock_guard lock(mu_);
    asio::post(slow_ex_, [t = slow_timer_] { t->cancel(); });
  }

  // --- handlers ---

  Task<net::HttpResponse> on_http(net::HttpRequest req) {
    net::HttpResponse res;
    if (req.target == "/echo") {
      res.set_header("Content-Type", "text/plain");
      res.set_header("x-method", req.method);
      res.body = req.body;
    } else if (req.target == "/headers") {
      for (const auto& h : req.headers) {
        res.body += h.name + ": " + h.value + "\n";
      }
    } else if (req.target == "/throw") {
      throw std::runtime_error("handler exploded");
    } else if (req.target == "/no-content") {
      res.status = 204;
      res.body = "ignored";
    } else if (req.target == "/remote") {
      res.body = req.remote_address;
    } else if (req.target == "/close") {
      res.set_header("connection", "close");
      res.body = "bye";
    } else if (req.target == "/refuse-early") {
      res.body = "the body was read";  // never: answer_head refuses it first
    } else if (req.target == "/stream") {
      res.set_header("content-type", "text/event-stream");
      res.set_header("content-length", "999");  // framing is the server's
      res.stream = [](net::ResponseStream& out) -> Task<void> {
        auto a = out.write("a");
        co_await std::move(a);
        auto empty = out.write("");  // not a last chunk
        co_await std::move(empty);
        auto b = out.write("bb");
        co_await std::move(b);
      };
    } else if (req.target == "/stream-until-gone") {
      // Writes until the client is gone (as an SSE ping loop does), then says so.
      res.stream = [this](net::ResponseStream& out) -> Task<void> {
        auto ex = co_await asio::this_coro::executor;
        for (;;) {
          auto write_op = out.write("ping\n");
          if (!co_await std::move(write_op)) {
            break;
          }
          asio::steady_timer pause(ex, std::chrono::milliseconds(5));
          co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
        }
        {
          std::lock_guard lock(mu_);
          stream_ended_ = true;
        }
        cv_.notify_all();
      };
    } else if (req.target == "/slow") {
      auto ex = co_await asio::this_coro::executor;
      auto timer = std::make_shared<asio::steady_timer>(ex, std::chrono::hours(1));
      {
        std::lock_guard lock(mu_);
        slow_timer_ = timer;
        slow_ex_ = ex;
        slow_started_ = true;
      }
      cv_.notify_all();
      auto [ec] = co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
      (void)ec;
      {
        std::lock_guard lock(mu_);
        slow_finished_ = true;
      }
      cv_.notify_all();
      res.body = "slow done";
    } else {
      res.status = 404;
    }
    co_return res;
  }

  net::WsAccept accept_ws(const net::HttpRequest& req) {
    net::WsAccept acc;
    auto protocols = req.header("sec-websocket-protocol");
    if (protocols && protocols->find("rivet") != std::string_view::npos) {
      acc.subprotocol = "rivet";
    }
    acc.extra_headers.push_back(net::Header{"x-test", "yes"});
    return acc;
  }

  Task<void> on_websocket(net::HttpRequest req, std::shared_ptr<net::WebSocket> ws) {
    bool returned_early = false;
    if (req.target == "/offstrand") {
      // Like an actor: receive and send from a coroutine on another strand.
      asio::any_io_executor strand = asio::make_strand(io_);
      auto loop = serve_socket(ws);
      returned_early = co_await asio::co_spawn(strand, std::move(loop), asio::use_awaitable);
    } else {
      auto loop = serve_socket(ws);
      returned_early = co_await std::move(loop);
    }
    if (!returned_early) {
      {
        std::lock_guard lock(mu_);
        ws_closes_.push_back(ws->close_info());
      }
      cv_.notify_all();
    }
  }

  /// Echo loop with a few text commands ("cmd:..."). True if it returned before the close.
  Task<bool> serve_socket(std::shared_ptr<net::WebSocket> ws) {
    for (int i = 0; i < 100000; ++i) {
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
        ws->close(code, sp == std::string::npos ? "" : d.substr(sp + 1));
      } else if (d.rfind("cmd:burst ", 0) == 0) {
        const int n = std::stoi(d.substr(10));
        std::thread sender([ws, n] {
          for (int k = 0; k < n; ++k) {
            ws->send(net::WsMessage{k % 2 == 1, "m" + std::to_string(k)});
          }
          ws->close(4000, "burst done");
          ws->send(net::WsMessage{false, "after close"});  // dropped
        });
        sender.join();
      } else if (d == "cmd:return") {
        co_return true;
      } else if (d == "cmd:throw") {
        throw std::runtime_error("ws handler exploded");
      } else if (d == "cmd:close-then-send") {
        ws->close(4003, "closed first");
        ws->send(net::WsMessage{false, "late"});
      }
    }
    co_return false;
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::vector<std::thread> threads_;
  std::unique_ptr<net::HttpServer> server_;
  std::uint16_t port_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<net::WsCloseInfo> ws_closes_;
  bool slow_started_ = false;
  bool slow_finished_ = false;
  bool stream_ended_ = false;
  std::shared_ptr<asio::steady_timer> slow_timer_;
  asio::any_io_executor slow_ex_;
};

// ------------------------------------------------------------------------------------------------
// HTTP

TEST_F(NetServerTest, GetAndPostWithContentLength) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.send_all(get_request("/echo")));
  auto r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->header("x-method"), "GET");
  EXPECT_EQ(r->header("content-length"), "0");
  EXPECT_EQ(r->body, "");

  ASSERT_TRUE(c.send_all(post_request("/echo", "hello body")));
  r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->header("x-method"), "POST");
  EXPECT_EQ(r->header("content-type"), "text/plain");
  EXPECT_EQ(r->header("content-length"), "10");
  EXPECT_EQ(r->body, "hello body");
}

TEST_F(NetServerTest, HeaderNamesAreLowerCasedInOrder) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(c.send_all(get_request("/headers", "X-Custom-Header: Some Value\r\nX-B: 2\r\n")));
  auto r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_NE(r->body.find("host: 127.0.0.1\nx-custom-header: Some Value\nx-b: 2\n"),
            std::string::npos)
      << r->body;
}

TEST_F(NetServerTest, ChunkedBodyIsReassembled) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(
      c.send_all("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                 "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n"));
  auto r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello world");
}

TEST_F(NetServerTest, KeepAliveServesSequentialAndPipelinedRequests) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(c.send_all(post_request("/echo", "one")));
  auto r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "one");
  EXPECT_NE(r->header("connection"), "close");

  ASSERT_TRUE(c.send_all(post_request("/echo", "two")));
  r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "two");

  // Pipelined: both requests in one write; answered in order.
  ASSERT_TRUE(c.send_all(post_request("/echo", "three") + post_request("/echo", "four")));
  r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "three");
  r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "four");
}

TEST_F(NetServerTest, Http10ClosesAfterResponse) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(c.send_all("GET /echo HTTP/1.0\r\n\r\n"));
  auto r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->status_line.substr(0, 8), "HTTP/1.0");
  EXPECT_TRUE(c.wait_eof());
}

TEST_F(NetServerTest, Http10KeepAliveIsHonoured) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(c.send_all("GET /echo HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  auto r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(to_lower(r->header("connection").value_or("")), "keep-alive");
  ASSERT_TRUE(c.send_all("GET /echo HTTP/1.0\r\n\r\n"));
  r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(c.wait_eof());
}

TEST_F(NetServerTest, ConnectionCloseFromClientOrHandler) {
  start();
  {
    RawClient c(port_);
    ASSERT_TRUE(c.send_all(get_request("/echo", "Connection: close\r\n")));
    auto r = read_response(c);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->header("connection"), "close");
    EXPECT_TRUE(c.wait_eof());
  }
  {
    RawClient c(port_);
    ASSERT_TRUE(c.send_all(get_request("/close")));
    auto r = read_response(c);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->body, "bye");
    EXPECT_EQ(r->header("connection"), "close");
    EXPECT_TRUE(c.wait_eof());
  }
}

TEST_F(NetServerTest, ExpectContinueGets100BeforeBody) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(
      c.send_all("POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                 "Content-Length: 4\r\n\r\n"));
  auto interim = read_head(c);
  ASSERT_TRUE(interim.has_value());
  EXPECT_EQ(interim->status, 100);
  ASSERT_TRUE(c.send_all("data"));
  auto r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "data");
}

TEST_F(NetServerTest, HeadHasLengthButNoBody) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(c.send_all("HEAD /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
                         + post_request("/echo", "next")));
  auto r = read_response(c, /*head_request=*/true);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->header("content-length"), "3");
  // The next response starts right after the header block: no body bytes were sent.
  r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "next");
}

TEST_F(NetServerTest, NoContentResponseHasNoBody) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(c.send_all(get_request("/no-content") + post_request("/echo", "after")));
  auto r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 204);
  EXPECT_FALSE(r->header("content-length").has_value());
  r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "after");
}

TEST_F(NetServerTest, AnAnswerFromTheHeadNeedsNoBody) {
  start();
  RawClient c(port_);
  // A declared body of which nothing is sent: the answer comes anyway.
  ASSERT_TRUE(
      c.send_all("POST /refuse-early HTTP/1.1\r\nHost: x\r\nx-why: headers\r\n"
                 "Content-Length: 50000\r\n\r\n"));
  auto r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 403);
  EXPECT_EQ(r->body, "refused: headers");
  EXPECT_TRUE(c.wait_eof()) << "the connection closes: its body was not read";
  // A request without a body is the handler's as usual.
  RawClient d(port_);
  ASSERT_TRUE(d.send_all(get_request("/refuse-early")));
  auto plain = read_response(d);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->body, "the body was read");
  expect_server_ok();
}

TEST_F(NetServerTest, AStreamedResponseIsChunkedThenTheConnectionCloses) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(c.send_all(get_request("/stream")));
  auto r = read_head(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->header("transfer-encoding"), "chunked");
  EXPECT_FALSE(r->header("content-length").has_value());
  EXPECT_EQ(r->header("content-type"), "text/event-stream");
  auto rest = c.read_to_eof();
  ASSERT_TRUE(rest.has_value());
  EXPECT_EQ(*rest, "1\r\na\r\n2\r\nbb\r\n0\r\n\r\n");
  expect_server_ok();
}

TEST_F(NetServerTest, AStreamEndsWhenItsClientIsGone) {
  start();
  {
    RawClient c(port_);
    ASSERT_TRUE(c.send_all(get_request("/stream-until-gone")));
    ASSERT_TRUE(read_head(c).has_value());
    ASSERT_TRUE(c.read_until("ping\n").has_value());
    c.abort();
  }
  ASSERT_TRUE(wait_flag(stream_ended_));
  expect_server_ok();
}

TEST_F(NetServerTest, RemoteAddressIsThePeerIp) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(c.send_all(get_request("/remote")));
  auto r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "127.0.0.1");
}

TEST_F(NetServerTest, UnknownRouteIs404) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(c.send_all(get_request("/nope")));
  auto r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 404);
}

TEST_F(NetServerTest, OversizeContentLengthIs413AndClose) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(c.send_all("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"
                         + std::string(1000, 'a')));
  auto r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(r->header("connection"), "close");
  c.shutdown_write();
  EXPECT_TRUE(c.wait_eof());
  expect_server_ok();
}

TEST_F(NetServerTest, OversizeChunkedBodyIs413AndClose) {
  start();
  RawClient c(port_);
  std::string req = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string chunk(16 * 1024, 'b');
  for (int i = 0; i < 5; ++i) {  // 80 KiB > 64 KiB
    req += "4000\r\n" + chunk + "\r\n";
  }
  req += "0\r\n\r\n";
  ASSERT_TRUE(c.send_all(req));
  auto r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 413);
  c.shutdown_write();
  EXPECT_TRUE(c.wait_eof());
  expect_server_ok();
}

TEST_F(NetServerTest, BodyAtTheLimitIsAccepted) {
  start();
  RawClient c(port_);
  const std::string body(64 * 1024, 'x');
  ASSERT_TRUE(c.send_all(post_request("/echo", body)));
  auto r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body.size(), body.size());
}

TEST_F(NetServerTest, OversizeHeaderIs431AndClose) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(c.send_all(get_request("/echo", "X-Big: " + std::string(10000, 'h') + "\r\n")));
  auto r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 431);
  c.shutdown_write();
  EXPECT_TRUE(c.wait_eof());
  expect_server_ok();
}

TEST_F(NetServerTest, GarbageIs400AndClose) {
  start();
  {
    RawClient c(port_);
    ASSERT_TRUE(c.send_all("\x01\x02 garbage garbage\r\n\r\n"));
    auto r = read_response(c);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 400);
    c.shutdown_write();
    EXPECT_TRUE(c.wait_eof());
  }
  {
    RawClient c(port_);
    ASSERT_TRUE(c.send_all("GET /echo HTTP/9.9\r\n\r\n"));
    auto r = read_response(c);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 400);
  }
  {
    RawClient c(port_);
    ASSERT_TRUE(c.send_all("POST /echo HTTP/1.1\r\nContent-Length: nope\r\n\r\n"));
    auto r = read_response(c);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 400);
  }
  expect_server_ok();
}

// Request smuggling hardening (RFC 9112 §6.1, §6.3): a request whose body length is ambiguous
// is refused and the connection closed, so its body is never parsed as a second request.
TEST_F(NetServerTest, AmbiguousTransferEncodingIs400AndClose) {
  start();
  // The body of each request below is a complete pipelined request, which must never be
  // answered.
  const std::string smuggled = post_request("/echo", "smuggled");
  const std::string chunked_smuggled =
      std::to_string(smuggled.size()) + "\r\n" + smuggled + "\r\n0\r\n\r\n";
  struct Case {
    std::string headers;
    std::string body;
    int status;
  };
  const std::vector<Case> cases = {
      {"Transfer-Encoding: chunked, identity\r\n", smuggled, 400},
      {"Transfer-Encoding: identity\r\n", smuggled, 400},
      {"Transfer-Encoding: gzip\r\n", smuggled, 400},
      {"Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n", smuggled, 400},
      {"Transfer-Encoding: chunked, chunked\r\n", chunked_smuggled, 400},
      {"Transfer-Encoding: \r\n", smuggled, 400},
      {"Transfer-Encoding: identity\r\nContent-Length: 0\r\n", smuggled, 400},
      {"Content-Length: " + std::to_string(chunked_smuggled.size())
           + "\r\nTransfer-Encoding: chunked\r\n",
       chunked_smuggled, 400},
      {"Transfer-Encoding: chunked\r\nContent-Length: 0\r\n", chunked_smuggled, 400},
      {"Transfer-Encoding: gzip, chunked\r\n", chunked_smuggled, 501},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.headers);
    RawClient c(port_);
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.send_all("POST /echo HTTP/1.1\r\nHost: x\r\n" + tc.headers + "\r\n" + tc.body));
    auto r = read_response(c);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, tc.status);
    EXPECT_EQ(r->header("connection"), "close");
    c.shutdown_write();
    // Nothing but the close follows: the pipelined request got no answer.
    EXPECT_EQ(c.read_to_eof(), std::optional<std::string>(""));
  }
  {
    // HTTP/1.0 has no chunked coding: Transfer-Encoding there is faulty framing.
    RawClient c(port_);
    ASSERT_TRUE(
        c.send_all("POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked_smuggled));
    auto r = read_response(c);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 400);
    c.shutdown_write();
    EXPECT_TRUE(c.wait_eof());
  }
  {
    // Case and spacing do not matter for a lone final chunked.
    RawClient c(port_);
    ASSERT_TRUE(
        c.send_all("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:  CHUNKED \r\n\r\n"
                   "2\r\nok\r\n0\r\n\r\n"));
    auto r = read_response(c);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "ok");
  }
  expect_server_ok();
}

TEST_F(NetServerTest, HandlerExceptionIs500Json) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(c.send_all(get_request("/throw")));
  auto r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 500);
  EXPECT_EQ(r->header("content-type"), "application/json");
  EXPECT_EQ(r->body,
            R"({"group":"core","code":"internal_error","message":"An internal error occurred"})");
  // The connection itself survives (keep-alive).
  ASSERT_TRUE(c.send_all(post_request("/echo", "ok")));
  r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "ok");
}

TEST_F(NetServerTest, DisconnectMidBodyLeavesServerServing) {
  start();
  {
    RawClient c(port_);
    ASSERT_TRUE(
        c.send_all("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\npartial"));
    c.close();
  }
  {
    RawClient c(port_);
    ASSERT_TRUE(
        c.send_all("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\npartial"));
    c.abort();
  }
  expect_server_ok();
}

TEST_F(NetServerTest, DisconnectWhileHandlerRunsDropsResponse) {
  start();
  {
    RawClient c(port_);
    ASSERT_TRUE(c.send_all(get_request("/slow")));
    ASSERT_TRUE(wait_flag(slow_started_));
    c.abort();
  }
  release_slow();
  ASSERT_TRUE(wait_flag(slow_finished_));
  expect_server_ok();
}

TEST_F(NetServerTest, CloseAllLetsARunningHandlerAnswerThenCloses) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(c.send_all(get_request("/slow")));
  ASSERT_TRUE(wait_flag(slow_started_));
  server_->close_all();
  release_slow();  // queued behind close_all() on the connection's strand
  auto r = read_response(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "slow done");
  EXPECT_EQ(r->header("connection"), "close");
  EXPECT_TRUE(c.wait_eof());
}

TEST_F(NetServerTest, SlowHeaderTimesOutWithoutBlockingOthers) {
  auto cfg = default_config();
  cfg.header_timeout = 300ms;
  start(cfg);
  RawClient slow(port_);
  ASSERT_TRUE(slow.send_all("GET /echo HTTP/1.1\r\nHost: x\r\nX-Slow: "));
  expect_server_ok();  // served while the slow header is pending
  EXPECT_TRUE(slow.wait_eof());
  expect_server_ok();
}

TEST_F(NetServerTest, IdleConnectionTimesOut) {
  auto cfg = default_config();
  cfg.idle_timeout = 300ms;
  start(cfg);
  RawClient c(port_);
  ASSERT_TRUE(c.send_all(post_request("/echo", "x")));
  ASSERT_TRUE(read_response(c).has_value());
  EXPECT_TRUE(c.wait_eof());
}

TEST_F(NetServerTest, ListenTwiceAndBadAddressFail) {
  start();
  auto again = server_->listen("127.0.0.1", 0);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, "already_listening");

  net::HttpServer other(io_, default_config(), net::HttpHandlers{});
  auto bad = other.listen("not an address", 0);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, "invalid_address");
  auto taken = other.listen("127.0.0.1", port_);
  ASSERT_FALSE(taken.has_value());
  EXPECT_EQ(taken.error().code, "listen_failed");
}

TEST_F(NetServerTest, StopAcceptingKeepsExistingConnections) {
  start();
  RawClient existing(port_);
  ASSERT_TRUE(existing.send_all(post_request("/echo", "before")));
  ASSERT_TRUE(read_response(existing).has_value());

  server_->stop_accepting();
  // stop_accepting() is asynchronous: new connections are refused once it ran.
  bool refused = false;
  for (int i = 0; i < 500 && !refused; ++i) {
    RawClient probe(port_);
    refused = !probe.connected();
    if (!refused) {
      std::this_thread::sleep_for(10ms);
    }
  }
  EXPECT_TRUE(refused);

  ASSERT_TRUE(existing.send_all(post_request("/echo", "after")));
  auto r = read_response(existing);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "after");
}

// ------------------------------------------------------------------------------------------------
// WebSocket

TEST_F(NetServerTest, WsUpgradeEchoesSubprotocolWithoutDeflate) {
  start();
  WsClient ws(port_);
  auto r =
      ws.handshake("/connect", "rivet, rivet_encoding.json, rivet_conn_params.%7B%22a%22%3A1%7D");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 101);
  EXPECT_EQ(r->header("sec-websocket-protocol"), "rivet");
  EXPECT_EQ(r->header("sec-websocket-accept"), std::string(kWsAccept));
  EXPECT_FALSE(r->header("sec-websocket-extensions").has_value());
  EXPECT_EQ(r->header("x-test"), "yes");
  EXPECT_EQ(to_lower(r->header("upgrade").value_or("")), "websocket");

  // Frames are never compressed: RSV1 is clear on what the server sends.
  ASSERT_TRUE(ws.send_text(std::string(200, 'z')));
  auto raw = ws.raw().read_exact(1);
  ASSERT_TRUE(raw.has_value());
  EXPECT_EQ(static_cast<unsigned char>((*raw)[0]) & 0x70u, 0u);
}

TEST_F(NetServerTest, WsNoSubprotocolHeaderWhenNoneChosen) {
  start();
  WsClient ws(port_);
  auto r = ws.handshake("/raw", "", /*offer_deflate=*/false);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 101);
  EXPECT_FALSE(r->header("sec-websocket-protocol").has_value());
}

TEST_F(NetServerTest, WsBadHandshakeIsRejectedAndServerSurvives) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(
      c.send_all("GET /connect HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 "Sec-WebSocket-Version: 13\r\n\r\n"));  // no Sec-WebSocket-Key
  auto r = read_head(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 400);
  expect_server_ok();
}

TEST_F(NetServerTest, WsTextAndBinaryEcho) {
  start();
  WsClient ws(port_);
  ASSERT_EQ(ws.handshake("/connect", "rivet")->status, 101);

  ASSERT_TRUE(ws.send_text("hello"));
  auto m = ws.read_message();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->opcode, kOpText);
  EXPECT_EQ(m->payload, "hello");

  const std::string bin("\x00\x01\x02\xff", 4);
  ASSERT_TRUE(ws.send_binary(bin));
  m = ws.read_message();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->opcode, kOpBinary);
  EXPECT_EQ(m->payload, bin);

  // A fragmented message with an interleaved ping is delivered whole; the ping is answered.
  ASSERT_TRUE(ws.send_frame(kOpText, "frag", /*fin=*/false));
  ASSERT_TRUE(ws.send_frame(kOpPing, "p"));
  ASSERT_TRUE(ws.send_frame(kOpCont, "mented", /*fin=*/true));
  auto pong = ws.read_frame();
  ASSERT_TRUE(pong.has_value());
  EXPECT_EQ(pong->opcode, kOpPong);
  EXPECT_EQ(pong->payload, "p");
  m = ws.read_message();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->payload, "fragmented");

  // Larger message (extended 16-bit length) within the limit.
  const std::string big(4000, 'q');
  ASSERT_TRUE(ws.send_binary(big));
  m = ws.read_message();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->payload, big);

  ASSERT_TRUE(ws.send_close(1000, "Disposed"));
  auto c = ws.read_message();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->opcode, kOpClose);
  EXPECT_EQ(c->close_code(), 1000);
  EXPECT_TRUE(ws.finish());
  auto info = wait_ws_closed();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->code, 1000);
  EXPECT_EQ(info->reason, "Disposed");
}

TEST_F(NetServerTest, WsReceiveAndSendFromAnotherStrand) {
  start();
  WsClient ws(port_);
  ASSERT_EQ(ws.handshake("/offstrand", "rivet")->status, 101);
  for (int k = 0; k < 50; ++k) {
    const std::string payload = "msg" + std::to_string(k);
    ASSERT_TRUE(k % 2 == 0 ? ws.send_text(payload) : ws.send_binary(payload));
    auto m = ws.read_message();
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->payload, payload);
    EXPECT_EQ(m->opcode, k % 2 == 0 ? kOpText : kOpBinary);
  }
  ASSERT_TRUE(ws.send_close(4005, "from client"));
  auto c = ws.read_message();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->close_code(), 4005);
  EXPECT_TRUE(ws.finish());
  auto info = wait_ws_closed();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->code, 4005);
  EXPECT_EQ(info->reason, "from client");
}

TEST_F(NetServerTest, WsOrderedSendsFromAnotherThread) {
  start();
  WsClient ws(port_);
  ASSERT_EQ(ws.handshake("/connect", "rivet")->status, 101);
  constexpr int kCount = 500;
  ASSERT_TRUE(ws.send_text("cmd:burst " + std::to_string(kCount)));
  for (int k = 0; k < kCount; ++k) {
    auto m = ws.read_message();
    ASSERT_TRUE(m.has_value()) << k;
    ASSERT_EQ(m->payload, "m" + std::to_string(k));
    ASSERT_EQ(m->opcode, k % 2 == 1 ? kOpBinary : kOpText);
  }
  auto c = ws.read_message();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->opcode, kOpClose);
  EXPECT_EQ(c->close_code(), 4000);
  EXPECT_EQ(c->close_reason(), "burst done");
  ASSERT_TRUE(ws.send_close(c->close_code(), ""));
  EXPECT_TRUE(ws.finish());
  auto info = wait_ws_closed();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->code, 4000);
  EXPECT_EQ(info->reason, "burst done");
}

TEST_F(NetServerTest, WsClientCloseCodePropagates) {
  start();
  WsClient ws(port_);
  ASSERT_EQ(ws.handshake("/connect", "rivet")->status, 101);
  ASSERT_TRUE(ws.send_close(4001, "client bye"));
  auto c = ws.read_message();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->opcode, kOpClose);
  EXPECT_EQ(c->close_code(), 4001);  // echoed
  EXPECT_TRUE(ws.finish());
  auto info = wait_ws_closed();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->code, 4001);
  EXPECT_EQ(info->reason, "client bye");
}

// RFC 6455 §7.4: a close code an endpoint may not send is not echoed back. Beast accepts codes
// above 4999 and would echo them; the server answers 1002 (protocol error) instead, and Beast's
// own check answers the reserved ones with 1002 too.
TEST_F(NetServerTest, WsClientInvalidCloseCodeIsAnswered1002NotEchoed) {
  start();
  for (const std::uint16_t code :
       std::initializer_list<std::uint16_t>{5000, 65535, 1004, 1005, 1006, 1015, 2999, 999, 0}) {
    SCOPED_TRACE(code);
    WsClient ws(port_);
    ASSERT_EQ(ws.handshake("/connect", "rivet")->status, 101);
    ASSERT_TRUE(ws.send_text("ping"));
    auto m = ws.read_message();
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->payload, "ping");
    ASSERT_TRUE(ws.send_close(code, "bad code"));
    auto c = ws.read_message();
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->opcode, kOpClose);
    EXPECT_EQ(c->close_code(), 1002);
    EXPECT_TRUE(ws.finish());
    auto info = wait_ws_closed();
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->code, 1002);
  }
  // The edges of the ranges that may be sent are echoed.
  for (const std::uint16_t code :
       std::initializer_list<std::uint16_t>{1000, 1003, 1007, 1013, 3000, 4999}) {
    SCOPED_TRACE(code);
    WsClient ws(port_);
    ASSERT_EQ(ws.handshake("/connect", "rivet")->status, 101);
    ASSERT_TRUE(ws.send_close(code, ""));
    auto c = ws.read_message();
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->close_code(), code);
    EXPECT_TRUE(ws.finish());
    auto info = wait_ws_closed();
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->code, code);
  }
  expect_server_ok();
}

// The server side never sends such a code either: close() maps it to 1011.
TEST_F(NetServerTest, WsServerInvalidCloseCodeIsNotSent) {
  start();
  for (const int code : {5000, 65535, 1006, 2000}) {
    SCOPED_TRACE(code);
    WsClient ws(port_);
    ASSERT_EQ(ws.handshake("/connect", "rivet")->status, 101);
    ASSERT_TRUE(ws.send_text("cmd:close " + std::to_string(code) + " nope"));
    auto c = ws.read_message();
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->opcode, kOpClose);
    EXPECT_EQ(c->close_code(), 1011);
    ASSERT_TRUE(ws.send_close(1011, ""));
    EXPECT_TRUE(ws.finish());
    auto info = wait_ws_closed();
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->code, 1011);
  }
}

TEST_F(NetServerTest, WsClientCloseWithoutStatusIs1005) {
  start();
  WsClient ws(port_);
  ASSERT_EQ(ws.handshake("/connect", "rivet")->status, 101);
  ASSERT_TRUE(ws.send_close_empty());
  auto c = ws.read_message();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->opcode, kOpClose);
  EXPECT_TRUE(ws.finish());
  auto info = wait_ws_closed();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->code, 1005);
  EXPECT_EQ(info->reason, "");
}

TEST_F(NetServerTest, WsServerCloseCodePropagates) {
  start();
  WsClient ws(port_);
  ASSERT_EQ(ws.handshake("/connect", "rivet")->status, 101);
  ASSERT_TRUE(ws.send_text("before"));
  ASSERT_TRUE(ws.send_text("cmd:close 4002 actor.custom_reason"));
  auto m = ws.read_message();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->payload, "before");  // queued before the close, so sent before it
  auto c = ws.read_message();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->opcode, kOpClose);
  EXPECT_EQ(c->close_code(), 4002);
  EXPECT_EQ(c->close_reason(), "actor.custom_reason");
  ASSERT_TRUE(ws.send_close(4002, ""));
  EXPECT_TRUE(ws.finish());
  auto info = wait_ws_closed();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->code, 4002);
  EXPECT_EQ(info->reason, "actor.custom_reason");
}

TEST_F(NetServerTest, WsLongCloseReasonIsTruncatedOnCharacterBoundary) {
  start();
  WsClient ws(port_);
  ASSERT_EQ(ws.handshake("/connect", "rivet")->status, 101);
  // 122 ASCII bytes, then a 2-byte UTF-8 character straddling the 123-byte limit.
  const std::string reason = std::string(122, 'r') + "\xc3\xa9" + std::string(50, 's');
  ASSERT_TRUE(ws.send_text("cmd:close 1011 " + reason));
  auto c = ws.read_message();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->opcode, kOpClose);
  EXPECT_EQ(c->close_code(), 1011);
  EXPECT_EQ(c->close_reason(), std::string(122, 'r'));
  ASSERT_TRUE(ws.send_close(1011, ""));
  EXPECT_TRUE(ws.finish());
  auto info = wait_ws_closed();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->code, 1011);
  EXPECT_EQ(info->reason, std::string(122, 'r'));
}

TEST_F(NetServerTest, WsSendAfterCloseIsDropped) {
  start();
  WsClient ws(port_);
  ASSERT_EQ(ws.handshake("/connect", "rivet")->status, 101);
  ASSERT_TRUE(ws.send_text("cmd:close-then-send"));
  auto c = ws.read_message();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->opcode, kOpClose);
  EXPECT_EQ(c->close_code(), 4003);
  ASSERT_TRUE(ws.send_close(4003, ""));
  EXPECT_TRUE(ws.finish());
  auto info = wait_ws_closed();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->code, 4003);
}

TEST_F(NetServerTest, WsAbruptDropIs1006) {
  start();
  {
    WsClient ws(port_);
    ASSERT_EQ(ws.handshake("/connect", "rivet")->status, 101);
    ASSERT_TRUE(ws.send_text("ping?"));
    ASSERT_TRUE(ws.read_message().has_value());
    ws.raw().close();  // FIN without a close frame
  }
  auto info = wait_ws_closed();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->code, 1006);
  {
    WsClient ws(port_);
    ASSERT_EQ(ws.handshake("/connect", "rivet")->status, 101);
    ws.raw().abort();  // reset
  }
  info = wait_ws_closed();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->code, 1006);
  expect_server_ok();
}

TEST_F(NetServerTest, WsOversizeMessageIs1009) {
  start();
  WsClient ws(port_);
  ASSERT_EQ(ws.handshake("/connect", "rivet")->status, 101);
  ASSERT_TRUE(ws.send_binary(std::string(5000, 'x')));  // limit is 4096
  auto c = ws.read_message();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->opcode, kOpClose);
  EXPECT_EQ(c->close_code(), 1009);
  EXPECT_TRUE(ws.finish());
  auto info = wait_ws_closed();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->code, 1009);
  expect_server_ok();
}

TEST_F(NetServerTest, WsInvalidUtf8TextIs1007) {
  start();
  WsClient ws(port_);
  ASSERT_EQ(ws.handshake("/connect", "rivet")->status, 101);
  ASSERT_TRUE(ws.send_text("\xff\xfe"));
  auto c = ws.read_message();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->opcode, kOpClose);
  EXPECT_EQ(c->close_code(), 1007);
  EXPECT_TRUE(ws.finish());
  auto info = wait_ws_closed();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->code, 1007);
}

TEST_F(NetServerTest, WsHandlerReturnClosesWith1000) {
  start();
  WsClient ws(port_);
  ASSERT_EQ(ws.handshake("/connect", "rivet")->status, 101);
  ASSERT_TRUE(ws.send_text("cmd:return"));
  auto c = ws.read_message();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->opcode, kOpClose);
  EXPECT_EQ(c->close_code(), 1000);
  ASSERT_TRUE(ws.send_close(1000, ""));
  EXPECT_TRUE(ws.finish());
  expect_server_ok();
}

TEST_F(NetServerTest, WsHandlerExceptionClosesWith1011) {
  start();
  WsClient ws(port_);
  ASSERT_EQ(ws.handshake("/connect", "rivet")->status, 101);
  ASSERT_TRUE(ws.send_text("cmd:throw"));
  auto c = ws.read_message();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->opcode, kOpClose);
  EXPECT_EQ(c->close_code(), 1011);
  EXPECT_EQ(c->close_reason(), "core.internal_error");
  ASSERT_TRUE(ws.send_close(1011, ""));
  EXPECT_TRUE(ws.finish());
  expect_server_ok();
}

TEST_F(NetServerTest, CloseAllClosesSocketsAndIdleConnections) {
  start();
  WsClient ws(port_);
  ASSERT_EQ(ws.handshake("/connect", "rivet")->status, 101);
  RawClient idle(port_);
  ASSERT_TRUE(idle.send_all(post_request("/echo", "x")));
  ASSERT_TRUE(read_response(idle).has_value());

  server_->close_all();

  auto c = ws.read_message();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->opcode, kOpClose);
  EXPECT_EQ(c->close_code(), 1001);
  ASSERT_TRUE(ws.send_close(1001, ""));
  EXPECT_TRUE(ws.finish());
  auto info = wait_ws_closed();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->code, 1001);
  EXPECT_TRUE(idle.wait_eof());
  // close_all() does not stop accepting.
  expect_server_ok();
}

}  // namespace
