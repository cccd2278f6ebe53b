#include "common/quantity.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(ParseMilli, AcceptsWholeDecimalAndMilliNotation) {
  EXPECT_EQ(*ParseMilli("2"), 2000);
  EXPECT_EQ(*ParseMilli("1.5"), 1500);
  EXPECT_EQ(*ParseMilli("0.001"), 1);
  EXPECT_EQ(*ParseMilli("250m"), 250);
  EXPECT_EQ(*ParseMilli("0"), 0);
}

TEST(ParseMilli, RejectsNegativeGarbageAndExcessPrecision) {
  EXPECT_FALSE(ParseMilli("-1").ok());
  EXPECT_FALSE(ParseMilli("abc").ok());
  EXPECT_FALSE(ParseMilli("").ok());
  EXPECT_FALSE(ParseMilli("1.0001").ok());
  EXPECT_FALSE(ParseMilli("2x").ok());
  EXPECT_FALSE(ParseMilli("1.5m").ok());
  EXPECT_FALSE(ParseMilli("99999999999999999999999").ok());
  EXPECT_NE(ParseMilli("-1").status().message().find("negative"), std::string::npos);
}

TEST(ParseMemory, BinaryDecimalAndBareUnits) {
  EXPECT_EQ(*ParseMemory("80Gi"), 80 * 1024);
  EXPECT_EQ(*ParseMemory("2Ti"), 2 * 1024 * 1024);
  EXPECT_EQ(*ParseMemory("512Mi"), 512);
  EXPECT_EQ(*ParseMemory("1.5Gi"), 1536);
  EXPECT_EQ(*ParseMemory("262144"), 262144);
  EXPECT_EQ(*ParseMemory("1G"), 954);  // 10^9 bytes, rounded to MiB
  EXPECT_FALSE(ParseMemory("12Qi").ok());
  EXPECT_FALSE(ParseMemory("-1Gi").ok());
  EXPECT_NE(ParseMemory("12Qi").status().message().find("Qi"), std::string::npos);
}

TEST(ParseBandwidth, BitsAndBytes) {
  EXPECT_EQ(*ParseBandwidth("400Gbps"), 400000);
  EXPECT_EQ(*ParseBandwidth("100Mbps"), 100);
  EXPECT_EQ(*ParseBandwidth("25GB/s"), 200000);
  EXPECT_EQ(*ParseBandwidth("1Tbps"), 1000000);
  EXPECT_FALSE(ParseBandwidth("400").ok());  // a bandwidth needs its unit
  EXPECT_FALSE(ParseBandwidth("fast").ok());
}

TEST(ParseDuration, UnitsAndBareSeconds) {
  EXPECT_EQ(*ParseDuration("90s"), 90000);
  EXPECT_EQ(*ParseDuration("1.5h"), 5400000);
  EXPECT_EQ(*ParseDuration("30m"), 1800000);
  EXPECT_EQ(*ParseDuration("250ms"), 250);
  EXPECT_EQ(*ParseDuration("2d"), 172800000);
  EXPECT_EQ(*ParseDuration("10"), 10000);
  EXPECT_FALSE(ParseDuration("soon").ok());
  EXPECT_FALSE(ParseDuration("5y").ok());
}

TEST(Format, RoundTripsThroughParsers) {
  for (Milli v : {0, 1, 250, 1000, 1500, 96000, 123456}) {
    EXPECT_EQ(*ParseMilli(FormatMilli(v)), v) << v;
  }
  for (MiB v : {1, 512, 1536, 81920, 2 * 1024 * 1024, 262144, 1000}) {
    EXPECT_EQ(*ParseMemory(FormatMemory(v)), v) << v;
  }
  for (Millis v : {0, 1, 1500, 60000, 5400000, 86400000}) {
    EXPECT_EQ(*ParseDuration(FormatDuration(v)), v) << v;
  }
  for (Mbps v : {1, 100, 400000, 1000000})
    EXPECT_EQ(*ParseBandwidth(FormatBandwidth(v)), v) << v;
  EXPECT_EQ(FormatMemory(81920), "80Gi");
  EXPECT_EQ(FormatMilli(1500), "1.5");
}

}  // namespace
}  // namespace tessera
