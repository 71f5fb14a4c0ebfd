// Sweep records: JSON round trip, JSONL reading (a truncated last line is
// skipped, any other bad line is an error at file:line), keys.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "report_test_util.h"
#include "schedlab/report/record.h"
#include "test_support.h"

namespace schedlab::report {
namespace {

using namespace testing_util;
using test_support::user_error_of;

TEST(Record, JsonRoundTrip) {
  Record r = ok_record("normalization", {{"block", "256"}, {"vec", "4"}}, {10, 12, 11, 13});
  r.device = gpu_device();
  Record back = record_from_json(to_json(r), {"x.jsonl", 1, 0});
  EXPECT_EQ(to_json(back), to_json(r));
  EXPECT_EQ(back.size_label(), "N=1024,K=1024");  // declaration order, not sorted
  EXPECT_EQ(back.config_label(), "block=256,vec=4");
  EXPECT_EQ(back.times_us, r.times_us);
  EXPECT_EQ(back.device.peak_gbps, 4800);
  EXPECT_EQ(back.status, Status::Ok);
  // A searched point: its search, and the scheduler's own choice.
  r.strategy = "evolution";
  r.objective = "predicted";
  r.evaluation = 3;
  r.own_choice = {{"vec", "8"}, {"block", "128"}};
  back = record_from_json(to_json(r), {"x.jsonl", 1, 0});
  EXPECT_EQ(back.own_choice, r.own_choice);  // file order kept
  EXPECT_EQ(to_json(back), to_json(r));
  EXPECT_THAT(user_error_of([&] {
                auto j = nlohmann::json::parse(to_json(r));
                j["search"]["own_choice"]["vec"] = 8;
                record_from_json(j.dump(), {"x.jsonl", 4, 0});
              }),
              testing::HasSubstr("search.own_choice value vec must be a string, found 8"));
}

TEST(Record, JsonCarriesDerivedFigures) {
  Record r = ok_record("eager", {}, {10, 20, 30, 40});
  r.device = gpu_device();
  auto j = nlohmann::json::parse(to_json(r));
  EXPECT_EQ(j["schema"], "schedlab.sweep.v1");
  EXPECT_DOUBLE_EQ(j["median_us"].get<double>(), 25);
  EXPECT_DOUBLE_EQ(j["iqr_us"].get<double>(), 32.5 - 17.5);
  EXPECT_DOUBLE_EQ(j["min_us"].get<double>(), 10);
  double gbps = 8.0 * 1024 * 1024 / 25e-6 / 1e9;
  EXPECT_DOUBLE_EQ(j["gbps"].get<double>(), gbps);
  EXPECT_DOUBLE_EQ(j["fraction_of_peak"].get<double>(), gbps / 4800);
  EXPECT_TRUE(j["config"].is_object());
}

TEST(Record, NoFractionOfPeakForEmulationOrUnknownPeak) {
  Record r = ok_record("eager", {}, {10});
  EXPECT_GT(r.gbps(), 0);
  EXPECT_FALSE(r.fraction_of_peak());  // CPU emulation
  r.device = gpu_device();
  EXPECT_TRUE(r.fraction_of_peak());
  r.device.peak_gbps = 0;
  EXPECT_FALSE(r.fraction_of_peak());
  auto j = nlohmann::json::parse(to_json(r));
  EXPECT_TRUE(j["fraction_of_peak"].is_null());
}

TEST(Record, FailedRecordHasNullFigures) {
  Record r = failed_record("pointwise", Status::Rejected, "pointwise takes no reductions");
  auto j = nlohmann::json::parse(to_json(r));
  EXPECT_EQ(j["status"], "rejected");
  EXPECT_TRUE(j["median_us"].is_null());
  EXPECT_TRUE(j["gbps"].is_null());
  EXPECT_TRUE(j["max_abs_error"].is_null());
  Record back = record_from_json(to_json(r), {"x.jsonl", 1, 0});
  EXPECT_EQ(back.status, Status::Rejected);
  EXPECT_EQ(back.error, "pointwise takes no reductions");
}

TEST(Record, StatusNames) {
  for (Status s :
       {Status::Ok, Status::Rejected, Status::ScheduleError, Status::CompileError,
        Status::WrongResult, Status::Crashed, Status::Timeout, Status::Racy, Status::PluginError})
    EXPECT_EQ(parse_status(status_name(s)), s);
  EXPECT_EQ(status_name(Status::WrongResult), "wrong_result");
  EXPECT_EQ(status_name(Status::Racy), "racy");
  EXPECT_EQ(status_name(Status::PluginError), "plugin_error");
  EXPECT_FALSE(parse_status("fine"));
}

TEST(Record, KeyDependsOnEachPart) {
  SizeList sizes = {{"N", 4}, {"K", 8}};
  std::string k = record_key("p", "c", "softmax", sizes, "dev");
  EXPECT_EQ(k, record_key("p", "c", "softmax", sizes, "dev"));
  EXPECT_EQ(k.size(), 16u);
  EXPECT_NE(k, record_key("p2", "c", "softmax", sizes, "dev"));
  EXPECT_NE(k, record_key("p", "c2", "softmax", sizes, "dev"));
  EXPECT_NE(k, record_key("p", "c", "layernorm", sizes, "dev"));
  EXPECT_NE(k, record_key("p", "c", "softmax", {{"N", 4}, {"K", 9}}, "dev"));
  EXPECT_NE(k, record_key("p", "c", "softmax", sizes, "dev2"));
  // Field boundaries are kept: moving a character between fields changes the key.
  EXPECT_NE(record_key("ab", "c", "f", sizes, "d"), record_key("a", "bc", "f", sizes, "d"));
  EXPECT_NE(config_hash({{"a", "1"}}), config_hash({{"a", "2"}}));
}

// Records list sizes in declaration order ("N=4,K=8"); files written before
// listed them by name. The key hashes them by name, so it is the same for
// both and the same as the keys those files hold (resume and reuse find them).
TEST(Record, KeyAndSizeKeyIgnoreTheOrderOfSizes) {
  SizeList declared = {{"N", 4}, {"K", 8}}, by_name = {{"K", 8}, {"N", 4}};
  EXPECT_EQ(record_key("p", "c", "softmax", declared, "dev"),
            record_key("p", "c", "softmax", by_name, "dev"));
  EXPECT_EQ(record_key("p", "c", "softmax", declared, "dev"), hash_hex("p\x1f"
                                                                       "c\x1f"
                                                                       "softmax\x1f"
                                                                       "K=8,N=4,\x1f"
                                                                       "dev"));
  Record r = ok_record("eager", {}, {1}, "softmax", declared);
  EXPECT_EQ(r.size_label(), "N=4,K=8");
  EXPECT_EQ(r.size_key(), "K=8,N=4");
  r.sizes = by_name;
  EXPECT_EQ(r.size_label(), "K=8,N=4");
  EXPECT_EQ(r.size_key(), "K=8,N=4");
}

TEST(Record, SizesKeepTheirOrderThroughJson) {
  Record r = ok_record("eager", {}, {1}, "softmax", {{"N", 32}, {"K", 1024}});
  std::string line = to_json(r);
  EXPECT_NE(line.find(R"("sizes":{"N":32,"K":1024},"size_label":"N=32,K=1024")"), std::string::npos)
      << line;
  EXPECT_EQ(record_from_json(line, {"x.jsonl", 1, 0}).size_label(), "N=32,K=1024");
  // A file from before (sizes by name) reads as it was written.
  std::string old = line;
  old.replace(old.find(R"({"N":32,"K":1024})"), 17, R"({"K":1024,"N":32})");
  Record back = record_from_json(old, {"x.jsonl", 1, 0});
  EXPECT_EQ(back.size_label(), "K=1024,N=32");
  EXPECT_EQ(back.size_key(), r.size_key());
}

// ---- JSONL files ------------------------------------------------------------

TEST(RecordFile, AppendThenRead) {
  auto dir = temp_dir("append");
  std::string path = (dir / "r.jsonl").string();
  append_record(path, ok_record("a", {}, {1, 2}));
  append_record(path, failed_record("b", Status::Crashed, "SIGSEGV"));
  RecordFile f = read_records(path);
  ASSERT_EQ(f.records.size(), 2u);
  EXPECT_EQ(f.records[0].scheduler, "a");
  EXPECT_EQ(f.records[1].status, Status::Crashed);
  EXPECT_EQ(f.truncated_tail_bytes, 0u);
}

TEST(RecordFile, TruncatedLastLineIsSkippedAndDropped) {
  auto dir = temp_dir("truncated");
  std::string path = (dir / "r.jsonl").string();
  std::string good = to_json(ok_record("a", {}, {1, 2})) + "\n";
  std::string partial = to_json(ok_record("b", {}, {3, 4})).substr(0, 40);
  write_file(path, good + "\n" + good + partial);
  RecordFile f = read_records(path);
  EXPECT_EQ(f.records.size(), 2u);
  EXPECT_EQ(f.truncated_tail_bytes, partial.size());
  // Resuming cuts the partial line, so the next record starts a line.
  EXPECT_EQ(drop_truncated_tail(path), partial.size());
  append_record(path, ok_record("c", {}, {5}));
  RecordFile g = read_records(path);
  ASSERT_EQ(g.records.size(), 3u);
  EXPECT_EQ(g.records[2].scheduler, "c");
  EXPECT_EQ(drop_truncated_tail(path), 0u);
}

TEST(RecordFile, BadLinesInTheMiddleAreSkippedAndKept) {
  auto dir = temp_dir("bad_middle");
  std::string path = (dir / "r.jsonl").string();
  std::string good = to_json(ok_record("a", {}, {1, 2})) + "\n";
  // The same partial line, but followed by a newline: not a killed write.
  std::string partial = good.substr(0, 40) + "\n";
  const std::string text = good + partial + good + "garbage\n" + good;
  write_file(path, text);
  testing::internal::CaptureStderr();
  RecordFile f = read_records(path);
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(f.records.size(), 3u);
  ASSERT_EQ(f.skipped.size(), 2u);
  EXPECT_EQ(f.skipped[0].line, 2);
  EXPECT_EQ(f.skipped[0].reason.rfind("invalid JSON", 0), 0u) << f.skipped[0].reason;
  EXPECT_EQ(f.skipped[1].line, 4);
  EXPECT_NE(warnings.find("warning: " + path + ":2: skipped a line that is not a record (invalid JSON"),
            std::string::npos)
      << warnings;
  EXPECT_NE(warnings.find("warning: " + path + ":4: skipped"), std::string::npos) << warnings;
  // Nothing is cut or rewritten: the file is as it was, and appending works.
  EXPECT_EQ(drop_truncated_tail(path), 0u);
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), text);
  append_record(path, ok_record("b", {}, {3}));
  testing::internal::CaptureStderr();
  EXPECT_EQ(read_records(path).records.size(), 4u);
  testing::internal::GetCapturedStderr();
}

