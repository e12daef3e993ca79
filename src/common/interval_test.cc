#include "common/interval.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

int64_t Us(std::string_view text) {
  Result<Duration> d = ParseDuration(text);
  EXPECT_TRUE(d.ok()) << text << ": " << d.status().ToString();
  return d.ok() ? d->micros : -12345;
}

TEST(IntervalTest, PlainUnits) {
  EXPECT_EQ(Us("10 seconds"), 10'000'000);
  EXPECT_EQ(Us("1 second"), 1'000'000);
  EXPECT_EQ(Us("5 minutes"), 300'000'000);
  EXPECT_EQ(Us("2 hours"), 7'200'000'000);
  EXPECT_EQ(Us("1 day"), 86'400'000'000);
  EXPECT_EQ(Us("1 week"), 7 * 86'400'000'000);
  EXPECT_EQ(Us("500 milliseconds"), 500'000);
  EXPECT_EQ(Us("250 ms"), 250'000);
  EXPECT_EQ(Us("7 microseconds"), 7);
}

TEST(IntervalTest, MonthIs31DaysAsInSparkWatermarks) {
  EXPECT_EQ(Us("1 month"), 31 * 86'400'000'000);
  EXPECT_EQ(Us("1 year"), 12 * 31 * 86'400'000'000);
}

TEST(IntervalTest, CompactAndCaseInsensitive) {
  EXPECT_EQ(Us("10s"), 10'000'000);
  EXPECT_EQ(Us("100ms"), 100'000);
  EXPECT_EQ(Us("3 MINUTES"), 180'000'000);
  EXPECT_EQ(Us("1h"), 3'600'000'000);
}

TEST(IntervalTest, SqlIntervalLiterals) {
  EXPECT_EQ(Us("INTERVAL 10 SECONDS"), 10'000'000);
  EXPECT_EQ(Us("interval '10' second"), 10'000'000);
  EXPECT_EQ(Us("INTERVAL '1 minute'"), 60'000'000);
  EXPECT_EQ(Us("INTERVAL 1 HOUR 30 MINUTES"), 5'400'000'000);
}

TEST(IntervalTest, CompoundAndFractional) {
  EXPECT_EQ(Us("1 hour 30 minutes"), 5'400'000'000);
  EXPECT_EQ(Us("1.5 seconds"), 1'500'000);
  EXPECT_EQ(Us("0 seconds"), 0);
  EXPECT_EQ(Us("-5 seconds"), -5'000'000);
}

TEST(IntervalTest, Errors) {
  for (const char* bad : {"", "seconds", "10", "10 fortnights", "ten seconds", "INTERVAL",
                          "10 seconds 5", "1..2 s"}) {
    Result<Duration> d = ParseDuration(bad);
    EXPECT_FALSE(d.ok()) << bad;
    if (!d.ok()) {
      EXPECT_TRUE(d.status().IsInvalidArgument()) << bad;
      EXPECT_NE(d.status().message().find("invalid interval"), std::string::npos);
    }
  }
  EXPECT_NE(ParseDuration("10 fortnights").status().message().find("unknown unit 'fortnights'"),
            std::string::npos);
}

TEST(IntervalTest, ToStringRoundTrips) {
  EXPECT_EQ(Duration::Seconds(0).ToString(), "0 seconds");
  EXPECT_EQ(Duration::Seconds(1).ToString(), "1 second");
  EXPECT_EQ(Duration{5'400'000'000}.ToString(), "1 hour 30 minutes");
  EXPECT_EQ(Duration::Millis(250).ToString(), "250 milliseconds");
  for (const char* text : {"1 hour 30 minutes", "250 milliseconds", "3 days 1 second"}) {
    EXPECT_EQ(ParseDuration(text)->ToString(), text);
  }
}

TEST(IntervalTest, HasMonthUnitNamesCalendarLengths) {
  for (const char* text :
       {"1 month", "2 MONTHS", "1 year", "INTERVAL '1' MONTH", "1 day 1 month"}) {
    EXPECT_TRUE(HasMonthUnit(text)) << text;
  }
  for (const char* text : {"30 days", "1 week", "10 minutes", "1 ms", "bad", "1 moon"}) {
    EXPECT_FALSE(HasMonthUnit(text)) << text;
  }
  // The length ParseDuration gives months (31 days, Spark's watermark delay) is unchanged.
  EXPECT_EQ(ParseDuration("1 month")->micros, kMicrosPerMonth);
}

}  // namespace
}  // namespace sluice
