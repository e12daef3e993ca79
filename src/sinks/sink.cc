#include "sinks/sink.h"

namespace sluice::sinks {

const char* OutputModeName(OutputMode mode) {
  switch (mode) {
    case OutputMode::kAppend:
      return "Append";
    case OutputMode::kUpdate:
      return "Update";
    case OutputMode::kComplete:
      return "Complete";
  }
  return "Unknown";
}

}  // namespace sluice::sinks
