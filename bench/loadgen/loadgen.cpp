// C++ load generator for the benchmark suite, for the rows where the Node client would be the
// bottleneck. One thread, epoll, non-blocking keep-alive sockets with TCP_NODELAY, closed loop:
// each socket has one action in flight at a time.
//
//   --mode conn  WebSocket /connect through the query gateway path, BARE encoding (the official
//                client's default): waits for Init, then ActionRequest -> ActionResponse.
//   --mode http  POST /gateway/<actor>/action/<name> through the query gateway path, BARE body.
//   --raw 1      for the floor (an echo server): no Init is awaited and any data frame (or any
//                200 response) counts as the reply.
//
// Speaks only what it needs of RivetKit's client protocol (shared/spec/client-protocol.md §5.2,
// §6.3, §6.8); it is a measuring tool, not a client library. Prints one JSON line:
//   {"mode","connections","actors","ops","errors","ops_per_s","p50_ms","p99_ms","max_ms",
//    "client_cpu_ms_per_op","wall_s"}
//
// Usage: rivetkit_bench_loadgen --url http://127.0.0.1:6420 [--mode conn|http] [--connections 64]
//          [--actors distinct|shared] [--action getCount|increment] [--actor counter]
//          [--seconds 5] [--max-ops 10000000] [--key-prefix lg] [--raw 0|1]

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace loadgen {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 6420;
  std::string mode = "conn";
  int connections = 64;
  bool shared = false;
  std::string action = "getCount";
  std::string actor = "counter";
  double seconds = 5;
  std::uint64_t max_ops = 10'000'000;
  std::string key_prefix = "lg";
  bool raw = false;
};

enum class Phase { kConnecting, kHandshake, kInit, kReady, kWaiting, kDone };

struct Conn {
  int fd = -1;
  Phase phase = Phase::kConnecting;
  std::string key;
  std::string in;
  std::string out;
  std::uint64_t next_id = 0;
  Clock::time_point sent_at;
  bool warm = false;  // the first action (actor creation, routing) is not measured
  bool want_write = false;
};

void append_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

/// CBOR of the args array: [] for getCount, [1] for increment.
std::string args_cbor(const std::string& action) {
  return action == "increment" ? std::string("\x81\x01", 2) : std::string("\x80", 1);
}

std::string query(const std::string& key) {
  return "rvt-namespace=default&rvt-method=getOrCreate&rvt-runner=default&rvt-key=" + key
         + "&rvt-crash-policy=sleep";
}

std::string http_request(const Options& o, const std::string& key) {
  std::string args = args_cbor(o.action);
  std::string body("\x04\x00", 2);
  append_varint(body, args.size());
  body += args;
  return "POST /gateway/" + o.actor + "/action/" + o.action + "?" + query(key)
         + " HTTP/1.1\r\nHost: " + o.host + "\r\nContent-Type: application/octet-stream\r\n"
         + "x-rivet-encoding: bare\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n"
         + body;
}

std::string ws_upgrade(const Options& o, const std::string& key) {
  return "GET /gateway/" + o.actor + "/connect?" + query(key) + " HTTP/1.1\r\nHost: " + o.host
         + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
         + "Sec-WebSocket-Protocol: rivet, rivet_encoding.bare\r\n\r\n";
}

/// One masked binary frame (client to server); the mask is zero, which is valid and keeps the
/// payload readable.
void append_ws_frame(std::string& out, std::string_view payload) {
  out.push_back(static_cast<char>(0x82));
  std::size_t n = payload.size();
  if (n < 126) {
    out.push_back(static_cast<char>(0x80 | n));
  } else {
    out.push_back(static_cast<char>(0x80 | 126));
    out.push_back(static_cast<char>((n >> 8) & 0xff));
    out.push_back(static_cast<char>(n & 0xff));
  }
  out.append(4, '\0');
  out.append(payload);
}

std::string action_request(const Options& o, std::uint64_t id) {
  std::string m("\x04\x00\x00", 3);  // version 4, ToServer tag 0 = ActionRequest
  append_varint(m, id);
  append_varint(m, o.action.size());
  m += o.action;
  std::string args = args_cbor(o.action);
  append_varint(m, args.size());
  m += args;
  return m;
}

/// Case-insensitive search of a header's value in a response head.
std::string header_value(std::string_view head, std::string_view name) {
  std::string lower(head);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string needle = "\r\n" + std::string(name) + ":";
  std::size_t at = lower.find(needle);
  if (at == std::string::npos) {
    return {};
  }
  std::size_t start = at + needle.size();
  std::size_t end = lower.find("\r\n", start);
  std::string v(lower.substr(start, end - start));
  v.erase(0, v.find_first_not_of(' '));
  return v;
}

class Runner {
 public:
  explicit Runner(Options o) : o_(std::move(o)) {}

