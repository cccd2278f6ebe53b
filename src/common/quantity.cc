#include "common/quantity.h"

#include <array>
#include <cctype>
#include <limits>

namespace tessera {
namespace {

// 128-bit intermediates keep unit conversions exact (GCC/Clang extension).
__extension__ typedef __int128 Int128;

// A non-negative decimal literal: `digits / 10^decimals`.
struct Decimal {
  Int128 digits = 0;
  int decimals = 0;
};

// Splits "12.5Gi" into the number and the unit suffix. Rejects signs, exponents and garbage.
Result<Decimal> ParseNumberPrefix(std::string_view text, std::string_view* unit,
                                  std::string_view what) {
  Decimal d;
  size_t i = 0;
  bool any_digit = false;
  bool seen_dot = false;
  if (!text.empty() && text[0] == '-') {
    return InvalidArgument(std::string(what) + " must not be negative, got \"" + std::string(text) +
                           "\"");
  }
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c >= '0' && c <= '9') {
      any_digit = true;
      if (d.digits > (Int128{1} << 60) || d.decimals > 18) {
        return InvalidArgument(std::string(what) + " is too large: \"" + std::string(text) + "\"");
      }
      d.digits = d.digits * 10 + (c - '0');
      if (seen_dot) ++d.decimals;
    } else if (c == '.' && !seen_dot) {
      seen_dot = true;
    } else {
      break;
    }
  }
  if (!any_digit) {
    return InvalidArgument("expected " + std::string(what) + ", got \"" + std::string(text) + "\"");
  }
  std::string_view rest = text.substr(i);
  while (!rest.empty() && rest.front() == ' ')
    rest.remove_prefix(1);
  *unit = rest;
  return d;
}

Int128 Pow10(int n) {
  Int128 p = 1;
  for (int i = 0; i < n; ++i)
    p *= 10;
  return p;
}

// value = d * numerator / denominator, rounded to nearest; an error above `max` (rendered as
// `max_text` in the message).
Result<int64_t> Scale(const Decimal& d, Int128 numerator, Int128 denominator, std::string_view text,
                      std::string_view what, int64_t max, std::string_view max_text) {
  Int128 den = denominator * Pow10(d.decimals);
  Int128 num = d.digits * numerator;
  Int128 v = (num + den / 2) / den;
  if (v > max) {
    return InvalidArgument(std::string(what) + " is too large: \"" + std::string(text) +
                           "\" (at most " + std::string(max_text) + ")");
  }
  return static_cast<int64_t>(v);
}

struct Unit {
  std::string_view name;
  Int128 numerator;
  Int128 denominator;
};

Result<int64_t> ParseWithUnits(std::string_view text, std::string_view what, const Unit* units,
                               size_t n_units, std::string_view expected, int64_t max,
                               std::string_view max_text) {
  std::string_view unit;
  auto d = ParseNumberPrefix(text, &unit, what);
  if (!d.ok()) return d.status();
  for (size_t i = 0; i < n_units; ++i) {
    if (unit == units[i].name) {
      return Scale(*d, units[i].numerator, units[i].denominator, text, what, max, max_text);
    }
  }
  return InvalidArgument("bad unit \"" + std::string(unit) + "\" in " + std::string(what) + " \"" +
                         std::string(text) + "\"; expected " + std::string(expected));
}

}  // namespace

Result<Milli> ParseMilli(std::string_view text) {
  std::string_view unit;
  auto d = ParseNumberPrefix(text, &unit, "a number");
  if (!d.ok()) return d.status();
  if (unit == "m") {
    if (d->decimals != 0) {
      return InvalidArgument("milli-units must be whole, got \"" + std::string(text) + "\"");
    }
    return Scale(*d, 1, 1, text, "a number", kMaxMilli, "1000000000");
  }
  if (!unit.empty()) {
    return InvalidArgument("expected a number such as 2, 0.5 or 500m, got \"" + std::string(text) +
                           "\"");
  }
  if (d->decimals > 3) {
    return InvalidArgument("at most three decimals are supported, got \"" + std::string(text) +
                           "\"");
  }
  return Scale(*d, 1000, 1, text, "a number", kMaxMilli, "1000000000");
}

