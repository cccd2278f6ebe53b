// Fixed-point quantities. Feasibility never compares doubles: CPU is in milli-cores, device
// shares in milli-devices (1000 = one whole device), memory in MiB, bandwidth in Mbit/s,
// durations in milliseconds, prices and budgets in milli-units of the fleet's currency and
// what is spent in micro-units (Micro).
//
// The parsers accept the human notation of the YAML (`"96"`, `"500m"`, `"1.5"`, `"80Gi"`,
// `"400Gbps"`, `"90s"`, `"2h"`) and return InvalidArgument naming what they expected.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera {

// A count in thousandths: 1500 = 1.5. Used for CPU cores, device shares, speeds and prices.
using Milli = int64_t;
// Memory and sizes in mebibytes (2^20 bytes).
using MiB = int64_t;
// Bandwidth in megabits per second.
using Mbps = int64_t;
// Durations in milliseconds.
using Millis = int64_t;

inline constexpr Milli kMilliPerUnit = 1000;

// Money in millionths of the fleet's currency unit: a price (milli-units per device-hour or
// core-hour) times a share (milli-devices or milli-cores) is exact in it, and so are the sums
// and the budget checks made of such rates.
using Micro = int64_t;
inline constexpr Micro kMicroPerUnit = 1000000;
inline double MicroUnits(Micro v) {
  return static_cast<double>(v) / kMicroPerUnit;
}
// What a rate of `per_hour` costs over `ms`, rounded to the micro-unit (half up). `ms` >= 0.
Micro CostOver(Micro per_hour, Millis ms);

// The largest value each parser accepts. With the fleet's own limits (at most 200,000 nodes
// and 2,000,000 devices, docs/configuration.md) no sum of parsed values — fleet totals of
// CPU, memory and devices, price per hour over every device — can overflow int64: e.g.
// 200,000 x kMaxMemory < 2^58 and 2,000,000 x kMaxMilli < 2^61.
inline constexpr Milli kMaxMilli = int64_t{1000000000} * 1000;      // 10^9 units
inline constexpr MiB kMaxMemory = int64_t{1} << 40;                 // 1024Pi (1 EiB)
inline constexpr Mbps kMaxBandwidth = int64_t{1000000000} * 1000;   // 10^6 Tbps
inline constexpr Millis kMaxDuration = int64_t{100000} * 86400000;  // 100,000 days

// Every parser rejects negative values and values above its kMax* bound, naming the bound.
//
// "1.5" -> 1500, "250m" -> 250, "2" -> 2000. At most three decimals. Non-negative.
Result<Milli> ParseMilli(std::string_view text);
// "80Gi", "512Mi", "2Ti", "1.5Gi", "100G" (decimal), bare numbers are MiB. Non-negative.
Result<MiB> ParseMemory(std::string_view text);
// "400Gbps", "100Mbps", "10Gbit/s", "25GB/s" (bytes), "1Tbps". Non-negative.
Result<Mbps> ParseBandwidth(std::string_view text);
// "90s", "1.5h", "30m", "250ms", "2d"; a bare number is seconds. Non-negative.
Result<Millis> ParseDuration(std::string_view text);

// Renderers that round-trip through the parsers above.
std::string FormatMilli(Milli v);      // 1500 -> "1.5", 2000 -> "2"
std::string FormatMemory(MiB v);       // 81920 -> "80Gi", 1536 -> "1.5Gi"
std::string FormatBandwidth(Mbps v);   // 400000 -> "400Gbps"
std::string FormatDuration(Millis v);  // 5400000 -> "90m", 1500 -> "1500ms"

}  // namespace tessera
