// S3Client against a small fake S3 on loopback (cpp-httplib's server): retries on 5xx/SlowDown
// and on 409 for conditional writes, what each error says, pagination, ranged reads. The real
// S3 protocol is checked against moto's server in test/interop/s3/.
#include "fs/s3_client.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace sluice::fs {
namespace {

std::string ErrorXml(const std::string& code, const std::string& message) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>" + code + "</Code><Message>" +
         message + "</Message><RequestId>RID-1</RequestId></Error>";
}

class S3ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = server_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 2000 && !server_.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_TRUE(server_.is_running());
  }
  void TearDown() override {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  S3Config Config() {
    S3Config c;
    c.credentials = {"AKIDTEST", "secret-test-key", ""};
    c.endpoint = "http://127.0.0.1:" + std::to_string(port_);
    c.path_style = true;
    c.base_backoff_ms = 1;
    c.max_backoff_ms = 2;
    c.max_attempts = 4;
    c.connect_timeout_ms = 2000;
    c.request_timeout_ms = 5000;
    return c;
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(S3ClientTest, SignsPathStyleRequestsAndRetriesSlowDown) {
  std::atomic<int> calls{0};
  std::mutex mu;
  std::string auth;
  std::string body;
  server_.Put("/bkt/dir/a b.json", [&](const httplib::Request& req, httplib::Response& res) {
    if (++calls < 3) {
      res.status = 503;
      res.set_content(ErrorXml("SlowDown", "Please reduce your request rate."), "application/xml");
      return;
    }
    std::lock_guard<std::mutex> lock(mu);
    auth = req.get_header_value("Authorization");
    body = req.body;
    res.status = 200;
  });
  S3Client client(Config());
  ASSERT_TRUE(client.PutObject("bkt", "dir/a b.json", "hello", false).ok());
  EXPECT_EQ(calls.load(), 3);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(body, "hello");
  EXPECT_EQ(auth.rfind("AWS4-HMAC-SHA256 Credential=AKIDTEST/", 0), 0u) << auth;
  EXPECT_NE(auth.find("SignedHeaders=host;x-amz-content-sha256;x-amz-date"), std::string::npos);
  EXPECT_EQ(auth.find("secret-test-key"), std::string::npos);
}

TEST_F(S3ClientTest, ConditionalPutRetries409ThenReports412AsAlreadyExists) {
  std::atomic<int> calls{0};
  server_.Put("/bkt/k", [&](const httplib::Request& req, httplib::Response& res) {
    EXPECT_EQ(req.get_header_value("If-None-Match"), "*");
    if (++calls == 1) {
      res.status = 409;
      res.set_content(ErrorXml("ConditionalRequestConflict", "A conflicting operation"),
                      "application/xml");
    } else {
      res.status = 412;
      res.set_content(ErrorXml("PreconditionFailed", "At least one of the preconditions failed"),
                      "application/xml");
    }
  });
  S3Client client(Config());
  Status st = client.PutObject("bkt", "k", "x", true);
  EXPECT_EQ(calls.load(), 2);
  ASSERT_TRUE(st.IsAlreadyExists()) << st.ToString();
  EXPECT_EQ(st.message(),
            "S3 PutObject: HTTP 412 PreconditionFailed: At least one of the preconditions failed "
            "after 2 attempts (bucket bkt, key k, request id RID-1)");
}

TEST_F(S3ClientTest, PersistentConflictIsAConflictNamingEverything) {
  server_.Put("/bkt/k", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 409;
    res.set_content(ErrorXml("ConditionalRequestConflict", "busy"), "application/xml");
  });
  S3Client client(Config());
  Status st = client.PutObject("bkt", "k", "x", true);
  ASSERT_TRUE(st.IsConflict()) << st.ToString();
  EXPECT_NE(st.message().find("HTTP 409 ConditionalRequestConflict: busy after 4 attempts "
                              "(bucket bkt, key k"),
            std::string::npos)
      << st.ToString();
  // A plain PUT does not retry a 409.
  Status plain = client.PutObject("bkt", "k", "x", false);
  EXPECT_TRUE(plain.IsConflict());
  EXPECT_EQ(plain.message().find("attempts"), std::string::npos) << plain.ToString();
}

TEST_F(S3ClientTest, ErrorsNameStatusCodeBucketKeyAndRequestId) {
  server_.Get("/bkt/a/b", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 403;
    res.set_content(ErrorXml("AccessDenied", "Access Denied"), "application/xml");
  });
  server_.Get("/bkt/gone", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 404;
    res.set_content(ErrorXml("NoSuchKey", "The specified key does not exist."), "application/xml");
  });
  server_.Get("/bkt/html", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 502;
    res.set_content("<html>bad gateway</html>", "text/html");
  });
  server_.Get("/bkt/h", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 404;
    res.set_header("x-amz-request-id", "HEADRID");
  });
  S3Client client(Config());
  auto denied = client.GetObject("bkt", "a/b");
  ASSERT_FALSE(denied.ok());
  EXPECT_TRUE(denied.status().IsIOError());
  EXPECT_EQ(denied.status().message(),
            "S3 GetObject: HTTP 403 AccessDenied: Access Denied (bucket bkt, key a/b, request id "
            "RID-1)");
  auto gone = client.GetObject("bkt", "gone");
  ASSERT_TRUE(gone.status().IsNotFound()) << gone.status().ToString();
  EXPECT_NE(gone.status().message().find("HTTP 404 NoSuchKey"), std::string::npos);
  auto html = client.GetObject("bkt", "html");
  ASSERT_TRUE(html.status().IsIOError());
  EXPECT_EQ(html.status().message(),
            "S3 GetObject: HTTP 502 (not an S3 error document: <html>bad gateway</html>) after 4 "
            "attempts (bucket bkt, key html)");
  auto head = client.HeadObject("bkt", "h");
  ASSERT_TRUE(head.status().IsNotFound());
  EXPECT_EQ(head.status().message(),
            "S3 HeadObject: HTTP 404 (no S3 error document) (bucket bkt, key h, request id "
            "HEADRID)");
}

