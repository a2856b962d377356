// File types decided by content, never by name.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "base/result.h"

namespace airlock::workspace {

enum class FileType { kText, kCsv, kTsv, kJson, kPng, kJpeg, kPdf, kSvg, kXml, kGitBundle, kArchive, kBinary };

// "text", "csv", "tsv", "json", "png", "jpeg", "pdf", "svg", "xml", "git-bundle", "archive", "binary".
std::string_view type_name(FileType type);
std::optional<FileType> type_from_name(std::string_view name);

// Classifies a whole file's content. Empty is text. Text types require valid
// UTF-8 (no overlongs or surrogates) with no NUL and no C0 control other than
// tab, LF, CR. CSV/TSV require the same field count > 1 on every non-empty
// line (RFC-4180 quoting). JSON requires a parse to an object or array. SVG
// requires an `<svg` root preceded only by a BOM, whitespace, an XML
// declaration, comments and a DOCTYPE without internal subset. PNG (IHDR
// first, IEND last), JPEG (FFD8FF..FFD9) and PDF (%PDF- .. %%EOF in the last
// 1 KiB) check their signatures and trailers. XML (a JUnit report, say) is text
// that the bounded reader of validate/xml.h accepts as a well-formed document
// (no DOCTYPE, no entities but the predefined ones, at most 256 levels deep,
// at most 16 MiB); text that fails it stays text. A git bundle (a coding job's
// repository: `git bundle create`) is the v2 or v3 header, its ref lines, a
// blank line and a pack ("PACK", version 2 or 3); git reads it inside the
// sandbox, the host never does. An archive is a ZIP (local header or empty
// end record first; docx and xlsx are ZIPs), a gzip stream or a tar (ustar
// magic at 257), by signature only: it is in no default set, a policy names
// it, and the archive and office checks look inside (docs/checks.md).
// Anything else is binary.
FileType detect_type(std::string_view content);

using TypeSet = std::set<FileType>;
// "text, csv, png" (or "none"), for messages.
std::string describe_types(const TypeSet& types);
// Default admission types: text, csv, tsv, json, png, jpeg, pdf, xml, git-bundle.
// Default output types: the same without git-bundle, with svg.
TypeSet default_input_types();
TypeSet default_output_types();

}  // namespace airlock::workspace
