// The game-lobby example: one actor per lobby. Players join and say they are ready; when every
// player (at least two) is ready, a countdown starts, kept as a durable schedule: the game
// starts on time even if the server restarts (or the lobby sleeps) in between. A player who
// leaves or is no longer ready stops the countdown.
//
//   ./build/release/examples/game-lobby/rivetkit_game_lobby      # http://127.0.0.1:6420
//
// From TypeScript, with the official client (README.md in this folder):
//
//   const lobby = client.gameLobby.getOrCreate(["lobby-1"], { createWithInput: { maxPlayers: 4,
//   countdownMs: 5000 } }); const conn = lobby.connect(); conn.on("lobbyChanged", (l) =>
//   render(l)); conn.on("gameStarted", (l) => play(l)); await conn.join("ann"); await
//   conn.join("bob"); await conn.setReady("ann", true); await conn.setReady("bob", true);   //
//   countdown: 5 s

#include <rivetkit/rivetkit.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// Member names are the names clients see (RIVETKIT_FIELDS), hence camelCase.
struct Player {
  std::string name;
  bool ready = false;
};
RIVETKIT_FIELDS(Player, name, ready)

// How a lobby is created (`createWithInput`); every field optional.
struct LobbyInput {
  std::int64_t maxPlayers = 4;
  std::int64_t countdownMs = 10'000;
};
RIVETKIT_FIELDS(LobbyInput, maxPlayers, countdownMs)

struct Lobby {
  std::vector<Player> players;
  std::string phase = "waiting";         // waiting -> countdown -> playing
  std::optional<std::int64_t> startsAt;  // countdown: when the game starts (ms since the epoch)
  std::optional<std::int64_t> startedAt;
  std::int64_t maxPlayers = 4;
  std::int64_t countdownMs = 10'000;
  std::string countdownId;  // the pending schedule, to cancel it
};
RIVETKIT_FIELDS(Lobby, players, phase, startsAt, startedAt, maxPlayers, countdownMs, countdownId)

using LobbyTypes =
    rivetkit::ActorTypes<Lobby, rivetkit::Value, rivetkit::Empty, rivetkit::Value, LobbyInput>;
using LobbyCtx = rivetkit::Context<LobbyTypes>;

namespace {

[[noreturn]] void refuse(const std::string& message, const std::string& code) {
  throw rivetkit::UserError(message, code);
}

Player* find_player(Lobby& lobby, const std::string& name) {
  auto it = std::find_if(lobby.players.begin(), lobby.players.end(),
                         [&](const Player& p) { return p.name == name; });
  return it == lobby.players.end() ? nullptr : &*it;
}

bool everyone_ready(const Lobby& lobby) {
  return lobby.players.size() >= 2
         && std::all_of(lobby.players.begin(), lobby.players.end(),
                        [](const Player& p) { return p.ready; });
}

// Starts or stops the countdown to match the players, then tells every connection.
void update(LobbyCtx& c) {
  Lobby& lobby = c.state();
  if (lobby.phase == "waiting" && everyone_ready(lobby)) {
    lobby.phase = "countdown";
    lobby.startsAt = c.now_ms() + lobby.countdownMs;
    lobby.countdownId = c.schedule().at(*lobby.startsAt, "startGame");
  } else if (lobby.phase == "countdown" && !everyone_ready(lobby)) {
    c.schedule().cancel(lobby.countdownId);
    lobby.phase = "waiting";
    lobby.startsAt.reset();
    lobby.countdownId.clear();
  }
  c.broadcast("lobbyChanged", lobby);
}

}  // namespace

rivetkit::ActorDefinition game_lobby() {
  return rivetkit::actor<LobbyTypes>("gameLobby")
      .event<Lobby>("lobbyChanged")
      .event<Lobby>("gameStarted")
      .create_state([](auto&, const LobbyInput& input) {
        if (input.maxPlayers < 2 || input.maxPlayers > 64) {
          refuse("maxPlayers must be 2 to 64", "invalid_input");
        }
        if (input.countdownMs < 0 || input.countdownMs > 3'600'000) {
          refuse("countdownMs must be 0 to 3600000", "invalid_input");
        }
        Lobby lobby;
        lobby.maxPlayers = input.maxPlayers;
        lobby.countdownMs = input.countdownMs;
        return lobby;
      })
      .action("join",
              [](LobbyCtx& c, std::string name) {
                Lobby& lobby = c.state();
                if (name.empty() || name.size() > 32) {
                  refuse("a player name is 1 to 32 characters", "invalid_name");
                }
                if (lobby.phase == "playing") {
                  refuse("the game has started", "game_started");
                }
                if (find_player(lobby, name) != nullptr) {
                  refuse("that name is taken", "name_taken");
                }
                if (static_cast<std::int64_t>(lobby.players.size()) >= lobby.maxPlayers) {
                  refuse("the lobby is full", "lobby_full");
                }
                lobby.players.push_back(Player{std::move(name), false});
                update(c);  // a new player is not ready: a countdown stops
                return lobby;
              })
      .action("leave",
              [](LobbyCtx& c, std::string name) {
                Lobby& lobby = c.state();
                std::erase_if(lobby.players, [&](const Player& p) { return p.name == name; });
                update(c);
                return lobby;
              })
      .action("setReady",
              [](LobbyCtx& c, std::string name, bool ready) {
                Lobby& lobby = c.state();
                Player* player = find_player(lobby, name);
                if (player == nullptr) {
                  refuse("no such player", "not_in_lobby");
                }
                if (lobby.phase == "playing") {
                  refuse("the game has started", "game_started");
                }
                player->ready = ready;
                update(c);
                return lobby;
              })
      .action("getLobby", [](LobbyCtx& c) { return c.state(); })
      // Run by the countdown's schedule (at startsAt, or at the next start if the process was
      // down then). A client may call it too: it only starts a countdown that is due.
      .action("startGame", [](LobbyCtx& c) {
        Lobby& lobby = c.state();
        if (lobby.phase != "countdown" || !lobby.startsAt || c.now_ms() < *lobby.startsAt) {
          return false;
        }
        lobby.phase = "playing";
        lobby.startedAt = c.now_ms();
        lobby.countdownId.clear();
        c.broadcast("gameStarted", lobby);
        return true;
      });
}

int main(int argc, char** argv) {
  rivetkit::Registry registry;
  registry.add(game_lobby());
  return registry.run(argc, argv);
}
