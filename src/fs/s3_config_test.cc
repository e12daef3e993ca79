#include "fs/s3_config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "fs/test_util.h"

namespace sluice::fs {
namespace {

class S3ConfigTest : public ::testing::Test {
 protected:
  S3Config::Getenv Env() {
    return [this](const std::string& name) -> std::optional<std::string> {
      auto it = env_.find(name);
      if (it == env_.end()) return std::nullopt;
      return it->second;
    };
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = JoinPath(dir_.path(), name);
    std::ofstream(path) << text;
    return path;
  }
  ScopedTempDir dir_;
  std::map<std::string, std::string> env_;
};

TEST_F(S3ConfigTest, EnvironmentVariablesWin) {
  env_ = {{"HOME", dir_.path()},
          {"AWS_ACCESS_KEY_ID", "AKIDENV"},
          {"AWS_SECRET_ACCESS_KEY", "secret-env"},
          {"AWS_SESSION_TOKEN", "tok"},
          {"AWS_REGION", "eu-west-1"},
          {"AWS_DEFAULT_REGION", "us-west-2"},
          {"AWS_ENDPOINT_URL", "http://127.0.0.1:1"},
          {"AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9000/"}};
  Write("credentials", "[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key = s\n");
  auto c = S3Config::FromEnvironment(Env());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->credentials.access_key_id, "AKIDENV");
  EXPECT_EQ(c->credentials.secret_access_key, "secret-env");
  EXPECT_EQ(c->credentials.session_token, "tok");
  EXPECT_EQ(c->region, "eu-west-1");
  EXPECT_EQ(c->endpoint, "http://127.0.0.1:9000");
  EXPECT_TRUE(c->path_style);
  EXPECT_EQ(c->ToString().find("secret-env"), std::string::npos);
  EXPECT_NE(c->ToString().find("AKIDENV"), std::string::npos);
}

TEST_F(S3ConfigTest, SharedFilesAndProfiles) {
  std::string creds = Write("creds",
                            "# comment\n[default]\naws_access_key_id=AKIDDEF\n"
                            "aws_secret_access_key=sdef\n\n[dev]\naws_access_key_id = AKIDDEV\n"
                            "aws_secret_access_key = sdev\naws_session_token = tdev\n");
  std::string conf = Write("conf",
                           "[default]\nregion = us-west-2\n[profile dev]\nregion = ap-south-1\n"
                           "s3 =\n  endpoint_url = http://localhost:4566\n"
                           "  addressing_style = virtual\n");
  env_ = {{"AWS_SHARED_CREDENTIALS_FILE", creds}, {"AWS_CONFIG_FILE", conf}};
  auto def = S3Config::FromEnvironment(Env());
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  EXPECT_EQ(def->credentials.access_key_id, "AKIDDEF");
  EXPECT_EQ(def->region, "us-west-2");
  EXPECT_EQ(def->endpoint, "");
  EXPECT_FALSE(def->path_style);

  env_["AWS_PROFILE"] = "dev";
  auto dev = S3Config::FromEnvironment(Env());
  ASSERT_TRUE(dev.ok()) << dev.status().ToString();
  EXPECT_EQ(dev->credentials.access_key_id, "AKIDDEV");
  EXPECT_EQ(dev->credentials.session_token, "tdev");
  EXPECT_EQ(dev->region, "ap-south-1");
  EXPECT_EQ(dev->endpoint, "http://localhost:4566");
  EXPECT_FALSE(dev->path_style);  // addressing_style = virtual

  env_["SLUICE_S3_PATH_STYLE"] = "true";
  auto forced = S3Config::FromEnvironment(Env());
  ASSERT_TRUE(forced.ok()) << forced.status().ToString();
  EXPECT_TRUE(forced->path_style);
}

TEST_F(S3ConfigTest, CredentialsFromTheConfigFileAndDefaultsWithoutFiles) {
  std::string conf = Write("conf",
                           "[profile p]\naws_access_key_id = AKIDCONF\n"
                           "aws_secret_access_key = sconf\n");
  env_ = {{"AWS_PROFILE", "p"},
          {"AWS_CONFIG_FILE", conf},
          {"AWS_SHARED_CREDENTIALS_FILE", JoinPath(dir_.path(), "missing")}};
  auto c = S3Config::FromEnvironment(Env());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->credentials.access_key_id, "AKIDCONF");

  env_ = {{"HOME", dir_.path()}};
  auto none = S3Config::FromEnvironment(Env());
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->credentials.access_key_id, "");
  EXPECT_EQ(none->region, "us-east-1");
  ASSERT_EQ(none->credential_sources.size(), 3u);
  EXPECT_NE(none->credential_sources[1].find(".aws/credentials [default]"), std::string::npos);
}

TEST_F(S3ConfigTest, ErrorsNameTheFileTheLineAndTheValue) {
  env_ = {{"HOME", dir_.path()}, {"AWS_PROFILE", "nope"}};
  auto missing = S3Config::FromEnvironment(Env());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("AWS profile 'nope'"), std::string::npos);

  std::string bad = Write("bad", "[default]\nregion = x\nthis is not a setting\n");
  env_ = {{"AWS_CONFIG_FILE", bad}};
  auto malformed = S3Config::FromEnvironment(Env());
  ASSERT_FALSE(malformed.ok());
  EXPECT_NE(malformed.status().message().find(bad + " line 3"), std::string::npos)
      << malformed.status().ToString();

  std::string before = Write("before", "region = x\n");
  env_ = {{"AWS_CONFIG_FILE", before}};
  auto no_section = S3Config::FromEnvironment(Env());
  ASSERT_FALSE(no_section.ok());
  EXPECT_NE(no_section.status().message().find("before any [section]"), std::string::npos);

  env_ = {{"AWS_ENDPOINT_URL_S3", "localhost:9000"}};
  auto endpoint = S3Config::FromEnvironment(Env());
  ASSERT_FALSE(endpoint.ok());
  EXPECT_NE(endpoint.status().message().find("'localhost:9000' (from AWS_ENDPOINT_URL_S3)"),
            std::string::npos)
      << endpoint.status().ToString();

  env_ = {{"SLUICE_S3_PATH_STYLE", "maybe"}};
  auto style = S3Config::FromEnvironment(Env());
  ASSERT_FALSE(style.ok());
  EXPECT_NE(style.status().message().find("'maybe'"), std::string::npos);
}

}  // namespace
}  // namespace sluice::fs
