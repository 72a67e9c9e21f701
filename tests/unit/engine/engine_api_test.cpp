// ensure_runner_config / list_datacenters: against the real rivet-engine (spawned on free ports)
// and against a scripted HttpServer for the retry policy.

#include "engine/engine_api.hpp"

#include "engine_test_util.hpp"
#include "net/http_client.hpp"
#include "net/http_server.hpp"
#include "protocol/json/json.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace rivetkit::engine {
namespace {

using namespace std::chrono_literals;
using test_util::endpoint_for;
using test_util::EngineTestBase;
using test_util::free_engine_port;
using test_util::unused_port;

class EngineApiTest : public EngineTestBase {
 protected:
  Result<void> ensure_pool(EngineApiOptions opts) {
    return run(ensure_runner_config(io_.get_executor(), std::move(opts)));
  }

  Result<net::HttpResponse> get(const std::string& url) {
    net::HttpClientRequest req;
    req.url = url;
    req.headers.push_back(net::Header{"authorization", "Bearer dev"});
    return run(net::http_request(io_.get_executor(), std::move(req)));
  }
};

TEST_F(EngineApiTest, CreatesThePoolOnARealEngine) {
  RIVETKIT_REQUIRE_ENGINE_BINARY();
  auto engine = spawn_engine();
  ASSERT_TRUE(engine);

  EngineApiOptions api;
  api.endpoint = engine->endpoint();
  api.pool = "cpp-test-pool";
  auto dcs = run(list_datacenters(io_.get_executor(), api));
  ASSERT_TRUE(dcs.has_value()) << dcs.error().message;
  EXPECT_EQ(*dcs, std::vector<std::string>{"default"});

  auto r = ensure_pool(api);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  // Idempotent.
  r = ensure_pool(api);
  ASSERT_TRUE(r.has_value()) << r.error().message;

  auto listed = get(engine->endpoint() + "/runner-configs?namespace=default");
  ASSERT_TRUE(listed.has_value()) << listed.error().message;
  ASSERT_EQ(listed->status, 200u) << listed->body;
  auto parsed = protocol::json_parse(listed->body);
  ASSERT_TRUE(parsed.has_value()) << listed->body;
  const Value* configs = parsed->find("runner_configs");
  ASSERT_NE(configs, nullptr) << listed->body;
  const Value* pool = configs->find("cpp-test-pool");
  ASSERT_NE(pool, nullptr) << listed->body;
  const Value* dc =
      pool->find("datacenters") ? pool->find("datacenters")->find("default") : nullptr;
  ASSERT_NE(dc, nullptr) << listed->body;
  const Value* normal = dc->find("normal");
  ASSERT_NE(normal, nullptr) << listed->body;
  const Value* drain = normal->find("drain_on_version_upgrade");
  ASSERT_NE(drain, nullptr) << listed->body;
  EXPECT_TRUE(drain->as_bool());
}

TEST_F(EngineApiTest, UnknownNamespaceFailsAfterTheRetries) {
  RIVETKIT_REQUIRE_ENGINE_BINARY();
  auto engine = spawn_engine();
  ASSERT_TRUE(engine);
  EngineApiOptions api;
  api.endpoint = engine->endpoint();
  api.namespace_name = "no-such-namespace";
  api.max_attempts = 3;
  api.retry_delay = 50ms;
  auto r = ensure_pool(api);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().group, "engine");
  EXPECT_EQ(r.error().code, "runner_config_failed");
  EXPECT_NE(r.error().message.find("not_found"), std::string::npos) << r.error().message;
}

TEST_F(EngineApiTest, RetriesUntilTheEngineComesUp) {
  RIVETKIT_REQUIRE_ENGINE_BINARY();
  std::string why;
  const auto bin = test_util::engine_binary(why);
  const std::uint16_t port = free_engine_port();
  EngineApiOptions api;
  api.endpoint = endpoint_for(port);
  api.pool = "late-pool";
  api.retry_delay = 100ms;
  api.max_attempts = 400;  // 40 s at most
  // Start the setup first (nothing listens yet), then the engine.
  auto pending = boost::asio::co_spawn(io_, ensure_runner_config(io_.get_executor(), api),
                                       boost::asio::use_future);
  EngineProcessOptions opts;
  opts.endpoint = api.endpoint;
  opts.mode = SpawnMode::kAlways;
  opts.binary_path = *bin;
  opts.data_dir = data_dir_;
  opts.health_timeout = 45s;
  auto engine = ensure(opts);
  ASSERT_TRUE(engine.has_value()) << engine.error().message;
  ASSERT_EQ(pending.wait_for(45s), std::future_status::ready);
  auto r = pending.get();
  ASSERT_TRUE(r.has_value()) << r.error().message;
  auto listed = get(api.endpoint + "/runner-configs?namespace=default");
  ASSERT_TRUE(listed.has_value());
  EXPECT_NE(listed->body.find("\"late-pool\""), std::string::npos) << listed->body;
}

