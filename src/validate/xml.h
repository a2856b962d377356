// A bounded XML reader for reports a job writes (JUnit XML): checks that a
// document is well-formed and hands its elements to a callback. It refuses
// what makes XML dangerous to a host: any DOCTYPE or ENTITY declaration (so
// no DTD, no external or recursive entities: "billion laughs" cannot start),
// entities other than the five predefined ones, nesting deeper than a bound,
// documents larger than a bound. It runs in one pass without recursion, in
// time linear in the document and memory bounded by the depth limit.
// Pure logic over bytes the caller hands in.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace airlock::validate {

struct XmlLimits {
  size_t max_bytes = 16 << 20;
  size_t max_depth = 256;
  size_t max_attributes = 256;  // on one element
};

struct XmlAttribute {
  std::string_view name;
  std::string value;  // references (&amp; &#10; ...) resolved
};

// An element's start: its name, attributes and depth (the root is 1).
struct XmlStart {
  std::string_view name;
  const std::vector<XmlAttribute>& attributes;
  size_t depth;
};

struct XmlEvents {
  std::function<Status(const XmlStart&)> start;  // may stop the walk with an error
  std::function<Status(std::string_view name, size_t depth)> end;
};

// Reads a UTF-8 document: an optional BOM and XML declaration (version 1.0
// or 1.1, encoding UTF-8 if named), comments, processing instructions,
// one root element with attributes, character data, CDATA sections and
// references. Errors name the byte offset: "byte 120: a DOCTYPE is refused
// (no DTD or entity declarations)", "byte 7: end tag </b> does not match <a>".
Status read_xml(std::string_view doc, const XmlEvents& events = {}, const XmlLimits& limits = {});

}  // namespace airlock::validate
