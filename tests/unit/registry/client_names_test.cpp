// Action names the official client's proxies hide: the registry warns about them at start.

#include "registry/client_names.hpp"

#include <gtest/gtest.h>

namespace rivetkit::registry {
namespace {

TEST(ClientNames, MembersOfHandlesAndConnectionsAreHidden) {
  for (const char* name : {"send", "connect", "resolve", "action", "on", "once", "dispose", "fetch",
                           "webSocket", "then", "toString", "constructor", "ready"}) {
    EXPECT_TRUE(hidden_by_client(name)) << name;
  }
  for (const char* name : {"increment", "sendMessage", "getCount", "Send", "connected", ""}) {
    EXPECT_FALSE(hidden_by_client(name)) << name;
  }
}

TEST(ClientNames, OneWarningPerHiddenActionNamingActorAndWorkaround) {
  std::vector<ActorDefinition> defs;
  defs.push_back(actor<Empty>("chat")
                     .action("send", [](auto&) { return 1; })
                     .action("sendMessage", [](auto&) { return 1; })
                     .action("on", [](auto&) { return 1; }));
  defs.push_back(actor<Empty>("counter").action("increment", [](auto&) { return 1; }));
  auto warnings = hidden_action_warnings(defs);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("actor `chat`: action `on`"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("actor `chat`: action `send`"), std::string::npos) << warnings[1];
  EXPECT_NE(warnings[1].find("handle.action({ name: \"send\", args })"), std::string::npos);
}

}  // namespace
}  // namespace rivetkit::registry
