// Engine process manager: spawn mode decisions, binary resolution, config file, fork/exec of
// rivet-engine in its own process group, health wait and stop (see process_manager.hpp).

#include "engine/process_manager.hpp"

#include "net/http_client.hpp"
#include "protocol/json/json.hpp"
#include "util/log.hpp"

#include <arpa/inet.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <thread>
#include <utility>

extern char** environ;  // NOLINT: POSIX

namespace rivetkit::engine {

namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr auto kHealthPollInterval = 250ms;
constexpr auto kHealthProbeTimeout = 2s;
constexpr auto kStopGrace = 5s;
constexpr std::size_t kLogTailLines = 20;
constexpr const char* kDefaultRustLog = "warn";
constexpr const char* kBinaryHint =
    "Set RIVET_ENGINE_BINARY_PATH to a rivet-engine 2.3.x binary, or run `npm install "
    "@rivetkit/engine-cli` (it provides "
    "node_modules/@rivetkit/engine-cli-linux-x64-musl/rivet-engine).";

Error engine_error(std::string code, std::string message) {
  return Error{"engine", std::move(code), std::move(message), std::nullopt, false};
}

std::string trim_trailing_slashes(std::string s) {
  while (!s.empty() && s.back() == '/') {
    s.pop_back();
  }
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  });
  return out;
}

/// GET {endpoint}/health answered 200.
Task<bool> health_ok(asio::any_io_executor ex, std::string endpoint) {
  net::HttpClientRequest req;
  req.url = trim_trailing_slashes(std::move(endpoint)) + "/health";
  req.timeout = kHealthProbeTimeout;
  auto op = net::http_request(ex, std::move(req));
  auto res = co_await std::move(op);
  co_return res.has_value() && res->status == 200;
}

Task<void> sleep_for(asio::any_io_executor ex, std::chrono::milliseconds d) {
  asio::steady_timer timer(ex, d);
  auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  (void)ec;
}

bool executable_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

/// The engine's bind address for an endpoint host ("localhost" is not an address).
std::string bind_host(const std::string& host) {
  return lower(host) == "localhost" ? std::string("127.0.0.1") : host;
}

std::string url_host(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

/// True if a listening socket could be bound on host:port right now (SO_REUSEADDR, as servers
/// use it, so TIME_WAIT leftovers do not count).
bool port_free(const std::string& host, std::uint16_t port) {
  boost::system::error_code ec;
  const auto addr = asio::ip::make_address(host, ec);
  if (ec) {
    return true;  // cannot check; let the engine report it
  }
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (addr.is_v4()) {
    auto* sa = reinterpret_cast<sockaddr_in*>(&ss);
    sa->sin_family = AF_INET;
    sa->sin_port = htons(port);
    const auto bytes = addr.to_v4().to_bytes();
    std::memcpy(&sa->sin_addr, bytes.data(), bytes.size());
    len = sizeof(sockaddr_in);
  } else {
    auto* sa = reinterpret_cast<sockaddr_in6*>(&ss);
    sa->sin6_family = AF_INET6;
    sa->sin6_port = htons(port);
    const auto bytes = addr.to_v6().to_bytes();
    std::memcpy(&sa->sin6_addr, bytes.data(), bytes.size());
    len = sizeof(sockaddr_in6);
  }
  const int fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return true;
  }
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) == 0 && ::listen(fd, 1) == 0;
  ::close(fd);
  return ok;
}