TEST(RecordFile, CannotAppend) {
  auto dir = temp_dir("cannot_append");
  EXPECT_EQ(user_error_of([&] { append_record(dir.string(), ok_record("a", {}, {1})); }),
            "cannot open results file '" + dir.string() +
                "' for appending: " + std::strerror(EISDIR));
  // /dev/full takes the open and fails the write with ENOSPC: the error says
  // so (a full disk is not a permission problem).
  if (std::filesystem::exists("/dev/full")) {
    EXPECT_EQ(user_error_of([] { append_record("/dev/full", ok_record("a", {}, {1})); }),
              "cannot write to results file '/dev/full': " + std::string(std::strerror(ENOSPC)));
  }
}

TEST(RecordFile, MissingFile) {
  EXPECT_EQ(user_error_of([] { read_records("/no/such/results.jsonl"); }),
            "cannot read results file '/no/such/results.jsonl'");
}

// ---- malformed records ------------------------------------------------------

/// The message for a record line edited by `edit`.
std::string error_of_edited(const std::function<void(nlohmann::json&)>& edit) {
  auto j = nlohmann::json::parse(to_json(ok_record("a", {{"block", "64"}}, {1, 2})));
  edit(j);
  return user_error_of([&] { record_from_json(j.dump(), {"r.jsonl", 3, 0}); });
}

