// CsvTable: RFC 4180 reading, line numbers that survive quoted line breaks, typed accessors
// whose errors name file:line and the column.
#include "config/csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace tessera {
namespace {

using ::testing::HasSubstr;

CsvTable MustParse(std::string_view text, const CsvOptions& options = {}) {
  auto t = CsvTable::Parse("t.csv", text, options);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

std::string ErrorOf(const Status& s) {
  EXPECT_FALSE(s.ok());
  return s.message();
}

TEST(CsvTest, ReadsHeaderAndFieldsByNameAndIndex) {
  CsvTable t = MustParse("sn,cpu_milli,model\nn1,64000,P100\nn2,96000,\n");
  EXPECT_EQ(t.columns(), (std::vector<std::string>{"sn", "cpu_milli", "model"}));
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(*t.Column("model"), 2u);
  CsvRow r = t.row(0);
  EXPECT_EQ(r.line(), 2);
  EXPECT_EQ(*r.Text("sn"), "n1");
  EXPECT_EQ(*r.Text(2), "P100");
  EXPECT_EQ(*r.Int("cpu_milli"), 64000);
  EXPECT_EQ(t.row(1).line(), 3);
  EXPECT_EQ(*t.row(1).Text("model"), "");
  EXPECT_TRUE(t.row(1).CheckWidth().ok());
}

TEST(CsvTest, QuotedFieldsKeepCommasQuotesAndLineBreaks) {
  CsvTable t = MustParse("a,b\n\"x, y\",\"say \"\"hi\"\"\"\n\"two\nlines\",\"\"\nlast,1\n");
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(*t.row(0).Text("a"), "x, y");
  EXPECT_EQ(*t.row(0).Text("b"), "say \"hi\"");
  EXPECT_EQ(*t.row(1).Text("a"), "two\nlines");
  EXPECT_EQ(*t.row(1).Text("b"), "");
  EXPECT_EQ(t.row(1).line(), 3);
  // The line break inside the quotes counts: "last" is on line 5.
  EXPECT_EQ(t.row(2).line(), 5);
}

TEST(CsvTest, CrlfBomBlankLinesAndNoFinalNewline) {
  CsvTable t = MustParse("\xEF\xBB\xBFsn,gpu\r\nn1,2\r\n\r\n  \r\nn2,\"4\"\r\nn3,8");
  EXPECT_EQ(t.columns(), (std::vector<std::string>{"sn", "gpu"}));
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(*t.row(0).Int("gpu"), 2);
  EXPECT_EQ(*t.row(1).Int("gpu"), 4);
  EXPECT_EQ(t.row(1).line(), 5);
  EXPECT_EQ(*t.row(2).Text("gpu"), "8");
}

TEST(CsvTest, TrailingEmptyLinesAndTrailingCommas) {
  CsvTable t = MustParse("a,b\n1,\n\n\n\n");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.row(0).size(), 2u);
  EXPECT_EQ(*t.row(0).Text("b"), "");
  CsvTable at_end = MustParse("a,b\n1,");
  EXPECT_EQ(at_end.row(0).size(), 2u);
}

TEST(CsvTest, WithoutHeader) {
  CsvOptions named;
  named.header = false;
  named.column_names = {"machine", "gpu_type", "cap_cpu"};
  CsvTable t = MustParse("m1,CPU,96\nm2,T4,x\n", named);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.row(0).line(), 1);
  EXPECT_EQ(*t.row(0).Text("gpu_type"), "CPU");
  EXPECT_EQ(ErrorOf(t.row(1).Int("cap_cpu").status()),
            "t.csv:2: column cap_cpu: expected a whole number, got \"x\"");

  CsvOptions bare;
  bare.header = false;
  CsvTable u = MustParse("1,2,x\n", bare);
  EXPECT_TRUE(u.row(0).CheckWidth().ok());  // no known width
  EXPECT_EQ(ErrorOf(u.row(0).Int(2).status()),
            "t.csv:1: column 3: expected a whole number, got \"x\"");
}

TEST(CsvTest, IntErrorsNameFileLineAndColumn) {
  CsvTable t =
      MustParse("sn,cpu_milli\nn1,abc\nn2,-5\nn3,99999999999999999999\nn4,\nn5,1.5\nn6, 7\n");
  EXPECT_EQ(ErrorOf(t.row(0).Int("cpu_milli").status()),
            "t.csv:2: column cpu_milli: expected a whole number, got \"abc\"");
  EXPECT_EQ(*t.row(1).Int("cpu_milli"), -5);
  EXPECT_EQ(ErrorOf(t.row(1).Int("cpu_milli", 0, 1024).status()),
            "t.csv:3: column cpu_milli: expected a whole number from 0 to 1024, got -5");
  EXPECT_THAT(ErrorOf(t.row(2).Int("cpu_milli").status()),
              HasSubstr("t.csv:4: column cpu_milli: expected a whole number that fits 64 bits"));
  EXPECT_EQ(ErrorOf(t.row(3).Int("cpu_milli").status()),
            "t.csv:5: column cpu_milli: expected a whole number, got \"\"");
  EXPECT_FALSE(t.row(4).Int("cpu_milli").ok());
  EXPECT_FALSE(t.row(5).Int("cpu_milli").ok());
}

