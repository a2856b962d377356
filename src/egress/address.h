// Which kind of address a name resolved to, for the gateway's check before it
// connects (docs/egress.md): the special-purpose ranges of the IANA registries
// of both families, in one table each (address.cc). An IPv6 form that carries
// an IPv4 address (IPv4-mapped, -translated and -compatible, NAT64, 6to4,
// Teredo, ISATAP) is judged by the address inside, so the IPv6 spelling of a
// private address is private too. Pure.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace airlock::egress {

enum class AddressClass {
  kPublic,
  kLoopback,
  kPrivate,  // RFC 1918, shared address space, unique local, site-local, local-use NAT64
  kLinkLocal,
  kReserved,  // documentation, benchmarking, protocol assignments, discard-only, ORCHID, 240/4, ...
  kUnspecified,  // 0.0.0.0/8 and ::
  kMulticast,
  kBroadcast,
};
std::string_view class_name(AddressClass c);

struct AddressInfo {
  AddressClass cls = AddressClass::kReserved;
  // Where the address is, for a refusal: "in 169.254.0.0/16 (link-local)", or
  // for a form "the NAT64 (64:ff9b::/96) form of 169.254.169.254, in
  // 169.254.0.0/16 (link-local)".
  std::string detail;
};

// A textual IPv4 or IPv6 address (no zone, no brackets); an error for
// anything else.
Result<AddressInfo> describe_address(std::string_view ip);
Result<AddressClass> classify_address(std::string_view ip);

}  // namespace airlock::egress