/// The engine's config file (start-engine.sh's layout, load shedding off, tcp_nodelay on).
std::string engine_config_json(const std::string& host,
                               std::uint16_t port,
                               const std::string& db_dir) {
  const auto peer_port = static_cast<std::uint16_t>(port + 1);
  const auto metrics_port = static_cast<std::uint16_t>(port + 10);
  const std::string public_url = "http://" + url_host(host) + ":" + std::to_string(port);
  const std::string peer_url = "http://" + url_host(host) + ":" + std::to_string(peer_port);
  Value config = Value::object({
      {"guard", Value::object({{"host", host}, {"port", port}, {"tcp_nodelay", true}})},
      {"api_peer", Value::object({{"host", host}, {"port", peer_port}})},
      {"metrics", Value::object({{"host", host}, {"port", metrics_port}})},
      {"file_system", Value::object({{"path", db_dir}})},
      {"telemetry", Value::object({{"enabled", false}})},
      // worker_cpu_max is the millicore count the shedding curve is scaled to; 1,000 cores keeps
      // the measured usage ratio near 0, i.e. no shedding.
      {"runtime", Value::object({{"worker_cpu_max", 1'000'000}})},
      {"topology",
       Value::object({
           {"datacenter_label", 1},
           {"datacenters", Value::object({{"default", Value::object({{"datacenter_label", 1},
                                                                     {"is_leader", true},
                                                                     {"public_url", public_url},
                                                                     {"peer_url", peer_url}})}})},
       })},
  });
  return protocol::json_stringify(config);
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) {
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) {
    return "killed by signal " + std::to_string(WTERMSIG(status));
  }
  return "ended (status " + std::to_string(status) + ")";
}

/// Non-blocking: has the child exited? Does not reap it (WNOWAIT), so its pid (and process
/// group id) cannot be reused before stop() reaps it. `status` gets the wait status.
bool child_exited(int pid, int& status) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    status = 0;
    return errno == ECHILD;  // already reaped (e.g. SIGCHLD ignored)
  }
  if (info.si_pid == 0) {
    return false;
  }
  if (info.si_code == CLD_EXITED) {
    status = (info.si_status & 0xff) << 8;  // WIFEXITED / WEXITSTATUS layout
  } else {
    status = info.si_status & 0x7f;  // WIFSIGNALED / WTERMSIG layout
  }
  return true;
}

std::string log_tails(const std::string& log_dir) {
  std::string out;
  for (const char* name : {"engine.stderr.log", "engine.stdout.log"}) {
    const std::string path = log_dir + "/" + name;
    std::string tail = tail_file(path, kLogTailLines);
    if (!tail.empty()) {
      out += "\n--- last lines of " + path + " ---\n" + tail;
    }
  }
  return out.empty() ? "\n(the engine wrote no output; logs in " + log_dir + ")" : out;
}

struct SpawnRequest {
  std::string binary;
  std::string config_path;
  std::string log_dir;
};