TEST(RecordErrors, WrongSchema) {
  EXPECT_EQ(
      error_of_edited([](auto& j) { j["schema"] = "schedlab.sweep.v0"; }),
      "expected a record with \"schema\": \"schedlab.sweep.v1\", found \"schedlab.sweep.v0\"");
  EXPECT_EQ(error_of_edited([](auto& j) { j.erase("schema"); }),
            "expected a record with \"schema\": \"schedlab.sweep.v1\", found no schema");
}

TEST(RecordErrors, NotAnObject) {
  EXPECT_EQ(user_error_of([] {
              record_from_json("[1, 2]", {"r.jsonl", 3, 0});
            }),
            "expected a JSON object, found array");
}

TEST(RecordErrors, MissingAndMistypedFields) {
  EXPECT_EQ(error_of_edited([](auto& j) { j.erase("fusion"); }), "record has no 'fusion'");
  EXPECT_EQ(error_of_edited([](auto& j) { j["device"].erase("fingerprint"); }),
            "record has no 'device.fingerprint'");
  EXPECT_EQ(error_of_edited([](auto& j) { j["times_us"] = "fast"; }),
            "record field 'times_us' has the wrong type: \"fast\"");
  EXPECT_EQ(error_of_edited([](auto& j) { j["sizes"]["N"] = 1.5; }),
            "size N must be an integer, found 1.5");
  EXPECT_EQ(error_of_edited([](auto& j) { j["config"]["block"] = 64; }),
            "config value block must be a string, found 64");
  EXPECT_EQ(error_of_edited([](auto& j) { j["max_abs_error"] = "small"; }),
            "record field 'max_abs_error' must be a number or null, found \"small\"");
}

