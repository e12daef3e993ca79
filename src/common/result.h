// Result<T> lives in the public header include/sluice/result.h (one definition for the engine
// and the C++ API); this file keeps the internal include path working.
#pragma once

#include "sluice/result.h"