TEST_F(EngineApiTest, NothingListeningFailsWithTheLastError) {
  EngineApiOptions api;
  api.endpoint = endpoint_for(unused_port());
  api.max_attempts = 2;
  api.retry_delay = 10ms;
  auto r = ensure_pool(api);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, "runner_config_failed");
  EXPECT_NE(r.error().message.find("cannot connect"), std::string::npos) << r.error().message;
}

/// A scripted engine API: answers from a list of (status, body) per path, and records requests.
class ScriptedApiTest : public EngineApiTest {
 protected:
  struct Seen {
    std::string method;
    std::string target;
    std::string authorization;
    std::string body;
  };

  void start_server(std::vector<unsigned> put_statuses) {
    put_statuses_ = std::move(put_statuses);
    net::HttpHandlers handlers;
    handlers.on_http = [this](net::HttpRequest req) {
      return on_http(std::move(req));
    };
    server_ = std::make_unique<net::HttpServer>(io_, net::HttpServerConfig{}, std::move(handlers));
    auto port = server_->listen("127.0.0.1", 0);
    ASSERT_TRUE(port.has_value());
    endpoint_ = endpoint_for(*port);
  }

  void TearDown() override {
    if (server_) {
      server_->stop_accepting();
      server_->close_all();
    }
    EngineApiTest::TearDown();
    server_.reset();
  }

  Task<net::HttpResponse> on_http(net::HttpRequest req) {
    {
      std::lock_guard lock(mu_);
      seen_.push_back(Seen{req.method, req.target,
                           std::string(req.header("authorization").value_or("")), req.body});
    }
    net::HttpResponse res;
    res.set_header("content-type", "application/json");
    if (req.method == "GET" && req.target.rfind("/datacenters?", 0) == 0) {
      res.body = R"({"datacenters":[{"label":1,"name":"dc-a"},{"label":2,"name":"dc-b"}]})";
      co_return res;
    }
    const std::size_t n = puts_.fetch_add(1);
    res.status = n < put_statuses_.size() ? put_statuses_[n] : 200;
    if (res.status == 200) {
      res.body = R"({"endpoint_config_changed":true})";
    } else if (res.status == 400) {
      res.body = R"({"group":"api","code":"bad_request","message":"nope"})";
    } else {
      res.body = R"({"group":"x","code":"unavailable"})";
    }
    co_return res;
  }

  std::vector<Seen> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

  std::unique_ptr<net::HttpServer> server_;
  std::string endpoint_;
  std::vector<unsigned> put_statuses_;
  std::atomic<std::size_t> puts_{0};
  std::mutex mu_;
  std::vector<Seen> seen_;
};

TEST_F(ScriptedApiTest, SendsTheDocumentedRequests) {
  start_server({});
  EngineApiOptions api;
  api.endpoint = endpoint_ + "/";
  api.namespace_name = "my ns";
  api.pool = "pool/1";
  api.token = "secret";
  auto r = ensure_pool(api);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  auto s = seen();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].method, "GET");
  EXPECT_EQ(s[0].target, "/datacenters?namespace=my%20ns");
  EXPECT_EQ(s[0].authorization, "Bearer secret");
  EXPECT_EQ(s[1].method, "PUT");
  EXPECT_EQ(s[1].target, "/runner-configs/pool%2F1?namespace=my%20ns");
  EXPECT_EQ(s[1].authorization, "Bearer secret");
  EXPECT_EQ(s[1].body, R"({"datacenters":{"dc-a":{"normal":{},"drain_on_version_upgrade":true},)"
                       R"("dc-b":{"normal":{},"drain_on_version_upgrade":true}}})");
}

TEST_F(ScriptedApiTest, DefaultTokenIsDev) {
  start_server({});
  EngineApiOptions api;
  api.endpoint = endpoint_;
  api.token = "";
  ASSERT_TRUE(ensure_pool(api).has_value());
  for (const auto& s : seen()) {
    EXPECT_EQ(s.authorization, "Bearer dev");
  }
}

TEST_F(ScriptedApiTest, RetriesOn5xx429And404) {
  start_server({503, 429, 404, 500});
  EngineApiOptions api;
  api.endpoint = endpoint_;
  api.retry_delay = 10ms;
  auto r = ensure_pool(api);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(puts_.load(), 5u);
}

TEST_F(ScriptedApiTest, OtherClientErrorsFailAtOnce) {
  start_server({400});
  EngineApiOptions api;
  api.endpoint = endpoint_;
  api.retry_delay = 10ms;
  auto r = ensure_pool(api);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, "runner_config_failed");
  EXPECT_NE(r.error().message.find("400"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("bad_request"), std::string::npos) << r.error().message;
  EXPECT_EQ(puts_.load(), 1u);
}

TEST_F(ScriptedApiTest, GivesUpAfterMaxAttempts) {
  start_server({503, 503, 503, 503, 503});
  EngineApiOptions api;
  api.endpoint = endpoint_;
  api.retry_delay = 10ms;
  api.max_attempts = 3;
  auto r = ensure_pool(api);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(puts_.load(), 3u);
  EXPECT_NE(r.error().message.find("503"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace rivetkit::engine
