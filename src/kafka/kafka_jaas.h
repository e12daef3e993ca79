// The Java Kafka client's `sasl.jaas.config` string, parsed as the client parses it
// (org.apache.kafka.common.security.JaasConfig over java.io.StreamTokenizer):
//
//   <login module class> <flag> [<key>=<value> ...] ;
//
// Tokens are separated by whitespace. A word is letters, digits, '.', '_', '$' and '-' (and bytes
// >= 0xA0), not starting with a digit or '.'; a value may also be quoted with " or ', inside which
// \n \t \r \b \f \a \v, octal \ooo and \<any other character> (that character: \" \' \\) are
// escapes. `//` and a lone `/` start a comment to the end of the line, `/* ... */` a block
// comment. <flag> is required, requisite, sufficient or optional (any case). The entry must end
// with ';' and the string must hold exactly one entry, as the Kafka client requires. A repeated
// key keeps its last value (the client's HashMap does the same).
//
// Stricter than the Java tokenizer, never different: an unterminated quoted value (the Java
// tokenizer ends it silently at a line break or the end) and a character that is not part of the
// grammar are errors.
//
// Errors name the position (1-based character offset) and, for an option, its key, but never a
// value or any text of the string: it holds passwords. Pure; thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sluice::kafka {

struct JaasEntry {
  std::string login_module;                    // e.g. org.apache.kafka...ScramLoginModule
  std::string control_flag;                    // lower case: required, requisite, ...
  std::map<std::string, std::string> options;  // key -> unquoted, unescaped value
};

// InvalidArgument "option 'kafka.sasl.jaas.config': <what> at position <n>" on a malformed string.
Result<JaasEntry> ParseJaasConfig(std::string_view text);

}  // namespace sluice::kafka
