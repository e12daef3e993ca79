#include "sql/pipeline_expectation_sink.h"

#include <utility>

#include "dialect/spark_sql.h"
#include "sinks/sink.h"

namespace sluice::sql {
namespace {

constexpr char kInput[] = "__expect_in";

class ExpectationSink : public sinks::Sink {
 public:
  ExpectationSink(std::shared_ptr<sinks::Sink> inner, std::unique_ptr<engine::Connection> conn,
                  std::string dataset, std::vector<Expectation> expectations,
                  std::vector<std::string> conditions, std::shared_ptr<ExpectationMetrics> metrics)
      : inner_(std::move(inner)),
        conn_(std::move(conn)),
        dataset_(std::move(dataset)),
        expectations_(std::move(expectations)),
        conditions_(std::move(conditions)),
        metrics_(std::move(metrics)) {}

  std::string Description() const override { return inner_->Description(); }
  std::optional<int64_t> LastNumOutputRows() const override { return inner_->LastNumOutputRows(); }
  std::map<std::string, std::string> Metrics() const override { return inner_->Metrics(); }

  Status AddBatch(BatchId batch_id, const engine::Batch& data, sinks::OutputMode mode) override {
    std::vector<ExpectationCount> counts;
    for (const Expectation& e : expectations_) counts.push_back({e.name, 0, 0});
    if (data.num_columns() == 0) {
      metrics_->Set(batch_id.value(), DataQualityJson(dataset_, 0, counts));
      return inner_->AddBatch(batch_id, data, mode);
    }
    SLUICE_RETURN_NOT_OK(conn_->RegisterBatch(kInput, data));
    Result<engine::Batch> kept = Check(batch_id, data, &counts);
    (void)conn_->UnregisterBatch(kInput);
    if (!kept.ok()) return kept.status();
    metrics_->Set(batch_id.value(),
                  DataQualityJson(dataset_, data.num_rows() - kept->num_rows(), counts));
    return inner_->AddBatch(batch_id, *kept, mode);
  }

 private:
  // Counts, fails or filters the registered rows; the rows to write.
  Result<engine::Batch> Check(BatchId batch_id, const engine::Batch& data,
                              std::vector<ExpectationCount>* counts) {
    const std::string where = "in batch " + std::to_string(batch_id.value());
    if (!types_checked_) {
      for (size_t i = 0; i < conditions_.size(); ++i) {
        // One at a time, so that an error names its expectation.
        Result<engine::Batch> typed =
            conn_->Query("SELECT (" + conditions_[i] + ") FROM " + kInput + " LIMIT 0");
        if (!typed.ok()) {
          return Status::InvalidArgument("expectation '" + expectations_[i].name + "' of '" +
                                         dataset_ + "': cannot evaluate (" +
                                         expectations_[i].condition +
                                         ") over the query's output: " + typed.status().message());
        }
        const engine::TypeId id = typed->schema()[0].type.id;
        if (id != engine::TypeId::kBoolean && id != engine::TypeId::kNull) {
          return Status::InvalidArgument("expectation '" + expectations_[i].name + "' of '" +
                                         dataset_ + "': its condition (" +
                                         expectations_[i].condition + ") is " +
                                         typed->schema()[0].type.ToSql() + ", not BOOLEAN");
        }
      }
      types_checked_ = true;
    }
    std::string sql = "SELECT ";
    for (size_t i = 0; i < conditions_.size(); ++i) {
      sql += "count_if(NOT (" + conditions_[i] + ")), ";
    }
    sql += std::string("count(*) FROM ") + kInput;
    SLUICE_ASSIGN_OR_RETURN(engine::Batch row, conn_->Query(sql));
    SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> n, row.GetInt64(0, conditions_.size()));
    bool any_drop = false;
    for (size_t i = 0; i < conditions_.size(); ++i) {
      SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> failed, row.GetInt64(0, i));
      (*counts)[i].failed = failed.value_or(0);
      (*counts)[i].passed = n.value_or(0) - (*counts)[i].failed;
      if ((*counts)[i].failed == 0) continue;
      if (expectations_[i].action == Expectation::Action::kFailUpdate) {
        SLUICE_ASSIGN_OR_RETURN(engine::Batch bad,
                                conn_->Query(std::string("SELECT * FROM ") + kInput +
                                             " WHERE NOT (" + conditions_[i] + ") LIMIT 1"));
        return ExpectationFailed(expectations_[i], dataset_, where,
                                 bad.num_rows() > 0 ? RowJson(bad, 0) : "?");
      }
      any_drop = any_drop || expectations_[i].action == Expectation::Action::kDropRow;
    }
    if (!any_drop) return data;
    std::string filter;
    for (size_t i = 0; i < conditions_.size(); ++i) {
      if (expectations_[i].action != Expectation::Action::kDropRow) continue;
      filter +=
          (filter.empty() ? "" : " AND ") + std::string("coalesce((") + conditions_[i] + "), true)";
    }
    return conn_->Query(std::string("SELECT * FROM ") + kInput + " WHERE " + filter);
  }

  std::shared_ptr<sinks::Sink> inner_;
  std::unique_ptr<engine::Connection> conn_;
  std::string dataset_;
  std::vector<Expectation> expectations_;
  std::vector<std::string> conditions_;  // in the engine's dialect
  std::shared_ptr<ExpectationMetrics> metrics_;
  bool types_checked_ = false;
};

}  // namespace

void ExpectationMetrics::Set(int64_t batch_id, nlohmann::ordered_json data_quality) {
  std::lock_guard<std::mutex> lock(mu_);
  by_batch_[batch_id] = std::move(data_quality);
}

std::optional<nlohmann::ordered_json> ExpectationMetrics::Take(int64_t batch_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_batch_.find(batch_id);
  if (it == by_batch_.end()) return std::nullopt;
  nlohmann::ordered_json out = std::move(it->second);
  by_batch_.erase(it);
  return out;
}

stream::SinkFactory ExpectationSinkFactory(stream::SinkFactory inner, std::string dataset,
                                           std::vector<Expectation> expectations,
                                           std::shared_ptr<ExpectationMetrics> metrics) {
  return [inner = std::move(inner), dataset = std::move(dataset),
          expectations = std::move(expectations), metrics = std::move(metrics)](
             const stream::SinkContext& ctx) -> Result<std::shared_ptr<sinks::Sink>> {
    SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<sinks::Sink> sink, inner(ctx));
    if (ctx.engine == nullptr) return Status::InvalidArgument("expectations need an engine");
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<engine::Connection> conn, ctx.engine->Connect());
    std::vector<std::string> conditions;
    for (const Expectation& e : expectations) {
      Result<std::string> rewritten = dialect::RewriteSparkExpression(conn.get(), e.condition);
      if (!rewritten.ok()) {
        return Status::InvalidArgument("expectation '" + e.name + "' of '" + dataset +
                                       "': " + rewritten.status().message());
      }
      conditions.push_back(*rewritten);
    }
    return std::shared_ptr<sinks::Sink>(std::make_shared<ExpectationSink>(
        std::move(sink), std::move(conn), dataset, expectations, std::move(conditions), metrics));
  };
}

}  // namespace sluice::sql
