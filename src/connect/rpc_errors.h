// rpc_errors: Sluice's Status as the gRPC status a Spark Connect client understands.
//
// PySpark turns a failed call into a Python exception from the call's google.rpc.Status
// details: an ErrorInfo (reason, domain "org.apache.spark", metadata "classes" — the JVM
// exception classes, most specific first —, "errorClass", "sqlState", "messageParameters").
// The status message is Spark's "[ERROR_CLASS] message" form. The mapping:
//
//   Sluice status                          gRPC code          exception (PySpark's)     error class
//   NotSupported                           UNIMPLEMENTED      UnsupportedOperationException
//   UNSUPPORTED_CONNECT_FEATURE InvalidArgument, NotFound, AlreadyExists INVALID_ARGUMENT
//   AnalysisException          (none), or
//     an engine "Parser Error"                                ParseException PARSE_SYNTAX_ERROR
//   anything else                          INTERNAL           SparkException            (none)
//
// The details are encoded by hand (google.rpc.Status and ErrorInfo are three small messages;
// their field numbers are in rpc_errors.cc), so no googleapis code is needed.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include <grpcpp/support/status.h>

#include "common/status.h"

namespace sluice::connect {

struct SparkError {
  grpc::StatusCode code = grpc::StatusCode::INTERNAL;
  std::string exception_class;  // "org.apache.spark.sql.AnalysisException"
  std::string error_class;      // "UNSUPPORTED_CONNECT_FEATURE", or empty
  std::string sql_state;        // "0A000", or empty
  std::string message;
};

// The Spark error a Sluice status is reported as (the table above).
SparkError SparkErrorOf(const Status& status);

// The gRPC status of a Spark error, with its ErrorInfo details.
grpc::Status ToGrpcStatus(const SparkError& error);
inline grpc::Status ToGrpcStatus(const Status& status) {
  return ToGrpcStatus(SparkErrorOf(status));
}

// The serialized google.rpc.Status of `error` (exposed for tests).
std::string EncodeStatusDetails(const SparkError& error, const std::string& message);

}  // namespace sluice::connect
