// What a sandbox writes on its data request channel (src/requests/), read as
// the host reads it: the bytes arrive in chunks of sizes the input chooses,
// under small limits, so that the byte, line and channel limits are all hit.
// Properties: the reader never keeps more than the limits allow, ids run
// r1, r2, ... in order, and every accepted request is valid by the rules a
// single line is checked with.
#include <nlohmann/json.hpp>

#include "fuzz/fuzz.h"
#include "requests/data_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in = airlock::fuzz::text(data, size);
  size_t chunk = 1;
  if (!in.empty()) {
    chunk = 1 + static_cast<unsigned char>(in[0]) % 64;
    in.remove_prefix(1);
  }
  airlock::requests::Limits limits;
  limits.requests = 3;
  limits.bytes_per_request = 200;
  limits.channel_bytes = 2000;
  airlock::requests::RequestReader reader(limits);
  for (size_t at = 0; at < in.size() && !reader.closed(); at += chunk)
    if (!reader.feed(in.substr(at, chunk))) break;
  reader.finish();

  const auto& accepted = reader.requests();
  AIRLOCK_CHECK(accepted.size() <= limits.requests);
  AIRLOCK_CHECK(reader.refused().size() <= limits.requests + 2);
  AIRLOCK_CHECK(reader.bytes_read() <= in.size());
  for (size_t i = 0; i < accepted.size(); ++i) {
    const auto& r = accepted[i];
    AIRLOCK_CHECK(r.id == airlock::requests::request_id(i + 1));
    AIRLOCK_CHECK(airlock::requests::valid_request_name(r.name));
    AIRLOCK_CHECK(!r.why.empty());
    auto params = nlohmann::json::parse(r.params_json, nullptr, false);
    AIRLOCK_CHECK(params.is_object());
  }

  // The whole input as one line: accepted only if the reader's rules hold.
  auto one = airlock::requests::parse_data_request(in, "r1", limits);
  if (one) {
    AIRLOCK_CHECK(in.size() <= limits.bytes_per_request);
    AIRLOCK_CHECK(airlock::requests::valid_request_name(one->name));
  }
  return 0;
}