TEST(RecordErrors, NotObjects) {
  EXPECT_EQ(error_of_edited([](auto& j) { j["device"] = "gpu"; }),
            "record field 'device' must be an object");
  EXPECT_EQ(error_of_edited([](auto& j) {
              j["sizes"] = {1, 2};
            }),
            "record field 'sizes' must be an object");
  EXPECT_EQ(error_of_edited([](auto& j) { j["config"] = "block=64"; }),
            "record field 'config' must be an object");
}

TEST(RecordErrors, BadValues) {
  EXPECT_EQ(error_of_edited([](auto& j) { j["status"] = "fine"; }),
            "unknown status 'fine'; expected ok, rejected, schedule_error, compile_error, "
            "wrong_result, crashed, timeout, racy or plugin_error");
  EXPECT_EQ(error_of_edited([](auto& j) { j["device"]["backend"] = "rocm"; }),
            "device.backend must be \"cpu\" or \"cuda\", found \"rocm\"");
  EXPECT_EQ(error_of_edited([](auto& j) { j["times_us"] = nlohmann::json::array(); }),
            "record with status ok has no times_us");
  EXPECT_EQ(error_of_edited([](auto& j) {
              j["times_us"] = {1.0, -2.0};
            }),
            "times_us must be non-negative, found -2");
}

}  // namespace
}  // namespace schedlab::report
