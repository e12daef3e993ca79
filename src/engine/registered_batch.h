// The C++ <-> DuckDB round trip in one place: a Batch made visible to a connection's SQL under a
// name for as long as it is needed, then dropped, and an empty batch of a schema without a query.
//
//   SLUICE_ASSIGN_OR_RETURN(Batch out, QueryOver(conn, "__in", rows, "SELECT a + 1 FROM __in"));
//
//   SLUICE_ASSIGN_OR_RETURN(RegisteredBatch in, RegisteredBatch::Make(conn, "__in", rows));
//   SLUICE_ASSIGN_OR_RETURN(Batch n, conn->Query("SELECT count(*) FROM __in"));
//   SLUICE_ASSIGN_OR_RETURN(Batch rest, conn->Query("SELECT * FROM __in WHERE ..."));
//   SLUICE_RETURN_NOT_OK(in.Release());   // or let the destructor drop it (its error ignored)
//
// Errors: the query's error comes first, then the one of dropping the registration (which fails
// only on a broken connection). Thread safety: as the Connection's (one thread at a time).
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "engine/engine.h"
#include "engine/types.h"

namespace sluice::engine {

class RegisteredBatch {
 public:
  // Registers `batch` as `name` on `conn` (Connection::RegisterBatch, which replaces an earlier
  // registration of that name). `conn` must outlive the result.
  static Result<RegisteredBatch> Make(Connection* conn, std::string name, const Batch& batch);

  RegisteredBatch(RegisteredBatch&& other) noexcept;
  RegisteredBatch& operator=(RegisteredBatch&& other) noexcept;
  RegisteredBatch(const RegisteredBatch&) = delete;
  RegisteredBatch& operator=(const RegisteredBatch&) = delete;
  // Drops the registration if Release did not (its error ignored).
  ~RegisteredBatch();

  const std::string& name() const { return name_; }
  // Drops the registration now and returns UnregisterBatch's status; later calls return OK.
  Status Release();

 private:
  RegisteredBatch(Connection* conn, std::string name) : conn_(conn), name_(std::move(name)) {}
  Connection* conn_ = nullptr;  // null once released or moved from
  std::string name_;
};

// Runs `sql` over `batch`, registered as `name` for this query only.
Result<Batch> QueryOver(Connection* conn, const std::string& name, const Batch& batch,
                        std::string_view sql);

// A batch with `schema`'s columns and no rows (Batch() when the schema has none), made without
// SQL; InvalidArgument for a type the engine does not know.
Result<Batch> EmptyBatch(const Schema& schema);

}  // namespace sluice::engine
