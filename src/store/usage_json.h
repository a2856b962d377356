// Pure: the figures the usage report reads out of stored JSON (records,
// requests, session calls), read in C++ so that the store's SQL is the same
// on SQLite and PostgreSQL. Text that is not JSON counts as nothing, so one
// odd row cannot fail the report.
#pragma once

#include <string>
#include <vector>

namespace airlock::store {

// A closed session's usage: its record's "usage" object with "egress_bytes"
// set to what its gateway carried both ways (bytes_up + bytes_down of the
// attempts of its "network" events). "{}" when the record is not JSON.
std::string closed_session_usage(const std::string& record_json);

// An open session's usage so far, over its ended calls:
// {"cpu_ms": sum of usage.cpu_ms, "peak_memory_bytes": max of usage.peak_memory_bytes}.
std::string open_session_usage(const std::vector<std::string>& call_jsons);

// The string at `pointer` ("/image", "/image/name") of `json`; "" when the
// text is not JSON, the value is missing or it is not a string.
std::string stored_string_at(const std::string& json, const char* pointer);

}  // namespace airlock::store
