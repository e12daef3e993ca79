#include "stream/progress.h"

#include <charconv>
#include <cstdlib>

#include "stream/json_util.h"

namespace sluice::stream {

namespace {

using Json = nlohmann::ordered_json;

bool SameRate(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// Adds `key` -> rounded `value` unless it is NaN or infinite (Spark's safeDoubleToJValue).
void PutRate(Json& j, const char* key, double value) {
  if (std::isfinite(value)) j[key] = RoundHalfUpOneDecimal(value);
}

template <typename V>
void PutMap(Json& j, const char* key, const std::map<std::string, V>& map) {
  if (map.empty()) return;  // safeMapToJValue: an empty map is omitted
  Json obj = Json::object();
  for (const auto& [k, v] : map) obj[k] = v;
  j[key] = std::move(obj);
}

// An offset embedded as JSON; text that does not parse becomes a JSON string (Spark's tryParse).
Json OffsetValue(const std::optional<std::string>& offset) {
  if (!offset.has_value()) return nullptr;
  Json parsed = ParseJsonNoThrow(*offset);
  if (parsed.is_discarded()) return *offset;
  return parsed;
}

Json StateOperatorJson(const StateOperatorProgress& op) {
  Json j = Json::object();
  j["operatorName"] = op.operator_name;
  j["numRowsTotal"] = op.num_rows_total;
  j["numRowsUpdated"] = op.num_rows_updated;
  j["allUpdatesTimeMs"] = op.all_updates_time_ms;
  j["numRowsRemoved"] = op.num_rows_removed;
  j["allRemovalsTimeMs"] = op.all_removals_time_ms;
  j["commitTimeMs"] = op.commit_time_ms;
  j["memoryUsedBytes"] = op.memory_used_bytes;
  j["numRowsDroppedByWatermark"] = op.num_rows_dropped_by_watermark;
  j["numShufflePartitions"] = op.num_shuffle_partitions;
  j["numStateStoreInstances"] = op.num_state_store_instances;
  PutMap(j, "customMetrics", op.custom_metrics);
  return j;
}

Json SourceJson(const SourceProgress& s) {
  Json j = Json::object();
  j["description"] = s.description;
  j["startOffset"] = OffsetValue(s.start_offset);
  j["endOffset"] = OffsetValue(s.end_offset);
  j["latestOffset"] = OffsetValue(s.latest_offset);
  j["numInputRows"] = s.num_input_rows;
  PutRate(j, "inputRowsPerSecond", s.input_rows_per_second);
  PutRate(j, "processedRowsPerSecond", s.processed_rows_per_second);
  PutMap(j, "metrics", s.metrics);
  return j;
}

Json SinkJson(const SinkProgress& s) {
  Json j = Json::object();
  j["description"] = s.description;
  j["numOutputRows"] = s.num_output_rows;
  PutMap(j, "metrics", s.metrics);
  return j;
}

// --- parsing ------------------------------------------------------------------------------------

class Reader {
 public:
  Reader(const Json& obj, std::string where) : obj_(obj), where_(std::move(where)) {}

  Status String(const char* key, std::string* out, bool required = true) const {
    const Json* v = Find(key);
    if (v == nullptr) return required ? Missing(key) : Status::OK();
    if (!v->is_string()) return Wrong(key, "a string");
    *out = v->get<std::string>();
    return Status::OK();
  }
  Status Long(const char* key, int64_t* out, bool required = true) const {
    const Json* v = Find(key);
    if (v == nullptr) return required ? Missing(key) : Status::OK();
    if (!v->is_number_integer()) return Wrong(key, "an integer");
    *out = v->get<int64_t>();
    return Status::OK();
  }
  // Absent means NaN (it was omitted).
  Status Double(const char* key, double* out) const {
    const Json* v = Find(key);
    if (v == nullptr || v->is_null()) {
      *out = std::numeric_limits<double>::quiet_NaN();
      return Status::OK();
    }
    if (!v->is_number()) return Wrong(key, "a number");
    *out = v->get<double>();
    return Status::OK();
  }
  template <typename V>
  Status Map(const char* key, std::map<std::string, V>* out) const {
    out->clear();
    const Json* v = Find(key);
    if (v == nullptr || v->is_null()) return Status::OK();
    if (!v->is_object()) return Wrong(key, "an object");
    for (const auto& [k, item] : v->items()) {
      if constexpr (std::is_same_v<V, std::string>) {
        if (!item.is_string()) return Wrong(key, "an object of strings");
        (*out)[k] = item.template get<std::string>();
      } else {
        if (!item.is_number_integer()) return Wrong(key, "an object of integers");
        (*out)[k] = item.template get<int64_t>();
      }
    }
    return Status::OK();
  }
  Status Offset(const char* key, std::optional<std::string>* out) const {
    const Json* v = Find(key);
    out->reset();
    if (v == nullptr || v->is_null()) return Status::OK();
    if (v->is_string()) {
      // A string whose content is not JSON was embedded by tryParse's fallback.
      const std::string text = v->get<std::string>();
      if (ParseJsonNoThrow(text).is_discarded()) {
        *out = text;
        return Status::OK();
      }
    }
    *out = DumpJson(*v);
    return Status::OK();
  }
  const Json* Find(const char* key) const {
    auto it = obj_.find(key);
    return it == obj_.end() ? nullptr : &*it;
  }
  Status Missing(const char* key) const {
    return Status::Corruption(where_ + ": missing field \"" + key + "\"");
  }
  Status Wrong(const char* key, const char* what) const {
    return Status::Corruption(where_ + ": field \"" + key + "\" is not " + what);
  }

 private:
  const Json& obj_;
  std::string where_;
};

Result<StateOperatorProgress> ParseStateOperator(const Json& j, const std::string& where) {
  if (!j.is_object()) return Status::Corruption(where + " is not an object");
  Reader r(j, where);
  StateOperatorProgress op;
  SLUICE_RETURN_NOT_OK(r.String("operatorName", &op.operator_name));
  SLUICE_RETURN_NOT_OK(r.Long("numRowsTotal", &op.num_rows_total));
  SLUICE_RETURN_NOT_OK(r.Long("numRowsUpdated", &op.num_rows_updated));
  SLUICE_RETURN_NOT_OK(r.Long("allUpdatesTimeMs", &op.all_updates_time_ms, false));
  SLUICE_RETURN_NOT_OK(r.Long("numRowsRemoved", &op.num_rows_removed, false));
  SLUICE_RETURN_NOT_OK(r.Long("allRemovalsTimeMs", &op.all_removals_time_ms, false));
  SLUICE_RETURN_NOT_OK(r.Long("commitTimeMs", &op.commit_time_ms, false));
  SLUICE_RETURN_NOT_OK(r.Long("memoryUsedBytes", &op.memory_used_bytes, false));
  SLUICE_RETURN_NOT_OK(
      r.Long("numRowsDroppedByWatermark", &op.num_rows_dropped_by_watermark, false));
  SLUICE_RETURN_NOT_OK(r.Long("numShufflePartitions", &op.num_shuffle_partitions, false));
  SLUICE_RETURN_NOT_OK(r.Long("numStateStoreInstances", &op.num_state_store_instances, false));
  SLUICE_RETURN_NOT_OK(r.Map("customMetrics", &op.custom_metrics));
  return op;
}

Result<SourceProgress> ParseSource(const Json& j, const std::string& where) {
  if (!j.is_object()) return Status::Corruption(where + " is not an object");
  Reader r(j, where);
  SourceProgress s;
  SLUICE_RETURN_NOT_OK(r.String("description", &s.description));
  SLUICE_RETURN_NOT_OK(r.Offset("startOffset", &s.start_offset));
  SLUICE_RETURN_NOT_OK(r.Offset("endOffset", &s.end_offset));
  SLUICE_RETURN_NOT_OK(r.Offset("latestOffset", &s.latest_offset));
  SLUICE_RETURN_NOT_OK(r.Long("numInputRows", &s.num_input_rows));
  SLUICE_RETURN_NOT_OK(r.Double("inputRowsPerSecond", &s.input_rows_per_second));
  SLUICE_RETURN_NOT_OK(r.Double("processedRowsPerSecond", &s.processed_rows_per_second));
  SLUICE_RETURN_NOT_OK(r.Map("metrics", &s.metrics));
  return s;
}

}  // namespace

bool SourceProgress::operator==(const SourceProgress& o) const {
  return description == o.description && start_offset == o.start_offset &&
         end_offset == o.end_offset && latest_offset == o.latest_offset &&
         num_input_rows == o.num_input_rows &&
         SameRate(input_rows_per_second, o.input_rows_per_second) &&
         SameRate(processed_rows_per_second, o.processed_rows_per_second) && metrics == o.metrics;
}

int64_t StreamingQueryProgress::NumInputRows() const {
  int64_t n = 0;
  for (const SourceProgress& s : sources) n += s.num_input_rows;
  return n;
}

double StreamingQueryProgress::InputRowsPerSecond() const {
  double sum = 0;
  for (const SourceProgress& s : sources) sum += s.input_rows_per_second;
  return sum;
}

double StreamingQueryProgress::ProcessedRowsPerSecond() const {
  double sum = 0;
  for (const SourceProgress& s : sources) sum += s.processed_rows_per_second;
  return sum;
}

double RoundHalfUpOneDecimal(double value) {
  if (!std::isfinite(value)) return value;
  // The shortest decimal text that reads back as `value` (what BigDecimal(double) starts from).
  char buf[400];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::fixed);
  if (ec != std::errc()) return value;
  std::string text(buf, end);
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) text.erase(0, 1);
  size_t dot = text.find('.');
  if (dot == std::string::npos) {
    text += ".0";
  } else if (text.size() > dot + 2) {
    const bool round_up = text[dot + 2] >= '5';
    text.resize(dot + 2);
    if (round_up) {
      // Increment the last kept digit with carry, skipping the '.'.
      int i = static_cast<int>(text.size()) - 1;
      while (i >= 0) {
        if (text[static_cast<size_t>(i)] == '.') {
          --i;
          continue;
        }
        if (text[static_cast<size_t>(i)] == '9') {
          text[static_cast<size_t>(i)] = '0';
          --i;
        } else {
          ++text[static_cast<size_t>(i)];
          break;
        }
      }
      if (i < 0) text.insert(text.begin(), '1');
    }
  } else if (text.size() == dot + 1) {
    text += '0';
  }
  double rounded = std::strtod(text.c_str(), nullptr);
  if (rounded == 0) return 0.0;  // BigDecimal has no negative zero
  return negative ? -rounded : rounded;
}

