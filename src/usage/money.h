// Money and rates as exact integers: amounts in pico-units of the currency
// (1e-12 GBP), never floating point, so a rate card is applied exactly and
// sums of costs equal the cost of the parts. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace airlock::usage {

using Pico = __int128;  // 1e-12 of the currency unit
inline constexpr int64_t kPicoPerUnit = 1'000'000'000'000;

// "0.0000125" -> 12'500'000 pico. Digits, at most one '.', at most 12
// fractional digits, no sign, at most 1e6 units: anything else is an error
// naming `what`.
Result<Pico> parse_decimal(std::string_view text, const std::string& what);

// `amount` with `places` decimals (0-12), rounded half up: (12'500'000, 6) -> "0.000013".
std::string format_decimal(Pico amount, int places);

// quantity * rate / divisor, rounded half up; saturates at the largest Pico
// rather than wrapping (no figure of a real machine comes near it).
Pico scale(unsigned __int128 quantity, Pico rate, unsigned __int128 divisor);

}  // namespace airlock::usage
