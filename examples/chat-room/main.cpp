// The chat-room example: one actor per room keeps the room's history (persisted: it survives
// sleep and restarts), knows who each connection is from its connection params, refuses
// connections without a valid username, and broadcasts every message to the room.
//
//   ./build/release/examples/chat-room/rivetkit_chat_room        # http://127.0.0.1:6420
//
// From TypeScript, with the official client (README.md in this folder):
//
//   const room = client.chatRoom.getOrCreate(["lobby"], { params: { username: "ann" } });
//   const conn = room.connect();
//   conn.on("newMessage", (m) => console.log(`${m.sender}: ${m.text}`));
//   await conn.sendMessage("hello");
//   await room.history();                  // [{ sender: "ann", text: "hello", sentAt: ... }]

#include <rivetkit/rivetkit.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// Member names are the names clients see (RIVETKIT_FIELDS), hence camelCase.
struct ChatMessage {
  std::string sender;
  std::string text;
  std::int64_t sentAt = 0;  // ms since the Unix epoch
};
RIVETKIT_FIELDS(ChatMessage, sender, text, sentAt)

struct ChatState {
  std::vector<ChatMessage> messages;  // oldest first, at most kHistory
};
RIVETKIT_FIELDS(ChatState, messages)

// What a client passes as `params` when it connects (or calls an action over HTTP).
struct ChatParams {
  std::string username;
};
RIVETKIT_FIELDS(ChatParams, username)

// Per connection: who it is (set once the params were accepted).
struct ChatConnState {
  std::string username;
};
RIVETKIT_FIELDS(ChatConnState, username)

using ChatTypes = rivetkit::ActorTypes<ChatState, ChatConnState, rivetkit::Empty, ChatParams>;

constexpr std::size_t kHistory = 100;
constexpr std::size_t kMaxUsername = 32;
constexpr std::size_t kMaxText = 2000;

// A username is 1 to 32 characters, not only spaces. Anything else is refused before the
// connection opens: the client's connect (or action) fails with user/invalid_username.
void check_username(const std::string& name) {
  const bool blank = name.find_first_not_of(' ') == std::string::npos;
  if (blank || name.size() > kMaxUsername) {
    throw rivetkit::UserError("username must be 1 to 32 characters", "invalid_username",
                              rivetkit::Value::object({{"maxLength", std::int64_t{32}}}));
  }
}

rivetkit::ActorDefinition chat_room() {
  return rivetkit::actor<ChatTypes>("chatRoom")
      .event<ChatMessage>("newMessage")
      .event<std::string>("joined")
      .on_before_connect([](auto&, const ChatParams& params) { check_username(params.username); })
      .create_conn_state(
          [](auto&, const ChatParams& params) { return ChatConnState{params.username}; })
      .on_connect([](auto& c, auto conn) { c.broadcast("joined", conn.state().username); })
      .action("sendMessage",
              [](auto& c, std::string text) {
                if (text.empty() || text.size() > kMaxText) {
                  throw rivetkit::UserError("a message is 1 to 2000 characters", "invalid_message");
                }
                ChatMessage message{c.conn().state().username, std::move(text), c.now_ms()};
                auto& messages = c.state().messages;
                messages.push_back(message);
                if (messages.size() > kHistory) {
                  messages.erase(
                      messages.begin(),
                      messages.begin() + static_cast<std::ptrdiff_t>(messages.size() - kHistory));
                }
                // Sent once the message is durable: a client that sees it will find it in
                // history() after any crash.
                c.broadcast("newMessage", message);
                return message;
              })
      // The newest `limit` messages (all kept ones without it), oldest first.
      .action("history", [](auto& c, std::optional<std::int64_t> limit) {
        const auto& messages = c.state().messages;
        std::size_t n = messages.size();
        if (limit && *limit >= 0 && static_cast<std::uint64_t>(*limit) < n) {
          n = static_cast<std::size_t>(*limit);
        }
        return std::vector<ChatMessage>(messages.end() - static_cast<std::ptrdiff_t>(n),
                                        messages.end());
      });
}

int main(int argc, char** argv) {
  rivetkit::Registry registry;
  registry.add(chat_room());
  return registry.run(argc, argv);
}
