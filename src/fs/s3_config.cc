#include "fs/s3_config.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "common/strings.h"

namespace sluice::fs {

namespace {

using Ini = std::map<std::string, std::map<std::string, std::string>>;

// Reads an AWS shared file: "[section]" lines and "key = value" lines; '#' and ';' start a
// comment line; an indented "key = value" under "parent =" is kept as "parent.key" (the config
// file's nested settings such as "s3 =\n  addressing_style = path"). A missing file is empty.
Result<Ini> ReadIni(const std::string& path) {
  Ini ini;
  std::ifstream in(path);
  if (!in.is_open()) return ini;
  std::string line;
  std::string section;
  std::string parent;  // the last top-level key with an empty value
  bool have_section = false;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string t = Trim(line);
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    bool indented = line[0] == ' ' || line[0] == '\t';
    auto where = [&] { return path + " line " + std::to_string(number); };
    if (t.front() == '[') {
      if (t.back() != ']') return Status::InvalidArgument(where() + ": unterminated [section]");
      section = Trim(std::string_view(t).substr(1, t.size() - 2));
      have_section = true;
      parent.clear();
      ini[section];
      continue;
    }
    size_t eq = t.find('=');
    if (eq == std::string::npos) {
      return Status::InvalidArgument(where() + ": expected 'key = value' or '[section]'");
    }
    if (!have_section) return Status::InvalidArgument(where() + ": a setting before any [section]");
    std::string key = AsciiLower(Trim(std::string_view(t).substr(0, eq)));
    std::string value = Trim(std::string_view(t).substr(eq + 1));
    if (key.empty()) return Status::InvalidArgument(where() + ": empty key");
    if (indented && !parent.empty()) {
      ini[section][parent + "." + key] = value;
      continue;
    }
    parent = value.empty() ? key : std::string();
    ini[section][key] = value;
  }
  if (in.bad()) return Status::IOError("reading " + path + ": read error");
  return ini;
}

std::string Get(const S3Config::Getenv& getenv, const std::string& name) {
  std::optional<std::string> v = getenv(name);
  return v.has_value() ? *v : std::string();
}

const std::map<std::string, std::string>* Section(const Ini& ini, const std::string& name) {
  auto it = ini.find(name);
  return it == ini.end() ? nullptr : &it->second;
}

std::string Value(const std::map<std::string, std::string>* section, const std::string& key) {
  if (section == nullptr) return {};
  auto it = section->find(key);
  return it == section->end() ? std::string() : it->second;
}

}  // namespace

Status CheckS3Endpoint(const std::string& endpoint, const std::string& from) {
  std::string_view e = endpoint;
  size_t scheme_end = e.find("://");
  std::string_view scheme = scheme_end == std::string_view::npos ? "" : e.substr(0, scheme_end);
  std::string_view rest = scheme_end == std::string_view::npos ? "" : e.substr(scheme_end + 3);
  if ((scheme != "http" && scheme != "https") || rest.empty() ||
      rest.find('/') != std::string_view::npos) {
    return Status::InvalidArgument("S3 endpoint '" + endpoint + "' (from " + from +
                                   ") is not http(s)://host[:port]");
  }
  return Status::OK();
}

std::string S3Config::ToString() const {
  return "region=" + region + ", endpoint=" + (endpoint.empty() ? "AWS" : endpoint) +
         ", path_style=" + (path_style ? "true" : "false") + ", access key id=" +
         (credentials.access_key_id.empty() ? "(none)" : credentials.access_key_id);
}

S3Config::Getenv S3Config::ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