/// fork/exec of `rivet-engine start --config <file>` in its own process group. Returns the pid.
Result<int> spawn_engine(const SpawnRequest& req) {
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<std::string> args = {req.binary, "start", "--config", req.config_path};
  std::vector<char*> argv;
  for (auto& a : args) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);

  const char* rust_log_override = std::getenv("RIVETKIT_ENGINE_RUST_LOG");
  std::vector<std::string> env_strings;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "RUST_LOG=", 9) != 0) {
      env_strings.emplace_back(*e);
    }
  }
  env_strings.push_back(std::string("RUST_LOG=")
                        + (rust_log_override != nullptr && *rust_log_override != '\0'
                               ? rust_log_override
                               : kDefaultRustLog));
  std::vector<char*> envp;
  for (auto& e : env_strings) {
    envp.push_back(e.data());
  }
  envp.push_back(nullptr);

  const std::string out_path = req.log_dir + "/engine.stdout.log";
  const std::string err_path = req.log_dir + "/engine.stderr.log";
  const int in_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int pipe_fds[2] = {-1, -1};  // reports an exec failure (errno) to the parent
  const bool pipe_ok = ::pipe2(pipe_fds, O_CLOEXEC) == 0;
  auto close_all = [&] {
    for (int fd : {in_fd, out_fd, err_fd, pipe_fds[0], pipe_fds[1]}) {
      if (fd >= 0) {
        ::close(fd);
      }
    }
  };
  if (in_fd < 0 || out_fd < 0 || err_fd < 0 || !pipe_ok) {
    const int err = errno;
    close_all();
    return fail(engine_error("spawn_failed", "cannot open the engine's log files in " + req.log_dir
                                                 + ": " + std::strerror(err)));
  }
  rlimit lim{};
  int max_fd = 1024;
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
    max_fd = static_cast<int>(std::min<rlim_t>(lim.rlim_cur, 1u << 20));
  }
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    close_all();
    return fail(engine_error("spawn_failed", std::string("fork failed: ") + std::strerror(err)));
  }
  if (pid == 0) {
    // Child.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) {
      ::_exit(127);  // the parent is already gone
    }
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD}) {
      ::sigaction(sig, &dfl, nullptr);
    }
    ::dup2(in_fd, 0);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    // Inherit nothing else (listening sockets of this process would keep their ports busy).
    // The exec-error pipe stays open until execve (it is close-on-exec).
    const int keep = pipe_fds[1];
    if ((keep > 3 && ::close_range(3, static_cast<unsigned>(keep - 1), 0) != 0)
        || ::close_range(static_cast<unsigned>(keep + 1), ~0u, 0) != 0) {
      for (int fd = 3; fd < max_fd; ++fd) {
        if (fd != keep) {
          ::close(fd);
        }
      }
    }
    ::execve(argv[0], argv.data(), envp.data());
    const int err = errno;
    [[maybe_unused]] auto n = ::write(pipe_fds[1], &err, sizeof(err));
    ::_exit(127);
  }

  // Parent.
  ::setpgid(pid, pid);  // also done by the child; whichever runs first wins, both are fine
  ::close(pipe_fds[1]);
  pipe_fds[1] = -1;
  int exec_errno = 0;
  ssize_t n = 0;
  do {
    n = ::read(pipe_fds[0], &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  close_all();
  if (n == static_cast<ssize_t>(sizeof(exec_errno))) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return fail(engine_error("spawn_failed",
                             "cannot execute " + req.binary + ": " + std::strerror(exec_errno)));
  }
  return static_cast<int>(pid);
}

}  // namespace

Result<SpawnMode> parse_spawn_mode(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  const std::string v = lower(text);
  if (v == "auto") {
    return SpawnMode::kAuto;
  }
  if (v == "always") {
    return SpawnMode::kAlways;
  }
  if (v == "never") {
    return SpawnMode::kNever;
  }
  return fail(engine_error("invalid_spawn_mode",
                           "RIVETKIT_ENGINE_SPAWN must be auto, always or "
                           "never (got '"
                               + std::string(text) + "')"));
}

bool is_loopback_host(std::string_view host) {
  if (lower(host) == "localhost") {
    return true;
  }
  boost::system::error_code ec;
  const auto addr = asio::ip::make_address(std::string(host), ec);
  if (ec) {
    return false;
  }
  return addr.is_loopback() || addr.is_unspecified()
         || (addr.is_v6() && addr.to_v6().is_v4_mapped()
             && asio::ip::make_address_v4(asio::ip::v4_mapped, addr.to_v6()).is_loopback());
}

std::string tail_file(const std::string& path, std::size_t max_lines) {
  std::ifstream in(path);
  if (!in) {
    return {};
  }
  std::deque<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    lines.push_back(std::move(line));
    if (lines.size() > max_lines) {
      lines.pop_front();
    }
  }
  std::string out;
  for (const auto& l : lines) {
    out += l;
    out += '\n';
  }
  return out;
}

