// The order-workflow example: an actor whose run handler is a durable workflow
// (include/rivetkit/workflow.hpp, docs/workflows.md). Each order arrives on the actor's queue;
// the workflow reserves stock, charges (retried with backoff when the payment fails), waits a
// cooling-off period during which the actor may sleep, and ships, answering the client that
// sent the order once it is shipped. Kill the process at any point: the workflow resumes at the
// step it was in, and no step that completed runs again.
//
// From Node with the official client (`rivetkit_order_workflow` serves on :6420):
//
//   const shop = client.shop.getOrCreate(["main"]);
//   await shop.send("orders", { id: "o-1", item: "book", quantity: 2 },
//                   { wait: true, timeout: 30_000 });   // {status: "completed", response: {...}}
//   await shop.getOrders();                            // [{id, item, quantity, status: "shipped",
//   ...}]

#include <rivetkit/rivetkit.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

using namespace std::chrono_literals;

struct Order {
  std::string id;
  std::string item;
  std::int64_t quantity = 1;
};
RIVETKIT_FIELDS(Order, id, item, quantity)

struct OrderRecord {
  std::string id;
  std::string item;
  std::int64_t quantity = 0;
  std::string status;  // "reserved", "charged", "shipped", "rejected"
  std::int64_t charge_attempts = 0;
  std::optional<std::string> reason;
};
RIVETKIT_FIELDS(OrderRecord, id, item, quantity, status, charge_attempts, reason)

struct ShopState {
  std::map<std::string, std::int64_t> stock{{"book", 10}, {"lamp", 2}};
  std::vector<OrderRecord> orders;
  /// How many charge attempts fail before one succeeds (to show retries; set by the client).
  std::int64_t failing_charges = 0;
};
RIVETKIT_FIELDS(ShopState, stock, orders, failing_charges)

struct Shipped {
  std::string id;
  std::string status;
  std::optional<std::string> reason;
};
RIVETKIT_FIELDS(Shipped, id, status, reason)

using Types = rivetkit::ActorTypes<ShopState>;
using Workflow = rivetkit::WorkflowContext<Types>;

OrderRecord* find(ShopState& s, const std::string& id) {
  for (auto& o : s.orders) {
    if (o.id == id) {
      return &o;
    }
  }
  return nullptr;
}

// One order, from reservation to shipping. Every effect on the actor happens in a step, so a
// restart replays what was done and carries on.
rivetkit::Task<Shipped> process(Workflow& wf, Order order) {
  auto reserve = [order](auto& c) {
    auto& s = c.state();
    auto& left = s.stock[order.item];
    OrderRecord record{order.id, order.item, order.quantity, "reserved", 0, std::nullopt};
    if (order.quantity <= 0 || left < order.quantity) {
      record.status = "rejected";
      record.reason = "out of stock";
    } else {
      left -= order.quantity;
    }
    s.orders.push_back(record);
    return record.status == "reserved";
  };
  auto reserve_op = wf.step("reserve", reserve);
  if (!co_await std::move(reserve_op)) {
    co_return Shipped{order.id, "rejected", "out of stock"};
  }
  // A payment that fails is retried with backoff (100 ms, 200 ms, ...); past its retries the
  // order is refunded and rejected instead of failing the whole workflow.
  auto charge = [id = order.id](auto& c) {
    auto& s = c.state();
    find(s, id)->charge_attempts += 1;
    if (s.failing_charges > 0) {
      s.failing_charges -= 1;
      throw std::runtime_error("payment declined");
    }
    find(s, id)->status = "charged";
  };
  auto charge_op = wf.try_step("charge", charge, rivetkit::StepOptions{3});
  auto charged = co_await std::move(charge_op);
  if (!charged.ok) {
    auto refund = [order, reason = charged.failure.error.message](auto& c) {
      auto& s = c.state();
      s.stock[order.item] += order.quantity;
      find(s, order.id)->status = "rejected";
      find(s, order.id)->reason = reason;
    };
    auto refund_op = wf.step("refund", refund);
    co_await std::move(refund_op);
    co_return Shipped{order.id, "rejected", charged.failure.error.message};
  }
  // A durable wait: the actor may sleep here, and its alarm wakes it to ship.
  co_await wf.sleep("cooling-off", 500ms);
  auto ship = [id = order.id](auto& c) {
    find(c.state(), id)->status = "shipped";
  };
  auto ship_op = wf.step("ship", ship);
  co_await std::move(ship_op);
  co_return Shipped{order.id, "shipped", std::nullopt};
}

rivetkit::Task<rivetkit::Loop> next_order(Workflow& lc) {
  rivetkit::QueueNextOptions wait;
  wait.names = {"orders"};
  wait.completable = true;
  auto take = lc.queue_next<Order>("order", wait);
  auto message = co_await std::move(take);
  // The order's steps run in a block of their own per loop iteration.
  auto block = [order = message.body](Workflow& bc) {
    return process(bc, order);
  };
  auto run = lc.try_block("process", block);
  auto outcome = co_await std::move(run);
  Shipped answer = outcome.ok ? outcome.value
                              : Shipped{message.body.id, "failed", outcome.failure.error.message};
  auto done = message.complete(answer);  // the sender waiting with {wait: true} gets it
  co_await std::move(done);
  co_return rivetkit::Loop::next();
}

rivetkit::ActorDefinition shop() {
  rivetkit::ActorOptions options;
  options.sleep_timeout = 200ms;  // sleep soon when idle (a demo; the default is 30 s)
  return rivetkit::actor<Types>("shop")
      .options(options)
      .queue<Order, Shipped>("orders")
      .workflow(
          [](Workflow& wf) -> rivetkit::Task<void> {
            co_await wf.loop("orders", [](Workflow& lc) { return next_order(lc); });
          },
          [](auto& c, const rivetkit::Value& event) {
            c.log().warn("workflow error", {{"event", rivetkit::to_json(event)}});
          })
      .action("getOrders", [](auto& c) { return c.read_state().orders; })
      .action("getStock", [](auto& c) { return c.read_state().stock; })
      .action("failNextCharges", [](auto& c, std::int64_t n) {
        c.state().failing_charges = n;
        return n;
      });
}

int main(int argc, char** argv) {
  rivetkit::Registry registry;
  registry.add(shop());
  return registry.run(argc, argv);
}
