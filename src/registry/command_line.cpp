#include "registry/command_line.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>

#ifndef RIVETKIT_VERSION
#error "RIVETKIT_VERSION is set by src/registry/CMakeLists.txt (the project's version)"
#endif

namespace rivetkit::command_line {

namespace {

struct Variable {
  std::string_view name;
  std::string_view what;
};

// Every variable a server reads (config.cpp, util/log.cpp, engine/): kept here so that --help
// says all of it in one place.
constexpr std::array kVariables{
    Variable{"RIVETKIT_HOST", "listen address (--host; default 127.0.0.1)"},
    Variable{"RIVETKIT_PORT", "listen port, 0 for any (--port; default 6420)"},
    Variable{"RIVETKIT_METRICS_PORT",
             "also serve Prometheus /metrics here, 0 for any (--metrics-port)"},
    Variable{"RIVETKIT_METRICS_HOST", "metrics listen address (--metrics-host; default: host)"},
    Variable{"RIVETKIT_DATA_DIR", "local mode's data directory (--data-dir; default .rivetkit)"},
    Variable{"RIVETKIT_WORKER_THREADS", "I/O threads, 0 for one per core (--threads)"},
    Variable{"RIVETKIT_SYNC", "full (fsync every commit, the default) or normal (crash-safe only)"},
    Variable{"RIVETKIT_MAX_INCOMING_MESSAGE_SIZE", "largest action/queue body or frame, bytes"},
    Variable{"RIVETKIT_MAX_OUTGOING_MESSAGE_SIZE", "largest action response or event, bytes"},
    Variable{"RIVETKIT_MAX_RAW_MESSAGE_SIZE", "largest raw HTTP body or raw WebSocket message"},
    Variable{"RIVETKIT_MAX_SEND_BACKLOG",
             "unread bytes a WebSocket client may leave before a close"},
    Variable{"RIVETKIT_SEND_STALL_TIMEOUT_MS",
             "how long a client may stall its backlog (0: never)"},
    Variable{"RIVETKIT_MAX_CONNECTIONS", "open client connections at most (0: from the fd limit)"},
    Variable{"RIVETKIT_TEST_MODE",
             "1: RivetKit's test mode (driver suite probes); never in production"},
    Variable{"RIVET_INSPECTOR_DISABLE", "1: no inspector routes (/inspector/... answer 404)"},
    Variable{"_RIVET_TEST_INSPECTOR_TOKEN",
             "inspector token every actor accepts (tests only; not for production)"},
    Variable{"RIVET_ENDPOINT",
             "Rivet Engine endpoint: engine mode (--endpoint; alias RIVET_ENGINE)"},
    Variable{"RIVET_NAMESPACE", "engine namespace (default: default)"},
    Variable{"RIVET_TOKEN", "engine token"},
    Variable{"RIVET_POOL", "engine pool this process serves (default: default)"},
    Variable{"RIVET_REGION", "this process's region, as actors see it"},
    Variable{"RIVETKIT_ENGINE_SPAWN", "auto, always or never: start a local rivet-engine"},
    Variable{"RIVET_ENGINE_BINARY_PATH", "the rivet-engine binary to start"},
    Variable{"RIVETKIT_ENGINE_RUST_LOG", "RUST_LOG of a rivet-engine this process starts"},
    Variable{"RIVETKIT_RUNTIME_MODE", "serverless: the engine starts actors here on demand"},
    Variable{"RIVETKIT_SERVERLESS_BASE_PATH", "serverless routes' base path (default /api/rivet)"},
    Variable{"RIVET_PUBLIC_ENDPOINT", "endpoint announced to clients in serverless metadata"},
    Variable{"RIVET_LOG_LEVEL", "trace, debug, info (default), warn, error or off"},
    Variable{"RIVET_LOG_FORMAT", "text (default) or json: one JSON object per line, UTC times"},
};

}  // namespace

std::string version_text() {
  return std::string("rivetkit-cpp ") + RIVETKIT_VERSION
         + " (RivetKit 2.3.19 client protocol in json, cbor and bare; envoy protocol v8)";
}

std::string environment_help() {
  std::string out = "Environment (a flag, when given, wins):\n";
  for (const auto& v : kVariables) {
    out += "  ";
    out += v.name;
    out.append(v.name.size() < 36 ? 36 - v.name.size() : 1, ' ');
    out += v.what;
    out += '\n';
  }
  return out;
}

int write_types(const std::string& path, const std::string& declarations) {
  if (path == "-") {
    std::fwrite(declarations.data(), 1, declarations.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  // Written next to the target and renamed over it, so a build that reads the file never sees
  // half of it.
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << declarations;
    out.flush();
    if (!out) {
      std::fprintf(stderr, "--emit-types: cannot write %s\n", tmp.c_str());
      return 1;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::fprintf(stderr, "--emit-types: cannot write %s: %s\n", path.c_str(), ec.message().c_str());
    std::filesystem::remove(tmp, ec);
    return 1;
  }
  return 0;
}

}  // namespace rivetkit::command_line
