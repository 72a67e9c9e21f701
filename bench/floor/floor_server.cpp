// The floor of the benchmark suite: the least a loopback server can do for the suite's requests.
// One thread, epoll, non-blocking sockets with TCP_NODELAY:
//   HTTP/1.1 keep-alive: every request is answered 200 with its own body (Content-Length bodies).
//   WebSocket (any path): every data frame is echoed back as is.
//   WebSocket on path /pub: every data frame is also sent to every socket opened on path /sub
//   (the fan-out floor), before the echo to the sender.
// It parses only what the suite's clients (Node 22 fetch and WebSocket) send; it is not a general
// server. Prints "listening on http://127.0.0.1:PORT" once bound, like rivetkit_bench_server.
// Usage: rivetkit_bench_floor [--port 0] [--max-seconds 3600]

#include <openssl/evp.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace floor_server {

constexpr std::string_view kWsGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
constexpr std::size_t kMaxBuffered = 64u << 20;

enum class Mode { kHttp, kWebSocket };

struct Connection {
  int fd = -1;
  Mode mode = Mode::kHttp;
  bool publisher = false;
  bool subscriber = false;
  bool want_write = false;
  std::string in;
  std::string out;
};

std::string lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return r;
}

std::string ws_accept_key(std::string_view key) {
  std::string input = std::string(key) + std::string(kWsGuid);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int digest_len = 0;
  EVP_Digest(input.data(), input.size(), digest.data(), &digest_len, EVP_sha1(), nullptr);
  std::array<unsigned char, 64> encoded{};
  int n = EVP_EncodeBlock(encoded.data(), digest.data(), static_cast<int>(digest_len));
  return std::string(reinterpret_cast<const char*>(encoded.data()), static_cast<std::size_t>(n));
}

// Appends one unmasked frame (server to client).
void append_frame(std::string& out, std::uint8_t first_byte, std::string_view payload) {
  out.push_back(static_cast<char>(first_byte));
  std::size_t n = payload.size();
  if (n < 126) {
    out.push_back(static_cast<char>(n));
  } else if (n < 65536) {
    out.push_back(static_cast<char>(126));
    out.push_back(static_cast<char>((n >> 8) & 0xff));
    out.push_back(static_cast<char>(n & 0xff));
  } else {
    out.push_back(static_cast<char>(127));
    for (int shift = 56; shift >= 0; shift -= 8) {
      out.push_back(static_cast<char>((n >> shift) & 0xff));
    }
  }
  out.append(payload);
}

class Server {
 public:
  explicit Server(int epoll_fd) : epoll_fd_(epoll_fd) {}

  void add(int fd) {
    auto conn = std::make_unique<Connection>();
    conn->fd = fd;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
    conns_[fd] = std::move(conn);
  }

