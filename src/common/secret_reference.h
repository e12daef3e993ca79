// Databricks' secret(scope, key) as the value of a source or sink option, so that a stored
// definition carries the reference and never the secret:
//
//   FROM STREAM read_kafka(bootstrapServers => 'b:9096', subscribe => 'orders')
//   WITH ('kafka.sasl.jaas.config' = secret('kafka', 'jaas'))
//
// `secret('scope', 'key')` (also `secret(scope => 's', key => 'k')`) is resolved when a query
// starts (stream/micro_batch_execution.h resolves every source's options), from, in this order:
//   1. the environment variable SLUICE_SECRET_<SCOPE>_<KEY>: scope and key upper-cased, every
//      character other than A-Z and 0-9 made '_' (secret('kafka', 'sasl-password') reads
//      SLUICE_SECRET_KAFKA_SASL_PASSWORD);
//   2. the secrets file named by SLUICE_SECRETS_FILE: a JSON object {"<scope>": {"<key>":
//      "<value>"}}, which must be readable by its owner only (mode 0600 or stricter).
// A reference that resolves to nothing is NotFound naming the scope, the key and both places.
// Errors never contain a secret's value. Thread-safe (reads the environment and the file).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sluice {

struct SecretReference {
  std::string scope, key;
};

// The reference `value` spells (`secret('s', 'k')`, any case and spacing), nullopt when it is
// not one. InvalidArgument for a malformed `secret(...)` call.
Result<std::optional<SecretReference>> ParseSecretReference(std::string_view value);

// "SLUICE_SECRET_<SCOPE>_<KEY>".
std::string SecretEnvironmentName(const SecretReference& ref);

// The secret's value (the order above).
Result<std::string> ResolveSecret(const SecretReference& ref);

// `options` with every value that is a secret() reference replaced by the secret; errors name
// the option.
Result<std::map<std::string, std::string>> ResolveSecretReferences(
    const std::map<std::string, std::string>& options);

}  // namespace sluice