TEST_F(S3ClientTest, NoReplyIsAnIOErrorAfterTheAttempts) {
  S3Config c = Config();
  server_.stop();
  thread_.join();
  c.max_attempts = 2;
  S3Client client(c);
  Status st = client.PutObject("bkt", "k", "x", true);
  ASSERT_TRUE(st.IsIOError()) << st.ToString();
  EXPECT_EQ(st.message(),
            "S3 PutObject: no reply after 2 attempts: Connection (bucket bkt, key k)");
}

TEST_F(S3ClientTest, MissingCredentialsSayWhereTheyWereLookedFor) {
  S3Config c = Config();
  c.credentials = {};
  c.credential_sources = {"AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY",
                          "/h/.aws/credentials [default]"};
  S3Client client(c);
  auto r = client.GetObject("bkt", "k");
  ASSERT_TRUE(r.status().IsInvalidArgument());
  EXPECT_EQ(r.status().message(),
            "S3 GetObject: no AWS credentials found (bucket bkt, key k); looked in: "
            "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, /h/.aws/credentials [default]");
}

TEST_F(S3ClientTest, ListFollowsTheContinuationTokenAndRangeReads) {
  server_.Get("/bkt", [&](const httplib::Request& req, httplib::Response& res) {
    EXPECT_EQ(req.get_param_value("list-type"), "2");
    EXPECT_EQ(req.get_param_value("prefix"), "d/");
    std::string xml = "<ListBucketResult>";
    if (req.get_param_value("continuation-token").empty()) {
      xml +=
          "<Contents><Key>d/a</Key><Size>1</Size>"
          "<LastModified>2026-01-02T03:04:05.678Z</LastModified></Contents>"
          "<IsTruncated>true</IsTruncated><NextContinuationToken>t+/=</NextContinuationToken>";
    } else {
      EXPECT_EQ(req.get_param_value("continuation-token"), "t+/=");
      xml +=
          "<CommonPrefixes><Prefix>d/sub/</Prefix></CommonPrefixes>"
          "<IsTruncated>false</IsTruncated>";
    }
    res.set_content(xml + "</ListBucketResult>", "application/xml");
  });
  server_.Get("/bkt/obj", [&](const httplib::Request& req, httplib::Response& res) {
    EXPECT_EQ(req.get_header_value("Range"), "bytes=2-4");
    // httplib's server answers the Range itself (206 with those bytes).
    res.set_content("abcdefg", "application/octet-stream");
  });
  S3Client client(Config());
  auto first = client.ListObjects("bkt", "d/", "/", "");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->objects.size(), 1u);
  EXPECT_EQ(first->objects[0].key, "d/a");
  EXPECT_EQ(first->objects[0].mtime_ms, 1767323045678);
  EXPECT_EQ(first->next_continuation_token, "t+/=");
  auto second = client.ListObjects("bkt", "d/", "/", first->next_continuation_token);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->common_prefixes, std::vector<std::string>{"d/sub/"});
  EXPECT_EQ(second->next_continuation_token, "");
  auto range = client.GetObject("bkt", "obj", std::pair<int64_t, int64_t>{2, 3});
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_EQ(*range, "cde");
}

TEST_F(S3ClientTest, MalformedListReplyIsCorruption) {
  server_.Get("/bkt", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        "<ListBucketResult><Contents><Key>x</Key><Size>12a</Size></Contents>"
        "</ListBucketResult>",
        "application/xml");
  });
  S3Client client(Config());
  auto r = client.ListObjects("bkt", "p/", "", "");
  ASSERT_TRUE(r.status().IsCorruption()) << r.status().ToString();
  EXPECT_NE(r.status().message().find("bad <Size> '12a' of key x"), std::string::npos);
  EXPECT_NE(r.status().message().find("(bucket bkt, key p/)"), std::string::npos);
}

}  // namespace
}  // namespace sluice::fs
