// The store's schema on PostgreSQL: the same tables, columns and versions as SQLite's
// (store/schema.h), migration N of each bringing version N-1 to N, in PostgreSQL's dialect
// (BIGINT for SQLite's INTEGER, identity columns for its rowids). A database at a version newer
// than this build knows is refused, never downgraded.
#pragma once

#include "store/postgres.h"

namespace tessera {

// How many migrations the PostgreSQL schema has (== CurrentSchemaVersion()).
int PgMigrationCount();

// Applies every missing migration, each in its own transaction with the version bump, and
// creates the daemons' lease table (tessera_lease), under an advisory lock: daemons that start
// at once migrate one after the other. FailedPrecondition,
// naming the database, when it holds tables of another program (no meta table) or a newer
// schema.
Status MigratePgSchema(Postgres& db);

// The database's version (0 = empty).
Result<int> PgSchemaVersion(Postgres& db);

}  // namespace tessera
