// action-inputs.ts, action-timeout.ts, action-types.ts, large-payloads.ts: creation input,
// action timeouts, sync/async/concurrent/nested actions and payload size limits.

#include "fixture.hpp"

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fixture {
namespace {

using std::chrono::milliseconds;

/// `state: {}`: a persisted state that is an empty object (unlike rivetkit::Empty, which is "no
/// state").
struct ObjectState {};
inline void rivetkit_to_value(const ObjectState&, rivetkit::Value& out) {
  out = rivetkit::Value{rivetkit::Object{}};
}
inline void rivetkit_from_value(const rivetkit::Value&, ObjectState&) {}

/// `{value: 0}`, the state of the timeout actors.
struct ValueState {
  double value = 0;
};
RIVETKIT_FIELDS(ValueState, value)

rivetkit::ActorOptions with_action_timeout(milliseconds timeout) {
  rivetkit::ActorOptions options;
  options.action_timeout = timeout;
  return options;
}

// ---- action-inputs.ts ------------------------------------------------------------------------

struct InputState {
  // Both start as JS undefined, which the state keeps (and drops from the getInputs result).
  rivetkit::Value initialInput = rivetkit::Undefined{};
  rivetkit::Value onCreateInput = rivetkit::Undefined{};
};
RIVETKIT_FIELDS(InputState, initialInput, onCreateInput)

rivetkit::ActorDefinition input_actor() {
  // A create without input reaches the hooks as JS undefined ("no input").
  return rivetkit::actor<InputState>("inputActor")
      .create_state([](auto&, const rivetkit::Value& input) {
        InputState state;
        state.initialInput = input;
        return state;
      })
      .on_create([](auto& c, const rivetkit::Value& input) { c.state().onCreateInput = input; })
      .action("getInputs", [](auto& c) {
        const auto& state = std::as_const(c).state();
        return rivetkit::Value::object(
            {{"initialInput", state.initialInput}, {"onCreateInput", state.onCreateInput}});
      });
}

// ---- action-timeout.ts -----------------------------------------------------------------------

rivetkit::ActorDefinition short_timeout_actor() {
  return rivetkit::actor<ValueState>("shortTimeoutActor")
      .options(with_action_timeout(milliseconds(50)))
      .action("quickAction",
              [](auto&) -> rivetkit::Task<std::string> { co_return "quick response"; })
      .action("slowAction", [](auto& c) -> rivetkit::Task<std::string> {
        co_await c.wait(milliseconds(100));
        co_return "slow response";
      });
}

rivetkit::ActorDefinition long_timeout_actor() {
  return rivetkit::actor<ValueState>("longTimeoutActor")
      .options(with_action_timeout(milliseconds(200)))
      .action("delayedAction", [](auto& c) -> rivetkit::Task<std::string> {
        co_await c.wait(milliseconds(100));
        co_return "delayed response";
      });
}

rivetkit::ActorDefinition default_timeout_actor() {
  return rivetkit::actor<ValueState>("defaultTimeoutActor")
      .action("normalAction", [](auto& c) -> rivetkit::Task<std::string> {
        co_await c.wait(milliseconds(50));
        co_return "normal response";
      });
}

rivetkit::ActorDefinition sync_timeout_actor() {
  return rivetkit::actor<ValueState>("syncTimeoutActor")
      .options(with_action_timeout(milliseconds(50)))
      .action("syncAction", [](auto&) { return std::string("sync response"); });
}

// ---- action-types.ts -------------------------------------------------------------------------

rivetkit::ActorDefinition sync_action_actor() {
  return rivetkit::actor<ValueState>("syncActionActor")
      .action("increment",
              [](auto& c, std::optional<double> amount) {
                c.state().value += amount.value_or(1);
                return c.state().value;
              })
      .action("getInfo",
              [](auto& c) {
                return rivetkit::Value::object(
                    {{"currentValue", std::as_const(c).state().value}, {"timestamp", now_ms()}});
              })
      .action("reset", [](auto& c) { c.state().value = 0; });
}

struct AsyncState {
  double value = 0;
  rivetkit::Value data;  // null until fetchData
};
RIVETKIT_FIELDS(AsyncState, value, data)

rivetkit::ActorDefinition async_action_actor() {
  return rivetkit::actor<AsyncState>("asyncActionActor")
      .action("delayedIncrement",
              [](auto& c, std::optional<double> amount) -> rivetkit::Task<double> {
                co_await c.wait(milliseconds(0));
                c.state().value += amount.value_or(1);
                co_return c.state().value;
              })
      .action(
          "fetchData",
          [](auto& c, rivetkit::Value id) -> rivetkit::Task<rivetkit::Value> {
            co_await c.wait(milliseconds(0));
            rivetkit::Value data = rivetkit::Value::object({{"id", id}, {"timestamp", now_ms()}});
            c.state().data = data;
            co_return data;
          })
      .action("asyncWithError", [](auto& c, bool should_error) -> rivetkit::Task<std::string> {
        co_await c.wait(milliseconds(0));
        if (should_error) {
          throw rivetkit::UserError("Intentional error");
        }
        co_return "Success";
      });
}

struct EventsState {
  std::vector<std::string> events;
};
RIVETKIT_FIELDS(EventsState, events)

rivetkit::ActorDefinition concurrent_action_actor() {
  return rivetkit::actor<EventsState>("concurrentActionActor")
      .action("runWithDelay",
              [](auto& c, std::string label, double delay_ms) -> rivetkit::Task<std::string> {
                c.state().events.push_back("start:" + label);
                co_await c.wait(milliseconds(static_cast<std::int64_t>(delay_ms)));
                c.state().events.push_back("finish:" + label);
                co_return label;
              })
      .action("getEvents", [](auto& c) { return std::as_const(c).state().events; });
}

struct TotalState {
  double total = 0;
};
RIVETKIT_FIELDS(TotalState, total)

rivetkit::ActorDefinition nested_action_actor() {
  // Actions nested in an object in TypeScript travel under dotted names.
  // `calculator.add` declares a one-number tuple: a bad argument is `actor.validation_error`.
  return rivetkit::actor<TotalState>("nestedActionActor")
      .action(
          "calculator.add",
          [](auto& c, double amount) {
            c.state().total += amount;
            return c.state().total;
          },
          rivetkit::tuple_schema<double>())
      .action("calculator.read", [](auto& c) { return std::as_const(c).state().total; });
}

struct ResultsState {
  std::vector<std::string> results;
};
RIVETKIT_FIELDS(ResultsState, results)

rivetkit::ActorDefinition promise_actor() {
  return rivetkit::actor<ResultsState>("promiseActor")
      .action("resolvedPromise",
              [](auto&) -> rivetkit::Task<std::string> { co_return "resolved value"; })
      .action("delayedPromise",
              [](auto& c) -> rivetkit::Task<std::string> {
                c.state().results.push_back("delayed");
                co_return "delayed value";
              })
      .action("rejectedPromise",
              [](auto&) -> rivetkit::Task<std::string> {
                throw rivetkit::UserError("promised rejection");
                co_return "";
              })
      .action("getResults", [](auto& c) { return std::as_const(c).state().results; });
}

// ---- large-payloads.ts -----------------------------------------------------------------------

struct ItemsPayload {
  std::vector<std::string> items;
};
RIVETKIT_FIELDS(ItemsPayload, items)

rivetkit::Value summarize_items(const ItemsPayload& data) {
  // data.items[0] / [length - 1]: undefined for an empty list.
  rivetkit::Value first = rivetkit::Undefined{};
  rivetkit::Value last = rivetkit::Undefined{};
  if (!data.items.empty()) {
    first = data.items.front();
    last = data.items.back();
  }
  return rivetkit::Value::object({{"itemCount", static_cast<std::int64_t>(data.items.size())},
                                  {"firstItem", first},
                                  {"lastItem", last}});
}

ItemsPayload large_response(std::int64_t item_count) {
  ItemsPayload out;
  for (std::int64_t i = 0; i < item_count; ++i) {
    out.items.push_back("Item " + std::to_string(i)
                        + " with some additional text to increase size");
  }
  return out;
}

rivetkit::ActorDefinition large_payload_actor() {
  return rivetkit::actor<ObjectState>("largePayloadActor")
      .action("processLargeRequest",
              [](auto&, const ItemsPayload& data) { return summarize_items(data); })
      .action("getLargeResponse",
              [](auto&, std::int64_t item_count) { return large_response(item_count); })
      .action("echo", [](auto&, rivetkit::Value data) { return data; });
}

struct LastRequestConnState {
  std::int64_t lastRequestSize = 0;
};
RIVETKIT_FIELDS(LastRequestConnState, lastRequestSize)

using LargePayloadConnTypes = rivetkit::ActorTypes<ObjectState, LastRequestConnState>;

rivetkit::ActorDefinition large_payload_conn_actor() {
  return rivetkit::actor<LargePayloadConnTypes>("largePayloadConnActor")
      .action("processLargeRequest",
              [](auto& c, const ItemsPayload& data) {
                c.conn().state().lastRequestSize = static_cast<std::int64_t>(data.items.size());
                return summarize_items(data);
              })
      .action("getLargeResponse",
              [](auto&, std::int64_t item_count) { return large_response(item_count); })
      .action("echo", [](auto&, rivetkit::Value data) { return data; })
      .action("getLastRequestSize", [](auto& c) { return c.conn().state().lastRequestSize; });
}

}  // namespace

void add_action_actors(rivetkit::Registry& registry) {
  registry.add(input_actor());
  registry.add(short_timeout_actor());
  registry.add(long_timeout_actor());
  registry.add(default_timeout_actor());
  registry.add(sync_timeout_actor());
  registry.add(sync_action_actor());
  registry.add(async_action_actor());
  registry.add(concurrent_action_actor());
  registry.add(nested_action_actor());
  registry.add(promise_actor());
  registry.add(large_payload_actor());
  registry.add(large_payload_conn_actor());
}

}  // namespace fixture
