#include "fs/s3_xml.h"

#include <gtest/gtest.h>

namespace sluice::fs {
namespace {

TEST(S3XmlTest, ReadsAListObjectsV2Reply) {
  auto doc = ParseXml(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Name>b</Name><Prefix>d/</Prefix><KeyCount>2</KeyCount><IsTruncated>true</IsTruncated>"
      "<Contents><Key>d/a&amp;b</Key><Size>3</Size>"
      "<LastModified>2026-01-01T00:00:00.000Z</LastModified></Contents>"
      "<Contents><Key>d/&#x3c;&#233;&#x1F600;</Key><Size>0</Size></Contents>"
      "<CommonPrefixes><Prefix>d/sub/</Prefix></CommonPrefixes>"
      "<NextContinuationToken>tok</NextContinuationToken><Empty/>"
      "</ListBucketResult>");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc->name, "ListBucketResult");
  EXPECT_EQ(doc->ChildText("IsTruncated"), "true");
  auto contents = doc->Children("Contents");
  ASSERT_EQ(contents.size(), 2u);
  EXPECT_EQ(contents[0]->ChildText("Key"), "d/a&b");
  EXPECT_EQ(contents[0]->ChildText("Size"), "3");
  EXPECT_EQ(contents[1]->ChildText("Key"), "d/<\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(doc->Child("CommonPrefixes")->ChildText("Prefix"), "d/sub/");
  EXPECT_EQ(doc->ChildText("NextContinuationToken"), "tok");
  ASSERT_NE(doc->Child("Empty"), nullptr);
  EXPECT_EQ(doc->Child("Missing"), nullptr);
  EXPECT_EQ(doc->ChildText("Missing"), "");
}

TEST(S3XmlTest, ReadsAnErrorReplyWithCdataAndComments) {
  auto doc = ParseXml(
      "<!-- c --><Error><Code>NoSuchKey</Code><!-- inner -->"
      "<Message><![CDATA[a <b> & c]]></Message><RequestId>r1</RequestId></Error>  \n");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc->ChildText("Code"), "NoSuchKey");
  EXPECT_EQ(doc->ChildText("Message"), "a <b> & c");
  EXPECT_EQ(doc->ChildText("RequestId"), "r1");
}

void ExpectMalformed(std::string_view doc, std::string_view what) {
  auto r = ParseXml(doc);
  ASSERT_FALSE(r.ok()) << "parsed: " << doc;
  EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
  EXPECT_NE(r.status().message().find("malformed XML at byte"), std::string::npos)
      << r.status().ToString();
  EXPECT_NE(r.status().message().find(what), std::string::npos) << r.status().ToString();
}

TEST(S3XmlTest, RefusesMalformedInputNamingTheByte) {
  ExpectMalformed("", "expected the root element");
  ExpectMalformed("   ", "expected the root element");
  ExpectMalformed("hello", "expected '<'");
  ExpectMalformed("<a>", "unterminated element <a>");
  ExpectMalformed("<a><b></a>", "end tag </a> does not match <b>");
  ExpectMalformed("<a></a><b/>", "unexpected content after the root element");
  ExpectMalformed("<a>&bogus;</a>", "unknown entity &bogus;");
  ExpectMalformed("<a>&amp</a>", "unterminated '&' reference");
  ExpectMalformed("<a>&#xZZ;</a>", "bad digit");
  ExpectMalformed("<a>&#0;</a>", "invalid character reference");
  ExpectMalformed("<a>&#x110000;</a>", "out of range");
  ExpectMalformed("<a x=1></a>", "expected a quoted value of attribute x");
  ExpectMalformed("<a x=\"1></a>", "unterminated value of attribute x");
  ExpectMalformed("<a x></a>", "expected '=' after attribute x");
  ExpectMalformed("<a><![CDATA[x</a>", "unterminated CDATA");
  ExpectMalformed("<a><!-- x</a>", "unterminated comment");
  ExpectMalformed("<!DOCTYPE a><a/>", "DOCTYPE");
  ExpectMalformed("<a><?pi x?></a>", "processing instructions");
  ExpectMalformed("<></>", "expected a name");
  ExpectMalformed("<a></a  x>", "expected '>' of </a>");
  ExpectMalformed("<a", "unterminated start tag");
}

TEST(S3XmlTest, RefusesDeepNestingWithoutRecursingForever) {
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "<a>";
  ExpectMalformed(deep, "nested deeper than 64");
  std::string ok;
  for (int i = 0; i < 64; ++i) ok += "<a>";
  for (int i = 0; i < 64; ++i) ok += "</a>";
  EXPECT_TRUE(ParseXml(ok).ok());
}

TEST(S3XmlTest, AttributesAreDroppedAndSelfClosingWorks) {
  auto doc = ParseXml("<r a='1' b=\"2\"><x y=\"z\"/>t</r>");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc->text, "t");
  ASSERT_EQ(doc->children.size(), 1u);
  EXPECT_EQ(doc->children[0].name, "x");
}

}  // namespace
}  // namespace sluice::fs
