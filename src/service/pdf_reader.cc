#include "service/pdf_reader.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <nlohmann/json.hpp>
#include <string_view>

#include "jobs/outcome.h"
#include "service/job_process.h"
#include "service/log_buffer.h"
#include "sys/file_io.h"
#include "validate/text.h"

namespace airlock::service {
namespace {

using nlohmann::json;

constexpr uint64_t kTextBytes = 1 << 20;
// pdfinfo (the facts, per-page sizes of the first 1000 pages, JavaScript,
// URLs), pdfdetach (embedded files), the scan for active content, then
// pdftotext (UTF-8, no page-break characters), quietly. Any step failing
// fails the reader: nothing is guessed.
constexpr const char* kScript =
    "set -e; d=/inputs/doc.pdf; "
    "pdfinfo $d > /output/info.txt; "
    "pdfinfo -f 1 -l 1000 $d > /output/pages.txt; "
    "pdfinfo -js $d > /output/js.txt; "
    "pdfinfo -url $d > /output/urls.txt; "
    "pdfdetach -list $d > /output/attachments.txt; "
    "python3 /inputs/pdf_actions.py $d > /output/actions.txt; "
    "pdftotext -q -enc UTF-8 -nopgbrk $d /output/text.txt";
constexpr int kOutputs = 7;

std::vector<std::string> run_args(const PdfReaderSetup& s, const std::string& dir) {
  std::vector<std::string> args = {
      "run", "--quiet", "--state-dir", s.state_dir, "--record", dir + "/record.json",
      "--output-dir", dir + "/out", "--image", s.image,
      "--timeout", "20", "--cpu-time", "10", "--memory", std::to_string(256 << 20), "--pids", "8",
      "--output-max-files", std::to_string(kOutputs), "--output-max-size", std::to_string(kTextBytes),
      "--output-max-total", std::to_string(kOutputs * kTextBytes), "--output-types", "text",
      "--input", dir + "/doc.pdf", "--input", dir + "/pdf_actions.py"};
  args.insert(args.end(), s.image_args.begin(), s.image_args.end());
  args.insert(args.end(), {"--", "/bin/sh", "-c", kScript});
  return args;
}

Result<validate::PdfFacts> read_one(const PdfReaderSetup& setup, const std::string& pdf_path, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir + "/out", ec);
  if (ec) return fail("pdf reader: create " + dir + ": " + ec.message());
  // A copy under a fixed name: the output's own name is the job's choice.
  std::filesystem::copy_file(pdf_path, dir + "/doc.pdf", ec);
  if (ec) return fail("pdf reader: copy the PDF: " + ec.message());
  if (auto s = sys::write_file_atomic(dir + "/pdf_actions.py", pdf_actions_script()); !s)
    return fail("pdf reader: write the scan script: " + s.error().message());
  auto process = JobProcess::spawn(setup.airlock_binary, run_args(setup, dir));
  if (!process) return fail("pdf reader: start airlock run: " + process.error().message());
  LogBuffer log(64 << 10);
  auto status = process->pump_and_wait(log);
  auto text = sys::read_file(dir + "/record.json", 16 << 20);
  json rec = text ? json::parse(*text, nullptr, false) : json();
  if (!rec.is_object())
    return fail("pdf reader: airlock run ended with status " + std::to_string(status ? *status : -1) +
                " and wrote no record");
  std::string outcome = rec.value("outcome", "");
  if (outcome != jobs::outcome_name(jobs::Outcome::kSucceeded)) {
    std::string why = rec.value("reason", "");
    if (rec.contains("stderr") && rec["stderr"].is_object()) {
      // The end of poppler's complaints, where it says why it gave up.
      std::string err = rec["stderr"].value("text", "");
      if (err.size() > 240) err = "..." + err.substr(err.size() - 240);
      if (!err.empty()) why += (why.empty() ? "" : "; stderr: ") + err;
    }
    return fail("the PDF reader (poppler, qpdf) in its sandbox ended as " + outcome +
                (why.empty() ? "" : ": " + validate::printable(why, 400, false)));
  }
  auto info = sys::read_file(dir + "/out/info.txt", 64 << 10);
  if (!info) return fail("pdf reader: pdfinfo wrote no readable output");
  auto pages = pages_from_pdfinfo(*info);
  if (!pages) return std::unexpected(pages.error());
  auto body = sys::read_file(dir + "/out/text.txt", kTextBytes);
  if (!body) return fail("pdf reader: pdftotext wrote no readable text");
  validate::PdfFacts facts{*pages, std::move(*body)};
  auto read = [&](const char* name) { return sys::read_file(dir + "/out/" + name, kTextBytes); };
  auto sizes = read("pages.txt");
  auto js = read("js.txt");
  auto urls = read("urls.txt");
  auto attachments = read("attachments.txt");
  auto actions = read("actions.txt");
  if (!sizes || !js || !urls || !attachments || !actions) return fail("pdf reader: a step wrote no readable output");
  if (auto s = facts_from_pdfinfo(*sizes, facts); !s) return std::unexpected(s.error());
  if (auto s = embedded_from_pdfdetach(*attachments, facts); !s) return std::unexpected(s.error());
  urls_from_pdfinfo(*urls, facts);
  if (auto s = actions_from_scan(*actions, *js, facts); !s) return std::unexpected(s.error());
  return facts;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  return lines;
}

std::string_view trim(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\r' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

}  // namespace

Result<uint64_t> pages_from_pdfinfo(const std::string& info) {
  std::string_view rest(info);
  std::optional<std::string_view> last;
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (line.starts_with("Pages:")) last = line.substr(6);
  }
  if (!last) return fail("pdfinfo reported no page count");
  std::string_view v = *last;
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\r')) v.remove_suffix(1);
  if (v.empty() || v.size() > 12 || v.find_first_not_of("0123456789") != std::string_view::npos)
    return fail("pdfinfo reported a page count that is not a number: " + validate::in_quotes(v, 40));
  return std::stoull(std::string(v));
}