  int run() {
    epoll_ = epoll_create1(EPOLL_CLOEXEC);
    conns_.resize(static_cast<std::size_t>(o_.connections));
    for (std::size_t i = 0; i < conns_.size(); ++i) {
      conns_[i].key = o_.shared ? o_.key_prefix + "-shared" : o_.key_prefix + "-" + std::to_string(i);
      if (!open(conns_[i], i)) {
        return 1;
      }
    }
    // Phase 1: every socket connected and its first action done (creates the actors).
    auto setup_deadline = Clock::now() + std::chrono::seconds(60);
    while (warm_count_ < conns_.size() && Clock::now() < setup_deadline && failed_ < conns_.size()) {
      poll_once();
    }
    if (warm_count_ < conns_.size()) {
      std::fprintf(stderr, "loadgen: only %zu of %zu sockets ready (%s)\n", warm_count_,
                   conns_.size(), first_error_.c_str());
      return 1;
    }
    // Phase 2: measured closed loop.
    measuring_ = true;
    rusage ru0{};
    getrusage(RUSAGE_SELF, &ru0);
    start_ = Clock::now();
    end_ = start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.seconds));
    for (auto& c : conns_) {
      send_action(c);
    }
    while (Clock::now() < end_ && ops_ < o_.max_ops && failed_ < conns_.size()) {
      poll_once();
    }
    // No new actions after the end; the ones in flight are awaited (as the Node closed loop
    // does), for at most 30 s, so a slow server still reports its latency.
    stopping_ = true;
    auto grace = Clock::now() + std::chrono::seconds(30);
    while (in_flight() > 0 && Clock::now() < grace) {
      poll_once();
    }
    auto wall = std::chrono::duration<double>(Clock::now() - start_).count();
    rusage ru1{};
    getrusage(RUSAGE_SELF, &ru1);
    double cpu_ms = tv_ms(ru1.ru_utime) - tv_ms(ru0.ru_utime) + tv_ms(ru1.ru_stime) - tv_ms(ru0.ru_stime);
    std::sort(lat_us_.begin(), lat_us_.end());
    auto pct = [&](double p) {
      if (lat_us_.empty()) {
        return 0.0;
      }
      auto idx = static_cast<std::size_t>(std::max(0.0, std::ceil(p / 100.0 * static_cast<double>(lat_us_.size())) - 1));
      return static_cast<double>(lat_us_[std::min(idx, lat_us_.size() - 1)]) / 1000.0;
    };
    std::printf(
        "{\"mode\":\"%s\",\"connections\":%d,\"actors\":\"%s\",\"action\":\"%s\",\"ops\":%llu,\"n\":%zu,"
        "\"errors\":%llu,\"ops_per_s\":%.1f,\"p50_ms\":%.4f,\"p99_ms\":%.4f,\"max_ms\":%.4f,"
        "\"client_cpu_ms_per_op\":%.5f,\"wall_s\":%.3f%s%s%s}\n",
        o_.mode.c_str(), o_.connections, o_.shared ? "shared" : "distinct", o_.action.c_str(),
        static_cast<unsigned long long>(ops_), lat_us_.size(), static_cast<unsigned long long>(errors_),
        static_cast<double>(ops_) / wall, pct(50), pct(99), pct(100),
        ops_ > 0 ? cpu_ms / static_cast<double>(ops_) : 0.0, wall,
        first_error_.empty() ? "" : ",\"first_error\":\"", json_safe(first_error_).c_str(),
        first_error_.empty() ? "" : "\"");
    return 0;
  }

 private:
  static double tv_ms(const timeval& tv) {
    return static_cast<double>(tv.tv_sec) * 1000.0 + static_cast<double>(tv.tv_usec) / 1000.0;
  }

  static std::string json_safe(const std::string& s) {
    std::string r;
    for (char ch : s.substr(0, 200)) {
      if (ch == '"' || ch == '\\') {
        r.push_back('\\');
      }
      r.push_back(static_cast<unsigned char>(ch) < 0x20 ? ' ' : ch);
    }
    return r;
  }

  bool open(Conn& c, std::size_t index) {
    c.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(o_.port);
    inet_pton(AF_INET, o_.host.c_str(), &addr.sin_addr);
    int r = ::connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    if (r != 0 && errno != EINPROGRESS) {
      std::perror("connect");
      return false;
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT;
    ev.data.u64 = index;
    epoll_ctl(epoll_, EPOLL_CTL_ADD, c.fd, &ev);
    c.want_write = true;
    if (o_.mode == "conn") {
      c.out = ws_upgrade(o_, c.key);
      c.phase = Phase::kHandshake;
    } else {
      c.phase = Phase::kReady;
      send_action(c);
    }
    return true;
  }

  void fail(Conn& c, const std::string& why) {
    if (c.phase == Phase::kDone) {
      return;
    }
    if (first_error_.empty()) {
      first_error_ = why;
    }
    ++errors_;
    ++failed_;
    c.phase = Phase::kDone;
    epoll_ctl(epoll_, EPOLL_CTL_DEL, c.fd, nullptr);
    ::close(c.fd);
  }

  std::size_t in_flight() const {
    return static_cast<std::size_t>(
        std::count_if(conns_.begin(), conns_.end(), [](const Conn& c) { return c.phase == Phase::kWaiting; }));
  }

  void send_action(Conn& c) {
    if (c.phase == Phase::kDone || stopping_ || (measuring_ && (Clock::now() >= end_ || ops_ >= o_.max_ops))) {
      return;
    }
    if (o_.mode == "conn") {
      append_ws_frame(c.out, action_request(o_, c.next_id++));
    } else {
      c.out += http_request(o_, c.key);
    }
    c.phase = Phase::kWaiting;
    c.sent_at = Clock::now();
    flush(c);
  }

  void completed(Conn& c) {
    if (!c.warm) {
      c.warm = true;
      ++warm_count_;
      c.phase = Phase::kReady;
      if (measuring_) {
        send_action(c);
      }
      return;
    }
    if (measuring_) {
      auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - c.sent_at).count();
      lat_us_.push_back(static_cast<std::uint32_t>(std::min<long long>(us, 0xffffffff)));
      ++ops_;
    }
    c.phase = Phase::kReady;
    send_action(c);
  }

  void flush(Conn& c) {
    while (!c.out.empty()) {
      ssize_t w = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (w > 0) {
        c.out.erase(0, static_cast<std::size_t>(w));
        continue;
      }
      if (w < 0 && errno == EINTR) {
        continue;
      }
      if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        fail(c, std::string("send: ") + std::strerror(errno));
        return;
      }
      break;
    }
    bool want = !c.out.empty();
    if (want != c.want_write) {
      c.want_write = want;
      epoll_event ev{};
      ev.events = EPOLLIN | (want ? EPOLLOUT : 0u);
      ev.data.u64 = static_cast<std::uint64_t>(&c - conns_.data());
      epoll_ctl(epoll_, EPOLL_CTL_MOD, c.fd, &ev);
    }
  }

  void poll_once() {
    std::array<epoll_event, 256> events{};
    int n = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), 50);
    for (int i = 0; i < n; ++i) {
      const epoll_event& ev = events[static_cast<std::size_t>(i)];
      Conn& c = conns_[ev.data.u64];
      if (c.phase == Phase::kDone) {
        continue;
      }
      if ((ev.events & EPOLLOUT) != 0) {
        flush(c);
      }
      if ((ev.events & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0) {
        on_readable(c);
      }
    }
  }

  void on_readable(Conn& c) {
    std::array<char, 65536> buf{};
    for (;;) {
      ssize_t r = ::read(c.fd, buf.data(), buf.size());
      if (r > 0) {
        c.in.append(buf.data(), static_cast<std::size_t>(r));
        continue;
      }
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        break;
      }
      if (r < 0 && errno == EINTR) {
        continue;
      }
      fail(c, r == 0 ? "connection closed by the server" : std::string("read: ") + std::strerror(errno));
      return;
    }
    if (o_.mode == "conn") {
      parse_ws(c);
    } else {
      parse_http(c);
    }
  }

  void parse_http(Conn& c) {
    for (;;) {
      std::size_t head_end = c.in.find("\r\n\r\n");
      if (head_end == std::string::npos) {
        return;
      }
      std::string_view head(c.in.data(), head_end);
      bool ok = head.substr(0, 12) == "HTTP/1.1 200";
      std::size_t body_start = head_end + 4;
      std::size_t total = 0;
      if (header_value(head, "transfer-encoding") == "chunked") {
        std::size_t end = c.in.find("\r\n0\r\n\r\n", body_start - 2);
        if (end == std::string::npos) {
          return;
        }
        total = end + 7;
      } else {
        total = body_start + static_cast<std::size_t>(std::strtoull(header_value(head, "content-length").c_str(), nullptr, 10));
        if (c.in.size() < total) {
          return;
        }
      }
      if (!ok) {
        std::string err(head.substr(0, head.find("\r\n")));
        err += " " + c.in.substr(body_start, std::min<std::size_t>(total - body_start, 120));
        c.in.erase(0, total);
        ++errors_;
        if (first_error_.empty()) {
          first_error_ = err;
        }
        if (errors_ > 1000) {
          fail(c, err);
          return;
        }
        c.phase = Phase::kReady;
        send_action(c);
        continue;
      }
      c.in.erase(0, total);
      completed(c);
    }
  }

  void parse_ws(Conn& c) {
    if (c.phase == Phase::kHandshake) {
      std::size_t head_end = c.in.find("\r\n\r\n");
      if (head_end == std::string::npos) {
        return;
      }
      if (c.in.compare(0, 12, "HTTP/1.1 101") != 0) {
        fail(c, "upgrade refused: " + c.in.substr(0, std::min<std::size_t>(c.in.size(), 120)));
        return;
      }
      c.in.erase(0, head_end + 4);
      c.phase = Phase::kInit;
      if (o_.raw) {
        c.phase = Phase::kReady;
        send_action(c);
      }
    }
    std::size_t off = 0;
    while (c.in.size() - off >= 2) {
      auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(c.in[off + i]); };
      std::uint8_t opcode = byte(0) & 0x0f;
      std::uint64_t len = byte(1) & 0x7f;
      std::size_t hdr = 2;
      if (len == 126) {
        if (c.in.size() - off < 4) {
          break;
        }
        len = (static_cast<std::uint64_t>(byte(2)) << 8) | byte(3);
        hdr = 4;
      } else if (len == 127) {
        if (c.in.size() - off < 10) {
          break;
        }
        len = 0;
        for (std::size_t k = 0; k < 8; ++k) {
          len = (len << 8) | byte(2 + k);
        }
        hdr = 10;
      }
      if (c.in.size() - off < hdr + len) {
        break;
      }
      std::string_view payload(c.in.data() + off + hdr, static_cast<std::size_t>(len));
      off += hdr + static_cast<std::size_t>(len);
      if (opcode == 0x8) {
        std::string reason = payload.size() > 2 ? std::string(payload.substr(2)) : "";
        fail(c, "closed by the server: " + reason);
        return;
      }
      if (opcode != 0x2 && opcode != 0x1) {
        continue;
      }
      if (o_.raw) {
        completed(c);
        continue;
      }
      // BARE ToClient: 04 00 | tag (0 Init, 1 Error, 2 ActionResponse, 3 Event)
      if (payload.size() < 3) {
        continue;
      }
      auto tag = static_cast<std::uint8_t>(payload[2]);
      if (tag == 0 && c.phase == Phase::kInit) {
        c.phase = Phase::kReady;
        send_action(c);
      } else if (tag == 2) {
        completed(c);
      } else if (tag == 1) {
        ++errors_;
        if (first_error_.empty()) {
          first_error_ = "action error frame";
        }
        c.phase = Phase::kReady;
        send_action(c);
      }
    }
    c.in.erase(0, off);
  }

  Options o_;
  int epoll_ = -1;
  std::vector<Conn> conns_;
  std::vector<std::uint32_t> lat_us_;
  std::size_t warm_count_ = 0;
  std::size_t failed_ = 0;
  std::uint64_t ops_ = 0;
  std::uint64_t errors_ = 0;
  std::string first_error_;
  bool measuring_ = false;
  bool stopping_ = false;
  Clock::time_point start_;
  Clock::time_point end_;
};

