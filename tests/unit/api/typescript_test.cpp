// TsDeclarations (typescript.hpp): the TypeScript type of each C++ type the conversions take.
#include <rivetkit/convert.hpp>
#include <rivetkit/typescript.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace shapes {
struct Point {
  double x = 0;
  double y = 0;
};
RIVETKIT_FIELDS(Point, x, y)

struct Path {
  std::string name;
  std::vector<Point> points;
  std::optional<Point> start;
  std::vector<Path> branches;  // recursive: declared once
};
RIVETKIT_FIELDS(Path, name, points, start, branches)
}  // namespace shapes

namespace other {
struct Point {  // same name, another type: declared as Point2
  std::int64_t id = 0;
};
RIVETKIT_FIELDS(Point, id)
}  // namespace other

struct Custom {};
std::string rivetkit_ts_type(const Custom*, rivetkit::TsDeclarations&) {
  return "\"custom\"";
}

namespace {

using rivetkit::TsDeclarations;

TEST(TypeScript, Scalars) {
  TsDeclarations ts;
  EXPECT_EQ(ts.type_of<bool>(), "boolean");
  EXPECT_EQ(ts.type_of<std::int64_t>(), "number");
  EXPECT_EQ(ts.type_of<std::uint8_t>(), "number");
  EXPECT_EQ(ts.type_of<double>(), "number");
  EXPECT_EQ(ts.type_of<rivetkit::BigInt>(), "bigint");
  EXPECT_EQ(ts.type_of<std::string>(), "string");
  EXPECT_EQ(ts.type_of<const std::string&>(), "string");
  EXPECT_EQ(ts.type_of<rivetkit::Bytes>(), "Uint8Array");
  EXPECT_EQ(ts.type_of<rivetkit::Value>(), "unknown");
  EXPECT_EQ(ts.type_of<Custom>(), "\"custom\"");
  EXPECT_TRUE(ts.interfaces().empty());
}

TEST(TypeScript, Containers) {
  TsDeclarations ts;
  EXPECT_EQ(ts.type_of<std::optional<std::string>>(), "string | null");
  EXPECT_EQ(ts.type_of<std::vector<std::int64_t>>(), "number[]");
  EXPECT_EQ(ts.type_of<std::vector<std::optional<bool>>>(), "(boolean | null)[]");
  EXPECT_EQ(ts.type_of<std::vector<std::vector<std::string>>>(), "string[][]");
  EXPECT_EQ((ts.type_of<std::map<std::string, double>>()), "Record<string, number>");
  EXPECT_EQ((ts.type_of<std::unordered_map<std::string, std::vector<bool>>>()),
            "Record<string, boolean[]>");
  EXPECT_EQ(ts.type_of<std::vector<rivetkit::Value>>(), "unknown[]");
}

TEST(TypeScript, FieldStructsAreInterfacesDeclaredOnce) {
  TsDeclarations ts;
  EXPECT_EQ(ts.type_of<std::vector<shapes::Path>>(), "Path[]");
  EXPECT_EQ(ts.type_of<shapes::Point>(), "Point");
  EXPECT_EQ(ts.type_of<other::Point>(), "Point2");
  ASSERT_EQ(ts.interfaces().size(), 3u);
  const auto& path = ts.interfaces()[0];
  EXPECT_EQ(path.name, "Path");
  ASSERT_EQ(path.fields.size(), 4u);
  EXPECT_EQ(path.fields[0].name, "name");
  EXPECT_EQ(path.fields[0].type, "string");
  EXPECT_EQ(path.fields[1].type, "Point[]");
  EXPECT_EQ(path.fields[2].type, "Point | null");
  EXPECT_EQ(path.fields[3].type, "Path[]");
  EXPECT_EQ(ts.interfaces()[1].name, "Point");
  EXPECT_EQ(ts.interfaces()[1].fields[1].name, "y");
  EXPECT_EQ(ts.interfaces()[2].name, "Point2");
  EXPECT_EQ(ts.interfaces()[2].fields[0].type, "number");
}

TEST(TypeScript, UniqueNamesAreIdentifiers) {
  TsDeclarations ts;
  EXPECT_EQ(ts.unique_name("Registry"), "Registry");
  EXPECT_EQ(ts.unique_name("Registry"), "Registry2");
  EXPECT_EQ(ts.unique_name("ns::Pair<int, long>"), "Pair_int__long_");
  EXPECT_EQ(ts.unique_name("1st"), "_1st");
}

}  // namespace
