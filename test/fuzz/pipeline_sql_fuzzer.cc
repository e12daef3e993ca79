// Fuzz target for the pipeline SQL front end (what `sluice run pipeline.sql` and `sluice sql`
// read): the statement splitter, the streaming / sink / table statement parsers, the streaming
// query parser (FROM STREAM ...), and the Spark dialect rewrite. Built by `make fuzz`
// (test/fuzz/CMakeLists.txt) and replayed over test/fuzz/corpus/pipeline_sql by `make test`.
//
// The input is a script. A crash, an uncaught exception, or a splitter that loses or invents text
// (a statement that is not a piece of the script) is a bug (std::abort). Parse errors are fine.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "dialect/spark_sql.h"
#include "engine/engine.h"
#include "plan/stream_query_parser.h"
#include "sql/sink_statement_parser.h"
#include "sql/statement_splitter.h"
#include "sql/streaming_statement_parser.h"
#include "sql/table_statement_parser.h"

namespace {

sluice::engine::Connection* Conn() {
  static std::unique_ptr<sluice::engine::Engine> engine = [] {
    auto e = sluice::engine::Engine::Open();
    if (!e.ok()) std::abort();
    return e.MoveValueUnsafe();
  }();
  static std::unique_ptr<sluice::engine::Connection> conn = [] {
    auto c = engine->Connect();
    if (!c.ok()) std::abort();
    return c.MoveValueUnsafe();
  }();
  return conn.get();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  if (size > 8192) return 0;  // parsers are linear-ish; long inputs only slow the search down
  const std::string_view script(reinterpret_cast<const char*>(data), size);
  for (const sql::StatementText& st : sql::SplitStatements(script)) {
    if (st.text.empty() || st.line < 1) std::abort();
    (void)sql::ParseStreamingStatement(st.text);
    (void)sql::ParseSinkStatement(st.text);
    (void)sql::ParseTableStatement(st.text);
    (void)plan::ParseStreamingQuery(st.text);
    (void)dialect::RewriteSparkSql(Conn(), st.text);
  }
  return 0;
}
