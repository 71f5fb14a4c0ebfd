// schedlab/report: how the reports write numbers for people to read.
//
// Owns: times with a unit chosen per value ("159.9 us", "15.99 ms"), counts
// such as GB/s with a fixed number of significant digits, and never an
// exponent ("1.599e+04 us" is what this replaces). May depend on nothing but
// the standard library and fmt.
// Invariant: the digits are significant digits of the value as rounded, so a
// value that rounds up to the next unit moves there (999.96 us is "1.000 ms").
#pragma once

#include <string>

namespace schedlab::report {

/// `v` in fixed notation with `significant` significant digits: 15990.2 ->
/// "15990", 123.44 -> "123.4", 0.001234 -> "0.001234". With `trim`, trailing
/// zeros after the point go (axis ticks: "2" rather than "2.000"). Zero is
/// "0"; a non-finite value is "nan" or "inf".
std::string format_sig(double v, int significant = 4, bool trim = false);

/// A duration given in microseconds, in the unit (ns, us, ms, s) that puts
/// it in [1, 1000): "850.0 ns", "159.9 us", "15.99 ms", "1.234 s"; "0 us" for
/// zero. `significant` and `trim` as for format_sig.
std::string format_time_us(double us, int significant = 4, bool trim = false);

/// A bandwidth in GB/s (1e9 B/s) without its unit: "4523", "123.4", "0.8192".
std::string format_gbps(double gbps);

}  // namespace schedlab::report
