#include "connect/flatbuffer_writer.h"

#include <algorithm>
#include <cstring>

namespace sluice::connect::fb {

Table& Table::Scalar(uint16_t slot, uint64_t bits, uint8_t size) {
  Value v;
  v.kind = Value::Kind::kScalar;
  v.bits = bits;
  v.size = size;
  fields.emplace_back(slot, std::move(v));
  return *this;
}

Table& Table::String(uint16_t slot, std::string text) {
  Value v;
  v.kind = Value::Kind::kString;
  v.bytes = std::move(text);
  fields.emplace_back(slot, std::move(v));
  return *this;
}

Table& Table::Child(uint16_t slot, Table child) {
  Value v;
  v.kind = Value::Kind::kTable;
  v.tables.push_back(std::move(child));
  fields.emplace_back(slot, std::move(v));
  return *this;
}

Table& Table::Tables(uint16_t slot, std::vector<Table> children) {
  Value v;
  v.kind = Value::Kind::kTableVector;
  v.tables = std::move(children);
  fields.emplace_back(slot, std::move(v));
  return *this;
}

Table& Table::Structs(uint16_t slot, std::string bytes, uint32_t count, uint8_t align) {
  Value v;
  v.kind = Value::Kind::kStructVector;
  v.bytes = std::move(bytes);
  v.count = count;
  v.align = align;
  fields.emplace_back(slot, std::move(v));
  return *this;
}

namespace {

class Writer {
 public:
  std::string buf;

  size_t Pos() const { return buf.size(); }
  void PadTo(size_t align) {
    while (buf.size() % align != 0) buf.push_back('\0');
  }
  void Put(uint64_t bits, size_t size) {
    for (size_t i = 0; i < size; ++i) buf.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
  }
  void PutAt(size_t at, uint64_t bits, size_t size) {
    for (size_t i = 0; i < size; ++i) buf[at + i] = static_cast<char>((bits >> (8 * i)) & 0xFF);
  }
  // Points the uint32 offset at `at` to `target` (which lies after it).
  void Patch(size_t at, size_t target) { PutAt(at, static_cast<uint32_t>(target - at), 4); }

  size_t WriteString(const std::string& text) {
    PadTo(4);
    size_t pos = Pos();
    Put(text.size(), 4);
    buf += text;
    buf.push_back('\0');
    return pos;
  }

  size_t WriteStructs(const Value& v) {
    // The elements start right after the count, at a multiple of the struct's alignment.
    size_t align = std::max<size_t>(v.align, 4);
    while ((Pos() + 4) % align != 0) buf.push_back('\0');
    size_t pos = Pos();
    Put(v.count, 4);
    buf += v.bytes;
    return pos;
  }

  size_t WriteTables(const std::vector<Table>& tables) {
    PadTo(4);
    size_t pos = Pos();
    Put(tables.size(), 4);
    size_t slots = Pos();
    for (size_t i = 0; i < tables.size(); ++i) Put(0, 4);
    for (size_t i = 0; i < tables.size(); ++i) Patch(slots + 4 * i, WriteTable(tables[i]));
    return pos;
  }

  size_t WriteChild(const Value& v) {
    switch (v.kind) {
      case Value::Kind::kString:
        return WriteString(v.bytes);
      case Value::Kind::kTable:
        return WriteTable(v.tables.front());
      case Value::Kind::kTableVector:
        return WriteTables(v.tables);
      case Value::Kind::kStructVector:
        return WriteStructs(v);
      case Value::Kind::kScalar:
        break;
    }
    return 0;  // unreachable: scalars are written inline
  }

  size_t WriteTable(const Table& table) {
    // Inline layout: the soffset at 0, then the fields, largest first, each at a multiple of its
    // size from a table start that is a multiple of 8.
    struct Slot {
      uint16_t slot;
      const Value* value;
      size_t size;
      size_t offset = 0;
    };
    std::vector<Slot> slots;
    uint16_t max_slot = 0;
    bool any = false;
    for (const auto& [slot, value] : table.fields) {
      size_t size = value.kind == Value::Kind::kScalar ? value.size : 4;
      slots.push_back({slot, &value, size});
      max_slot = std::max(max_slot, slot);
      any = true;
    }
    std::stable_sort(slots.begin(), slots.end(),
                     [](const Slot& a, const Slot& b) { return a.size > b.size; });
    size_t inline_size = 4;
    for (Slot& s : slots) {
      while (inline_size % s.size != 0) ++inline_size;
      s.offset = inline_size;
      inline_size += s.size;
    }
    // The vtable, before the table.
    size_t num_slots = any ? static_cast<size_t>(max_slot) + 1 : 0;
    std::vector<uint16_t> vtable(2 + num_slots, 0);
    vtable[0] = static_cast<uint16_t>(2 * vtable.size());
    vtable[1] = static_cast<uint16_t>(inline_size);
    for (const Slot& s : slots) vtable[2 + s.slot] = static_cast<uint16_t>(s.offset);
    PadTo(2);
    size_t vtable_pos = Pos();
    for (uint16_t entry : vtable) Put(entry, 2);
    PadTo(8);
    size_t table_pos = Pos();
    buf.append(inline_size, '\0');
    PutAt(table_pos, static_cast<uint32_t>(static_cast<int32_t>(table_pos - vtable_pos)), 4);
    for (const Slot& s : slots) {
      if (s.value->kind == Value::Kind::kScalar) PutAt(table_pos + s.offset, s.value->bits, s.size);
    }
    for (const Slot& s : slots) {
      if (s.value->kind != Value::Kind::kScalar) {
        Patch(table_pos + s.offset, WriteChild(*s.value));
      }
    }
    return table_pos;
  }
};

}  // namespace

std::string Finish(const Table& root) {
  Writer w;
  w.Put(0, 4);  // the root offset, patched below
  w.Patch(0, w.WriteTable(root));
  w.PadTo(8);
  return std::move(w.buf);
}

}  // namespace sluice::connect::fb
