// Batch reads of Kafka in SQL: `SELECT ... FROM read_kafka(bootstrapServers => ..., subscribe =>
// ..., startingOffsets => ..., endingOffsets => ...)` without STREAM (Spark's
// `spark.read.format("kafka")`, docs/kafka.md "Batch reads").
//
// The rewrite finds each `read_kafka(` call not preceded by STREAM (outside strings and
// comments), takes its named arguments (`name => literal`) as source options, and replaces the
// call by a relation name; the session reads the records with sources::kafka::KafkaSource::
// ReadBatch and registers them under that name for the statement. A name is a word, a dotted
// name or a name in backticks (Databricks' spelling of an option with dots:
// `kafka.sasl.jaas.config` => ...); a value is a literal or Databricks' secret('scope', 'key'),
// resolved here (common/secret_reference.h), so the options hold the secret and the statement
// text only the reference.
//
// Thread safety: reads the environment and the secrets file for secret(); otherwise pure.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace sluice::sql {

struct KafkaBatchReference {
  std::map<std::string, std::string> options;  // argument name (as written) -> value, resolved
  std::string view_name;                       // the relation the rewritten query reads
};

struct KafkaBatchRewrite {
  std::string sql;
  std::vector<KafkaBatchReference> references;
};

// InvalidArgument naming the position for a positional argument, an argument that is not a
// literal or secret(...), or an argument given twice; secret()'s errors (NotFound naming the
// option and where the secret was looked up), never a secret's value.
Result<KafkaBatchRewrite> RewriteKafkaBatchReads(std::string_view sql);

}  // namespace sluice::sql