Json ProgressToJsonValue(const StreamingQueryProgress& p) {
  Json j = Json::object();
  j["id"] = p.id;
  j["runId"] = p.run_id;
  j["name"] = p.name.has_value() ? Json(*p.name) : Json(nullptr);
  j["timestamp"] = p.timestamp;
  j["batchId"] = p.batch_id;
  j["batchDuration"] = p.batch_duration;
  j["numInputRows"] = p.NumInputRows();
  PutRate(j, "inputRowsPerSecond", p.InputRowsPerSecond());
  PutRate(j, "processedRowsPerSecond", p.ProcessedRowsPerSecond());
  PutMap(j, "durationMs", p.duration_ms);
  PutMap(j, "eventTime", p.event_time);
  Json ops = Json::array();
  for (const StateOperatorProgress& op : p.state_operators) ops.push_back(StateOperatorJson(op));
  j["stateOperators"] = std::move(ops);
  Json sources = Json::array();
  for (const SourceProgress& s : p.sources) sources.push_back(SourceJson(s));
  j["sources"] = std::move(sources);
  j["sink"] = SinkJson(p.sink);
  PutMap(j, "observedMetrics", p.observed_metrics);
  return j;
}

std::string ProgressToJson(const StreamingQueryProgress& progress) {
  return DumpJson(ProgressToJsonValue(progress));
}

