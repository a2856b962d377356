// File types decided by content, never by name.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "base/result.h"

namespace airlock::workspace {

enum class FileType { kText, kCsv, kTsv, kJson, kPng, kJpeg, kPdf, kSvg, kBinary };

// "text", "csv", "tsv", "json", "png", "jpeg", "pdf", "svg", "binary".
std::string_view type_name(FileType type);
std::optional<FileType> type_from_name(std::string_view name);

// Classifies a whole file's content. Text types require valid UTF-8; CSV/TSV
// require a consistent field count on every line (quoted fields respected);
// JSON requires a parse; PNG/JPEG/PDF check their signatures and trailers.
FileType detect_type(std::string_view content);

using TypeSet = std::set<FileType>;
// Default admission / output types: text, csv, tsv, json, png, jpeg, pdf (+svg for outputs).
TypeSet default_input_types();
TypeSet default_output_types();

}  // namespace airlock::workspace
