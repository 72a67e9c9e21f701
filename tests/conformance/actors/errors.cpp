// error-handling.ts: user errors with codes and metadata, sanitised internal errors, action
// timeouts.

#include "fixture.hpp"

#include <charconv>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace fixture {
namespace {

using std::chrono::milliseconds;

struct ObjectState {};
inline void rivetkit_to_value(const ObjectState&, rivetkit::Value& out) {
  out = rivetkit::Value{rivetkit::Object{}};
}
inline void rivetkit_from_value(const rivetkit::Value&, ObjectState&) {}

/// A number as a JS template literal prints it (`${200}` -> "200", `${1.5}` -> "1.5").
std::string js_number(double d) {
  if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) < 1e21) {
    return std::to_string(static_cast<long long>(d));
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  return ec == std::errc{} ? std::string(buf, end) : std::to_string(d);
}

rivetkit::ActorOptions with_action_timeout(milliseconds timeout) {
  rivetkit::ActorOptions options;
  options.action_timeout = timeout;
  return options;
}

struct ErrorLogState {
  std::vector<std::string> errorLog;
};
RIVETKIT_FIELDS(ErrorLogState, errorLog)

rivetkit::ActorDefinition error_handling_actor() {
  return rivetkit::actor<ErrorLogState>("errorHandlingActor")
      .options(with_action_timeout(milliseconds(500)))
      .action("throwSimpleError",
              [](auto&) -> std::string { throw rivetkit::UserError("Simple error message"); })
      .action("throwDetailedError",
              [](auto&) -> std::string {
                throw rivetkit::UserError(
                    "Detailed error message", "detailed_error",
                    rivetkit::Value::object({{"reason", "test"}, {"timestamp", now_ms()}}));
              })
      .action("throwInternalError",
              [](auto&) -> std::string { throw std::runtime_error("This is an internal error"); })
      .action("successfulAction", [](auto&) { return std::string("success"); })
      .action("timeoutAction",
              [](auto& c) -> rivetkit::Task<std::string> {
                co_await c.wait(milliseconds(10'000));
                co_return "This should not be reached if timeout works";
              })
      .action("delayedAction",
              [](auto& c, double delay_ms) -> rivetkit::Task<std::string> {
                co_await c.wait(milliseconds(static_cast<std::int64_t>(delay_ms)));
                co_return "Completed after " + js_number(delay_ms) + "ms";
              })
      .action("logError",
              [](auto& c, std::string error) {
                c.state().errorLog.push_back(std::move(error));
                return c.state().errorLog;
              })
      .action("getErrorLog", [](auto& c) { return std::as_const(c).state().errorLog; })
      .action("clearErrorLog", [](auto& c) {
        c.state().errorLog.clear();
        return true;
      });
}

rivetkit::ActorDefinition custom_timeout_actor() {
  return rivetkit::actor<ObjectState>("customTimeoutActor")
      .options(with_action_timeout(milliseconds(200)))
      .action("quickAction",
              [](auto& c) -> rivetkit::Task<std::string> {
                co_await c.wait(milliseconds(50));
                co_return "Quick action completed";
              })
      .action("slowAction", [](auto& c) -> rivetkit::Task<std::string> {
        co_await c.wait(milliseconds(300));
        co_return "Slow action completed";
      });
}

}  // namespace

void add_error_actors(rivetkit::Registry& registry) {
  registry.add(error_handling_actor());
  registry.add(custom_timeout_actor());
}

}  // namespace fixture
