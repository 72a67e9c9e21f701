// Replays every /connect frame of the captured client transcripts (tests/data/vectors/client):
// each client frame must decode, and each server frame must come out of our encoder byte for byte
// when fed the message it carries.

#include "protocol/client/messages.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace rivetkit::protocol::client {
namespace {

struct Frame {
  bool from_client = false;
  std::string payload;
  int line = 0;
};

// Transcript format: a "C->S WS text|binary ..." line followed by "      text: <frame>" or
// "      hex: <hex>" (README.md in the vectors directory).
std::vector<Frame> connect_frames(const std::string& transcript) {
  std::vector<Frame> frames;
  std::istringstream in(transcript);
  std::string line;
  int line_no = 0;
  std::optional<bool> pending;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.rfind("C->S WS text", 0) == 0 || line.rfind("C->S WS binary", 0) == 0) {
      pending = true;
      continue;
    }
    if (line.rfind("S->C WS text", 0) == 0 || line.rfind("S->C WS binary", 0) == 0) {
      pending = false;
      continue;
    }
    if (!pending) {
      continue;
    }
    const auto text_pos = line.find("text: ");
    const auto hex_pos = line.find("hex: ");
    if (text_pos != std::string::npos) {
      frames.push_back({*pending, line.substr(text_pos + 6), line_no});
    } else if (hex_pos != std::string::npos) {
      frames.push_back({*pending, test::from_hex(line.substr(hex_pos + 5)), line_no});
    }
    pending.reset();
  }
  return frames;
}

struct TranscriptCase {
  const char* file;
  Encoding encoding;
  std::size_t expected_frames;
};

class TranscriptTest : public ::testing::TestWithParam<TranscriptCase> {};

TEST_P(TranscriptTest, ClientFramesDecodeAndServerFramesReencodeExactly) {
  const auto& param = GetParam();
  const auto frames = connect_frames(test::read_file(test::client_vector_path(param.file)));
  ASSERT_EQ(frames.size(), param.expected_frames);
  for (const auto& frame : frames) {
    SCOPED_TRACE(std::string(param.file) + ":" + std::to_string(frame.line));
    if (frame.from_client) {
      auto decoded = decode_to_server(param.encoding, frame.payload);
      EXPECT_TRUE(decoded.has_value()) << decoded.error().message;
      continue;
    }
    auto msg = decode_to_client(param.encoding, frame.payload);
    ASSERT_TRUE(msg.has_value()) << msg.error().message;
    const std::string ours = encode_to_client(param.encoding, *msg);
    if (param.encoding == Encoding::kJson) {
      EXPECT_EQ(ours, frame.payload);
    } else {
      EXPECT_EQ(test::to_hex(ours), test::to_hex(frame.payload));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(CapturedVectors,
                         TranscriptTest,
                         ::testing::Values(TranscriptCase{"conn-json.txt", Encoding::kJson, 7},
                                           TranscriptCase{"conn-cbor.txt", Encoding::kCbor, 7},
                                           TranscriptCase{"conn-bare.txt", Encoding::kBare, 7},
                                           TranscriptCase{"direct-json.txt", Encoding::kJson, 3},
                                           TranscriptCase{"direct-cbor.txt", Encoding::kCbor, 3},
                                           TranscriptCase{"direct-bare.txt", Encoding::kBare, 3},
                                           TranscriptCase{"connerr-json.txt", Encoding::kJson, 4},
                                           TranscriptCase{"token-json.txt", Encoding::kJson, 3},
                                           TranscriptCase{"skipready-json.txt", Encoding::kJson, 3},
                                           TranscriptCase{"idle-bare.txt", Encoding::kBare, 3}),
                         [](const ::testing::TestParamInfo<TranscriptCase>& param_info) {
                           std::string name = param_info.param.file;
                           name = name.substr(0, name.find('.'));
                           for (auto& c : name) {
                             if (c == '-') {
                               c = '_';
                             }
                           }
                           return name;
                         });

}  // namespace
}  // namespace rivetkit::protocol::client