  void on_readable(int fd) {
    auto it = conns_.find(fd);
    if (it == conns_.end()) {
      return;
    }
    Connection& c = *it->second;
    std::array<char, 65536> buf{};
    for (;;) {
      ssize_t r = ::read(fd, buf.data(), buf.size());
      if (r > 0) {
        c.in.append(buf.data(), static_cast<std::size_t>(r));
        if (c.in.size() > kMaxBuffered) {
          close_conn(fd);
          return;
        }
        continue;
      }
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        break;
      }
      if (r < 0 && errno == EINTR) {
        continue;
      }
      close_conn(fd);
      return;
    }
    bool keep = c.mode == Mode::kHttp ? handle_http(c) : handle_ws(c);
    if (!keep) {
      flush(c);
      close_conn(fd);
      return;
    }
    flush(c);
    flush_pending();
  }

  void on_writable(int fd) {
    auto it = conns_.find(fd);
    if (it != conns_.end()) {
      flush(*it->second);
    }
  }

  void close_conn(int fd) {
    subscribers_.erase(fd);
    pending_.erase(fd);
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    conns_.erase(fd);
  }

 private:
  // Parses as many complete requests as the buffer holds. False: close the connection.
  bool handle_http(Connection& c) {
    for (;;) {
      std::size_t head_end = c.in.find("\r\n\r\n");
      if (head_end == std::string::npos) {
        return c.in.size() < 65536;
      }
      std::string_view head(c.in.data(), head_end);
      std::size_t line_end = head.find("\r\n");
      std::string_view request_line = head.substr(0, line_end);
      std::size_t sp1 = request_line.find(' ');
      std::size_t sp2 = request_line.find(' ', sp1 + 1);
      std::string path(request_line.substr(sp1 + 1, sp2 - sp1 - 1));
      std::size_t content_length = 0;
      std::string ws_key;
      bool upgrade = false;
      std::size_t pos = line_end == std::string_view::npos ? head.size() : line_end + 2;
      while (pos < head.size()) {
        std::size_t eol = head.find("\r\n", pos);
        if (eol == std::string_view::npos) {
          eol = head.size();
        }
        std::string_view line = head.substr(pos, eol - pos);
        pos = eol + 2;
        std::size_t colon = line.find(':');
        if (colon == std::string_view::npos) {
          continue;
        }
        std::string name = lower(line.substr(0, colon));
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') {
          value.remove_prefix(1);
        }
        if (name == "content-length") {
          content_length = static_cast<std::size_t>(std::strtoull(std::string(value).c_str(), nullptr, 10));
        } else if (name == "upgrade" && lower(value) == "websocket") {
          upgrade = true;
        } else if (name == "sec-websocket-key") {
          ws_key = std::string(value);
        } else if (name == "transfer-encoding") {
          return false;  // not used by the suite's clients
        }
      }
      if (upgrade) {
        c.in.erase(0, head_end + 4);
        c.out += "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 "Sec-WebSocket-Accept: " +
                 ws_accept_key(ws_key) + "\r\n\r\n";
        c.mode = Mode::kWebSocket;
        c.publisher = path.rfind("/pub", 0) == 0;
        c.subscriber = path.rfind("/sub", 0) == 0;
        if (c.subscriber) {
          subscribers_.insert(c.fd);
        }
        return handle_ws(c);
      }
      std::size_t total = head_end + 4 + content_length;
      if (c.in.size() < total) {
        return content_length <= kMaxBuffered;
      }
      c.out += "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: " +
               std::to_string(content_length) + "\r\n\r\n";
      c.out.append(c.in, head_end + 4, content_length);
      c.in.erase(0, total);
    }
  }

  bool handle_ws(Connection& c) {
    std::size_t off = 0;
    bool keep = true;
    while (keep) {
      std::size_t avail = c.in.size() - off;
      if (avail < 2) {
        break;
      }
      auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(c.in[off + i]); };
      std::uint8_t b0 = byte(0);
      std::uint8_t b1 = byte(1);
      bool masked = (b1 & 0x80) != 0;
      std::uint64_t len = b1 & 0x7f;
      std::size_t hdr = 2;
      if (len == 126) {
        if (avail < 4) {
          break;
        }
        len = (static_cast<std::uint64_t>(byte(2)) << 8) | byte(3);
        hdr = 4;
      } else if (len == 127) {
        if (avail < 10) {
          break;
        }
        len = 0;
        for (std::size_t i = 0; i < 8; ++i) {
          len = (len << 8) | byte(2 + i);
        }
        hdr = 10;
      }
      std::size_t mask_at = hdr;
      if (masked) {
        hdr += 4;
      }
      if (len > kMaxBuffered) {
        return false;
      }
      std::size_t frame = hdr + static_cast<std::size_t>(len);
      if (avail < frame) {
        break;
      }
      std::string payload = c.in.substr(off + hdr, static_cast<std::size_t>(len));
      if (masked) {
        std::array<std::uint8_t, 4> mask{byte(mask_at), byte(mask_at + 1), byte(mask_at + 2),
                                         byte(mask_at + 3)};
        for (std::size_t i = 0; i < payload.size(); ++i) {
          payload[i] = static_cast<char>(static_cast<std::uint8_t>(payload[i]) ^ mask[i & 3]);
        }
      }
      off += frame;
      std::uint8_t opcode = b0 & 0x0f;
      if (opcode == 0x8) {
        append_frame(c.out, 0x88, payload.substr(0, std::min<std::size_t>(payload.size(), 2)));
        keep = false;
      } else if (opcode == 0x9) {
        append_frame(c.out, 0x8a, payload);
      } else if (opcode <= 0x2) {
        if (c.publisher) {
          for (int sub : subscribers_) {
            auto it = conns_.find(sub);
            if (it != conns_.end()) {
              append_frame(it->second->out, b0, payload);
              pending_.insert(sub);
            }
          }
        }
        append_frame(c.out, b0, payload);
      }
    }
    c.in.erase(0, off);
    return keep;
  }

  void flush_pending() {
    auto pending = std::move(pending_);
    pending_.clear();
    for (int fd : pending) {
      auto it = conns_.find(fd);
      if (it != conns_.end()) {
        flush(*it->second);
      }
    }
  }

  void flush(Connection& c) {
    while (!c.out.empty()) {
      ssize_t w = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (w > 0) {
        c.out.erase(0, static_cast<std::size_t>(w));
        continue;
      }
      if (w < 0 && errno == EINTR) {
        continue;
      }
      break;
    }
    bool want = !c.out.empty();
    if (want != c.want_write) {
      c.want_write = want;
      epoll_event ev{};
      ev.events = EPOLLIN | (want ? EPOLLOUT : 0u);
      ev.data.fd = c.fd;
      epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
    }
  }

  int epoll_fd_;
  std::unordered_map<int, std::unique_ptr<Connection>> conns_;
  std::unordered_set<int> subscribers_;
  std::unordered_set<int> pending_;
};

int run(int port, int max_seconds) {
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0
      || ::listen(listener, 1024) != 0) {
    std::perror("bind/listen");
    return 1;
  }
  socklen_t addr_len = sizeof addr;
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &addr_len);
  std::printf("listening on http://127.0.0.1:%u\n", static_cast<unsigned>(ntohs(addr.sin_port)));
  std::fflush(stdout);

  int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  epoll_event lev{};
  lev.events = EPOLLIN;
  lev.data.fd = listener;
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listener, &lev);
  Server server(epoll_fd);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(max_seconds);
  std::array<epoll_event, 256> events{};
  while (std::chrono::steady_clock::now() < deadline) {
    int n = epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()), 500);
    for (int i = 0; i < n; ++i) {
      const epoll_event& ev = events[static_cast<std::size_t>(i)];
      int fd = ev.data.fd;
      if (fd == listener) {
        for (;;) {
          int c = accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (c < 0) {
            break;
          }
          setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          server.add(c);
        }
        continue;
      }
      if ((ev.events & (EPOLLERR | EPOLLHUP)) != 0 && (ev.events & EPOLLIN) == 0) {
        server.close_conn(fd);
        continue;
      }
      if ((ev.events & EPOLLOUT) != 0) {
        server.on_writable(fd);
      }
      if ((ev.events & EPOLLIN) != 0) {
        server.on_readable(fd);
      }
    }
  }
  return 0;
}

}  // namespace floor_server

int main(int argc, char** argv) {
  int port = 0;
  int max_seconds = 3600;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string_view flag = argv[i];
    if (flag == "--port") {
      port = std::atoi(argv[i + 1]);
    } else if (flag == "--max-seconds") {
      max_seconds = std::atoi(argv[i + 1]);
    }
  }
  return floor_server::run(port, max_seconds);
}