Status facts_from_pdfinfo(const std::string& info, validate::PdfFacts& facts) {
  auto lines = lines_of(info);
  // Poppler's own lines start after the last "Pages:" line; what comes before may be the document's metadata.
  std::optional<size_t> start;
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].starts_with("Pages:")) start = i + 1;
  if (!start) return fail("pdfinfo reported no page count");
  bool saw_encrypted = false, saw_size = false;
  for (size_t i = *start; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (line.starts_with("Encrypted:")) {
      saw_encrypted = true;
      facts.encrypted = trim(line.substr(10)).starts_with("yes");
      continue;
    }
    // "Page    1 size:  612 x 792 pts (letter)"
    if (!line.starts_with("Page ") || line.find(" size:") == std::string_view::npos) continue;
    std::string_view rest = trim(line.substr(line.find(" size:") + 6));
    double w = 0, h = 0;
    if (std::sscanf(std::string(rest).c_str(), "%lf x %lf pts", &w, &h) != 2 || !(w >= 0) || !(h >= 0))
      return fail("pdfinfo reported a page size that is not understood: " + validate::in_quotes(rest, 60));
    if (!saw_size) facts.min_page_width = w, facts.min_page_height = h;
    saw_size = true;
    facts.max_page_width = std::max(facts.max_page_width, w);
    facts.max_page_height = std::max(facts.max_page_height, h);
    facts.min_page_width = std::min(facts.min_page_width, w);
    facts.min_page_height = std::min(facts.min_page_height, h);
  }
  if (!saw_encrypted) return fail("pdfinfo reported no Encrypted line");
  if (!saw_size && facts.pages > 0) return fail("pdfinfo reported no page size");
  return {};
}

Status embedded_from_pdfdetach(const std::string& list, validate::PdfFacts& facts) {
  auto lines = lines_of(list);
  uint64_t n = 0;
  if (lines.empty() || std::sscanf(std::string(lines[0]).c_str(), "%lu embedded files", &n) != 1 ||
      !lines[0].ends_with("embedded files"))
    return fail("pdfdetach -list reported no count of embedded files");
  facts.embedded_files = n;
  return {};
}

void urls_from_pdfinfo(const std::string& list, validate::PdfFacts& facts) {
  auto lines = lines_of(list);
  // "Page  Type          URL", then "   1  Annotation    http://...".
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = trim(lines[i]);
    if (line.empty()) continue;
    // Past the page number and the type, the rest of the line is the URL.
    for (int field = 0; field < 2 && !line.empty(); ++field) {
      size_t end = line.find_first_of(" \t");
      line = end == std::string_view::npos ? std::string_view() : trim(line.substr(end));
    }
    std::string_view target = line;
    if (target.empty()) continue;
    facts.urls.emplace_back(target);
    if (facts.urls.size() >= 100) break;
  }
}

Status actions_from_scan(const std::string& counts, const std::string& js, validate::PdfFacts& facts) {
  bool launch = false, script = false, uri = false;
  uint64_t uris = 0;
  for (auto line : lines_of(counts)) {
    uint64_t n = 0;
    std::string l(line);
    if (std::sscanf(l.c_str(), "launch %lu", &n) == 1) facts.launch_actions = n, launch = true;
    else if (std::sscanf(l.c_str(), "javascript %lu", &n) == 1) facts.javascript = n, script = true;
    else if (std::sscanf(l.c_str(), "uri %lu", &n) == 1) uris = n, uri = true;
  }
  if (!launch || !script || !uri) return fail("pdf reader: the scan for active content reported no counts");
  // pdfinfo -js prints the document's scripts; the scan counts /JS and /JavaScript names.
  if (facts.javascript == 0 && !trim(js).empty()) facts.javascript = 1;
  if (facts.urls.empty() && uris > 0) facts.urls.push_back("(a /URI action poppler does not list)");
  return {};
}

validate::PdfReader sandboxed_pdf_reader(PdfReaderSetup setup, std::map<std::string, std::string> outputs) {
  auto count = std::make_shared<int>(0);
  return [setup = std::move(setup), outputs = std::move(outputs), count](const std::string& name)
             -> Result<validate::PdfFacts> {
    auto it = outputs.find(name);
    if (it == outputs.end()) return fail("no accepted output named " + validate::in_quotes(name, 300));
    std::string dir = setup.scratch_dir + "/pdf-" + std::to_string((*count)++);
    auto facts = read_one(setup, it->second, dir);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return facts;
  };
}

}  // namespace airlock::service
