#include "config/csv.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "common/file.h"

namespace tessera {
namespace {

// Field text as quoted in messages; long fields are cut so one bad cell cannot flood a report.
std::string Quoted(std::string_view text) {
  std::string s(text.substr(0, 40));
  if (text.size() > 40) s += "...";
  return "\"" + s + "\"";
}

bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// The position after the line starting at `pos` if that line holds only blanks, else npos.
size_t SkipBlankLine(std::string_view text, size_t pos) {
  size_t i = pos;
  while (i < text.size() && IsBlank(text[i]))
    ++i;
  if (i == text.size()) return i;
  if (text[i] == '\n') return i + 1;
  return std::string_view::npos;
}

std::string Location(const std::string& file, int line) {
  return file + ":" + std::to_string(line);
}

// Splits `text` into records of fields. Line numbers count every '\n', including those inside
// quoted fields, so each record is reported at the line it starts on.
class Splitter {
 public:
  Splitter(const std::string& name, std::string_view text) : name_(name), text_(text) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") text_.remove_prefix(3);
  }

  // Column names for messages, once the header is read.
  void set_columns(const std::vector<std::string>* columns) { columns_ = columns; }

  // Appends the next record's fields to `out`; false at the end of the text.
  Result<bool> Next(std::vector<std::string>& out, int* record_line) {
    for (;;) {
      if (pos_ >= text_.size()) return false;
      size_t after = SkipBlankLine(text_, pos_);
      if (after == std::string_view::npos) break;
      pos_ = after;
      ++line_;
    }
    *record_line = line_;
    for (size_t column = 0;; ++column) {
      std::string field;
      if (text_[pos_] == '"') {
        TESSERA_RETURN_IF_ERROR(ReadQuoted(field, column));
      } else {
        size_t end = text_.find_first_of(",\n", pos_);
        if (end == std::string_view::npos) end = text_.size();
        field.assign(text_.substr(pos_, end - pos_));
        pos_ = end;
        // CRLF: the '\r' belongs to the line end, not to the last field.
        if ((pos_ == text_.size() || text_[pos_] == '\n') && !field.empty() &&
            field.back() == '\r') {
          field.pop_back();
        }
      }
      out.push_back(std::move(field));
      if (pos_ == text_.size()) return true;
      char c = text_[pos_++];
      if (c == '\n') {
        ++line_;
        return true;
      }
      // c == ','; a comma at the very end of the text still opens an (empty) last field.
      if (pos_ == text_.size()) {
        out.emplace_back();
        return true;
      }
    }
  }

 private:
  std::string ColumnLabel(size_t column) const {
    if (columns_ && column < columns_->size() && !(*columns_)[column].empty()) {
      return "column " + (*columns_)[column];
    }
    return "column " + std::to_string(column + 1);
  }

  // A quoted field starting at pos_ ('"'); leaves pos_ at the delimiter after it.
  Status ReadQuoted(std::string& field, size_t column) {
    int start_line = line_;
    ++pos_;
    for (;;) {
      if (pos_ >= text_.size()) {
        return InvalidArgument(
            Location(name_, start_line) + ": " + ColumnLabel(column) +
            ": unterminated quoted field (the quote opened here is never closed)");
      }
      char c = text_[pos_++];
      if (c == '"') {
        if (pos_ < text_.size() && text_[pos_] == '"') {
          field += '"';
          ++pos_;
          continue;
        }
        break;
      }
      if (c == '\n') ++line_;
      field += c;
    }
    if (pos_ < text_.size() && text_[pos_] == '\r' &&
        (pos_ + 1 == text_.size() || text_[pos_ + 1] == '\n')) {
      ++pos_;
    }
    if (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '\n') {
      return InvalidArgument(Location(name_, line_) + ": " + ColumnLabel(column) +
                             ": unexpected text after a closing quote (a quote inside a quoted "
                             "field is written \"\")");
    }
    return Status::Ok();
  }

  const std::string& name_;
  const std::vector<std::string>* columns_ = nullptr;
  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace

Result<CsvTable> CsvTable::ReadFile(const std::string& path, const CsvOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return InvalidArgument(path + ": is a directory, expected a CSV file");
  }
  Result<std::string> text = ReadFileBounded(path, kMaxTraceFileBytes);
  if (!text.ok()) return text.status();
  return Parse(path, *text, options);
}

Result<CsvTable> CsvTable::Parse(std::string name, std::string_view text,
                                 const CsvOptions& options) {
  CsvTable t;
  t.name_ = std::move(name);
  Splitter split(t.name_, text);
  std::vector<std::string> record;
  int line = 0;
  if (options.header) {
    auto more = split.Next(record, &line);
    if (!more.ok()) return more.status();
    if (!*more) return InvalidArgument(t.name_ + ":1: empty file; expected a header row");
    t.header_line_ = line;
    std::set<std::string_view> seen;
    for (const std::string& column : record) {
      if (!column.empty() && !seen.insert(column).second) {
        return InvalidArgument(Location(t.name_, line) + ": duplicate column name " +
                               Quoted(column));
      }
    }
    t.columns_ = std::move(record);
    record.clear();
  } else {
    t.columns_ = options.column_names;
  }
  split.set_columns(&t.columns_);
  for (;;) {
    size_t first = t.fields_.size();
    auto more = split.Next(t.fields_, &line);
    if (!more.ok()) return more.status();
    if (!*more) break;
    t.rows_.push_back({first, t.fields_.size() - first, line});
  }
  return t;
}

Result<size_t> CsvTable::Column(std::string_view name) const {
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i] == name) return i;
  }
  std::string have;
  for (const std::string& c : columns_)
    have += (have.empty() ? "" : ",") + c;
  std::string where = header_line_ > 0 ? Location(name_, header_line_) : name_;
  return InvalidArgument(where + ": no column named " + Quoted(name) +
                         (columns_.empty() ? "" : "; the columns are " + have));
}

