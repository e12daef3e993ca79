// Redaction of secrets in what Sluice shows: logs, progress JSON, the monitoring endpoints,
// error messages, DESCRIBE/SHOW output and stored definitions. The one place that decides
// which option names hold secrets. Pure functions; thread-safe.
//
// An option holds a secret when its name matches Spark's `spark.redaction.regex` default,
// `(?i)secret|password|token|access[.]key`, or names Kafka key material or login config:
// `sasl.jaas.config`, `ssl.key.pem`, `sasl.oauthbearer.config` (any prefix, e.g. `kafka.`),
// or ends in `.key` (`kafka.ssl.keystore.key`). Names are compared case-insensitively.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice {

// What a secret value is shown as (Spark's Utils.REDACTION_REPLACEMENT_TEXT).
inline constexpr std::string_view kRedactedValue = "*********(redacted)";

// True when an option named `name` holds a secret (the rule above).
bool IsSecretOptionName(std::string_view name);

// `options` with the value of every secret option replaced by kRedactedValue.
std::map<std::string, std::string> RedactOptions(const std::map<std::string, std::string>& options);

// `text` with every occurrence of the value of a secret option of `options` replaced by
// kRedactedValue (values shorter than 4 bytes are left: they would redact unrelated text, and
// no real secret is that short). For messages that may quote a value: a client library's error,
// a SQL fragment.
std::string RedactSecretValues(std::string text, const std::map<std::string, std::string>& options);
// The same over a Status's message (code kept).
Status RedactSecretValues(const Status& status, const std::map<std::string, std::string>& options);

}  // namespace sluice
