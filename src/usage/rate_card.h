// The rate card of the service configuration ([rates], docs/usage.md) and
// what a piece of work costs under it. Pure: exact integer arithmetic
// (usage/money.h). GB is 10^9 bytes; a month is 30 days.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "usage/money.h"

namespace airlock::usage {

struct RateCard {
  std::string currency = "GBP";
  // Per unit, in pico-units of the currency. Defaults are placeholders of
  // the order of public cloud prices; an operator sets their own.
  Pico vcpu_second = 11'000'000;          // 0.000011 per second of CPU time
  Pico memory_gb_second = 1'200'000;      // 0.0000012 per GB of peak memory held for a second
  Pico storage_gb_month = 20'000'000'000; // 0.02 per GB kept for 30 days
  Pico egress_gb = 70'000'000'000;        // 0.07 per GB through the egress gateway
  Pico session_hour = 10'000'000'000;     // 0.01 per hour a session is open, idle or not
};

// The [rates] table as key -> decimal text: currency (3 upper-case letters),
// vcpu_second, memory_gb_second, storage_gb_month, egress_gb, session_hour.
// Unknown keys and inexact numbers are errors.
Result<RateCard> parse_rate_card(const std::map<std::string, std::string>& fields, RateCard base = {});
nlohmann::json to_json(const RateCard& card);  // rates as decimal strings

// What one job, session or stored object used. Memory and storage are
// bytes held times milliseconds (peak memory over the wall time).
struct Figures {
  uint64_t wall_ms = 0, cpu_ms = 0, egress_bytes = 0, session_ms = 0;
  unsigned __int128 memory_byte_ms = 0, storage_byte_ms = 0;
  Figures& operator+=(const Figures& o);
};

struct Cost {
  Pico cpu = 0, memory = 0, storage = 0, egress = 0, session = 0;
  Pico total() const { return cpu + memory + storage + egress + session; }
  Cost& operator+=(const Cost& o);
};

// Each part rounded half up to a pico-unit.
Cost cost_of(const Figures& f, const RateCard& card);

// Figures as JSON: integers, and GB-seconds / GB-hours as decimal strings (6 places).
nlohmann::json to_json(const Figures& f);
// Each part and the total as decimal strings with 6 places, and the currency.
nlohmann::json to_json(const Cost& c, const RateCard& card);

}  // namespace airlock::usage
