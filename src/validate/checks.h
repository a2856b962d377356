// Semantic checks an application declares for a job ("checks" in the
// request), run by airlock on the host after the job, on the accepted outputs
// and the admitted inputs. Pure logic: files arrive through FileSource.
// The kinds and their fields are documented in docs/checks.md.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "validate/archive_scan.h"
#include "validate/csv.h"

namespace airlock::validate {

inline constexpr size_t kMaxChecks = 32;

// One declared check: `spec` is the whole element of the "checks" array
// (including "kind"); `label` is spec["name"], or kind + "#" + index.
struct Check {
  std::string kind;
  nlohmann::json spec;
  std::string label;
};

// Parses and validates the shapes of the checks: null means none; otherwise
// an array of at most kMaxChecks objects, each of a known kind with exactly
// its fields, well typed, and distinct labels. A JSON Schema is checked here
// too (unsupported keywords, bad patterns, dangling $ref). The error names the
// check index and field: `checks[2].tolerance: must be a non-negative number`.
Result<std::vector<Check>> parse_checks(const nlohmann::json& checks);

struct CheckResult {
  std::string label;
  std::string kind;
  bool passed = false;
  // One line, valid UTF-8, at most 2000 bytes, e.g. "sum of summary.csv:total =
  // 40062.50, sum of sales_jan.csv:revenue + sales_feb.csv:revenue = 40062.50
  // (tolerance 0.01)".
  std::string detail;
  // archive and office checks: every member read, [{"name", "kind", "size",
  // "sha256"}] (null for the other kinds).
  nlohmann::json members;
};

// Opens a file by name, to be read in pieces; nullopt when there is no such
// (accepted) file. Checks stream over files: none is read whole but a JSON
// document, within CheckLimits::json_bytes.
using FileSource = std::function<std::optional<ByteSource>(const std::string& name)>;

// What the checks of one job may make the host spend. CPU time counts every
// check of the job together, on the thread that runs them: a check that finds
// it used up fails with "check stopped: CPU budget of N ms used", and so does
// every check after it. Memory is bounded per check by what it may hold.
struct CheckLimits {
  uint64_t cpu_ms = 5000;
  size_t record_bytes = 1 << 20;  // one CSV record
  size_t json_bytes = 4 << 20;    // a document json_schema parses whole
  size_t image_bytes = 1 << 20;   // the start of an image, where its header is
  size_t xml_bytes = 16 << 20;    // a JUnit report a junit check reads whole
};

// What poppler found in a PDF output (docs/checks.md says why it runs in a
// sandbox and not in airlock's process).
struct PdfFacts {
  uint64_t pages = 0;
  std::string text;
  // What the check refuses unless its "allow" names it.
  uint64_t javascript = 0;      // JavaScript found (pdfinfo -js, and /JS in the document's objects)
  uint64_t launch_actions = 0;  // /Launch actions found in the document's objects
  std::vector<std::string> urls;  // URI targets (pdfinfo -url)
  uint64_t embedded_files = 0;    // pdfdetach -list
  bool encrypted = false;         // pdfinfo's "Encrypted:" line
  // The largest page width and height seen, in points (pdfinfo -f 1 -l N), and the smallest.
  double max_page_width = 0, max_page_height = 0, min_page_width = 0, min_page_height = 0;
};
// Reads the page count and text of the accepted output `name`; the caller
// provides it (the service runs pdfinfo and pdftotext in a sandbox). An empty
// function makes every pdf check fail with a clear reason.
using PdfReader = std::function<Result<PdfFacts>(const std::string& name)>;

// Walks the accepted output `name` as an archive (archive_scan.h) within the
// bounds; the caller provides it (the service runs libarchive in a confined
// child process, service/archive_reader.h). An empty function makes every
// archive and office check fail with a clear reason.
using ArchiveReader =
    std::function<Result<ArchiveScan>(const std::string& name, const ArchiveBounds&, const ArchiveScanOptions&)>;

// Runs every check, in order, each independently. A check that names a file
// that is not an accepted output fails with "no accepted output named X"; an
// input that was not admitted, with "no admitted input named X". A Check that
// did not come from parse_checks and is malformed fails with "invalid check: ...".
std::vector<CheckResult> run_checks(const std::vector<Check>& checks, const FileSource& outputs,
                                    const FileSource& inputs, const CheckLimits& limits = {},
                                    const PdfReader& pdf = {}, const ArchiveReader& archive = {});

// {"label": ..., "kind": ..., "passed": ..., "detail": ...} and "members" when there are.
nlohmann::json to_json(const CheckResult& r);

}  // namespace airlock::validate