Result<std::string> find_engine_binary(const std::optional<std::string>& explicit_path) {
  std::optional<std::string> chosen = explicit_path;
  const char* source = "binary_path";
  if (!chosen || chosen->empty()) {
    chosen.reset();
    if (const char* env = std::getenv("RIVET_ENGINE_BINARY_PATH"); env != nullptr && *env != '\0') {
      chosen = env;
      source = "RIVET_ENGINE_BINARY_PATH";
    }
  }
  if (chosen) {
    if (!executable_file(*chosen)) {
      return fail(engine_error("binary_not_found",
                               "rivet-engine binary not found: " + std::string(source) + "="
                                   + *chosen + " is not an executable file. " + kBinaryHint));
    }
    return fs::absolute(*chosen).string();
  }

  static constexpr const char* kCandidates[] = {
      "node_modules/@rivetkit/engine-cli-linux-x64-musl/rivet-engine",
      "node_modules/@rivetkit/engine-cli-linux-x64-gnu/rivet-engine",
  };
  std::vector<fs::path> starts;
  std::error_code ec;
  if (auto cwd = fs::current_path(ec); !ec) {
    starts.push_back(cwd);
  }
  if (auto exe = fs::read_symlink("/proc/self/exe", ec); !ec) {
    starts.push_back(exe.parent_path());
  }
  for (const auto& start : starts) {
    for (fs::path dir = start;; dir = dir.parent_path()) {
      for (const char* rel : kCandidates) {
        const fs::path candidate = dir / rel;
        if (executable_file(candidate)) {
          return candidate.string();
        }
      }
      if (dir == dir.parent_path() || dir.empty()) {
        break;
      }
    }
  }
  std::string searched;
  for (const auto& s : starts) {
    searched += (searched.empty() ? "" : ", ") + s.string();
  }
  return fail(engine_error("binary_not_found",
                           "rivet-engine binary not found (searched node_modules upwards from "
                               + searched + "). " + kBinaryHint));
}

EngineProcess::EngineProcess(std::string endpoint, int pid, std::string log_dir)
    : endpoint_(std::move(endpoint)), owned_(pid > 0), pid_(pid), log_dir_(std::move(log_dir)) {}

EngineProcess::~EngineProcess() {
  stop();
}

bool EngineProcess::running() {
  if (pid_ <= 0) {
    return !owned_;
  }
  int status = 0;
  return !child_exited(pid_, status);
}

void EngineProcess::stop() {
  if (pid_ <= 0) {
    return;
  }
  const int pid = pid_;
  pid_ = -1;
  int status = 0;
  if (!child_exited(pid, status)) {
    if (::kill(-pid, SIGTERM) != 0) {
      ::kill(pid, SIGTERM);
    }
    const auto deadline = std::chrono::steady_clock::now() + kStopGrace;
    while (!child_exited(pid, status) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
    }
  }
  // Anything left in the group (the leader if it ignored SIGTERM, or its children) is killed.
  // The unreaped leader keeps the group id from being reused until waitpid below.
  ::kill(-pid, SIGKILL);
  int ignored = 0;
  while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
  }
  log::debug("engine: stopped pid={}", pid);
}

