#include "service/pdf_reader.h"

#include <filesystem>
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
// pdfinfo, then pdftotext (UTF-8, no page-break characters), quietly.
constexpr const char* kScript =
    "pdfinfo /inputs/doc.pdf > /output/info.txt && "
    "pdftotext -q -enc UTF-8 -nopgbrk /inputs/doc.pdf /output/text.txt";

std::vector<std::string> run_args(const PdfReaderSetup& s, const std::string& dir) {
  std::vector<std::string> args = {
      "run", "--quiet", "--state-dir", s.state_dir, "--record", dir + "/record.json",
      "--output-dir", dir + "/out", "--image", s.image,
      "--timeout", "20", "--cpu-time", "10", "--memory", std::to_string(256 << 20), "--pids", "8",
      "--output-max-files", "2", "--output-max-size", std::to_string(kTextBytes),
      "--output-max-total", std::to_string(2 * kTextBytes), "--output-types", "text",
      "--input", dir + "/doc.pdf"};
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
    return fail("poppler in its sandbox ended as " + outcome +
                (why.empty() ? "" : ": " + validate::printable(why, 400, false)));
  }
  auto info = sys::read_file(dir + "/out/info.txt", 64 << 10);
  if (!info) return fail("pdf reader: pdfinfo wrote no readable output");
  auto pages = pages_from_pdfinfo(*info);
  if (!pages) return std::unexpected(pages.error());
  auto body = sys::read_file(dir + "/out/text.txt", kTextBytes);
  if (!body) return fail("pdf reader: pdftotext wrote no readable text");
  return validate::PdfFacts{*pages, std::move(*body)};
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
