// RecordSink: where a reader of many records (a snapshot, the log) decodes
// them, in place: into the sink's next slot, then Commit() hands it over. A
// sink that keeps its slots (BatchPipeline) costs no copy and no allocation
// per record; the reader only writes the slot it was given.
#pragma once

#include "crescent/status.h"
#include "master/log_record.h"

namespace crescent::durability {

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // The slot to decode the next record into (it may hold an older record:
  // decode every field, as DecodeLogRecordInto does).
  virtual master::LogRecord& Next() = 0;
  // Takes the record decoded into Next()'s slot; an error stops the reader.
  virtual Status Commit() = 0;
};

}  // namespace crescent::durability
