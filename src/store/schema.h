// The store's schema, versioned: migration N brings a database from version N-1 to N. A
// database at a version newer than this build knows is refused, never downgraded.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "store/sqlite.h"

namespace tessera {

// The schema version this build writes.
int CurrentSchemaVersion();

// Applies every missing migration, each in its own transaction with the version bump.
Status MigrateSchema(Sqlite& db);

// The database's version (0 = empty).
Result<int> SchemaVersion(Sqlite& db);

// What both stores' migrations share (postgres_schema.cc too). Brings the database `name` from
// `version` to migrations.size(): migration v and the version bump in one transaction, which
// `begin` opens, each run by `exec`; FailedPrecondition for a version newer than this build's.
Status ApplyMigrations(const std::string& name, int version,
                       const std::vector<const char*>& migrations, const char* begin,
                       const std::function<Status(const std::string&)>& exec);
// meta.schema_version's text as a number, or FailedPrecondition naming the database.
Result<int> ParseSchemaVersion(const std::string& name, const std::string& text);

}  // namespace tessera
