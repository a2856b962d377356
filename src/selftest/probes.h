// The selftest's jobs, Python files embedded at build time (probes/*.py,
// through probes.cc.in). Each reads constants the selftest puts in front of
// it (with_constants), e.g. PORT = 4242.
#pragma once

#include <map>
#include <string>

namespace airlock::selftest {

// "analyst", "files", "network", "egress", "secrets", "cancel"; aborts for another name.
const std::string& probe_source(const std::string& name);

// `NAME = <JSON value>` lines (valid Python for numbers, strings and lists of
// them) in front of the probe's source.
std::string with_constants(const std::string& source, const std::map<std::string, std::string>& json_values);

}  // namespace airlock::selftest
