// The Sluice C++ API: one include for everything (docs/cpp-api.md).
//
//   #include <sluice/sluice.h>
//
//   Session           the entry point: warehouse, engine, Sql, Table, ReadStream, listeners
//   DataFrame         batch and streaming queries; SQL-string transformations; Collect, Write
//   DataStreamReader  Session::ReadStream(): Format, Option, Schema, Load, Table
//   DataStreamWriter  DataFrame::WriteStream(): Format, OutputMode, Option, Trigger, QueryName,
//                     ForeachBatch, Start, ToTable
//   StreamingQuery    Id, RunId, Status, LastProgress, AwaitTermination, Stop, Exception, ...
//   Trigger, StreamingQueryListener, MemoryStream, Rows
//   StatefulProcessor custom state per key, GroupBy(...).TransformWithState
//                     (sluice/stateful_processor.h)
//   DeltaTable        read, MERGE/UPDATE/DELETE, maintain a Delta table (sluice/delta_table.h)
//   Status, Result<T> errors as values (sluice/status.h, sluice/result.h)
#pragma once

#include "sluice/dataframe.h"
#include "sluice/delta_table.h"
#include "sluice/result.h"
#include "sluice/rows.h"
#include "sluice/session.h"
#include "sluice/stateful_processor.h"
#include "sluice/status.h"
#include "sluice/streaming.h"
