#include "connect/rpc_errors.h"

#include <string_view>

#include "common/json_escape.h"

namespace sluice::connect {

namespace {

// Protocol Buffers' wire format: a key is (field << 3 | wire type); 0 varint, 2 length-delimited.
void Varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void Bytes(std::string* out, int field, std::string_view bytes) {
  Varint(out, static_cast<uint64_t>(field) << 3 | 2);
  Varint(out, bytes.size());
  out->append(bytes);
}

std::string JsonString(const std::string& s) { return JsonQuoted(s, JsonEscape::kMinimal); }

}  // namespace

SparkError SparkErrorOf(const Status& status) {
  SparkError e;
  e.message = status.message();
  if (status.IsNotSupported()) {
    e.code = grpc::StatusCode::UNIMPLEMENTED;
    e.exception_class = "org.apache.spark.SparkUnsupportedOperationException";
    e.error_class = "UNSUPPORTED_CONNECT_FEATURE";
    e.sql_state = "0A000";
  } else if (status.IsInvalidArgument() || status.IsNotFound() || status.IsAlreadyExists()) {
    e.code = grpc::StatusCode::INVALID_ARGUMENT;
    if (e.message.find("Parser Error") != std::string::npos) {
      e.exception_class = "org.apache.spark.sql.catalyst.parser.ParseException";
      e.error_class = "PARSE_SYNTAX_ERROR";
      e.sql_state = "42601";
    } else {
      e.exception_class = "org.apache.spark.sql.AnalysisException";
    }
  } else {
    e.code = grpc::StatusCode::INTERNAL;
    e.exception_class = "org.apache.spark.SparkException";
  }
  return e;
}

std::string EncodeStatusDetails(const SparkError& error, const std::string& message) {
  // ErrorInfo: reason = 1, domain = 2, metadata = 3 (map entries: key = 1, value = 2).
  std::string info;
  Bytes(&info, 1, error.exception_class);
  Bytes(&info, 2, "org.apache.spark");
  auto meta = [&info](std::string_view key, const std::string& value) {
    std::string entry;
    Bytes(&entry, 1, key);
    Bytes(&entry, 2, value);
    Bytes(&info, 3, entry);
  };
  std::string classes = "[" + JsonString(error.exception_class);
  if (error.exception_class == "org.apache.spark.SparkUnsupportedOperationException") {
    classes += "," + JsonString("java.lang.UnsupportedOperationException");
  }
  classes += "]";
  meta("classes", classes);
  if (!error.error_class.empty()) {
    meta("errorClass", error.error_class);
    meta("messageParameters", "{}");
  }
  if (!error.sql_state.empty()) meta("sqlState", error.sql_state);
  // Any: type_url = 1, value = 2.
  std::string any;
  Bytes(&any, 1, "type.googleapis.com/google.rpc.ErrorInfo");
  Bytes(&any, 2, info);
  // google.rpc.Status: code = 1, message = 2, details = 3.
  std::string out;
  Varint(&out, 1 << 3 | 0);
  Varint(&out, static_cast<uint64_t>(error.code));
  Bytes(&out, 2, message);
  Bytes(&out, 3, any);
  return out;
}

grpc::Status ToGrpcStatus(const SparkError& error) {
  std::string message =
      error.error_class.empty() ? error.message : "[" + error.error_class + "] " + error.message;
  return grpc::Status(error.code, message, EncodeStatusDetails(error, message));
}

}  // namespace sluice::connect
