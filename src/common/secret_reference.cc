#include "common/secret_reference.h"

#include <sys/stat.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/strings.h"

namespace sluice {
namespace {

constexpr char kSecretsFileVariable[] = "SLUICE_SECRETS_FILE";

void SkipSpace(std::string_view s, size_t* i) {
  while (*i < s.size() && std::isspace(static_cast<unsigned char>(s[*i]))) ++*i;
}

// A single-quoted SQL string at *i ('' is a quote).
bool ReadLiteral(std::string_view s, size_t* i, std::string* out) {
  if (*i >= s.size() || s[*i] != '\'') return false;
  out->clear();
  for (size_t j = *i + 1; j < s.size(); ++j) {
    if (s[j] != '\'') {
      out->push_back(s[j]);
    } else if (j + 1 < s.size() && s[j + 1] == '\'') {
      out->push_back('\'');
      ++j;
    } else {
      *i = j + 1;
      return true;
    }
  }
  return false;
}

// [name =>] 'literal'
bool ReadArgument(std::string_view s, size_t* i, std::string* name, std::string* value) {
  SkipSpace(s, i);
  name->clear();
  size_t j = *i;
  while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
  if (j > *i) {
    size_t k = j;
    SkipSpace(s, &k);
    if (s.substr(k, 2) != "=>") return false;
    *name = AsciiLower(s.substr(*i, j - *i));
    *i = k + 2;
    SkipSpace(s, i);
  }
  if (!ReadLiteral(s, i, value)) return false;
  SkipSpace(s, i);
  return true;
}

}  // namespace

Result<std::optional<SecretReference>> ParseSecretReference(std::string_view value) {
  size_t i = 0;
  SkipSpace(value, &i);
  if (AsciiLower(value.substr(i, 6)) != "secret") return std::optional<SecretReference>();
  i += 6;
  SkipSpace(value, &i);
  if (i >= value.size() || value[i] != '(') return std::optional<SecretReference>();
  ++i;
  const auto bad = Status::InvalidArgument(
      "malformed secret reference: expected secret('<scope>', '<key>') (or secret(scope => "
      "'<scope>', key => '<key>'))");
  std::string n1, v1, n2, v2;
  if (!ReadArgument(value, &i, &n1, &v1) || i >= value.size() || value[i] != ',') return bad;
  ++i;
  if (!ReadArgument(value, &i, &n2, &v2) || i >= value.size() || value[i] != ')') return bad;
  ++i;
  SkipSpace(value, &i);
  if (i != value.size()) return bad;
  SecretReference ref{v1, v2};
  if (n1 == "key" && n2 == "scope") ref = {v2, v1};
  if (!((n1.empty() && n2.empty()) || (n1 == "scope" && n2 == "key") ||
        (n1 == "key" && n2 == "scope"))) {
    return bad;
  }
  if (ref.scope.empty() || ref.key.empty()) {
    return Status::InvalidArgument("secret(): the scope and the key must not be empty");
  }
  return std::optional<SecretReference>(std::move(ref));
}

std::string SecretEnvironmentName(const SecretReference& ref) {
  std::string out = "SLUICE_SECRET_";
  auto add = [&](const std::string& part) {
    for (char c : part) {
      unsigned char u = static_cast<unsigned char>(c);
      out.push_back(std::isalnum(u) && u < 128 ? static_cast<char>(std::toupper(u)) : '_');
    }
  };
  add(ref.scope);
  out.push_back('_');
  add(ref.key);
  return out;
}

Result<std::string> ResolveSecret(const SecretReference& ref) {
  const std::string env = SecretEnvironmentName(ref);
  const std::string what = "secret('" + ref.scope + "', '" + ref.key + "')";
  if (const char* v = std::getenv(env.c_str())) return std::string(v);
  const char* file = std::getenv(kSecretsFileVariable);
  if (file == nullptr || *file == '\0') {
    return Status::NotFound(what + ": not found: set " + env + " or name a secrets file in " +
                            kSecretsFileVariable);
  }
  struct stat st;
  if (::stat(file, &st) != 0) return Status::FromErrno(errno, what + ": secrets file " + file);
  if ((st.st_mode & 077) != 0) {
    return Status::InvalidArgument(what + ": the secrets file " + std::string(file) +
                                   " is readable by others; make it 0600 (chmod 600)");
  }
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return Status::IOError(what + ": cannot read the secrets file " + std::string(file));
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument(what + ": the secrets file " + std::string(file) +
                                   " is not a JSON object {\"<scope>\": {\"<key>\": \"<value>\"}}");
  }
  auto scope = j.find(ref.scope);
  if (scope != j.end() && scope->is_object()) {
    auto key = scope->find(ref.key);
    if (key != scope->end() && key->is_string()) return key->get<std::string>();
  }
  return Status::NotFound(what + ": not found in " + env + " nor in the secrets file " +
                          std::string(file));
}

Result<std::map<std::string, std::string>> ResolveSecretReferences(
    const std::map<std::string, std::string>& options) {
  std::map<std::string, std::string> out = options;
  for (auto& [name, value] : out) {
    SLUICE_ASSIGN_OR_RETURN_CTX(std::optional<SecretReference> ref, ParseSecretReference(value),
                                "option '" + name + "'");
    if (!ref) continue;
    SLUICE_ASSIGN_OR_RETURN_CTX(value, ResolveSecret(*ref), "option '" + name + "'");
  }
  return out;
}

}  // namespace sluice
