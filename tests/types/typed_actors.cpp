// Actors that use every C++ type the TypeScript declarations map (typescript.hpp): their
// generated typed_actors.d.ts is checked with tsc by tests/types (typed-use.ts compiles,
// typed-misuse.ts fails on exactly its marked lines). Never served by a test.
#include <rivetkit/rivetkit.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shop {

struct Item {
  std::string sku;
  std::int64_t quantity = 0;
  std::optional<double> price;
  std::vector<std::string> tags;
};
RIVETKIT_FIELDS(Item, sku, quantity, price, tags)

struct Cart {
  std::vector<Item> items;
  std::map<std::string, std::int64_t> counts;
  rivetkit::Bytes token;
};
RIVETKIT_FIELDS(Cart, items, counts, token)

struct Order {
  std::string id;
  std::vector<Item> items;
};
RIVETKIT_FIELDS(Order, id, items)

struct Receipt {
  std::string order_id;
  bool paid = false;
};
RIVETKIT_FIELDS(Receipt, order_id, paid)

struct Shopper {
  std::string name;
};
RIVETKIT_FIELDS(Shopper, name)

using CartTypes = rivetkit::ActorTypes<Cart, rivetkit::Value, rivetkit::Empty, Shopper, Shopper>;

rivetkit::ActorDefinition cart() {
  return rivetkit::actor<CartTypes>("shopping-cart")
      .event<Item>("added")
      .event<std::vector<Item>>("cleared")
      .event("anything")
      .queue<Order, Receipt>("orders")
      .queue<std::string>("notes")
      .action("add",
              [](auto& c, Item item) {
                c.state().items.push_back(item);
                return c.state();
              })
      .action("find",
              [](auto& c, std::string sku) -> std::optional<Item> {
                for (const auto& item : c.state().items) {
                  if (item.sku == sku) {
                    return item;
                  }
                }
                return std::nullopt;
              })
      .action("list",
              [](auto& c, std::optional<std::int64_t> limit) -> rivetkit::Task<std::vector<Item>> {
                (void)limit;
                co_return c.state().items;
              })
      .action("clear", [](auto& c) { c.state().items.clear(); })
      .action("token", [](auto& c) { return c.state().token; })
      .action("tally", [](auto&, rivetkit::RestArgs args) { return args.values.size(); })
      .action("admin.reset", [](auto& c, bool hard) {
        c.state() = Cart{};
        return hard;
      });
}

}  // namespace shop

int main(int argc, char** argv) {
  rivetkit::Registry registry;
  registry.add(shop::cart());
  return registry.run(argc, argv);
}