Status CsvTable::RequireColumns(const std::vector<std::string_view>& names) const {
  std::string missing;
  for (std::string_view n : names) {
    if (!Column(n).ok()) missing += (missing.empty() ? "" : ", ") + std::string(n);
  }
  if (missing.empty()) return Status::Ok();
  std::string have;
  for (const std::string& c : columns_)
    have += (have.empty() ? "" : ",") + c;
  std::string where = header_line_ > 0 ? Location(name_, header_line_) : name_;
  return InvalidArgument(where + ": missing column(s) " + missing + "; the header has " +
                         (have.empty() ? "no columns" : have));
}

std::string CsvTable::ColumnName(size_t column) const {
  if (column < columns_.size() && !columns_[column].empty()) return columns_[column];
  return std::to_string(column + 1);
}

Status CsvRow::Error(std::string_view message) const {
  return InvalidArgument(Location(table_->name_, line_) + ": " + std::string(message));
}

Status CsvRow::ErrorAt(size_t column, std::string_view message) const {
  return Error("column " + table_->ColumnName(column) + ": " + std::string(message));
}

Status CsvRow::CheckWidth() const {
  size_t want = table_->columns_.size();
  if (want == 0 || count_ == want) return Status::Ok();
  std::string names;
  for (const std::string& c : table_->columns_)
    names += (names.empty() ? "" : ",") + c;
  return Error("expected " + std::to_string(want) + " fields (" + names + "), got " +
               std::to_string(count_));
}

Result<size_t> CsvRow::Resolve(std::string_view column) const {
  auto index = table_->Column(column);
  if (!index.ok()) return Error("no column named " + Quoted(column));
  return *index;
}

Result<std::string_view> CsvRow::Text(size_t column) const {
  if (column >= count_) {
    return ErrorAt(column, "missing; the row has only " + std::to_string(count_) + " field(s)");
  }
  return std::string_view(table_->fields_[first_ + column]);
}

Result<std::string_view> CsvRow::Text(std::string_view column) const {
  auto i = Resolve(column);
  if (!i.ok()) return i.status();
  return Text(*i);
}

Result<std::string_view> CsvRow::NonEmpty(size_t column) const {
  auto t = Text(column);
  if (t.ok() && t->empty()) return ErrorAt(column, "must not be empty");
  return t;
}

Result<std::string_view> CsvRow::NonEmpty(std::string_view column) const {
  auto i = Resolve(column);
  if (!i.ok()) return i.status();
  return NonEmpty(*i);
}

Result<int64_t> CsvRow::Int(size_t column, int64_t min, int64_t max) const {
  auto t = Text(column);
  if (!t.ok()) return t.status();
  std::string_view s = *t;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || end != s.data() + s.size() || ec == std::errc::invalid_argument) {
    return ErrorAt(column, "expected a whole number, got " + Quoted(s));
  }
  if (ec == std::errc::result_out_of_range || v < min || v > max) {
    std::string range =
        min == INT64_MIN && max == INT64_MAX
            ? "a whole number that fits 64 bits"
            : "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
    return ErrorAt(column, "expected " + range + ", got " + std::string(s));
  }
  return v;
}

Result<int64_t> CsvRow::Int(std::string_view column, int64_t min, int64_t max) const {
  auto i = Resolve(column);
  if (!i.ok()) return i.status();
  return Int(*i, min, max);
}

Result<Milli> CsvRow::MilliValue(size_t column) const {
  auto t = Text(column);
  if (!t.ok()) return t.status();
  auto v = ParseMilli(*t);
  if (!v.ok()) return ErrorAt(column, v.status().message());
  return v;
}

Result<Milli> CsvRow::MilliValue(std::string_view column) const {
  auto i = Resolve(column);
  if (!i.ok()) return i.status();
  return MilliValue(*i);
}

void CsvErrors::Add(const Status& status) {
  if (status.ok()) return;
  ++count_;
  if (listed_.size() < limit_) listed_.push_back(status.message());
}

Status CsvErrors::ToStatus(std::string_view what) const {
  if (count_ == 0) return Status::Ok();
  std::string msg = std::string(what) + ": " + std::to_string(count_) + " malformed row" +
                    (count_ == 1 ? "" : "s");
  for (const std::string& m : listed_)
    msg += "\n  " + m;
  if (count_ > listed_.size())
    msg += "\n  ... and " + std::to_string(count_ - listed_.size()) + " more";
  return InvalidArgument(std::move(msg));
}

}  // namespace tessera
