#include "engine/registered_batch.h"

#include <utility>

#include "engine/batch_builder.h"

namespace sluice::engine {

Result<RegisteredBatch> RegisteredBatch::Make(Connection* conn, std::string name,
                                              const Batch& batch) {
  SLUICE_RETURN_NOT_OK(conn->RegisterBatch(name, batch));
  return RegisteredBatch(conn, std::move(name));
}

RegisteredBatch::RegisteredBatch(RegisteredBatch&& other) noexcept
    : conn_(std::exchange(other.conn_, nullptr)), name_(std::move(other.name_)) {}

RegisteredBatch& RegisteredBatch::operator=(RegisteredBatch&& other) noexcept {
  if (this != &other) {
    (void)Release();
    conn_ = std::exchange(other.conn_, nullptr);
    name_ = std::move(other.name_);
  }
  return *this;
}

RegisteredBatch::~RegisteredBatch() { (void)Release(); }

Status RegisteredBatch::Release() {
  if (conn_ == nullptr) return Status::OK();
  Connection* conn = std::exchange(conn_, nullptr);
  return conn->UnregisterBatch(name_);
}

Result<Batch> QueryOver(Connection* conn, const std::string& name, const Batch& batch,
                        std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(RegisteredBatch registered, RegisteredBatch::Make(conn, name, batch));
  Result<Batch> out = conn->Query(sql);
  Status dropped = registered.Release();
  if (!out.ok()) return out.status();
  SLUICE_RETURN_NOT_OK(dropped);
  return out;
}

Result<Batch> EmptyBatch(const Schema& schema) {
  if (schema.empty()) return Batch();
  BatchBuilder builder(schema);
  return builder.Finish();
}

}  // namespace sluice::engine
