// Usage turned into items and groups (docs/usage.md): one item per job and
// session, and one per stored object and UTC day it was kept in the window;
// grouped by tenant, day or image, each group with its figures and its cost
// under the rate card. Pure: the store hands over rows, nothing here reads
// a clock or a file.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "usage/rate_card.h"

namespace airlock::usage {

// "2026-11-30T03:00:00.123Z" (fraction optional, Z only) -> ms since the epoch.
std::optional<int64_t> parse_time_ms(std::string_view rfc3339);
std::string day_of(int64_t ms);  // "2026-11-30" (UTC)

enum class ItemKind { kJob, kSession, kStorage };

struct Item {
  ItemKind kind = ItemKind::kJob;
  std::string id, tenant, image, day, outcome;  // outcome: a job's, or a session's close reason
  Figures figures;
};

// A finished job from its stored record: wall and CPU ms and peak memory from
// "usage", egress from the bytes of every "network" attempt (up and down).
// Every outcome counts (failed, cancelled, restored work alike); missing or
// malformed figures count as 0.
Item job_item(const std::string& id, const std::string& tenant, const std::string& finished_at,
              const std::string& outcome, const nlohmann::json& record);

// A session from created_at to ended_at (its close, or now while open):
// the whole time counts, idle or not. `usage` is the record's usage object
// (cpu_ms, peak_memory_bytes), `image` the image its request named.
Item session_item(const std::string& id, const std::string& tenant, const std::string& created_at,
                  const std::string& ended_at, const std::string& reason, const std::string& image,
                  const nlohmann::json& usage);

// `bytes` kept from `since` until `until` (ms), clipped to [window_from,
// window_to), one item per UTC day it touches.
std::vector<Item> storage_items(const std::string& id, const std::string& tenant, const std::string& image,
                                uint64_t bytes, int64_t since, int64_t until, int64_t window_from,
                                int64_t window_to);

enum class GroupBy { kTenant, kDay, kImage };
Result<GroupBy> parse_group_by(std::string_view text);  // "tenant" | "day" | "image"

struct Group {
  std::string key;
  uint64_t jobs = 0, sessions = 0;
  Figures figures;
  Cost cost;  // the sum of its items' costs
};

// Groups in key order; `total` over all of them.
std::vector<Group> group_items(const std::vector<Item>& items, GroupBy by, const RateCard& card);
Group total_of(const std::vector<Group>& groups);
nlohmann::json to_json(const Group& g, const RateCard& card);

}  // namespace airlock::usage
