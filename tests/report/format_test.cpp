// Readable numbers in the reports (schedlab/report/format.h): a unit per
// value, significant digits, and never an exponent.
#include "schedlab/report/format.h"

#include <gtest/gtest.h>

#include <cmath>

namespace schedlab::report {
namespace {

TEST(Format, SignificantDigitsWithoutExponent) {
  EXPECT_EQ(format_sig(15990.2), "15990");
  EXPECT_EQ(format_sig(123.44), "123.4");
  EXPECT_EQ(format_sig(1.5), "1.500");
  EXPECT_EQ(format_sig(0.001234), "0.001234");
  EXPECT_EQ(format_sig(1234567.0), "1235000");
  EXPECT_EQ(format_sig(0), "0");
  EXPECT_EQ(format_sig(-2.5, 3), "-2.50");
  // Rounding that carries into the next power of ten keeps the digit count.
  EXPECT_EQ(format_sig(9.99996), "10.00");
  EXPECT_EQ(format_sig(2.0, 3, true), "2");
  EXPECT_EQ(format_sig(0.5, 3, true), "0.5");
  EXPECT_EQ(format_sig(150, 3, true), "150");
  EXPECT_EQ(format_sig(NAN), "nan");
  EXPECT_EQ(format_sig(INFINITY), "inf");
}

TEST(Format, TimesInTheirUnit) {
  EXPECT_EQ(format_time_us(15990.0), "15.99 ms");  // was "1.599e+04 us"
  EXPECT_EQ(format_time_us(159.9), "159.9 us");
  EXPECT_EQ(format_time_us(50), "50.00 us");
  EXPECT_EQ(format_time_us(1.0), "1.000 us");
  EXPECT_EQ(format_time_us(0.85), "850.0 ns");
  EXPECT_EQ(format_time_us(1234567.0), "1.235 s");
  EXPECT_EQ(format_time_us(7.2e7), "72.00 s");  // seconds are the largest unit
  EXPECT_EQ(format_time_us(0), "0 us");
  // 999.96 us rounds to 1000 us: it is 1.000 ms.
  EXPECT_EQ(format_time_us(999.96), "1.000 ms");
  EXPECT_EQ(format_time_us(999.94), "999.9 us");
  EXPECT_EQ(format_time_us(0.99996), "1.000 us");
  // Axis ticks: three digits, trailing zeros dropped.
  EXPECT_EQ(format_time_us(1000, 3, true), "1 ms");
  EXPECT_EQ(format_time_us(200, 3, true), "200 us");
  EXPECT_EQ(format_time_us(2500, 3, true), "2.5 ms");
}

TEST(Format, Bandwidth) {
  EXPECT_EQ(format_gbps(4523.4), "4523");
  EXPECT_EQ(format_gbps(123.44), "123.4");
  EXPECT_EQ(format_gbps(12345.6), "12350");
  EXPECT_EQ(format_gbps(0.8192), "0.8192");
}

}  // namespace
}  // namespace schedlab::report
