#include "core/actor/actor_queue.hpp"

#include "core/actor/stored_value.hpp"
#include "util/log.hpp"
#include <rivetkit/queue.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <limits>

namespace rivetkit::core {

namespace asio = boost::asio;

namespace {

constexpr char kNextIdTag = '\x01';
constexpr char kMessageTag = '\x02';
constexpr char kDeadLetterTag = '\x03';
// The stored record of a message or dead letter: version, created_at (i64 BE), deliveries (u32
// BE, from version 2), name length (u32 BE), name, body (CBOR). Version 1 (no deliveries) is
// still read.
constexpr char kRecordV1 = '\x01';
constexpr char kRecordV2 = '\x02';

void put_be(std::string& out, std::uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) {
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
}

std::uint64_t get_be(std::string_view in, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v = (v << 8) | static_cast<unsigned char>(in[at + static_cast<std::size_t>(i)]);
  }
  return v;
}

std::string encode_record(const std::string& name,
                          std::int64_t created_at,
                          std::uint32_t deliveries,
                          const std::string& body) {
  std::string out;
  out.reserve(1 + 8 + 4 + 4 + name.size() + body.size());
  out.push_back(kRecordV2);
  put_be(out, static_cast<std::uint64_t>(created_at), 8);
  put_be(out, deliveries, 4);
  put_be(out, name.size(), 4);
  out += name;
  out += body;
  return out;
}

struct Record {
  std::string name;
  std::int64_t created_at = 0;
  std::uint32_t deliveries = 0;
  std::string body;
};

std::optional<Record> decode_record(std::string_view in) {
  if (in.empty() || (in[0] != kRecordV1 && in[0] != kRecordV2)) {
    return std::nullopt;
  }
  const std::size_t header = in[0] == kRecordV1 ? 13 : 17;
  if (in.size() < header) {
    return std::nullopt;
  }
  Record r;
  r.created_at = static_cast<std::int64_t>(get_be(in, 1, 8));
  if (in[0] == kRecordV2) {
    r.deliveries = static_cast<std::uint32_t>(get_be(in, 9, 4));
  }
  const auto name_len = get_be(in, header - 4, 4);
  if (in.size() - header < name_len) {
    return std::nullopt;
  }
  r.name = std::string(in.substr(header, name_len));
  r.body = std::string(in.substr(header + name_len));
  return r;
}

std::size_t varint_size(std::size_t n) {
  std::size_t size = 1;
  while (n >= 0x80) {
    n >>= 7;
    ++size;
  }
  return size;
}

Error queue_error(std::string code, std::string message, std::optional<Value> metadata = {}) {
  return Error{"queue", std::move(code), std::move(message), std::move(metadata), true};
}

Error aborted() {
  return Error{"actor", "aborted", "Actor aborted", std::nullopt, true};
}

bool matches(const std::vector<std::string>& names, const std::string& name) {
  return names.empty() || std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

namespace queue_keys {

std::string next_id_key() {
  return std::string{kPrefix, kNextIdTag};
}

std::string message_key(std::uint64_t id) {
  std::string key{kPrefix, kMessageTag};
  put_be(key, id, 8);
  return key;
}

std::string dead_letter_key(std::uint64_t id) {
  std::string key{kPrefix, kDeadLetterTag};
  put_be(key, id, 8);
  return key;
}

std::optional<std::uint64_t> id_of(std::string_view key) {
  if (key.size() != 10 || key[0] != kPrefix || key[1] != kMessageTag) {
    return std::nullopt;
  }
  return get_be(key, 2, 8);
}

std::optional<std::uint64_t> dead_id_of(std::string_view key) {
  if (key.size() != 10 || key[0] != kPrefix || key[1] != kDeadLetterTag) {
    return std::nullopt;
  }
  return get_be(key, 2, 8);
}

}  // namespace queue_keys

std::size_t ActorQueue::measured_size(std::string_view name, std::string_view body_cbor) {
  // RivetKit's persisted message (core-semantics.md §7): a 2-byte version, the name and the body
  // each with a varint length, created_at (8 bytes) and four absent optional fields.
  return 2 + varint_size(name.size()) + name.size() + varint_size(body_cbor.size())
         + body_cbor.size() + 8 + 4;
}

ActorQueue::ActorQueue(asio::any_io_executor strand,
                       std::string actor_id,
                       const detail::ActorDefinitionData& definition,
                       Host& host)
    : strand_(std::move(strand)),
      actor_id_(std::move(actor_id)),
      definition_(definition),
      host_(host) {}

Task<Result<void>> ActorQueue::load(storage::ActorStore& store) {
  storage::KvQuery query;
  query.prefix = std::string(1, queue_keys::kPrefix);
  auto op = store.kv_store().list(std::move(query));
  auto listed = co_await std::move(op);
  if (!listed) {
    co_return fail(listed.error());
  }
  std::uint64_t stored_next = 1;
  for (auto& entry : *listed) {
    if (entry.key == queue_keys::next_id_key()) {
      if (entry.value.size() == 8) {
        stored_next = std::max<std::uint64_t>(stored_next, get_be(entry.value, 0, 8));
      }
      continue;
    }
    auto id = queue_keys::id_of(entry.key);
    auto dead_id = queue_keys::dead_id_of(entry.key);
    auto record = decode_record(entry.value);
    if (!(id || dead_id) || !record) {
      log::warn("queue: unreadable entry dropped actor_id={} key_size={}", actor_id_,
                entry.key.size());
      continue;
    }
    auto body = decode_stored(record->body);
    if (!body) {
      log::warn("queue: message {} has an unreadable body actor_id={}: {}", id ? *id : *dead_id,
                actor_id_, body.error().message);
      continue;
    }
    Message m{
        std::move(record->name), std::move(*body), record->created_at, record->deliveries, {}};
    const auto key_id = id ? *id : *dead_id;
    (id ? messages_ : dead_).emplace(key_id, std::move(m));
    stored_next = std::max(stored_next, key_id + 1);
  }
  next_id_ = stored_next;
  co_return Result<void>{};
}

bool ActorQueue::declared(std::string_view name) const {
  return definition_.queues.find(name) != definition_.queues.end();
}

std::optional<std::chrono::milliseconds> ActorQueue::visibility_of(const QueueDelivery& delivery) {
  if (delivery.visibility_timeout) {
    return delivery.visibility_timeout;
  }
  if (delivery.exactly_once) {
    // One handler at a time: exactly once means nobody else handles it meanwhile.
    return kDefaultHoldLimit;
  }
  return std::nullopt;
}

const QueueDelivery& ActorQueue::delivery_of(const std::string& name) const {
  static const QueueDelivery kNone;
  auto it = definition_.queues.find(name);
  return it == definition_.queues.end() ? kNone : it->second.delivery;
}

bool ActorQueue::blocks(const detail::QueueCompletion& c) const {
  if (c.completed) {
    return false;
  }
  if (visibility_of(delivery_of(c.name))) {
    // Delivered again after its visibility timeout: this delivery is over (its complete() would
    // throw queue.delivery_expired), so it no longer holds its caller back.
    auto it = messages_.find(c.id);
    return it != messages_.end() && it->second.deliveries == c.delivery;
  }
  return true;
}

void ActorQueue::put_record(std::uint64_t id, const Message& m, bool dead) {
  unsaved_.put(dead ? queue_keys::dead_letter_key(id) : queue_keys::message_key(id),
               encode_record(m.name, m.created_at, m.deliveries, encode_stored(m.body)));
}

void ActorQueue::check_open() const {
  if (closed_ || !host_.queue_open()) {
    throw ActorError(Error{"actor", "stopped", "The actor has stopped; its queue is closed",
                           std::nullopt, true});
  }
}

std::uint64_t ActorQueue::enqueue(std::string name, Value body) {
  check_open();
  std::string bytes = encode_stored(body);
  const auto& options = definition_.options;
  const auto size = measured_size(name, bytes);
  if (size > options.max_queue_message_size) {
    throw ActorError(queue_error(
        "message_too_large",
        "Queue message too large (" + std::to_string(size) + " bytes). Limit is "
            + std::to_string(options.max_queue_message_size) + " bytes.",
        Value::object({{"size", static_cast<std::int64_t>(size)},
                       {"limit", static_cast<std::int64_t>(options.max_queue_message_size)}})));
  }
  if (messages_.size() + dead_.size() >= options.max_queue_size) {
    std::string message =
        "Queue is full. Limit is " + std::to_string(options.max_queue_size) + " messages.";
    if (!dead_.empty()) {
      message += " " + std::to_string(dead_.size())
                 + " of them are dead letters (replay or drop them to make room).";
    }
    throw ActorError(
        queue_error("full", std::move(message),
                    Value::object({{"limit", static_cast<std::int64_t>(options.max_queue_size)},
                                   {"deadLetters", static_cast<std::int64_t>(dead_.size())}})));
  }
  const std::uint64_t id = next_id_++;
  const std::int64_t created_at = host_.queue_now_ms();
  unsaved_.put(queue_keys::message_key(id), encode_record(name, created_at, 0, bytes));
  std::string next;
  put_be(next, next_id_, 8);
  unsaved_.put(queue_keys::next_id_key(), std::move(next));
  messages_.emplace(id, Message{std::move(name), std::move(body), created_at});
  host_.queue_changed();
  wake_receivers();
  return id;
}

std::size_t ActorQueue::max_size() const {
  return definition_.options.max_queue_size;
}

std::vector<ActorQueue::Listed> ActorQueue::list(std::size_t limit) const {
  std::vector<Listed> out;
  out.reserve(std::min(limit, messages_.size()));
  for (const auto& [id, m] : messages_) {
    if (out.size() >= limit) {
      break;
    }
    out.push_back(Listed{id, m.name, m.created_at});
  }
  return out;
}

std::optional<ActorQueue::Listed> ActorQueue::find(std::uint64_t id) const {
  auto it = messages_.find(id);
  if (it == messages_.end()) {
    return std::nullopt;
  }
  return Listed{id, it->second.name, it->second.created_at};
}

void ActorQueue::reset() {
  check_open();
  if (messages_.empty()) {
    return;
  }
  // One range over the message keys (dead letters are under another tag).
  unsaved_.remove_range(queue_keys::message_key(0),
                        queue_keys::message_key(std::numeric_limits<std::uint64_t>::max()));
  unsaved_.remove(queue_keys::message_key(std::numeric_limits<std::uint64_t>::max()));
  messages_.clear();
  host_.queue_changed();
}

void ActorQueue::wake_receivers() {
  for (auto& weak : receivers_) {
    if (auto timer = weak.lock()) {
      timer->cancel();
    }
  }
  receivers_.clear();
}

void ActorQueue::expect_completion(std::uint64_t id) {
  completion_waiters_[id] = std::make_shared<CompletionWaiter>(strand_);
}

Task<std::optional<Value>> ActorQueue::wait_completion(
    std::uint64_t id, std::chrono::steady_clock::time_point deadline) {
  auto hold = host_.hold();
  auto it = completion_waiters_.find(id);
  if (it == completion_waiters_.end()) {
    co_return std::nullopt;
  }
  auto waiter = it->second;
  while (!waiter->response && !closed_ && std::chrono::steady_clock::now() < deadline) {
    waiter->timer.expires_at(deadline);
    auto wait_op = waiter->timer.async_wait(asio::as_tuple(asio::use_awaitable));
    co_await std::move(wait_op);
  }
  // Under its id, or the id of its replay (replay_dead_letter moves the waiter).
  std::erase_if(completion_waiters_, [&](const auto& entry) { return entry.second == waiter; });
  co_return std::move(waiter->response);
}

std::vector<detail::QueueMessageData> ActorQueue::take(const void* scope,
                                                       const QueueReceive& options,
                                                       bool& must_save) {
  if (options.completable) {
    // Callers whose completable messages are all completed or gone (every HTTP call is its own
    // caller) leave nothing behind: an awake actor's bookkeeping does not grow with its calls.
    std::erase_if(outstanding_, [this](const auto& entry) {
      return std::all_of(entry.second.begin(), entry.second.end(), [this](const auto& weak) {
        auto c = weak.lock();
        return !c || !blocks(*c);
      });
    });
  }
  std::vector<detail::QueueMessageData> out;
  const std::size_t count = std::max<std::size_t>(1, options.count);
  const auto now = std::chrono::steady_clock::now();
  bool changed = false;
  for (auto it = messages_.begin(); it != messages_.end() && out.size() < count;) {
    auto& m = it->second;
    if (!matches(options.names, m.name) || m.visible_at > now) {
      ++it;
      continue;
    }
    const auto& delivery = delivery_of(m.name);
    if (delivery.max_deliveries && m.deliveries >= *delivery.max_deliveries) {
      // Delivered as often as the queue allows without being completed: set aside, never
      // returned again (it stays in the count of max_queue_size).
      log::warn(
          "queue: message {} on {} was delivered {} times without completion; moved to the "
          "dead letters actor_id={}",
          it->first, m.name, m.deliveries, actor_id_);
      unsaved_.remove(queue_keys::message_key(it->first));
      put_record(it->first, m, true);
      dead_.emplace(it->first, std::move(m));
      it = messages_.erase(it);
      changed = true;
      continue;
    }
    detail::QueueMessageData data;
    data.id = it->first;
    data.name = m.name;
    data.created_at = m.created_at;
    data.deliveries = m.deliveries + 1;
    if (options.completable) {
      m.deliveries += 1;
      if (auto visibility = visibility_of(delivery)) {
        m.visible_at = now + *visibility;
      }
      put_record(it->first, m, false);
      changed = true;
      must_save = must_save || delivery.max_deliveries.has_value();
      data.body = m.body;
      auto completion = std::make_shared<detail::QueueCompletion>();
      completion->id = it->first;
      completion->name = m.name;
      completion->delivery = m.deliveries;
      outstanding_[scope].push_back(completion);
      data.completion = std::move(completion);
      ++it;
    } else {
      data.body = std::move(m.body);
      unsaved_.remove(queue_keys::message_key(it->first));
      it = messages_.erase(it);
      changed = true;
    }
    out.push_back(std::move(data));
  }
  if (changed) {
    host_.queue_changed();
  }
  return out;
}

std::chrono::steady_clock::time_point ActorQueue::next_visible(
    const std::vector<std::string>& names) const {
  const auto now = std::chrono::steady_clock::now();
  auto first = std::chrono::steady_clock::time_point::max();
  for (const auto& [id, m] : messages_) {
    if (m.visible_at > now && matches(names, m.name)) {
      first = std::min(first, m.visible_at);
    }
  }
  return first;
}

Task<std::vector<detail::QueueMessageData>> ActorQueue::receive(const void* scope,
                                                                QueueReceive options,
                                                                bool wait) {
  auto hold = host_.hold();
  check_open();
  // A completable message this caller holds and has not completed comes first (RivetKit).
  if (auto it = outstanding_.find(scope); it != outstanding_.end()) {
    auto& list = it->second;
    std::erase_if(list, [this](const auto& weak) {
      auto c = weak.lock();
      return !c || !blocks(*c);
    });
    if (!list.empty()) {
      throw ActorError(queue_error("previous_message_not_completed",
                                   "Previous completable queue message is not completed. Call "
                                   "`message.complete(...)` before receiving the next message."));
    }
    outstanding_.erase(it);
  }
  if (options.cancel && options.cancel->cancelled()) {
    throw ActorError(aborted());  // as a fetch given an aborted signal
  }
  const auto deadline = options.timeout ? std::chrono::steady_clock::now() + *options.timeout
                                        : std::chrono::steady_clock::time_point::max();
  while (true) {
    check_open();
    bool must_save = false;
    auto taken = take(scope, options, must_save);
    if (must_save) {
      // The queue counts crashes too: the delivery is durable before the handler sees it. An
      // exactly-once handler holding writes is not cut short: this waits for its completion.
      auto save_op = host_.save_after_holds();
      auto saved = co_await std::move(save_op);
      if (!saved) {
        throw ActorError(saved.error());
      }
    }
    for (auto& message : taken) {
      // After the delivery's own save (an explicit save ends every hold).
      const auto& delivery = delivery_of(message.name);
      if (message.completion && delivery.exactly_once) {
        message.completion->writes_held = host_.hold_writes(*visibility_of(delivery));
      }
    }
    if (!taken.empty() || !wait) {
      co_return taken;
    }
    if (aborted_ || (options.cancel && options.cancel->cancelled())) {
      throw ActorError(aborted());
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      co_return taken;
    }
    auto wait_op = wait_for_change(scope, options, deadline);
    co_await std::move(wait_op);
  }
}

Task<void> ActorQueue::wait_for_change(const void* scope,
                                       const QueueReceive& options,
                                       std::chrono::steady_clock::time_point deadline) {
  // A hidden message showing again (its visibility timeout passed) wakes the wait too.
  auto timer = std::make_shared<asio::steady_timer>(
      strand_, std::min(deadline, next_visible(options.names)));
  // Receives that ended at their timeout leave expired entries: dropped here, so a loop of
  // timed receives with nothing sent keeps this list short.
  std::erase_if(receivers_, [](const auto& weak) { return weak.expired(); });
  receivers_.push_back(timer);
  if (options.cancel) {
    options.cancel->on_cancel([weak = std::weak_ptr<asio::steady_timer>(timer)] {
      if (auto t = weak.lock()) {
        t->cancel();
      }
    });
  }
  // RivetKit: a queue wait does not keep the actor awake. A connection's call is still counted
  // as an action; the run handler's wait is not.
  auto idle = scope == nullptr ? host_.queue_wait_began() : nullptr;
  auto wait_op = timer->async_wait(asio::as_tuple(asio::use_awaitable));
  co_await std::move(wait_op);
}

bool ActorQueue::available(const std::vector<std::string>& names) const {
  const auto now = std::chrono::steady_clock::now();
  for (const auto& [id, m] : messages_) {
    if (!matches(names, m.name) || m.visible_at > now) {
      continue;
    }
    const auto& delivery = delivery_of(m.name);
    if (!delivery.max_deliveries || m.deliveries < *delivery.max_deliveries) {
      return true;  // (one due for the dead letters would not be returned)
    }
  }
  return false;
}

Task<void> ActorQueue::wait_available(const void* scope, QueueReceive options) {
  auto hold = host_.hold();
  check_open();
  if (options.cancel && options.cancel->cancelled()) {
    throw ActorError(aborted());
  }
  const auto deadline = options.timeout ? std::chrono::steady_clock::now() + *options.timeout
                                        : std::chrono::steady_clock::time_point::max();
  while (true) {
    check_open();
    if (available(options.names)) {
      co_return;
    }
    if (aborted_ || (options.cancel && options.cancel->cancelled())) {
      throw ActorError(aborted());
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      throw ActorError(detail::queue_timed_out(options.timeout));
    }
    auto wait_op = wait_for_change(scope, options, deadline);
    co_await std::move(wait_op);
  }
}

Task<void> ActorQueue::complete(std::shared_ptr<detail::QueueCompletion> completion,
                                Value response) {
  auto hold = host_.hold();
  if (!completion) {
    throw ActorError(queue_error("not_completable",
                                 "This message was taken by a plain receive: it has nothing to "
                                 "complete (receive with completable = true)."));
  }
  if (completion->completed) {
    throw ActorError(queue_error("already_completed", "Queue message was already completed."));
  }
  check_open();
  const bool hides = visibility_of(delivery_of(completion->name)).has_value();
  auto it = messages_.find(completion->id);
  auto dead = dead_.find(completion->id);
  const std::uint32_t current = it != messages_.end() ? it->second.deliveries
                                : dead != dead_.end() ? dead->second.deliveries
                                                      : completion->delivery;
  if (hides && current != completion->delivery) {
    throw ActorError(queue_error(
        "delivery_expired",
        "Queue message " + std::to_string(completion->id)
            + " was delivered again after its visibility timeout passed; this delivery can no "
              "longer complete it.",
        Value::object({{"id", static_cast<std::int64_t>(completion->id)},
                       {"delivery", static_cast<std::int64_t>(completion->delivery)},
                       {"deliveries", static_cast<std::int64_t>(current)}})));
  }
  completion->completed = true;
  if (it != messages_.end()) {
    messages_.erase(it);
    unsaved_.remove(queue_keys::message_key(completion->id));
    host_.queue_changed();
  } else if (dead != dead_.end()) {
    // Set aside meanwhile (another receive found it delivered max_deliveries times), but its
    // handler did finish: it is done.
    dead_.erase(dead);
    unsaved_.remove(queue_keys::dead_letter_key(completion->id));
    host_.queue_changed();
  }
  if (auto waiter = completion_waiters_.find(completion->id); waiter != completion_waiters_.end()) {
    waiter->second->response = std::move(response);
    waiter->second->timer.cancel();
  }
  // Everything the handler changed goes with the completion, in one write.
  completion->writes_held.reset();
  co_return;
}

Task<void> ActorQueue::complete_id(std::uint64_t id, std::string name, Value response) {
  auto completion = std::make_shared<detail::QueueCompletion>();
  completion->id = id;
  completion->name = std::move(name);
  if (auto it = messages_.find(id); it != messages_.end()) {
    completion->delivery = it->second.deliveries;
  } else if (auto dead = dead_.find(id); dead != dead_.end()) {
    completion->delivery = dead->second.deliveries;
  }
  auto op = complete(std::move(completion), std::move(response));
  co_await std::move(op);
}

Task<void> ActorQueue::send(std::string name, Value body) {
  auto hold = host_.hold();
  check_open();
  enqueue(std::move(name), std::move(body));
  auto op = host_.save_now();
  auto saved = co_await std::move(op);
  if (!saved) {
    throw ActorError(saved.error());
  }
}

Task<QueueSendResult> ActorQueue::send_and_wait(std::string name,
                                                Value body,
                                                std::optional<std::chrono::milliseconds> timeout) {
  auto hold = host_.hold();
  check_open();
  const auto deadline = timeout ? std::chrono::steady_clock::now() + *timeout
                                : std::chrono::steady_clock::time_point::max();
  const auto id = enqueue(std::move(name), std::move(body));
  expect_completion(id);
  auto save_op = host_.save_now();
  auto saved = co_await std::move(save_op);
  if (!saved) {
    completion_waiters_.erase(id);
    throw ActorError(saved.error());
  }
  auto wait_op = wait_completion(id, deadline);
  auto response = co_await std::move(wait_op);
  QueueSendResult result;
  if (response) {
    result.status = "completed";
    result.response = std::move(*response);
  } else {
    result.status = "timedOut";
  }
  co_return result;
}

std::vector<QueueDeadLetter> ActorQueue::dead_letters() const {
  check_open();
  std::vector<QueueDeadLetter> out;
  out.reserve(dead_.size());
  for (const auto& [id, m] : dead_) {
    out.push_back(QueueDeadLetter{id, m.name, m.body, m.created_at, m.deliveries});
  }
  return out;
}

Task<std::optional<std::uint64_t>> ActorQueue::replay_dead_letter(std::uint64_t id) {
  auto hold = host_.hold();
  check_open();
  auto it = dead_.find(id);
  if (it == dead_.end()) {
    co_return std::nullopt;
  }
  Message m = std::move(it->second);
  dead_.erase(it);
  m.deliveries = 0;
  m.visible_at = {};
  const std::uint64_t new_id = next_id_++;
  unsaved_.remove(queue_keys::dead_letter_key(id));
  put_record(new_id, m, false);
  std::string next;
  put_be(next, next_id_, 8);
  unsaved_.put(queue_keys::next_id_key(), std::move(next));
  messages_.emplace(new_id, std::move(m));
  if (auto waiter = completion_waiters_.extract(id)) {
    // A sender still waiting for it waits for its replay.
    waiter.key() = new_id;
    completion_waiters_.insert(std::move(waiter));
  }
  host_.queue_changed();
  wake_receivers();
  auto op = host_.save_now();
  auto saved = co_await std::move(op);
  if (!saved) {
    throw ActorError(saved.error());
  }
  co_return new_id;
}

Task<bool> ActorQueue::drop_dead_letter(std::uint64_t id) {
  auto hold = host_.hold();
  check_open();
  if (dead_.erase(id) == 0) {
    co_return false;
  }
  unsaved_.remove(queue_keys::dead_letter_key(id));
  host_.queue_changed();
  auto op = host_.save_now();
  auto saved = co_await std::move(op);
  if (!saved) {
    throw ActorError(saved.error());
  }
  co_return true;
}

void ActorQueue::take_changes(storage::ActorWrite& write) {
  if (unsaved_.empty()) {
    return;
  }
  write.kv.append(std::move(unsaved_));
  unsaved_ = storage::KvBatch{};
}

void ActorQueue::abort() {
  aborted_ = true;
  wake_receivers();
}

void ActorQueue::close() {
  closed_ = true;
  aborted_ = true;
  wake_receivers();
  for (auto& [id, waiter] : completion_waiters_) {
    waiter->timer.cancel();
  }
}

}  // namespace rivetkit::core
