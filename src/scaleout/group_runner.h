// `sluice run --group NAME pipeline.sql`: one process of a query spread over many
// (docs/scale-out.md). The pipeline file is parsed and checked as a graph (sql/pipeline_graph.h);
// group mode runs SET statements and one streaming table, whose query GroupQuery accepts
// (stateless, one Kafka topic, a continuous trigger); anything else is refused before anything
// is created, with the limit named. Then the statements run, the checkpoint's metadata (the
// query id) and group record (task_layout.h) are read or created, the process joins the Kafka
// consumer group NAME (GroupMembership) and runs a task for each partition the group gives it:
// started when assigned, stopped at a batch boundary when revoked, restarted from its checkpoint
// after a backoff when it fails while still owned (10 failures in a row end the run). One line
// per batch of each task ("<table>[<partition>] batch N ..."), one per change of the assignment.
// SIGINT/SIGTERM stop the tasks at a batch boundary and leave the group; the exit code is then
// 0. Errors: "Error: <message>" on `err` and exit code 1.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

namespace sluice::scaleout {

struct GroupRunOptions {
  std::string file;                              // the pipeline: one .sql file
  std::string warehouse;                         // as sluice run's --warehouse
  std::string group;                             // required: the consumer group's name (group.id)
  std::optional<std::string> group_instance_id;  // static membership (group.instance.id)
};

// Installs the SIGINT/SIGTERM handlers, runs, restores them. Returns the exit code.
int RunGroupPipeline(const GroupRunOptions& options, std::ostream& out, std::ostream& err);

}  // namespace sluice::scaleout
