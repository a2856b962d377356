// Office files (xlsx, docx, pptx) as what they are: ZIP packages (Open
// Packaging Conventions) whose parts link to each other through relationship
// parts (`_rels/*.rels`). The office check refuses macros (a vbaProject.bin
// part), workbook links to other files (`externalLinks/` parts) and any
// relationship that points outside the package (TargetMode="External":
// external links, remote templates, linked images, hyperlinks unless allowed).
// Pure logic over a scan of the package (archive_scan.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "validate/archive_scan.h"

namespace airlock::validate {

struct Relationship {
  std::string id, type, target;
  bool external = false;
};

// The <Relationship> elements of a relationships part, read by the bounded
// XML reader (no DTD, no entities). Other elements are ignored; a part that
// is not well-formed XML is an error.
Result<std::vector<Relationship>> parse_relationships(std::string_view xml);

// Why the package is refused, or nullopt: not an OPC package (no
// [Content_Types].xml), a macro part, an externalLinks part, an external
// relationship (a hyperlink one passes when allow_hyperlinks), or a
// relationships part that does not parse.
std::optional<std::string> office_refusal(const ArchiveScan& scan, bool allow_hyperlinks);

}  // namespace airlock::validate
