// The durable store's contract (store_contract.h) held against the stores of this process: the
// SQLite store on a real file (reopened where the test says so: what a restart reads), the
// in-memory store, and the fault-injecting store over it while healthy. PostgreSQL's is an e2e
// test (it needs a server).
#include "store/store_contract.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "store/faulty_store.h"
#include "store/memory_store.h"
#include "store/sqlite_store.h"

namespace tessera {
namespace {

// Each kind of store: how a test gets one, and what "reopened" means for it.
struct SqliteKind {
  std::string path;
  explicit SqliteKind(const std::string& test) {
    auto dir = std::filesystem::temp_directory_path() /
               ("tessera-contract-" + test + "-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    path = (dir / "t.db").string();
  }
  std::unique_ptr<DurableStore> Open() {
    auto store = SqliteStore::Open(path);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }
  // A new process on the same file.
  std::unique_ptr<DurableStore> Reopen(std::unique_ptr<DurableStore> old) {
    old.reset();
    return Open();
  }
};

struct MemoryKind {
  explicit MemoryKind(const std::string&) {}
  std::unique_ptr<DurableStore> Open() { return std::make_unique<InMemoryStore>(); }
  // Nothing outlives the object: the same one is read again.
  std::unique_ptr<DurableStore> Reopen(std::unique_ptr<DurableStore> old) { return old; }
};

struct FaultyKind {
  explicit FaultyKind(const std::string&) {}
  std::unique_ptr<DurableStore> Open() {
    return std::make_unique<FaultyStore>(std::make_unique<InMemoryStore>());
  }
  std::unique_ptr<DurableStore> Reopen(std::unique_ptr<DurableStore> old) { return old; }
};

using Kinds = ::testing::Types<SqliteKind, MemoryKind, FaultyKind>;
class KindNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    if (std::is_same_v<T, SqliteKind>) return "Sqlite";
    if (std::is_same_v<T, MemoryKind>) return "Memory";
    return "Faulty";
  }
};

}  // namespace

namespace testing {
INSTANTIATE_TYPED_TEST_SUITE_P(Stores, StoreContract, Kinds, KindNames);
}  // namespace testing
}  // namespace tessera
