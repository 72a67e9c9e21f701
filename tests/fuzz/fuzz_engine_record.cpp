// Engine-mode actor records (engine/record_codec.cpp): our own BARE format, but read back from
// the engine's KV store, so a corrupt or foreign value must be rejected, never trusted.
// Invariant: a decoded record re-encodes to bytes that decode and re-encode identically
// (PersistedActor has no operator==; its canonical encoding stands in for it).
#include "engine/record_codec.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace engine = rivetkit::engine;
  auto record = engine::decode_record(rivetkit::fuzz::as_text(data, size));
  if (!record) {
    return 0;
  }
  const std::string bytes = engine::encode_record(*record);
  auto again = engine::decode_record(bytes);
  FUZZ_CHECK(again.has_value());
  FUZZ_CHECK(engine::encode_record(*again) == bytes);
  return 0;
}