Result<MiB> ParseMemory(std::string_view text) {
  constexpr Int128 kKi = 1024, kMi = kKi * 1024, kGi = kMi * 1024, kTi = kGi * 1024,
                   kPi = kTi * 1024;
  static const Unit kUnits[] = {
      {"", 1, 1},
      {"Mi", 1, 1},
      {"MiB", 1, 1},
      {"Ki", 1, 1024},
      {"KiB", 1, 1024},
      {"Gi", 1024, 1},
      {"GiB", 1024, 1},
      {"Ti", kTi / kMi, 1},
      {"TiB", kTi / kMi, 1},
      {"Pi", kPi / kMi, 1},
      {"PiB", kPi / kMi, 1},
      {"K", 1000, kMi},
      {"KB", 1000, kMi},
      {"M", 1000000, kMi},
      {"MB", 1000000, kMi},
      {"G", 1000000000, kMi},
      {"GB", 1000000000, kMi},
      {"T", 1000000000000, kMi},
      {"TB", 1000000000000, kMi},
      {"P", 1000000000000000, kMi},
      {"PB", 1000000000000000, kMi},
  };
  (void)kGi;
  return ParseWithUnits(text, "a memory size", kUnits, std::size(kUnits),
                        "Ki, Mi, Gi, Ti, Pi (binary), K, M, G, T, P (decimal) or none (MiB)",
                        kMaxMemory, "1024Pi");
}

Result<Mbps> ParseBandwidth(std::string_view text) {
  static const Unit kUnits[] = {
      {"Kbps", 1, 1000},   {"Mbps", 1, 1},   {"Gbps", 1000, 1},   {"Tbps", 1000000, 1},
      {"Kbit/s", 1, 1000}, {"Mbit/s", 1, 1}, {"Gbit/s", 1000, 1}, {"Tbit/s", 1000000, 1},
      {"KB/s", 8, 1000},   {"MB/s", 8, 1},   {"GB/s", 8000, 1},   {"TB/s", 8000000, 1},
  };
  return ParseWithUnits(text, "a bandwidth", kUnits, std::size(kUnits),
                        "Kbps, Mbps, Gbps, Tbps (bits) or KB/s, MB/s, GB/s, TB/s (bytes)",
                        kMaxBandwidth, "1000000Tbps");
}

Result<Millis> ParseDuration(std::string_view text) {
  static const Unit kUnits[] = {
      {"", 1000, 1},     {"ms", 1, 1},      {"s", 1000, 1},     {"m", 60000, 1},
      {"min", 60000, 1}, {"h", 3600000, 1}, {"d", 86400000, 1}, {"w", 604800000, 1},
  };
  return ParseWithUnits(text, "a duration", kUnits, std::size(kUnits),
                        "ms, s, m, h, d, w or none (seconds)", kMaxDuration, "100000d");
}

namespace {

// Renders v / divisor with up to three decimals and no trailing zeros.
std::string Fixed(int64_t v, int64_t divisor) {
  std::string out = std::to_string(v / divisor);
  int64_t frac = v % divisor;
  if (frac == 0) return out;
  // Render up to 3 decimals of the fraction.
  int64_t scaled = frac * 1000 / divisor;
  if (scaled * divisor != frac * 1000) return "";  // not representable in 3 decimals
  std::string digits = std::to_string(scaled);
  while (digits.size() < 3)
    digits.insert(digits.begin(), '0');
  while (!digits.empty() && digits.back() == '0')
    digits.pop_back();
  return out + "." + digits;
}

}  // namespace

std::string FormatMilli(Milli v) {
  if (v < 0) return "-" + FormatMilli(-v);
  return Fixed(v, 1000);
}

std::string FormatMemory(MiB v) {
  if (v < 0) return "-" + FormatMemory(-v);
  static constexpr std::array<std::pair<int64_t, const char*>, 3> kUnits = {
      {{int64_t{1024} * 1024 * 1024, "Pi"}, {int64_t{1024} * 1024, "Ti"}, {1024, "Gi"}}};
  for (auto [div, name] : kUnits) {
    if (v >= div) {
      std::string s = Fixed(v, div);
      if (!s.empty()) return s + name;
    }
  }
  return std::to_string(v) + "Mi";
}

std::string FormatBandwidth(Mbps v) {
  if (v >= 1000000 && v % 1000000 == 0) return std::to_string(v / 1000000) + "Tbps";
  if (v >= 1000 && v % 1000 == 0) return std::to_string(v / 1000) + "Gbps";
  return std::to_string(v) + "Mbps";
}

std::string FormatDuration(Millis v) {
  if (v == 0) return "0s";
  static constexpr std::array<std::pair<int64_t, const char*>, 4> kUnits = {
      {{86400000, "d"}, {3600000, "h"}, {60000, "m"}, {1000, "s"}}};
  for (auto [div, name] : kUnits) {
    if (v % div == 0) return std::to_string(v / div) + name;
  }
  return std::to_string(v) + "ms";
}

Micro CostOver(Micro per_hour, Millis ms) {
  // The product needs more than 64 bits: a rate of 10^10 micro-units an hour over a year of
  // milliseconds is 3 x 10^20.
  constexpr Int128 kHour = 3600 * 1000;
  return static_cast<Micro>((static_cast<Int128>(per_hour) * ms + kHour / 2) / kHour);
}

}  // namespace tessera
