#include <rivetkit/config.hpp>

#include <charconv>
#include <cstdlib>
#include <string>

namespace rivetkit {

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') {
    return std::nullopt;
  }
  return std::string(v);
}

template <class T>
Result<T> parse_number(const std::string& name, const std::string& text) {
  T value{};
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return fail(Error{"config", "invalid_value", name + " must be a number, got '" + text + "'",
                      std::nullopt, true});
  }
  return value;
}

}  // namespace

Result<RegistryConfig> RegistryConfig::from_env() {
  RegistryConfig c;
  if (auto v = env("RIVETKIT_HOST")) {
    c.host = *v;
  }
  if (auto v = env("RIVETKIT_PORT")) {
    auto port = parse_number<std::uint16_t>("RIVETKIT_PORT", *v);
    if (!port) {
      return fail(port.error());
    }
    c.port = *port;
  }
  if (auto v = env("RIVETKIT_METRICS_PORT")) {
    auto port = parse_number<std::uint16_t>("RIVETKIT_METRICS_PORT", *v);
    if (!port) {
      return fail(port.error());
    }
    c.metrics_port = *port;
  }
  c.metrics_host = env("RIVETKIT_METRICS_HOST");
  if (auto v = env("RIVETKIT_DATA_DIR")) {
    c.data_dir = *v;
  }
  if (auto v = env("RIVETKIT_WORKER_THREADS")) {
    auto n = parse_number<unsigned>("RIVETKIT_WORKER_THREADS", *v);
    if (!n) {
      return fail(n.error());
    }
    c.worker_threads = *n;
  }
  if (auto v = env("RIVETKIT_MAX_INCOMING_MESSAGE_SIZE")) {
    auto n = parse_number<std::size_t>("RIVETKIT_MAX_INCOMING_MESSAGE_SIZE", *v);
    if (!n) {
      return fail(n.error());
    }
    c.max_incoming_message_size = *n;
  }
  if (auto v = env("RIVETKIT_MAX_OUTGOING_MESSAGE_SIZE")) {
    auto n = parse_number<std::size_t>("RIVETKIT_MAX_OUTGOING_MESSAGE_SIZE", *v);
    if (!n) {
      return fail(n.error());
    }
    c.max_outgoing_message_size = *n;
  }
  for (auto [name, field] : {std::pair{"RIVETKIT_MAX_RAW_MESSAGE_SIZE", &c.max_raw_message_size},
                             std::pair{"RIVETKIT_MAX_SEND_BACKLOG", &c.max_send_backlog},
                             std::pair{"RIVETKIT_SEND_STALL_TIMEOUT_MS", &c.send_stall_timeout_ms},
                             std::pair{"RIVETKIT_MAX_CONNECTIONS", &c.max_connections}}) {
    if (auto v = env(name)) {
      auto n = parse_number<std::size_t>(name, *v);
      if (!n) {
        return fail(n.error());
      }
      *field = *n;
    }
  }
  if (auto v = env("RIVETKIT_SYNC")) {
    if (*v == "full") {
      c.fsync = true;
    } else if (*v == "normal") {
      c.fsync = false;
    } else {
      return fail(Error{"config", "invalid_value", "RIVETKIT_SYNC must be full or normal",
                        std::nullopt, true});
    }
  }
  if (auto v = env("RIVETKIT_TEST_MODE")) {
    if (*v == "1" || *v == "true") {
      c.test_mode = true;
    } else if (*v != "0" && *v != "false") {
      return fail(Error{"config", "invalid_value", "RIVETKIT_TEST_MODE must be 1 or 0",
                        std::nullopt, true});
    }
  }
  if (auto v = env("RIVET_INSPECTOR_DISABLE")) {
    if (*v == "1" || *v == "true") {
      c.inspector = false;
    } else if (*v != "0" && *v != "false") {
      return fail(Error{"config", "invalid_value", "RIVET_INSPECTOR_DISABLE must be 1 or 0",
                        std::nullopt, true});
    }
  }
  c.inspector_test_token = env("_RIVET_TEST_INSPECTOR_TOKEN");
  c.endpoint = env("RIVET_ENDPOINT");
  if (!c.endpoint) {
    c.endpoint = env("RIVET_ENGINE");
  }
  if (auto v = env("RIVET_NAMESPACE")) {
    c.namespace_name = *v;
  }
  c.token = env("RIVET_TOKEN");
  if (auto v = env("RIVET_POOL")) {
    c.pool = *v;
  }
  if (auto v = env("RIVET_REGION")) {
    c.region = *v;
  }
  if (auto v = env("RIVETKIT_RUNTIME_MODE")) {
    if (*v == "serverless") {
      c.serverless = true;
    } else if (*v != "envoy") {
      return fail(Error{"config", "invalid_value",
                        "RIVETKIT_RUNTIME_MODE must be envoy or serverless", std::nullopt, true});
    }
  }
  if (auto v = env("RIVETKIT_SERVERLESS_BASE_PATH")) {
    c.serverless_base_path = *v;
  }
  c.public_endpoint = env("RIVET_PUBLIC_ENDPOINT");
  return c;
}

}  // namespace rivetkit