TEST(CsvTest, MilliAndNonEmpty) {
  CsvTable t = MustParse("name,cpu\n,1.5\nx,-1\n");
  EXPECT_EQ(*t.row(0).MilliValue("cpu"), 1500);
  EXPECT_EQ(ErrorOf(t.row(0).NonEmpty("name").status()), "t.csv:2: column name: must not be empty");
  EXPECT_THAT(ErrorOf(t.row(1).MilliValue("cpu").status()),
              HasSubstr("t.csv:3: column cpu: a number must not be negative"));
}

TEST(CsvTest, RowWidthAndMissingFields) {
  CsvTable t = MustParse("a,b,c\n1,2\n1,2,3,4\n");
  EXPECT_EQ(ErrorOf(t.row(0).CheckWidth()), "t.csv:2: expected 3 fields (a,b,c), got 2");
  EXPECT_EQ(ErrorOf(t.row(1).CheckWidth()), "t.csv:3: expected 3 fields (a,b,c), got 4");
  EXPECT_EQ(ErrorOf(t.row(0).Text("c").status()),
            "t.csv:2: column c: missing; the row has only 2 field(s)");
  EXPECT_THAT(ErrorOf(t.row(0).Text("nope").status()), HasSubstr("no column named \"nope\""));
}

TEST(CsvTest, MalformedTextIsRejectedWithItsLine) {
  auto unterminated = CsvTable::Parse("t.csv", "a,b\n1,2\n3,\"oops\n4,5\n");
  EXPECT_EQ(ErrorOf(unterminated.status()),
            "t.csv:3: column b: unterminated quoted field (the quote opened here is never closed)");
  auto after_quote = CsvTable::Parse("t.csv", "a,b\n\"x\"y,2\n");
  EXPECT_THAT(ErrorOf(after_quote.status()),
              HasSubstr("t.csv:2: column a: unexpected text after a closing quote"));
  auto duplicate = CsvTable::Parse("t.csv", "a,b,a\n");
  EXPECT_EQ(ErrorOf(duplicate.status()), "t.csv:1: duplicate column name \"a\"");
}

TEST(CsvTest, EmptyInput) {
  EXPECT_EQ(ErrorOf(CsvTable::Parse("t.csv", "").status()),
            "t.csv:1: empty file; expected a header row");
  EXPECT_FALSE(CsvTable::Parse("t.csv", "\n\r\n").ok());
  CsvOptions bare;
  bare.header = false;
  EXPECT_TRUE(MustParse("", bare).empty());
  EXPECT_TRUE(MustParse("a,b\n").empty());
}

TEST(CsvTest, RequireColumnsNamesAllMissing) {
  CsvTable t = MustParse("sn,gpu\n");
  EXPECT_TRUE(t.RequireColumns({"gpu", "sn"}).ok());
  EXPECT_EQ(ErrorOf(t.RequireColumns({"sn", "cpu_milli", "model"})),
            "t.csv:1: missing column(s) cpu_milli, model; the header has sn,gpu");
}

TEST(CsvTest, ReadsFilesAndReportsUnreadableOnes) {
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                              ("tessera_csv_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "n.csv").string();
  std::ofstream(path) << "a,b\n1,2\n";
  auto t = CsvTable::ReadFile(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->name(), path);
  EXPECT_EQ(*t->row(0).Int("b"), 2);

  auto missing = CsvTable::ReadFile((dir / "absent.csv").string());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("absent.csv: cannot open"));
  EXPECT_EQ(CsvTable::ReadFile(dir.string()).status().code(), StatusCode::kInvalidArgument);
  std::filesystem::remove_all(dir);
}

TEST(CsvTest, ErrorListIsCappedWithACountOfTheRest) {
  CsvErrors errors(3);
  EXPECT_TRUE(errors.ToStatus("f.csv").ok());
  for (int i = 1; i <= 5; ++i)
    errors.Add(InvalidArgument("f.csv:" + std::to_string(i) + ": bad"));
  errors.Add(Status::Ok());  // not an error
  EXPECT_EQ(errors.count(), 5u);
  EXPECT_EQ(ErrorOf(errors.ToStatus("f.csv")),
            "f.csv: 5 malformed rows\n  f.csv:1: bad\n  f.csv:2: bad\n  f.csv:3: bad\n"
            "  ... and 2 more");
}

}  // namespace
}  // namespace tessera
