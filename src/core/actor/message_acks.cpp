#include "core/actor/message_acks.hpp"

namespace rivetkit::core {

MessageAcks::MessageAcks(util::Clock& clock, Host& host) : clock_(clock), host_(host) {}

void MessageAcks::taken(const std::string& conn_id,
                        std::size_t bytes,
                        bool reply_follows,
                        std::optional<std::uint16_t> index) {
  if (reply_follows && index) {
    auto saved = gated_index_.find(conn_id);
    // Indexes wrap at 2^16: `saved` covers `index` when it is not behind it (serial numbers).
    if (saved != gated_index_.end()
        && static_cast<std::int16_t>(static_cast<std::uint16_t>(saved->second - *index)) >= 0) {
      return;  // a write the reply waits for anyway carries it
    }
  }
  due_.insert(conn_id);
  due_bytes_ += bytes;
  if (reply_follows && host_.replies_held()) {
    gates_output_ = true;
    host_.acks_need_save();
    return;
  }
  if (due_bytes_ >= kSaveBytes) {
    save_due_ = true;
    host_.acks_need_save();
    return;
  }
  if (delay_armed_) {
    return;
  }
  delay_armed_ = true;
  host_.spawn_task(delay(), "save message indexes");
}

void MessageAcks::written(const std::string& conn_id, std::uint16_t index) {
  gated_index_[conn_id] = index;
}

void MessageAcks::forget(const std::string& conn_id) {
  gated_index_.erase(conn_id);
  due_.erase(conn_id);
}

void MessageAcks::wrote(const storage::ActorWrite& write, bool gating) {
  if (gating) {
    for (const auto& record : write.conn_upserts) {
      if (!record.tunnel_id.empty()) {  // a resumable socket's record
        written(record.conn_id, record.client_message_index);
      }
    }
  }
  for (const auto& id : write.conn_deletes) {
    forget(id);
  }
}

Task<void> MessageAcks::delay() {
  auto wait_op = clock_.wait_for(kSaveDelay);
  co_await std::move(wait_op);
  delay_armed_ = false;
  if (!due_.empty()) {
    save_due_ = true;
    host_.acks_need_save();
  }
}

std::vector<std::string> MessageAcks::take(bool write_gating) {
  std::vector<std::string> out;
  if ((write_gating || gates_output_ || save_due_) && !due_.empty()) {
    out.assign(due_.begin(), due_.end());
    due_.clear();
    due_bytes_ = 0;
  }
  save_due_ = false;
  gates_output_ = false;
  return out;
}

}  // namespace rivetkit::core