bool parse_url(const std::string& url, Options& o) {
  std::string rest = url;
  if (rest.rfind("http://", 0) == 0) {
    rest = rest.substr(7);
  } else if (rest.rfind("ws://", 0) == 0) {
    rest = rest.substr(5);
  }
  rest = rest.substr(0, rest.find('/'));
  std::size_t colon = rest.find(':');
  if (colon == std::string::npos) {
    return false;
  }
  o.host = rest.substr(0, colon);
  o.port = static_cast<std::uint16_t>(std::atoi(rest.substr(colon + 1).c_str()));
  return true;
}

}  // namespace loadgen

int main(int argc, char** argv) {
  loadgen::Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string_view flag = argv[i];
    std::string value = argv[i + 1];
    if (flag == "--url") {
      if (!loadgen::parse_url(value, o)) {
        std::fprintf(stderr, "loadgen: bad --url %s\n", value.c_str());
        return 2;
      }
    } else if (flag == "--mode") {
      o.mode = value;
    } else if (flag == "--connections") {
      o.connections = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--actors") {
      o.shared = value == "shared";
    } else if (flag == "--action") {
      o.action = value;
    } else if (flag == "--actor") {
      o.actor = value;
    } else if (flag == "--seconds") {
      o.seconds = std::atof(value.c_str());
    } else if (flag == "--max-ops") {
      o.max_ops = std::strtoull(value.c_str(), nullptr, 10);
    } else if (flag == "--key-prefix") {
      o.key_prefix = value;
    } else if (flag == "--raw") {
      o.raw = value == "1" || value == "true";
    } else {
      std::fprintf(stderr, "loadgen: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (o.mode != "conn" && o.mode != "http") {
    std::fprintf(stderr, "loadgen: --mode conn|http\n");
    return 2;
  }
  return loadgen::Runner(o).run();
}
