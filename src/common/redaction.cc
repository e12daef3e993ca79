#include "common/redaction.h"

#include "common/strings.h"

namespace sluice {

bool IsSecretOptionName(std::string_view name) {
  const std::string n = AsciiLower(name);
  auto has = [&](std::string_view part) { return n.find(part) != std::string::npos; };
  return has("secret") || has("password") || has("token") || has("access.key") ||
         has("sasl.jaas.config") || has("ssl.key.pem") || has("sasl.oauthbearer.config") ||
         n.ends_with(".key");
}

std::map<std::string, std::string> RedactOptions(
    const std::map<std::string, std::string>& options) {
  std::map<std::string, std::string> out = options;
  for (auto& [name, value] : out) {
    if (IsSecretOptionName(name)) value = std::string(kRedactedValue);
  }
  return out;
}

std::string RedactSecretValues(std::string text,
                               const std::map<std::string, std::string>& options) {
  for (const auto& [name, value] : options) {
    if (value.size() < 4 || !IsSecretOptionName(name)) continue;
    for (size_t at = text.find(value); at != std::string::npos;
         at = text.find(value, at + kRedactedValue.size())) {
      text.replace(at, value.size(), kRedactedValue);
    }
  }
  return text;
}

Status RedactSecretValues(const Status& status, const std::map<std::string, std::string>& options) {
  if (status.ok()) return status;
  return Status(status.code(), RedactSecretValues(std::string(status.message()), options));
}

}  // namespace sluice
