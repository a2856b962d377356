// The three workloads of examples/workloads (docs/workloads.md), each on its
// image: the coding agent (build: a git bundle cloned, built with make, tested,
// a JUnit report checked), document rendering (render: untrusted HTML printed
// to PDF by headless Chromium with no way out, the PDF checked on the host)
// and the analyst (python-data under the compute profile). The images come
// from the store in $AIRLOCK_WORKLOAD_IMAGE_DIR (scripts/build-images.sh
// builds them); each test is skipped, saying so, when its image is not there.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_helpers.h"
#include "service_fixture.h"
#include "service/pdf_reader.h"
#include "validate/checks.h"
#include "workspace/file_type.h"

namespace airlock::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kWorkloads = fs::path(AIRLOCK_SOURCE_DIR) / "examples" / "workloads";

// The store, or "" with the reason in `why`.
std::string image_store(const std::string& image, std::string& why) {
  const char* dir = std::getenv("AIRLOCK_WORKLOAD_IMAGE_DIR");
  if (!dir || !*dir) {
    why = "AIRLOCK_WORKLOAD_IMAGE_DIR is not set (scripts/build-images.sh STORE builds " + image +
          "; then set it to STORE)";
    return "";
  }
  if (!fs::exists(fs::path(dir) / "names" / image)) {
    why = "image " + image + " is not built in " + dir + " (scripts/build-images.sh " + dir + " " + image + ")";
    return "";
  }
  return dir;
}

