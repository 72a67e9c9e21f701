// Client protocol messages in the cbor encoding (protocol/client): see client_messages.hpp.
#include "client_messages.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return rivetkit::fuzz::fuzz_client_messages(rivetkit::protocol::client::Encoding::kCbor,
                                              rivetkit::fuzz::as_text(data, size));
}
