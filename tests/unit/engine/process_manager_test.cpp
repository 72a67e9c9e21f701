// EngineProcess: spawn-mode decisions, binary resolution, and the real rivet-engine started on
// free ephemeral ports with a temp data dir (health, reuse, stop).

#include "engine/process_manager.hpp"

#include "engine_test_util.hpp"
#include "net/http_client.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace rivetkit::engine {
namespace {

using namespace std::chrono_literals;
using test_util::endpoint_for;
using test_util::EngineTestBase;
using test_util::free_engine_port;
using test_util::unused_port;

bool process_gone(int pid) {
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}
bool group_gone(int pgid) {
  return ::kill(-pgid, 0) != 0 && errno == ESRCH;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Writes an executable shell script.
std::string write_script(const std::string& dir, const std::string& name, const std::string& body) {
  const std::string path = dir + "/" + name;
  {
    std::ofstream out(path);
    out << "#!/bin/sh\n" << body;
  }
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(SpawnModeTest, Parses) {
  EXPECT_EQ(parse_spawn_mode("auto").value(), SpawnMode::kAuto);
  EXPECT_EQ(parse_spawn_mode("always").value(), SpawnMode::kAlways);
  EXPECT_EQ(parse_spawn_mode(" Never ").value(), SpawnMode::kNever);
  auto bad = parse_spawn_mode("sometimes");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().group, "engine");
  EXPECT_EQ(bad.error().code, "invalid_spawn_mode");
  EXPECT_NE(bad.error().message.find("sometimes"), std::string::npos);
}

TEST(LoopbackHostTest, Classifies) {
  for (const char* h : {"localhost", "LOCALHOST", "127.0.0.1", "127.1.2.3", "::1", "0.0.0.0",
                        "::", "::ffff:127.0.0.1"}) {
    EXPECT_TRUE(is_loopback_host(h)) << h;
  }
  for (const char* h : {"example.com", "10.0.0.1", "192.168.1.1", "::2", "api.rivet.dev", ""}) {
    EXPECT_FALSE(is_loopback_host(h)) << h;
  }
}

TEST(EngineBinaryTest, MissingExplicitBinaryIsAClearError) {
  auto r = find_engine_binary(std::string("/nonexistent/dir/rivet-engine"));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().group, "engine");
  EXPECT_EQ(r.error().code, "binary_not_found");
  EXPECT_NE(r.error().message.find("/nonexistent/dir/rivet-engine"), std::string::npos);
  EXPECT_NE(r.error().message.find("npm install @rivetkit/engine-cli"), std::string::npos);
  EXPECT_NE(r.error().message.find("RIVET_ENGINE_BINARY_PATH"), std::string::npos);
}

TEST(EngineBinaryTest, EnvironmentVariableIsUsed) {
  std::string why;
  auto bin = test_util::engine_binary(why);
  if (!bin) {
    GTEST_SKIP() << "no rivet-engine binary: " << why;
  }
  ::setenv("RIVET_ENGINE_BINARY_PATH", bin->c_str(), 1);
  auto r = find_engine_binary(std::nullopt);
  ::setenv("RIVET_ENGINE_BINARY_PATH", "/nonexistent/rivet-engine", 1);
  auto missing = find_engine_binary(std::nullopt);
  ::unsetenv("RIVET_ENGINE_BINARY_PATH");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(std::filesystem::path(*r), std::filesystem::absolute(*bin));
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("RIVET_ENGINE_BINARY_PATH=/nonexistent/rivet-engine"),
            std::string::npos);
}

class EngineProcessTest : public EngineTestBase {};

TEST_F(EngineProcessTest, NeverWithNothingListeningIsAClearError) {
  EngineProcessOptions opts;
  opts.endpoint = endpoint_for(unused_port());
  opts.mode = SpawnMode::kNever;
  opts.data_dir = data_dir_;
  auto r = ensure(opts);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, "not_running");
  EXPECT_NE(r.error().message.find(opts.endpoint), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("never"), std::string::npos) << r.error().message;
}

