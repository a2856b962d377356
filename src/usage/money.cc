#include "usage/money.h"

#include <algorithm>
#include <limits>

#include "base/check.h"

namespace airlock::usage {

namespace {

constexpr Pico kMaxPico = std::numeric_limits<Pico>::max();

}  // namespace

Result<Pico> parse_decimal(std::string_view text, const std::string& what) {
  auto bad = [&](const std::string& why) {
    return fail(ErrorKind::kInvalid, what + ": " + why + " (write it as a decimal string, e.g. \"0.0000125\")");
  };
  if (text.empty()) return bad("empty");
  Pico whole = 0, frac = 0;
  int frac_digits = 0;
  bool dot = false, digit = false;
  for (char ch : text) {
    if (ch == '.') {
      if (dot) return bad("more than one '.'");
      dot = true;
      continue;
    }
    if (ch < '0' || ch > '9') return bad("'" + std::string(text) + "' is not a decimal number");
    digit = true;
    if (dot) {
      if (++frac_digits > 12) return bad("more than 12 decimal places");
      frac = frac * 10 + (ch - '0');
    } else {
      whole = whole * 10 + (ch - '0');
      if (whole > 1'000'000) return bad("more than 1000000");
    }
  }
  if (!digit) return bad("no digits");
  for (int i = frac_digits; i < 12; ++i) frac *= 10;
  return whole * kPicoPerUnit + frac;
}

std::string format_decimal(Pico amount, int places) {
  AIRLOCK_CHECK(places >= 0 && places <= 12);
  bool negative = amount < 0;
  unsigned __int128 v = negative ? static_cast<unsigned __int128>(-amount) : static_cast<unsigned __int128>(amount);
  unsigned __int128 step = 1;
  for (int i = places; i < 12; ++i) step *= 10;
  v = (v + step / 2) / step;  // half up; step is 1 for 12 places
  unsigned __int128 unit = 1;
  for (int i = 0; i < places; ++i) unit *= 10;
  unsigned __int128 whole = v / unit, frac = v % unit;
  std::string w;
  do {
    w.insert(w.begin(), static_cast<char>('0' + static_cast<int>(whole % 10)));
    whole /= 10;
  } while (whole);
  std::string f(static_cast<size_t>(places), '0');
  for (int i = places - 1; i >= 0; --i, frac /= 10) f[static_cast<size_t>(i)] = static_cast<char>('0' + static_cast<int>(frac % 10));
  return (negative ? "-" : "") + w + (places ? "." + f : "");
}

Pico scale(unsigned __int128 quantity, Pico rate, unsigned __int128 divisor) {
  AIRLOCK_CHECK(rate >= 0 && divisor > 0);
  unsigned __int128 product;
  if (__builtin_mul_overflow(quantity, static_cast<unsigned __int128>(rate), &product)) return kMaxPico;
  unsigned __int128 q = product / divisor, r = product % divisor;
  if (r >= divisor - r) ++q;  // half up, without overflowing 2 * r
  return q > static_cast<unsigned __int128>(kMaxPico) ? kMaxPico : static_cast<Pico>(q);
}

}  // namespace airlock::usage
