#include "common/secret_reference.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(SecretReferenceTest, ParsesPositionalAndNamedSpellings) {
  auto r = ParseSecretReference("secret('kafka', 'sasl-password')");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->scope, "kafka");
  EXPECT_EQ((*r)->key, "sasl-password");
  r = ParseSecretReference("  SECRET ( key => 'k' , scope => 's' ) ");
  ASSERT_TRUE(r.ok() && r->has_value()) << r.status().ToString();
  EXPECT_EQ((*r)->scope, "s");
  EXPECT_EQ((*r)->key, "k");
  EXPECT_FALSE(ParseSecretReference("hunter2")->has_value());
  EXPECT_FALSE(ParseSecretReference("secretive")->has_value());
  EXPECT_TRUE(ParseSecretReference("secret('a')").status().IsInvalidArgument());
  EXPECT_TRUE(ParseSecretReference("secret('a', 'b') || 'x'").status().IsInvalidArgument());
  EXPECT_TRUE(ParseSecretReference("secret(a => 'a', b => 'b')").status().IsInvalidArgument());
}

TEST(SecretReferenceTest, EnvironmentNameUpperCasesAndReplacesOtherCharacters) {
  EXPECT_EQ(SecretEnvironmentName({"kafka", "sasl-password"}), "SLUICE_SECRET_KAFKA_SASL_PASSWORD");
  EXPECT_EQ(SecretEnvironmentName({"my.scope", "k1"}), "SLUICE_SECRET_MY_SCOPE_K1");
}

TEST(SecretReferenceTest, ResolvesFromTheEnvironmentThenTheSecretsFile) {
  ::unsetenv("SLUICE_SECRETS_FILE");
  ::setenv("SLUICE_SECRET_TSCOPE_PW", "from-env", 1);
  auto opts = ResolveSecretReferences(
      {{"kafka.sasl.password", "secret('tscope', 'pw')"}, {"subscribe", "orders"}});
  ASSERT_TRUE(opts.ok()) << opts.status().ToString();
  EXPECT_EQ(opts->at("kafka.sasl.password"), "from-env");
  EXPECT_EQ(opts->at("subscribe"), "orders");
  ::unsetenv("SLUICE_SECRET_TSCOPE_PW");

  Status missing = ResolveSecretReferences({{"x.password", "secret('tscope', 'pw')"}}).status();
  EXPECT_TRUE(missing.IsNotFound());
  EXPECT_NE(missing.message().find("option 'x.password'"), std::string::npos) << missing.ToString();
  EXPECT_NE(missing.message().find("SLUICE_SECRET_TSCOPE_PW"), std::string::npos);

  char dir[] = "/tmp/sluice-secrets-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string file = std::string(dir) + "/secrets.json";
  std::ofstream(file) << R"({"tscope": {"pw": "from-file"}})";
  ::setenv("SLUICE_SECRETS_FILE", file.c_str(), 1);
  ::chmod(file.c_str(), 0644);
  Status open = ResolveSecret({"tscope", "pw"}).status();
  EXPECT_TRUE(open.IsInvalidArgument()) << open.ToString();
  EXPECT_NE(open.message().find("chmod 600"), std::string::npos) << open.ToString();
  ::chmod(file.c_str(), 0600);
  auto v = ResolveSecret({"tscope", "pw"});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, "from-file");
  EXPECT_TRUE(ResolveSecret({"tscope", "other"}).status().IsNotFound());
  ::setenv("SLUICE_SECRET_TSCOPE_PW", "env-wins", 1);
  EXPECT_EQ(*ResolveSecret({"tscope", "pw"}), "env-wins");
  ::unsetenv("SLUICE_SECRET_TSCOPE_PW");
  ::unsetenv("SLUICE_SECRETS_FILE");
  ::unlink(file.c_str());
  ::rmdir(dir);
}

}  // namespace
}  // namespace sluice
