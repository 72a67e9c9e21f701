// A program written outside the rivetkit-cpp tree, as a user would: it sees only the installed
// headers (or the subproject's) and links rivetkit::rivetkit, `pkg-config rivetkit`, or the
// add_subdirectory target. tests/consumer builds it each way and tests/js/consumer runs it
// against the official client.
//
// It uses what a typical actor does: state in a RIVETKIT_FIELDS struct, a coroutine action
// that waits (Boost.Asio's awaitable, compiled in this translation unit), SQLite with a
// migration, events, and a user error.

#include <rivetkit/rivetkit.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

struct Entry {
  std::int64_t id = 0;
  std::string author;
  std::string text;
};
RIVETKIT_FIELDS(Entry, id, author, text)

struct BookState {
  std::int64_t signatures = 0;
};
RIVETKIT_FIELDS(BookState, signatures)

rivetkit::ActorDefinition guestbook() {
  return rivetkit::actor<BookState>("guestbook")
      .database({{1,
                  "CREATE TABLE entries (id INTEGER PRIMARY KEY, author TEXT NOT NULL, "
                  "text TEXT NOT NULL)"}})
      .action("sign",
              [](auto& c, std::string author, std::string text) -> rivetkit::Task<Entry> {
                if (author.empty()) {
                  throw rivetkit::UserError("an entry needs an author", "author_missing");
                }
                auto r = co_await c.db().execute("INSERT INTO entries (author, text) VALUES (?, ?)",
                                                 author, text);
                c.state().signatures += 1;
                Entry entry{r.last_insert_row_id, std::move(author), std::move(text)};
                c.broadcast("signed", entry);
                co_return entry;
              })
      .action("entries",
              [](auto& c) -> rivetkit::Task<std::vector<Entry>> {
                auto r =
                    co_await c.db().execute("SELECT id, author, text FROM entries ORDER BY id");
                co_return r.template as<Entry>();
              })
      .action("signatures", [](auto& c) { return c.state().signatures; })
      .action("pause", [](auto& c, std::int64_t ms) -> rivetkit::Task<std::int64_t> {
        co_await c.wait(std::chrono::milliseconds(ms));
        co_return ms;
      });
}

int main(int argc, char** argv) {
  rivetkit::Registry registry;
  registry.add(guestbook());
  return registry.run(argc, argv);
}
