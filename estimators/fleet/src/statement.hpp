// A prepared SQLite statement that finalizes itself, and the checks around it.
#pragma once
#include <sqlite3.h>

#include <optional>
#include <string>

#include "tremor/fleet/error.hpp"

namespace tremor::fleet {

[[noreturn]] inline void fail(sqlite3* db, const std::string& what) {
  throw FleetError(what + ": " + sqlite3_errmsg(db));
}

class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &statement_, nullptr) != SQLITE_OK) fail(db, "cannot prepare SQL");
  }
  ~Statement() { sqlite3_finalize(statement_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int index, long long value) {
    sqlite3_bind_int64(statement_, index, value);
    return *this;
  }
  Statement& bind(int index, double value) {
    sqlite3_bind_double(statement_, index, value);
    return *this;
  }
  Statement& bind(int index, const std::string& value) {
    sqlite3_bind_text(statement_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int index, const std::optional<double>& value) {
    if (value) return bind(index, *value);
    sqlite3_bind_null(statement_, index);
    return *this;
  }
  Statement& bind_text_or_null(int index, const std::string& value) {
    if (!value.empty()) return bind(index, value);
    sqlite3_bind_null(statement_, index);
    return *this;
  }
  // True while a row is there.
  bool step() {
    const int status = sqlite3_step(statement_);
    if (status == SQLITE_ROW) return true;
    if (status != SQLITE_DONE) fail(db_, "SQL failed");
    return false;
  }
  void run() {
    while (step()) {
    }
    sqlite3_reset(statement_);
  }
  void reset() { sqlite3_reset(statement_); }
  long long integer(int column) const { return sqlite3_column_int64(statement_, column); }
  double real(int column) const { return sqlite3_column_double(statement_, column); }
  bool null(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }
  std::string text(int column) const {
    const auto* value = sqlite3_column_text(statement_, column);
    return value ? reinterpret_cast<const char*>(value) : "";
  }
  sqlite3_stmt* get() const { return statement_; }

 private:
  sqlite3* db_;
  sqlite3_stmt* statement_ = nullptr;
};

}  // namespace tremor::fleet
