// A small CSV reader for the public traces Tessera imports (node lists, pod lists): RFC 4180
// quoting ("a,b", "say ""hi""", line breaks inside quotes), LF or CRLF line ends, an optional
// UTF-8 byte-order mark, an optional header row. Blank lines are skipped wherever they are,
// so trailing empty lines and a blank line between records do not make short rows.
//
// Every error names the file and the line the record starts on, and the column where one is
// involved: `openb.csv:17: column cpu_milli: expected a whole number, got "abc"`. Reading is
// lenient about the shape of individual rows (a row with too few or too many fields is kept
// and reported by CheckWidth or the accessors), so an importer can report every malformed row
// in one pass rather than stopping at the first.
//
// Thread-safety: a CsvTable is immutable after reading; CsvRow is a view into its table and
// must not outlive it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/quantity.h"
#include "common/status.h"

namespace tessera {

struct CsvOptions {
  // The first non-blank line names the columns.
  bool header = true;
  // Column names for a file without a header (header = false). Also the expected width of
  // every row; empty = columns are known only by index and named "column N" (1-based).
  std::vector<std::string> column_names;
};

class CsvTable;

// One record of a table.
class CsvRow {
 public:
  // The 1-based line the record starts on.
  int line() const { return line_; }
  size_t size() const { return count_; }

  // OK iff the row has exactly as many fields as the table has columns (when the table knows
  // its columns); otherwise names the expected and actual counts.
  Status CheckWidth() const;

  // The raw text of a field. Fails when the row is too short or the column does not exist.
  Result<std::string_view> Text(size_t column) const;
  Result<std::string_view> Text(std::string_view column) const;
  // The same, but an empty field is an error.
  Result<std::string_view> NonEmpty(size_t column) const;
  Result<std::string_view> NonEmpty(std::string_view column) const;
  // A whole number in [min, max] ("-12", "64000"); no signs but '-', no spaces, no decimals.
  Result<int64_t> Int(size_t column, int64_t min = INT64_MIN, int64_t max = INT64_MAX) const;
  Result<int64_t> Int(std::string_view column, int64_t min = INT64_MIN,
                      int64_t max = INT64_MAX) const;
  // A non-negative decimal with at most three decimals, in milli-units ("1.5" -> 1500).
  Result<Milli> MilliValue(size_t column) const;
  Result<Milli> MilliValue(std::string_view column) const;

  // An InvalidArgument "file:line: column NAME: message" for checks made by the caller.
  Status ErrorAt(size_t column, std::string_view message) const;
  // An InvalidArgument "file:line: message".
  Status Error(std::string_view message) const;

 private:
  friend class CsvTable;
  CsvRow(const CsvTable* table, size_t first, size_t count, int line)
      : table_(table), first_(first), count_(count), line_(line) {}
  Result<size_t> Resolve(std::string_view column) const;

  const CsvTable* table_;
  size_t first_;  // index of the row's first field in the table's field store
  size_t count_;
  int line_;
};

class CsvTable {
 public:
  // Reads a whole file. NotFound if it cannot be opened; InvalidArgument for malformed CSV
  // (an unterminated quote, text after a closing quote) or a missing header.
  static Result<CsvTable> ReadFile(const std::string& path, const CsvOptions& options = {});
  // Parses text already in memory; `name` stands for the file in messages.
  static Result<CsvTable> Parse(std::string name, std::string_view text,
                                const CsvOptions& options = {});

  const std::string& name() const { return name_; }
  // Column names from the header or the options; empty if neither gave any.
  const std::vector<std::string>& columns() const { return columns_; }
  // The index of a named column, or an error naming the columns there are.
  Result<size_t> Column(std::string_view name) const;
  // OK iff every name is a column; otherwise one error naming all missing ones.
  Status RequireColumns(const std::vector<std::string_view>& names) const;
  // The name shown for a column in messages.
  std::string ColumnName(size_t column) const;

  size_t size() const { return rows_.size(); }
  bool empty() const { return rows_.empty(); }
  CsvRow row(size_t i) const { return CsvRow(this, rows_[i].first, rows_[i].count, rows_[i].line); }

 private:
  friend class CsvRow;
  struct RowSpan {
    size_t first;
    size_t count;
    int line;
  };
  CsvTable() = default;

  std::string name_;
  std::vector<std::string> columns_;
  int header_line_ = 0;              // 0 = no header row
  std::vector<std::string> fields_;  // all rows' fields, row after row
  std::vector<RowSpan> rows_;
};

// Collects the errors of many rows so an importer can report all of them at once, keeping the
// message readable for a badly broken file: at most `limit` are listed, then a count of the
// rest.
class CsvErrors {
 public:
  explicit CsvErrors(size_t limit = 20) : limit_(limit) {}

  void Add(const Status& status);
  bool empty() const { return count_ == 0; }
  size_t count() const { return count_; }
  // InvalidArgument: "<what>: N malformed rows" followed by one line per listed error and
  // "... and K more" when some were left off. OK if nothing was added.
  Status ToStatus(std::string_view what) const;

 private:
  size_t limit_;
  size_t count_ = 0;
  std::vector<std::string> listed_;
};

}  // namespace tessera
