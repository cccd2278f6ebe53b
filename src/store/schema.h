// The store's schema, versioned: migration N brings a database from version N-1 to N. A
// database at a version newer than this build knows is refused, never downgraded.
#pragma once

#include "store/sqlite.h"

namespace tessera {

// The schema version this build writes.
int CurrentSchemaVersion();

// Applies every missing migration, each in its own transaction with the version bump.
Status MigrateSchema(Sqlite& db);

// The database's version (0 = empty).
Result<int> SchemaVersion(Sqlite& db);

}  // namespace tessera
