// FlatBufferWriter: builds the few FlatBuffers tables that Arrow's IPC metadata needs (Message,
// Schema, Field, RecordBatch and the type tables), without the flatbuffers library or generated
// code. Debian 12 packages no Arrow C++, and the metadata is a handful of small tables.
//
// The format (FlatBuffers' binary layout, as Arrow's readers expect it):
//   - The buffer opens with a uint32 offset to the root table.
//   - A table starts with an int32 soffset: the table's position minus its vtable's position.
//     The vtable is uint16s: the vtable's size in bytes, the table's inline size, then for each
//     field slot the field's offset from the table start (0: absent, the reader's default).
//   - A field that refers to a string, vector or table holds a uint32 offset, relative to the
//     field's own position, to an object written after it (offsets only point forward).
//   - A string is a uint32 length, the bytes and a NUL; a vector is a uint32 count and the
//     elements (uint32 offsets for tables, inline bytes for structs).
//   - Every scalar sits at a multiple of its size; a vector of structs starts at a multiple of
//     the struct's alignment.
// This writer lays out each table, then its children after it, so that every offset is positive.
//
// Usage: describe the tables as values (Table, with fields by slot number), then Finish(root).
// Thread safety: plain values; Finish is a pure function.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sluice::connect::fb {

struct Table;
struct TableField;  // a table's field: its slot and value (after Value, which it holds)

// Table, Value and TableField are three structs rather than a std::pair<uint16_t, Value> in
// Table: clang (14, with libstdc++ 12) refuses a pair whose member holds the pair's container
// before its type is complete, which g++ accepts.

// One field value of a table.
struct Value {
  enum class Kind { kScalar, kString, kTable, kTableVector, kStructVector };
  Kind kind = Kind::kScalar;
  uint64_t bits = 0;          // kScalar: the value's little-endian bits
  uint8_t size = 0;           // kScalar: 1, 2, 4 or 8 bytes
  std::string bytes;          // kString: the text; kStructVector: the elements' bytes
  uint32_t count = 0;         // kStructVector: number of elements
  uint8_t align = 1;          // kStructVector: the struct's alignment
  std::vector<Table> tables;  // kTable: one; kTableVector: the elements
};

struct Table {
  std::vector<TableField> fields;  // a slot at most once

  // Scalars are written even when they equal the schema's default.
  Table& Scalar(uint16_t slot, uint64_t bits, uint8_t size);
  Table& Bool(uint16_t slot, bool v) { return Scalar(slot, v ? 1 : 0, 1); }
  Table& UInt8(uint16_t slot, uint8_t v) { return Scalar(slot, v, 1); }
  Table& Int16(uint16_t slot, int16_t v) { return Scalar(slot, static_cast<uint16_t>(v), 2); }
  Table& Int32(uint16_t slot, int32_t v) { return Scalar(slot, static_cast<uint32_t>(v), 4); }
  Table& Int64(uint16_t slot, int64_t v) { return Scalar(slot, static_cast<uint64_t>(v), 8); }
  Table& String(uint16_t slot, std::string text);
  Table& Child(uint16_t slot, Table child);
  Table& Tables(uint16_t slot, std::vector<Table> children);
  // A vector of structs: `bytes` holds `count` structs of `bytes.size() / count` bytes each.
  Table& Structs(uint16_t slot, std::string bytes, uint32_t count, uint8_t align);
};

struct TableField {
  TableField(uint16_t s, Value v) : slot(s), value(std::move(v)) {}
  uint16_t slot;
  Value value;
};

// The finished buffer: the root offset, then `root` and everything it refers to.
std::string Finish(const Table& root);

}  // namespace sluice::connect::fb
