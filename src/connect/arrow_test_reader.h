// A minimal reader of the FlatBuffers and Arrow IPC framing that connect/'s tests use to check
// the writer's bytes against the format's rules (flatbuffer_writer.h, arrow_ipc.h), without a
// flatbuffers or Arrow library. Test code only: bounds are checked with gtest assertions by the
// callers, not here.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace sluice::connect::testing {

template <typename T>
T Load(const std::string& buf, size_t pos) {
  T v{};
  if (pos + sizeof(T) <= buf.size()) std::memcpy(&v, buf.data() + pos, sizeof(T));
  return v;
}

// A table inside a flatbuffer `buf` at `pos`.
struct FbTable {
  const std::string* buf;
  size_t pos;

  size_t VTable() const { return pos - Load<int32_t>(*buf, pos); }
  // The field's position, or 0 when absent.
  size_t Field(uint16_t slot) const {
    size_t vt = VTable();
    uint16_t vt_size = Load<uint16_t>(*buf, vt);
    if (4 + 2 * slot >= vt_size) return 0;
    uint16_t off = Load<uint16_t>(*buf, vt + 4 + 2 * slot);
    return off == 0 ? 0 : pos + off;
  }
  template <typename T>
  T Scalar(uint16_t slot, T def = T{}) const {
    size_t f = Field(slot);
    return f ? Load<T>(*buf, f) : def;
  }
  // The object a uoffset field points to.
  size_t Deref(uint16_t slot) const {
    size_t f = Field(slot);
    return f ? f + Load<uint32_t>(*buf, f) : 0;
  }
  FbTable Child(uint16_t slot) const { return {buf, Deref(slot)}; }
  std::string String(uint16_t slot) const {
    size_t s = Deref(slot);
    return s ? buf->substr(s + 4, Load<uint32_t>(*buf, s)) : "";
  }
  uint32_t VectorSize(uint16_t slot) const {
    size_t v = Deref(slot);
    return v ? Load<uint32_t>(*buf, v) : 0;
  }
  FbTable VectorTable(uint16_t slot, uint32_t i) const {
    size_t elem = Deref(slot) + 4 + 4 * i;
    return {buf, elem + Load<uint32_t>(*buf, elem)};
  }
  // The position of element i of a vector of structs of `size` bytes.
  size_t VectorStruct(uint16_t slot, uint32_t i, size_t size) const {
    return Deref(slot) + 4 + size * i;
  }
};

inline FbTable Root(const std::string& buf) { return {&buf, Load<uint32_t>(buf, 0)}; }

// One encapsulated IPC message at `pos` of a stream: its flatbuffer and body.
struct IpcMessage {
  std::string metadata;
  std::string body;
  size_t end = 0;  // position after the message
};

inline IpcMessage ReadMessage(const std::string& stream, size_t pos) {
  IpcMessage m;
  uint32_t size = Load<uint32_t>(stream, pos + 4);
  m.metadata = stream.substr(pos + 8, size);
  FbTable message = Root(m.metadata);
  int64_t body = message.Scalar<int64_t>(3);
  m.body = stream.substr(pos + 8 + size, static_cast<size_t>(body));
  m.end = pos + 8 + size + static_cast<size_t>(body);
  return m;
}

}  // namespace sluice::connect::testing
