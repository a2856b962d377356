// The PDF reader of the pdf check (docs/checks.md): poppler's pdfinfo and
// pdftotext, run on the output inside a sandbox of its own (`airlock run`:
// no network, its own namespaces, seccomp, a small memory, CPU, time and
// output budget), never in the service's process. A PDF is a large format with
// a long history of parser bugs; the one that reads a hostile file must not
// run as root on the host.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "validate/checks.h"

namespace airlock::service {

struct PdfReaderSetup {
  std::string airlock_binary;  // the executable that runs `airlock run`
  std::string state_dir;
  std::string scratch_dir;     // a directory of the job's that is removed with it
  std::string image = "host";  // the image with poppler-utils (pdf_check_image)
  std::vector<std::string> image_args;  // e.g. --image-dir DIR
};

// Reads the accepted outputs by name (name -> host path).
validate::PdfReader sandboxed_pdf_reader(PdfReaderSetup setup, std::map<std::string, std::string> outputs);

// The page count in pdfinfo's output: its last "Pages:" line. The document's
// own metadata (Title, Subject, ...) comes before it and may hold a forged
// "Pages:" line; what follows it (Encrypted, Page size, File size, ...) is not
// taken from the document's strings.
Result<uint64_t> pages_from_pdfinfo(const std::string& info);

// What else the reader's outputs say, each parsed only from poppler's own
// lines: the "Encrypted:" line and the "Page N size:" lines after the last
// "Pages:" line (`pdfinfo -f 1 -l 1000`), the count on the first line of
// `pdfdetach -list`, the URLs of `pdfinfo -url` (after its header line), the
// counts of pdf_actions.py. They fill `facts`.
Status facts_from_pdfinfo(const std::string& info, validate::PdfFacts& facts);
Status embedded_from_pdfdetach(const std::string& list, validate::PdfFacts& facts);
void urls_from_pdfinfo(const std::string& list, validate::PdfFacts& facts);
Status actions_from_scan(const std::string& counts, const std::string& js, validate::PdfFacts& facts);

// The text of src/service/pdf_actions.py (compiled in).
const std::string& pdf_actions_script();

}  // namespace airlock::service
