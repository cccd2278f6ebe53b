// A Status may name the field of the input it is about (the API's error shape reads it).
#include <gtest/gtest.h>

#include "common/status.h"

namespace tessera {
namespace {

TEST(StatusField, AnErrorNamesItsFieldAndKeepsItThroughAResult) {
  Status plain = InvalidArgument("count must be positive");
  EXPECT_EQ(plain.field(), "");
  Status named = InvalidArgument("count must be positive").WithField("taskGroups[0].count");
  EXPECT_EQ(named.field(), "taskGroups[0].count");
  EXPECT_EQ(named.message(), "count must be positive");
  EXPECT_EQ(named.code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(named == plain);  // the field is part of the error
  Result<int> r = std::move(named);
  EXPECT_EQ(r.status().field(), "taskGroups[0].count");
}

}  // namespace
}  // namespace tessera
