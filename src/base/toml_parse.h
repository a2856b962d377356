// toml11's parser is instantiated once, in toml_parse.cc, instead of in every
// file that reads TOML: it was half of such a file's compile time
// (docs/performance.md, "First start"). Include this instead of <toml.hpp>.
#pragma once

#include <istream>
#include <string>

#include <toml.hpp>

extern template toml::value toml::parse<toml::discard_comments, std::unordered_map, std::vector>(
    std::istream& is, const std::string& fname);
