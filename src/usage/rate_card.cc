#include "usage/rate_card.h"

#include <cctype>

namespace airlock::usage {

namespace {

constexpr unsigned __int128 kGb = 1'000'000'000;
constexpr unsigned __int128 kMonthMs = 30ull * 86'400'000;

std::string unscaled(unsigned __int128 byte_ms, unsigned __int128 unit_ms) {
  // byte-ms -> GB-units with 6 decimals: byte_ms / (1e9 * unit_ms), rounded.
  return format_decimal(scale(byte_ms, kPicoPerUnit, kGb * unit_ms), 6);
}

}  // namespace

Result<RateCard> parse_rate_card(const std::map<std::string, std::string>& fields, RateCard card) {
  const std::map<std::string, Pico RateCard::*> rates = {{"vcpu_second", &RateCard::vcpu_second},
                                                         {"memory_gb_second", &RateCard::memory_gb_second},
                                                         {"storage_gb_month", &RateCard::storage_gb_month},
                                                         {"egress_gb", &RateCard::egress_gb},
                                                         {"session_hour", &RateCard::session_hour}};
  for (const auto& [key, text] : fields) {
    if (key == "currency") {
      bool ok = text.size() == 3;
      for (char ch : text) ok = ok && std::isupper(static_cast<unsigned char>(ch));
      if (!ok) return fail(ErrorKind::kInvalid, "rates.currency: three upper-case letters (ISO 4217), e.g. \"GBP\"");
      card.currency = text;
      continue;
    }
    auto it = rates.find(key);
    if (it == rates.end())
      return fail(ErrorKind::kInvalid, "rates." + key +
                                           ": unknown (currency, vcpu_second, memory_gb_second, storage_gb_month, "
                                           "egress_gb, session_hour)");
    auto value = parse_decimal(text, "rates." + key);
    if (!value) return std::unexpected(value.error());
    card.*(it->second) = *value;
  }
  return card;
}

nlohmann::json to_json(const RateCard& c) {
  return {{"currency", c.currency},
          {"vcpu_second", format_decimal(c.vcpu_second, 12)},
          {"memory_gb_second", format_decimal(c.memory_gb_second, 12)},
          {"storage_gb_month", format_decimal(c.storage_gb_month, 12)},
          {"egress_gb", format_decimal(c.egress_gb, 12)},
          {"session_hour", format_decimal(c.session_hour, 12)}};
}

Figures& Figures::operator+=(const Figures& o) {
  wall_ms += o.wall_ms;
  cpu_ms += o.cpu_ms;
  egress_bytes += o.egress_bytes;
  session_ms += o.session_ms;
  memory_byte_ms += o.memory_byte_ms;
  storage_byte_ms += o.storage_byte_ms;
  return *this;
}

Cost& Cost::operator+=(const Cost& o) {
  cpu += o.cpu;
  memory += o.memory;
  storage += o.storage;
  egress += o.egress;
  session += o.session;
  return *this;
}

Cost cost_of(const Figures& f, const RateCard& card) {
  Cost c;
  c.cpu = scale(f.cpu_ms, card.vcpu_second, 1000);
  c.memory = scale(f.memory_byte_ms, card.memory_gb_second, kGb * 1000);
  c.storage = scale(f.storage_byte_ms, card.storage_gb_month, kGb * kMonthMs);
  c.egress = scale(f.egress_bytes, card.egress_gb, kGb);
  c.session = scale(f.session_ms, card.session_hour, 3'600'000);
  return c;
}

nlohmann::json to_json(const Figures& f) {
  return {{"wall_ms", f.wall_ms},
          {"cpu_ms", f.cpu_ms},
          {"memory_gb_s", unscaled(f.memory_byte_ms, 1000)},
          {"storage_gb_h", unscaled(f.storage_byte_ms, 3'600'000)},
          {"egress_bytes", f.egress_bytes},
          {"session_ms", f.session_ms}};
}

nlohmann::json to_json(const Cost& c, const RateCard& card) {
  return {{"currency", card.currency},       {"total", format_decimal(c.total(), 6)},
          {"cpu", format_decimal(c.cpu, 6)}, {"memory", format_decimal(c.memory, 6)},
          {"storage", format_decimal(c.storage, 6)}, {"egress", format_decimal(c.egress, 6)},
          {"session", format_decimal(c.session, 6)}};
}

}  // namespace airlock::usage
