// The state as stored, alone: only a changed state is written, an unencodable one is logged and
// not written, on_state_change runs with state writes refused inside it.

#include "core/actor/state_record.hpp"

#include <rivetkit/error.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

namespace rivetkit::core {
namespace {

class FakeState final : public detail::UserActorData {
 public:
  Value value{Object{}};
  bool broken = false;
  Value state_to_value() const override {
    if (broken) {
      throw std::runtime_error("not serializable");
    }
    return value;
  }
  void state_from_value(const Value& v) override { value = v; }
};

TEST(StateRecord, OnlyAChangedStateIsTaken) {
  FakeState data;
  data.value.set("count", Value{1});
  StateRecord record("actor-1");
  record.stored(StateRecord::encode(data));
  EXPECT_EQ(record.take_changed(data), std::nullopt) << "as stored";
  data.value.set("count", Value{2});
  auto bytes = record.take_changed(data);
  ASSERT_TRUE(bytes);
  EXPECT_EQ(*bytes, StateRecord::encode(data));
  EXPECT_EQ(record.take_changed(data), std::nullopt) << "taken once";
}

TEST(StateRecord, ANewRecordTakesTheFirstState) {
  FakeState data;
  StateRecord record("actor-1");
  EXPECT_TRUE(record.take_changed(data)) << "nothing stored yet";
}

TEST(StateRecord, AnUnencodableStateIsNotTakenAndTheLastGoodOneStays) {
  FakeState data;
  StateRecord record("actor-1");
  record.stored(StateRecord::encode(data));
  data.broken = true;
  EXPECT_EQ(record.take_changed(data), std::nullopt);
  data.broken = false;
  EXPECT_EQ(record.take_changed(data), std::nullopt) << "still the stored state";
}

TEST(StateRecord, StateWritesInsideOnStateChangeAreRefused) {
  StateRecord record("actor-1");
  EXPECT_NO_THROW(record.check_writable());
  std::string code;
  int runs = 0;
  record.run_on_change(
      [&](detail::ActorApi*) {
        ++runs;
        try {
          record.check_writable();
        } catch (const ActorError& e) {
          code = e.error().code;
        }
        throw std::runtime_error("a failing hook is logged, not propagated");
      },
      nullptr);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(code, "state_mutation_reentrant");
  EXPECT_FALSE(record.in_on_change());
  EXPECT_NO_THROW(record.check_writable());
}

}  // namespace
}  // namespace rivetkit::core
