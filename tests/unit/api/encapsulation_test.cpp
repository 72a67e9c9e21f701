// What binds the API types to the runtime is not public (core-v2: `detail` must not leak through
// public members): their constructors from runtime interfaces and their interface pointers are
// reachable only through detail::Access. Checked at compile time; access is part of these
// traits, so a member made public again fails the build.

#include <rivetkit/rivetkit.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <type_traits>

namespace rivetkit {
namespace {

using Types = ActorTypes<>;

static_assert(!std::is_constructible_v<Context<Types>, detail::ActorApi*, detail::ConnApi*>);
static_assert(!std::is_constructible_v<Conn<Types>, detail::ConnApi*>);
static_assert(!std::is_constructible_v<AbortSignal, detail::ActorApi*>);
static_assert(!std::is_constructible_v<Schedule, detail::ScheduleApi*>);
static_assert(!std::is_constructible_v<Kv, detail::KvApi*>);
static_assert(!std::is_constructible_v<Database, detail::DbApi*>);
static_assert(!std::is_constructible_v<Transaction, detail::DbApi*, std::uint64_t>);
static_assert(!std::is_constructible_v<Queue, detail::QueueApi*, const void*>);
static_assert(!std::is_constructible_v<QueueMessage, detail::QueueApi*, detail::QueueMessageData>);
static_assert(!std::is_constructible_v<ActorLog, detail::ActorApi*>);
static_assert(!std::is_constructible_v<Client, detail::ClientApi*, detail::ActorApi*>);
static_assert(!std::is_constructible_v<ActorHandle,
                                       detail::ClientApi*,
                                       detail::ActorQuery,
                                       Value,
                                       detail::ActorApi*>);
static_assert(!std::is_constructible_v<ActorConnection, std::shared_ptr<detail::ActorConnApi>>);
static_assert(
    !std::is_constructible_v<BackgroundTask<int>, std::shared_ptr<detail::PendingResult<int>>>);
static_assert(
    !std::is_constructible_v<ActorDefinition, std::shared_ptr<const detail::ActorDefinitionData>>);

// Checked through concepts: outside a template an inaccessible member is an error, not false.
template <class T>
concept HasPublicApi = requires(const T& t) {
  t.api();
};
template <class T>
concept HasPublicData = requires(const T& t) {
  t.data();
};
template <class T>
concept HasPublicQuery = requires(const T& t) {
  t.query();
};
template <class T>
concept ReachedByAccess = requires(const T& t) {
  detail::Access::api(t);
};

static_assert(!HasPublicApi<Context<Types>>);
static_assert(!HasPublicApi<Conn<Types>>);
static_assert(!HasPublicData<ActorDefinition>);
static_assert(!HasPublicQuery<ActorHandle>);

// The one door stays open for the runtime.
static_assert(ReachedByAccess<Context<Types>>);

TEST(Encapsulation, DefinitionsStillBuildAndExposeTheirName) {
  ActorDefinition def = actor<Empty>("plain").action("ping", [](auto&) { return 1; });
  EXPECT_EQ(def.name(), "plain");
  EXPECT_EQ(detail::Access::data(def)->name, "plain");
  EXPECT_EQ(detail::Access::data(def)->hooks.actions.count("ping"), 1u);
}

}  // namespace
}  // namespace rivetkit
