// The PySpark spelling of a Spark Connect relation or command, for the messages that refuse it:
// "write_operation" -> "DataFrame.write (save, saveAsTable, insertInto)". The protocol's field
// name alone names the message, not what the user wrote.
//
// Contract: `field` is the name of a Relation.rel_type or Command.command_type field of the
// Spark Connect protocol; the result is "<field> (<PySpark API>)" when the API is known, else
// the field name as given. Pure functions, thread-safe.
#pragma once

#include <string>

namespace sluice::connect {

std::string RelationWithApi(const std::string& field);
std::string CommandWithApi(const std::string& field);

}  // namespace sluice::connect