TEST_F(EngineProcessTest, RemoteEndpointIsNeitherProbedNorSpawned) {
  EngineProcessOptions opts;
  opts.endpoint = "http://10.255.255.1:6420";  // would hang if probed
  opts.mode = SpawnMode::kAuto;
  opts.binary_path = "/nonexistent/rivet-engine";  // would fail if spawned
  const auto start = std::chrono::steady_clock::now();
  auto r = ensure(opts);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_FALSE((*r)->owned());
  EXPECT_EQ((*r)->pid(), -1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  (*r)->stop();  // no-op

  opts.mode = SpawnMode::kAlways;
  auto always = ensure(opts);
  ASSERT_FALSE(always.has_value());
  EXPECT_EQ(always.error().code, "invalid_endpoint");
}

TEST_F(EngineProcessTest, InvalidEndpoint) {
  EngineProcessOptions opts;
  opts.endpoint = "not a url";
  auto r = ensure(opts);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, "invalid_endpoint");
}

TEST_F(EngineProcessTest, MissingBinaryWhenSpawningIsAClearError) {
  EngineProcessOptions opts;
  opts.endpoint = endpoint_for(free_engine_port());
  opts.mode = SpawnMode::kAuto;
  opts.binary_path = data_dir_ + "/no-such-engine";
  opts.data_dir = data_dir_;
  auto r = ensure(opts);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, "binary_not_found");
  EXPECT_NE(r.error().message.find("npm install @rivetkit/engine-cli"), std::string::npos)
      << r.error().message;
}

TEST_F(EngineProcessTest, PortInUseIsReported) {
  const std::uint16_t port = free_engine_port();
  boost::asio::ip::tcp::acceptor blocker(
      io_, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"),
                                          static_cast<std::uint16_t>(port + 10)));
  EngineProcessOptions opts;
  opts.endpoint = endpoint_for(port);
  opts.mode = SpawnMode::kAlways;
  opts.binary_path = write_script(data_dir_, "engine.sh", "exit 0\n");
  opts.data_dir = data_dir_;
  auto r = ensure(opts);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, "port_in_use");
  EXPECT_NE(r.error().message.find(std::to_string(port + 10)), std::string::npos);
}

TEST_F(EngineProcessTest, EarlyExitReportsStatusAndLogTail) {
  EngineProcessOptions opts;
  opts.endpoint = endpoint_for(free_engine_port());
  opts.mode = SpawnMode::kAlways;
  opts.binary_path = write_script(
      data_dir_, "crash.sh",
      "echo \"args: $*\"\necho \"RUST_LOG=$RUST_LOG\"\necho 'fatal: boom' >&2\nexit 3\n");
  opts.data_dir = data_dir_;
  const auto start = std::chrono::steady_clock::now();
  auto r = ensure(opts);
  ASSERT_FALSE(r.has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_EQ(r.error().code, "exited_early");
  const std::string& m = r.error().message;
  EXPECT_NE(m.find("exited with status 3"), std::string::npos) << m;
  EXPECT_NE(m.find("fatal: boom"), std::string::npos) << m;
  EXPECT_NE(m.find("args: start --config " + data_dir_ + "/engine/config.json"), std::string::npos)
      << m;
  EXPECT_NE(m.find("RUST_LOG=warn"), std::string::npos) << m;
}

TEST_F(EngineProcessTest, HealthTimeoutStopsTheChild) {
  EngineProcessOptions opts;
  opts.endpoint = endpoint_for(free_engine_port());
  opts.mode = SpawnMode::kAuto;
  // Never listens; records its pid, then becomes `sleep` (same pid).
  opts.binary_path = write_script(data_dir_, "hang.sh",
                                  "echo $$ > \"$(dirname \"$0\")/hang.pid\"\nexec sleep 60\n");
  opts.data_dir = data_dir_;
  opts.health_timeout = 1500ms;
  const auto start = std::chrono::steady_clock::now();
  auto r = ensure(opts);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, "health_timeout") << r.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 15s);
  const int pid = std::stoi(read_file(data_dir_ + "/hang.pid"));
  EXPECT_TRUE(process_gone(pid)) << pid;
}

