// SigV4 against the example requests AWS publishes with their signatures: the four S3 examples of
// "Signature Calculations for the Authorization Header" (examplebucket, 2013-05-24), the signing
// key of the general SigV4 example (IAM, 2015-08-30) and the "get-vanilla" case of AWS's SigV4
// test suite. The request values below are written out here from those examples.
#include "fs/s3_sigv4.h"

#include <gtest/gtest.h>

namespace sluice::fs::sigv4 {
namespace {

constexpr char kEmptySha[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

Credentials S3ExampleCredentials() {
  return {"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};
}

TEST(SigV4Test, Sha256AndHmacOfKnownValues) {
  EXPECT_EQ(Sha256Hex(""), kEmptySha);
  EXPECT_EQ(Sha256Hex("Welcome to Amazon S3."),
            "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  // RFC 4231 test case 2.
  EXPECT_EQ(HexEncode(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(SigV4Test, UriEncodeKeepsUnreservedAndOptionallySlash) {
  EXPECT_EQ(UriEncode("a-b_c.d~e/f g$", true), "a-b_c.d~e/f%20g%24");
  EXPECT_EQ(UriEncode("a/b=c&d+", false), "a%2Fb%3Dc%26d%2B");
  EXPECT_EQ(UriEncode("\xc3\xa9", false), "%C3%A9");
}

TEST(SigV4Test, S3GetObjectWithRange) {
  Request r{"GET",
            "/test.txt",
            {},
            {{"Host", "examplebucket.s3.amazonaws.com"},
             {"Range", "bytes=0-9"},
             {"x-amz-content-sha256", kEmptySha},
             {"x-amz-date", "20130524T000000Z"}},
            kEmptySha};
  EXPECT_EQ(CanonicalRequest(r),
            "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
            "x-amz-content-sha256:" +
                std::string(kEmptySha) + "\nx-amz-date:20130524T000000Z\n\n" +
                "host;range;x-amz-content-sha256;x-amz-date\n" + kEmptySha);
  EXPECT_EQ(StringToSign(r, "20130524T000000Z", "us-east-1", "s3"),
            "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  EXPECT_EQ(AuthorizationHeader(r, S3ExampleCredentials(), "20130524T000000Z", "us-east-1", "s3"),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4Test, S3PutObject) {
  std::string body_sha = Sha256Hex("Welcome to Amazon S3.");
  Request r{"PUT",
            "/" + UriEncode("test$file.text", true),
            {},
            {{"Host", "examplebucket.s3.amazonaws.com"},
             {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
             {"x-amz-date", "20130524T000000Z"},
             {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
             {"x-amz-content-sha256", body_sha}},
            body_sha};
  EXPECT_EQ(SignedHeaders(r), "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class");
  EXPECT_EQ(Sha256Hex(CanonicalRequest(r)),
            "9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d");
  EXPECT_EQ(Signature(r, S3ExampleCredentials(), "20130524T000000Z", "us-east-1", "s3"),
            "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

TEST(SigV4Test, S3GetBucketLifecycleAndListObjects) {
  std::vector<std::pair<std::string, std::string>> headers = {
      {"Host", "examplebucket.s3.amazonaws.com"},
      {"x-amz-content-sha256", kEmptySha},
      {"x-amz-date", "20130524T000000Z"}};
  Request lifecycle{"GET", "/", {{"lifecycle", ""}}, headers, kEmptySha};
  EXPECT_EQ(CanonicalQueryString(lifecycle.query), "lifecycle=");
  EXPECT_EQ(Signature(lifecycle, S3ExampleCredentials(), "20130524T000000Z", "us-east-1", "s3"),
            "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
  // Given out of order: the canonical query sorts by name.
  Request list{"GET", "/", {{"prefix", "J"}, {"max-keys", "2"}}, headers, kEmptySha};
  EXPECT_EQ(CanonicalQueryString(list.query), "max-keys=2&prefix=J");
  EXPECT_EQ(Signature(list, S3ExampleCredentials(), "20130524T000000Z", "us-east-1", "s3"),
            "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST(SigV4Test, SigningKeyOfTheGeneralExample) {
  EXPECT_EQ(HexEncode(SigningKey("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20150830",
                                 "us-east-1", "iam")),
            "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9");
}

TEST(SigV4Test, TestSuiteGetVanilla) {
  Request r{"GET",
            "/",
            {},
            {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", "20150830T123600Z"}},
            kEmptySha};
  Credentials c{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};
  EXPECT_EQ(AuthorizationHeader(r, c, "20150830T123600Z", "us-east-1", "service"),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            "SignedHeaders=host;x-amz-date, "
            "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
}

TEST(SigV4Test, HeaderValuesAreTrimmedAndRepeatedNamesJoined) {
  Request r{"GET", "", {}, {{"X-A", "  a   b  "}, {"x-a", "c"}, {"Host", "h"}}, kEmptySha};
  EXPECT_EQ(CanonicalRequest(r),
            "GET\n/\n\nhost:h\nx-a:a b,c\n\nhost;x-a\n" + std::string(kEmptySha));
}

TEST(SigV4Test, SecretNeverInTheHeader) {
  Request r{"GET", "/", {}, {{"host", "h"}, {"x-amz-date", "20130524T000000Z"}}, kEmptySha};
  std::string auth =
      AuthorizationHeader(r, S3ExampleCredentials(), "20130524T000000Z", "us-east-1", "s3");
  EXPECT_EQ(auth.find("wJalrXUtnFEMI"), std::string::npos);
}

}  // namespace
}  // namespace sluice::fs::sigv4
