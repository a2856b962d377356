#include "base/toml_parse.h"

template toml::value toml::parse<toml::discard_comments, std::unordered_map, std::vector>(
    std::istream& is, const std::string& fname);