TEST_F(EngineProcessTest, SpawnsHealthyEngineReusesItAndStopsIt) {
  RIVETKIT_REQUIRE_ENGINE_BINARY();
  std::string why;
  const auto bin = test_util::engine_binary(why);
  const std::uint16_t port = free_engine_port();
  EngineProcessOptions opts;
  opts.endpoint = endpoint_for(port) + "/";  // trailing slash is ignored
  opts.mode = SpawnMode::kAuto;
  opts.binary_path = *bin;
  opts.data_dir = data_dir_;
  opts.health_timeout = 45s;
  auto spawned = ensure(opts);
  ASSERT_TRUE(spawned.has_value()) << spawned.error().message;
  auto& engine = *spawned;
  ASSERT_TRUE(engine->owned());
  const int pid = engine->pid();
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(engine->running());
  EXPECT_EQ(engine->endpoint(), endpoint_for(port));
  EXPECT_EQ(::getpgid(pid), pid);  // its own process group

  // Health answers.
  net::HttpClientRequest health;
  health.url = endpoint_for(port) + "/health";
  auto h = run(net::http_request(io_.get_executor(), health));
  ASSERT_TRUE(h.has_value()) << h.error().message;
  EXPECT_EQ(h->status, 200u);
  EXPECT_NE(h->body.find("\"status\":\"ok\""), std::string::npos) << h->body;

  // The config file has the expected layout.
  const std::string config = read_file(data_dir_ + "/engine/config.json");
  EXPECT_NE(config.find("\"worker_cpu_max\":1000000"), std::string::npos) << config;
  EXPECT_NE(config.find("\"tcp_nodelay\":true"), std::string::npos) << config;
  EXPECT_NE(config.find("\"port\":" + std::to_string(port + 1)), std::string::npos) << config;
  EXPECT_NE(config.find("\"port\":" + std::to_string(port + 10)), std::string::npos) << config;
  EXPECT_NE(config.find(data_dir_ + "/engine/db"), std::string::npos) << config;
  EXPECT_TRUE(std::filesystem::is_directory(data_dir_ + "/engine/logs"));

  // auto and never reuse it without owning it; always refuses.
  opts.mode = SpawnMode::kAuto;
  auto reused = ensure(opts);
  ASSERT_TRUE(reused.has_value()) << reused.error().message;
  EXPECT_FALSE((*reused)->owned());
  EXPECT_EQ((*reused)->pid(), -1);
  reused->reset();  // dropping a non-owning handle leaves the engine alone
  opts.mode = SpawnMode::kNever;
  auto never = ensure(opts);
  ASSERT_TRUE(never.has_value()) << never.error().message;
  EXPECT_FALSE((*never)->owned());
  opts.mode = SpawnMode::kAlways;
  auto always = ensure(opts);
  ASSERT_FALSE(always.has_value());
  EXPECT_EQ(always.error().code, "already_running");
  EXPECT_TRUE(engine->running());

  // stop() leaves nothing behind.
  const auto stop_start = std::chrono::steady_clock::now();
  engine->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - stop_start, 8s);
  EXPECT_TRUE(engine->owned());
  EXPECT_EQ(engine->pid(), -1);
  EXPECT_TRUE(process_gone(pid));
  EXPECT_TRUE(group_gone(pid));
  engine->stop();  // idempotent
  auto after = run(net::http_request(io_.get_executor(), health));
  EXPECT_FALSE(after.has_value());
}

TEST_F(EngineProcessTest, DestructorStopsAnOwnedEngine) {
  RIVETKIT_REQUIRE_ENGINE_BINARY();
  auto engine = spawn_engine();
  ASSERT_TRUE(engine);
  const int pid = engine->pid();
  ASSERT_GT(pid, 0);
  engine.reset();
  EXPECT_TRUE(process_gone(pid));
  EXPECT_TRUE(group_gone(pid));
}

}  // namespace
}  // namespace rivetkit::engine
