// Request heads the sandboxed code sends the egress gateway
// (src/egress/proxy_request.cc), and the head the gateway sends upstream
// instead. Properties: the upstream head has one request line, one Host
// header, no Transfer-Encoding, only Content-Length headers that give the
// length of the body the gateway forwards (the upstream must frame the body
// exactly as the policy judged it), and ends at its first blank line.
#include <optional>
#include <string>
#include <vector>

#include "base/strings.h"
#include "egress/proxy_request.h"
#include "fuzz/fuzz.h"

namespace egress = airlock::egress;

namespace {

// How many header lines of `head` are named `name` (lower case); their values in `values`.
size_t count_header(std::string_view head, std::string_view name,
                    std::vector<std::string>* values = nullptr) {
  size_t count = 0, pos = head.find("\r\n") + 2;
  while (pos < head.size()) {
    size_t end = head.find("\r\n", pos);
    std::string_view line = head.substr(pos, end - pos);
    pos = end + 2;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    if (airlock::ascii_lower(line.substr(0, colon)) != name) continue;
    ++count;
    std::string_view v = line.substr(colon + 1);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    if (values) values->emplace_back(v);
  }
  return count;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in = airlock::fuzz::text(data, size);
  size_t length = egress::head_length(in);
  auto request = egress::parse_proxy_request(length ? in.substr(0, length) : in);
  if (!request) return 0;
  (void)request->path();
  if (request->connect()) return 0;

  for (bool with_credential : {false, true}) {
    std::optional<egress::Credential> credential;
    if (with_credential) credential = egress::Credential{"Authorization", "Bearer s3cret-token"};
    std::string head = egress::upstream_head(*request, credential);
    AIRLOCK_CHECK(egress::head_length(head) == head.size());
    AIRLOCK_CHECK(count_header(head, "host") == 1);
    AIRLOCK_CHECK(count_header(head, "transfer-encoding") == 0);
    std::vector<std::string> lengths;  // digits only (parse_proxy_request), maybe "05"
    count_header(head, "content-length", &lengths);
    if (request->content_length > 0) AIRLOCK_CHECK(!lengths.empty());
    for (const auto& n : lengths) AIRLOCK_CHECK(std::stoull(n) == request->content_length);
    if (with_credential) AIRLOCK_CHECK(count_header(head, "authorization") == 1);
  }
  return 0;
}