Task<Result<std::unique_ptr<EngineProcess>>> EngineProcess::ensure(asio::any_io_executor ex,
                                                                   EngineProcessOptions opts) {
  const std::string endpoint = trim_trailing_slashes(opts.endpoint);
  auto url = net::parse_client_url(endpoint);
  if (!url || (url->scheme != "http" && url->scheme != "https")) {
    co_return fail(engine_error("invalid_endpoint", "invalid engine endpoint '" + opts.endpoint
                                                        + "' (expected http://host:port)"));
  }
  auto handle = [&](int pid, std::string log_dir) {
    return std::unique_ptr<EngineProcess>(new EngineProcess(endpoint, pid, std::move(log_dir)));
  };
  const bool loopback = is_loopback_host(url->host);
  const bool probe = url->scheme == "http";

  switch (opts.mode) {
    case SpawnMode::kNever: {
      if (probe) {
        auto check = health_ok(ex, endpoint);
        if (!co_await std::move(check)) {
          co_return fail(engine_error(
              "not_running", "no Rivet Engine answers at " + endpoint
                                 + "/health and RIVETKIT_ENGINE_SPAWN=never forbids starting one"));
        }
      }
      co_return handle(-1, {});
    }
    case SpawnMode::kAuto: {
      if (!loopback) {
        co_return handle(-1, {});  // remote engines are the operator's
      }
      auto check = health_ok(ex, endpoint);
      if (co_await std::move(check)) {
        log::info("engine: reusing the engine at {}", endpoint);
        co_return handle(-1, {});
      }
      break;
    }
    case SpawnMode::kAlways: {
      if (!loopback || !probe) {
        co_return fail(engine_error("invalid_endpoint",
                                    "RIVETKIT_ENGINE_SPAWN=always needs a loopback http:// "
                                    "endpoint, got "
                                        + endpoint));
      }
      auto check = health_ok(ex, endpoint);
      if (co_await std::move(check)) {
        co_return fail(engine_error("already_running",
                                    "an engine already answers at " + endpoint
                                        + " (RIVETKIT_ENGINE_SPAWN=always starts a new one, which "
                                          "needs the port free)"));
      }
      break;
    }
  }
  if (!probe) {
    co_return fail(engine_error(
        "invalid_endpoint", "cannot start a local engine for an https:// endpoint: " + endpoint));
  }

  // --- spawn ---
  auto binary = find_engine_binary(opts.binary_path);
  if (!binary) {
    co_return fail(binary.error());
  }
  const std::uint16_t port = url->port;
  if (port > 65535 - 10) {
    co_return fail(engine_error("invalid_endpoint", "engine port " + std::to_string(port)
                                                        + " leaves no room for api_peer (+1) and "
                                                          "metrics (+10)"));
  }
  const std::string host = bind_host(url->host);
  for (std::uint16_t p :
       {port, static_cast<std::uint16_t>(port + 1), static_cast<std::uint16_t>(port + 10)}) {
    if (!port_free(host, p)) {
      co_return fail(engine_error(
          "port_in_use", "cannot start an engine for " + endpoint + ": port " + std::to_string(p)
                             + " on " + host
                             + " is in use (the engine needs the guard port, +1 and +10)"));
    }
  }

  std::error_code ec;
  const fs::path base =
      fs::absolute(opts.data_dir.empty() ? fs::path(".rivetkit") : fs::path(opts.data_dir), ec)
      / "engine";
  const fs::path db_dir = base / "db";
  const fs::path log_dir = base / "logs";
  fs::create_directories(db_dir, ec);
  if (!ec) {
    fs::create_directories(log_dir, ec);
  }
  if (ec) {
    co_return fail(
        engine_error("spawn_failed", "cannot create " + base.string() + ": " + ec.message()));
  }
  const fs::path config_path = base / "config.json";
  {
    std::ofstream out(config_path, std::ios::trunc);
    out << engine_config_json(host, port, db_dir.string()) << '\n';
    if (!out) {
      co_return fail(engine_error("spawn_failed", "cannot write " + config_path.string()));
    }
  }

  SpawnRequest spawn;
  spawn.binary = *binary;
  spawn.config_path = config_path.string();
  spawn.log_dir = log_dir.string();
  auto pid = spawn_engine(spawn);
  if (!pid) {
    co_return fail(pid.error());
  }
  auto process = handle(*pid, log_dir.string());
  log::info("engine: started {} pid={} endpoint={} data={}", *binary, *pid, endpoint,
            base.string());

  const auto started = std::chrono::steady_clock::now();
  const auto deadline = started + opts.health_timeout;
  for (;;) {
    int status = 0;
    if (child_exited(*pid, status)) {
      process->stop();  // reaps it
      co_return fail(engine_error("exited_early",
                                  "the engine (" + *binary + ") " + describe_status(status)
                                      + " before answering /health" + log_tails(log_dir.string())));
    }
    auto check = health_ok(ex, endpoint);
    if (co_await std::move(check)) {
      log::debug("engine: healthy after {} ms",
                 std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - started)
                     .count());
      co_return process;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      process->stop();
      co_return fail(engine_error("health_timeout",
                                  "the engine at " + endpoint + " did not answer /health within "
                                      + std::to_string(opts.health_timeout.count()) + " ms"
                                      + log_tails(log_dir.string())));
    }
    auto pause =
        sleep_for(ex, std::chrono::duration_cast<std::chrono::milliseconds>(kHealthPollInterval));
    co_await std::move(pause);
  }
}

}  // namespace rivetkit::engine