#define REQUIRE_IMAGE(image, store)                 \
  std::string why_##store;                          \
  const std::string store = image_store(image, why_##store); \
  if (store.empty()) GTEST_SKIP() << why_##store

int sh(const std::string& command) { return std::system(command.c_str()); }

validate::FileSource files_in(const std::string& dir) {
  return [dir](const std::string& name) -> std::optional<validate::ByteSource> {
    auto in = std::make_shared<std::ifstream>(dir + "/" + name, std::ios::binary);
    if (!*in) return std::nullopt;
    return [in](char* buf, size_t n) -> Result<size_t> {
      in->read(buf, static_cast<std::streamsize>(n));
      return static_cast<size_t>(in->gcount());
    };
  };
}

json output_named(const json& rec, const std::string& name) {
  for (const auto& o : rec["outputs"])
    if (o["name"] == name) return o;
  return json();
}

// The coding project as an agent's checkout would be: a repository, bundled
// into TMP/project.bundle.
bool make_bundle(const TempDir& tmp) {
  std::string repo = tmp.sub("project");
  fs::copy(kWorkloads / "coding" / "project", repo, fs::copy_options::recursive);
  return sh("cd '" + repo + "' && git init -q && git add . && git -c user.name=t -c user.email=t@t "
            "commit -qm project && git bundle create -q ../project.bundle --all") == 0;
}

TEST(Workload, CodingAgent) {
  REQUIRE_IMAGE("build", store);
  TempDir tmp;
  ASSERT_TRUE(make_bundle(tmp));
  ASSERT_EQ(workspace::detect_type(read_text(tmp.sub("project.bundle"))), workspace::FileType::kGitBundle);
  fs::copy(kWorkloads / "coding" / "job.sh", tmp.sub("job.sh"));
  Ran ran = run_airlock({"run", "--json", "--state-dir", tmp.state(), "--image", "build", "--image-dir", store,
                         "--input", tmp.sub("project.bundle"), "--input", tmp.sub("job.sh"), "--output-dir",
                         tmp.sub("out"), "--memory", "1G", "--timeout", "300", "--cpu-time", "300", "--",
                         "/bin/sh", "/inputs/job.sh"});
  json rec = ran.record();
  ASSERT_EQ(rec["outcome"], "succeeded") << ran.err << rec.dump(2);
  EXPECT_EQ(rec["image"]["name"], "build");
  EXPECT_EQ(rec["inputs"][0]["type"], "git-bundle");
  json report = output_named(rec, "report.xml");
  EXPECT_EQ(report["type"], "xml") << rec["outputs"].dump();
  EXPECT_EQ(report["verdict"], "accepted");
  auto checks = validate::parse_checks(json::array({{{"kind", "junit"}, {"output", "report.xml"}}}));
  ASSERT_TRUE(checks);
  auto result = validate::run_checks(*checks, files_in(tmp.sub("out")), files_in(tmp.path())).at(0);
  EXPECT_TRUE(result.passed) << result.detail;
  EXPECT_EQ(result.detail, "report.xml: 5 tests, 0 failures, 0 errors, 0 skipped (min_tests 1, max_failures 0, max_errors 0)");
}

// Renders page.html; returns the record. `extra` adds options (the gateway).
json render(const TempDir& tmp, const std::string& store, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"run", "--json", "--state-dir", tmp.state(), "--image", "render", "--image-dir",
                                   store, "--input", (kWorkloads / "render" / "page.html").string(), "--input",
                                   (kWorkloads / "render" / "job.sh").string(), "--output-dir", tmp.sub("out"),
                                   "--memory", "2G", "--timeout", "120", "--cpu-time", "120", "--pids", "256"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", "/bin/sh", "/inputs/job.sh"});
  std::error_code ec;
  fs::remove_all(tmp.sub("out"), ec);
  Ran ran = run_airlock(args);
  json rec = ran.record();
  EXPECT_EQ(rec["outcome"], "succeeded") << ran.err << rec.dump(2);
  return rec;
}

// The host's first /etc/passwd line (root's, with its real home and shell).
std::string host_passwd_line() {
  std::string text = read_text("/etc/passwd");
  return text.substr(0, text.find('\n'));
}

TEST(Workload, DocumentRendering) {
  REQUIRE_IMAGE("render", store);
  TempDir tmp;
  service::PdfReaderSetup setup{.airlock_binary = AIRLOCK_BINARY, .state_dir = tmp.state(),
                                .scratch_dir = tmp.sub("pdf"), .image = "render",
                                .image_args = {"--image-dir", store}};
  auto checks = validate::parse_checks(json::array(
      {{{"kind", "pdf"}, {"output", "doc.pdf"}, {"min_pages", 1}, {"max_pages", 2},
        {"contains", {"Quarterly report", "Revenue grew in every region", "beacon refused"}},
        {"excludes", {host_passwd_line(), "beacon sent"}}}}));
  ASSERT_TRUE(checks) << checks.error().what;

  // No network: nothing leaves, and (no gateway) the record lists no attempt.
  json rec = render(tmp, store, {});
  EXPECT_EQ(rec["policy"]["network"], "none");
  EXPECT_EQ(output_named(rec, "doc.pdf")["type"], "pdf") << rec["outputs"].dump();
  EXPECT_TRUE(rec["network"].empty());
  auto reader = service::sandboxed_pdf_reader(setup, {{"doc.pdf", tmp.sub("out") + "/doc.pdf"}});
  auto result = validate::run_checks(*checks, files_in(tmp.sub("out")), files_in(tmp.path()), {}, reader).at(0);
  EXPECT_TRUE(result.passed) << result.detail;
  // The passwd the page may show is the sandbox's synthetic one, never the host's.
  auto facts = reader("doc.pdf");
  ASSERT_TRUE(facts) << facts.error().what;
  ASSERT_NE(host_passwd_line(), "root:x:0:0:root:/nonexistent:/usr/sbin/nologin");
  EXPECT_EQ(facts->text.find(host_passwd_line()), std::string::npos) << facts->text;
  EXPECT_NE(facts->text.find("root:x:0:0:root:/nonexistent:/usr/sbin/nologin"), std::string::npos) << facts->text;
  EXPECT_NE(facts->text.find("sandbox:x:"), std::string::npos) << facts->text;

  // Through the gateway, whose allow list names nothing the page uses: every
  // attempt of the page is refused by it and listed in the record.
  rec = render(tmp, store, {"--allow", "fonts.render-test.invalid:443"});
  EXPECT_EQ(rec["policy"]["network"], "gateway");
  bool refused = false;
  for (const auto& a : rec["network"]) {
    EXPECT_FALSE(a["allowed"].get<bool>()) << a.dump();
    if (a["host"] == "tracker.render-test.invalid") refused = true;
  }
  EXPECT_TRUE(refused) << rec["network"].dump(2);
  EXPECT_NE(rec["limits_hit"].dump().find("network"), std::string::npos) << rec["limits_hit"].dump();
  result = validate::run_checks(*checks, files_in(tmp.sub("out")), files_in(tmp.path()), {},
                                service::sandboxed_pdf_reader(setup, {{"doc.pdf", tmp.sub("out") + "/doc.pdf"}}))
               .at(0);
  EXPECT_TRUE(result.passed) << result.detail;
}

TEST(Workload, Analyst) {
  REQUIRE_IMAGE("python-data", store);
  TempDir tmp;
  const fs::path examples = fs::path(AIRLOCK_SOURCE_DIR) / "examples";
  Ran ran = run_airlock({"run", "--json", "--state-dir", tmp.state(), "--image", "python-data", "--image-dir", store,
                         "--profile", "compute", "--input", (examples / "sales_jan.csv").string(), "--input",
                         (examples / "sales_feb.csv").string(), "--input", (examples / "analyst.py").string(),
                         "--output-dir", tmp.sub("out"), "--", "python3", "/inputs/analyst.py"});
  json rec = ran.record();
  ASSERT_EQ(rec["outcome"], "succeeded") << ran.err << rec.dump(2);
  EXPECT_EQ(rec["image"]["name"], "python-data");
  EXPECT_EQ(rec["profile"]["name"], "compute") << rec.dump(2);
  EXPECT_EQ(output_named(rec, "summary.csv")["verdict"], "accepted");
  EXPECT_EQ(output_named(rec, "chart.png")["type"], "png");
  auto checks = validate::parse_checks(json::array(
      {{{"kind", "csv_column_sum"}, {"output", "summary.csv"}, {"column", "revenue_total"},
        {"inputs", {{{"file", "sales_jan.csv"}, {"column", "revenue"}}, {{"file", "sales_feb.csv"}, {"column", "revenue"}}}},
        {"tolerance", 0.01}},
       {{"kind", "image_dimensions"}, {"output", "chart.png"}, {"min_width", 100}}}));
  ASSERT_TRUE(checks);
  for (auto r : validate::run_checks(*checks, files_in(tmp.sub("out")), files_in(examples.string())))
    EXPECT_TRUE(r.passed) << r.label << ": " << r.detail;
}


// The same two workloads through `airlock serve`: the checks run by the service
// and their results are in the job's record.
class WorkloadService : public ::testing::Test {
 protected:
  void start(const std::string& store) {
    config_ = std::make_unique<TempDir>();
    std::string file = config_->sub("serve.toml");
    write_text(file, "image_dir = \"" + store + "\"\npdf_check_image = \"render\"\n");
    svc_ = std::make_unique<ServiceProcess>(std::vector<std::string>{"--config", file});
  }
  std::string upload(const std::string& name, const std::string& content) {
    HttpClient http = svc_->client();
    auto r = http.request("POST", "/v1/files?name=" + name, content, svc_->alpha.auth());
    EXPECT_EQ(r.status, 201) << r.body;
    return r.status == 201 ? r.json()["id"].get<std::string>() : "";
  }
  json run(const json& body) {
    HttpClient http = svc_->client();
    return run_job(http, svc_->alpha, body, 300);
  }
  std::unique_ptr<TempDir> config_;
  std::unique_ptr<ServiceProcess> svc_;
};

TEST_F(WorkloadService, CodingAgentReportIsAcceptedByItsCheck) {
  REQUIRE_IMAGE("build", store);
  start(store);
  TempDir tmp;
  ASSERT_TRUE(make_bundle(tmp));
  json body = {{"image", "build"},
               {"command", {"/bin/sh", "/inputs/job.sh"}},
               {"inputs", {upload("project.bundle", read_text(tmp.sub("project.bundle"))),
                           upload("job.sh", read_text((kWorkloads / "coding" / "job.sh").string()))}},
               {"policy", {{"memory_mb", 1024}, {"timeout_s", 300}}},
               {"checks", {{{"kind", "junit"}, {"output", "report.xml"}}}}};
  json job = run(body);
  ASSERT_EQ(job["outcome"], "succeeded") << job.dump(2);
  const json& rec = job["record"];
  EXPECT_EQ(rec["image"]["name"], "build");
  EXPECT_EQ(output_named(rec, "report.xml")["type"], "xml");
  ASSERT_EQ(rec["checks"].size(), 1u) << rec.dump(2);
  EXPECT_TRUE(rec["checks"][0]["passed"].get<bool>()) << rec["checks"].dump(2);
  EXPECT_EQ(rec["checks"][0]["detail"],
            "report.xml: 5 tests, 0 failures, 0 errors, 0 skipped (min_tests 1, max_failures 0, max_errors 0)");
}

TEST_F(WorkloadService, RenderedPdfIsCheckedOnTheHost) {
  REQUIRE_IMAGE("render", store);
  start(store);
  json body = {{"image", "render"},
               {"command", {"/bin/sh", "/inputs/job.sh"}},
               {"inputs", {upload("page.html", read_text((kWorkloads / "render" / "page.html").string())),
                           upload("job.sh", read_text((kWorkloads / "render" / "job.sh").string()))}},
               {"policy", {{"memory_mb", 1024}, {"pids", 256}, {"timeout_s", 120}}},
               {"checks", {{{"kind", "pdf"}, {"output", "doc.pdf"}, {"min_pages", 1}, {"max_pages", 2},
                            {"contains", {"Quarterly report", "sandbox:x:", "beacon refused"}},
                            {"excludes", {host_passwd_line()}}}}}};
  json job = run(body);
  ASSERT_EQ(job["outcome"], "succeeded") << job.dump(2);
  const json& rec = job["record"];
  EXPECT_EQ(rec["policy"]["network"], "none");
  EXPECT_EQ(output_named(rec, "doc.pdf")["type"], "pdf");
  ASSERT_EQ(rec["checks"].size(), 1u) << rec.dump(2);
  EXPECT_TRUE(rec["checks"][0]["passed"].get<bool>()) << rec["checks"].dump(2);
}

}  // namespace
}  // namespace airlock::testing