Result<S3Config> S3Config::FromEnvironment(const Getenv& getenv) {
  S3Config config;
  std::string home = Get(getenv, "HOME");
  std::string profile = Get(getenv, "AWS_PROFILE");
  bool profile_named = !profile.empty();
  if (profile.empty()) profile = "default";
  std::string cred_path = Get(getenv, "AWS_SHARED_CREDENTIALS_FILE");
  if (cred_path.empty() && !home.empty()) cred_path = home + "/.aws/credentials";
  std::string conf_path = Get(getenv, "AWS_CONFIG_FILE");
  if (conf_path.empty() && !home.empty()) conf_path = home + "/.aws/config";

  Ini creds_ini;
  Ini conf_ini;
  if (!cred_path.empty()) {
    SLUICE_ASSIGN_OR_RETURN(creds_ini, ReadIni(cred_path));
  }
  if (!conf_path.empty()) {
    SLUICE_ASSIGN_OR_RETURN(conf_ini, ReadIni(conf_path));
  }
  const auto* cred_section = Section(creds_ini, profile);
  const auto* conf_section =
      Section(conf_ini, profile == "default" ? std::string("default") : "profile " + profile);
  if (profile_named && cred_section == nullptr && conf_section == nullptr) {
    return Status::InvalidArgument("AWS profile '" + profile + "' (AWS_PROFILE) is in neither " +
                                   (cred_path.empty() ? "(no credentials file)" : cred_path) +
                                   " nor " + (conf_path.empty() ? "(no config file)" : conf_path));
  }

  // Credentials: environment, then the credentials file, then the config file.
  config.credential_sources.push_back("AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY");
  std::string id = Get(getenv, "AWS_ACCESS_KEY_ID");
  std::string secret = Get(getenv, "AWS_SECRET_ACCESS_KEY");
  if (!id.empty() && !secret.empty()) {
    config.credentials = {id, secret, Get(getenv, "AWS_SESSION_TOKEN")};
  } else {
    for (const auto& [section, path] :
         {std::pair{cred_section, cred_path}, std::pair{conf_section, conf_path}}) {
      if (path.empty()) continue;
      config.credential_sources.push_back(path + " [" + profile + "]");
      std::string fid = Value(section, "aws_access_key_id");
      std::string fsecret = Value(section, "aws_secret_access_key");
      if (!fid.empty() && !fsecret.empty()) {
        config.credentials = {fid, fsecret, Value(section, "aws_session_token")};
        break;
      }
    }
  }

  std::string region = Get(getenv, "AWS_REGION");
  if (region.empty()) region = Get(getenv, "AWS_DEFAULT_REGION");
  if (region.empty()) region = Value(conf_section, "region");
  if (!region.empty()) config.region = region;

  std::string from = "AWS_ENDPOINT_URL_S3";
  std::string endpoint = Get(getenv, "AWS_ENDPOINT_URL_S3");
  if (endpoint.empty()) {
    from = "AWS_ENDPOINT_URL";
    endpoint = Get(getenv, "AWS_ENDPOINT_URL");
  }
  if (endpoint.empty()) {
    from = conf_path + " [profile " + profile + "] s3.endpoint_url";
    endpoint = Value(conf_section, "s3.endpoint_url");
  }
  if (endpoint.empty()) {
    from = conf_path + " [profile " + profile + "] endpoint_url";
    endpoint = Value(conf_section, "endpoint_url");
  }
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  if (!endpoint.empty()) SLUICE_RETURN_NOT_OK(CheckS3Endpoint(endpoint, from));
  config.endpoint = endpoint;
  config.path_style = !endpoint.empty();
  if (Value(conf_section, "s3.addressing_style") == "path") config.path_style = true;
  if (Value(conf_section, "s3.addressing_style") == "virtual") config.path_style = false;
  std::optional<std::string> style = getenv("SLUICE_S3_PATH_STYLE");
  if (style.has_value()) {
    std::string s = AsciiLower(*style);
    if (s == "true" || s == "1") {
      config.path_style = true;
    } else if (s == "false" || s == "0") {
      config.path_style = false;
    } else {
      return Status::InvalidArgument("SLUICE_S3_PATH_STYLE must be true or false, not '" + *style +
                                     "'");
    }
  }
  return config;
}

}  // namespace sluice::fs
