// Small text helpers for error messages ("did you mean ...?").
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

// Edit distance (insert, delete, substitute, swap of neighbours), case-insensitive.
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `word` if it is close enough to be a likely typo, else "".
std::string ClosestMatch(std::string_view word, std::span<const std::string_view> candidates);

// "a,,b" -> {"a", "", "b"}; "" -> {""}. Empty parts are kept so callers can reject them.
std::vector<std::string> SplitCommas(std::string_view text);

// Joins names with ", " (for "expected one of a, b, c").
std::string JoinNames(std::span<const std::string_view> items);
std::string JoinNames(std::span<const std::string> items);

}  // namespace tessera