Result<StreamingQueryProgress> ParseProgressJson(std::string_view json) {
  return CatchJsonExceptions("streaming query progress", [&]() -> Result<StreamingQueryProgress> {
    Json j = ParseJsonNoThrow(json);
    if (j.is_discarded()) return Status::Corruption("streaming query progress is not valid JSON");
    if (!j.is_object()) return Status::Corruption("streaming query progress is not a JSON object");
    Reader r(j, "streaming query progress");
    StreamingQueryProgress p;
    SLUICE_RETURN_NOT_OK(r.String("id", &p.id));
    SLUICE_RETURN_NOT_OK(r.String("runId", &p.run_id));
    if (const Json* name = r.Find("name"); name != nullptr && !name->is_null()) {
      if (!name->is_string()) return r.Wrong("name", "a string or null");
      p.name = name->get<std::string>();
    }
    SLUICE_RETURN_NOT_OK(r.String("timestamp", &p.timestamp));
    SLUICE_RETURN_NOT_OK(r.Long("batchId", &p.batch_id));
    SLUICE_RETURN_NOT_OK(r.Long("batchDuration", &p.batch_duration, false));
    SLUICE_RETURN_NOT_OK(r.Map("durationMs", &p.duration_ms));
    SLUICE_RETURN_NOT_OK(r.Map("eventTime", &p.event_time));
    if (const Json* ops = r.Find("stateOperators"); ops != nullptr && !ops->is_null()) {
      if (!ops->is_array()) return r.Wrong("stateOperators", "an array");
      for (size_t i = 0; i < ops->size(); ++i) {
        SLUICE_ASSIGN_OR_RETURN(
            StateOperatorProgress op,
            ParseStateOperator((*ops)[i], "stateOperators[" + std::to_string(i) + "]"));
        p.state_operators.push_back(std::move(op));
      }
    }
    if (const Json* sources = r.Find("sources"); sources != nullptr && !sources->is_null()) {
      if (!sources->is_array()) return r.Wrong("sources", "an array");
      for (size_t i = 0; i < sources->size(); ++i) {
        SLUICE_ASSIGN_OR_RETURN(SourceProgress s,
                                ParseSource((*sources)[i], "sources[" + std::to_string(i) + "]"));
        p.sources.push_back(std::move(s));
      }
    }
    const Json* sink = r.Find("sink");
    if (sink == nullptr || !sink->is_object()) return r.Wrong("sink", "an object");
    Reader sr(*sink, "sink");
    SLUICE_RETURN_NOT_OK(sr.String("description", &p.sink.description));
    SLUICE_RETURN_NOT_OK(sr.Long("numOutputRows", &p.sink.num_output_rows, false));
    SLUICE_RETURN_NOT_OK(sr.Map("metrics", &p.sink.metrics));
    if (const Json* obs = r.Find("observedMetrics"); obs != nullptr && !obs->is_null()) {
      if (!obs->is_object()) return r.Wrong("observedMetrics", "an object");
      for (const auto& [k, v] : obs->items()) p.observed_metrics[k] = v;
    }
    return p;
  });
}

}  // namespace sluice::stream
