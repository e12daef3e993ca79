// SharedFileList<T, Memo>: the live files (or tombstones) of a snapshot, an immutable sequence
// of T whose elements and whose whole sequence are shared between snapshots, so that the
// snapshot after a commit reuses its predecessor's entries instead of copying them (snapshot.h).
//
// Each entry is a Node: the value and a Memo, something derived from the value that is computed
// on first use and then kept with the entry (the live files keep their parsed stats this way,
// stats_parsed.h). Because the entry is shared, so is its memo: every snapshot that holds the
// entry, and every statement on any of them, reuses what the first use computed. A Memo is
// default-constructed with its node and must make its own first use thread-safe; NoMemo holds
// nothing.
//
//   for (const AddFile& f : snapshot.files) ...        // iterates as const T&
//   snapshot.files.size(), [i], at(i), front(), back()
//   std::vector<AddFile> mine = snapshot.files;        // a copy of the values, when needed
//
// Copying a SharedFileList is O(1) (one shared pointer); a list is built once from its entries
// and never changed afterwards. Elements keep their addresses for the life of every list that
// holds them.
//
// Thread safety: immutable after construction (memos aside, which synchronize themselves); any
// number of threads may read one list.
#pragma once

#include <compare>
#include <cstddef>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

namespace sluice::delta {

// The Memo of a list whose entries keep nothing beside their value.
struct NoMemo {};

template <typename T, typename Memo = NoMemo>
class SharedFileList {
 public:
  // One shared entry: the value and what is derived from it on first use.
  struct Node {
    explicit Node(T v) : value(std::move(v)) {}
    T value;
    [[no_unique_address]] mutable Memo memo;
  };
  using Entry = std::shared_ptr<const Node>;
  using Entries = std::vector<Entry>;
  using value_type = T;
  using size_type = size_t;
  using reference = const T&;
  using const_reference = const T&;

  // A random-access iterator yielding const T&.
  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using iterator_concept = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;

    const_iterator() = default;
    explicit const_iterator(typename Entries::const_iterator it) : it_(it) {}
    reference operator*() const { return (*it_)->value; }
    pointer operator->() const { return &(*it_)->value; }
    reference operator[](difference_type n) const { return it_[n]->value; }
    const_iterator& operator++() {
      ++it_;
      return *this;
    }
    const_iterator operator++(int) { return const_iterator(it_++); }
    const_iterator& operator--() {
      --it_;
      return *this;
    }
    const_iterator operator--(int) { return const_iterator(it_--); }
    const_iterator& operator+=(difference_type n) {
      it_ += n;
      return *this;
    }
    const_iterator& operator-=(difference_type n) {
      it_ -= n;
      return *this;
    }
    friend const_iterator operator+(const_iterator a, difference_type n) { return a += n; }
    friend const_iterator operator+(difference_type n, const_iterator a) { return a += n; }
    friend const_iterator operator-(const_iterator a, difference_type n) { return a -= n; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return a.it_ - b.it_;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) {
      return a.it_ == b.it_;
    }
    friend auto operator<=>(const const_iterator& a, const const_iterator& b) {
      return a.it_ <=> b.it_;
    }

   private:
    typename Entries::const_iterator it_;
  };
  using iterator = const_iterator;

  // A new entry holding `value` (and a memo not yet computed).
  static Entry MakeEntry(T value) { return std::make_shared<const Node>(std::move(value)); }

  SharedFileList() = default;
  // Takes the entries (none may be null).
  explicit SharedFileList(Entries entries)
      : entries_(std::make_shared<const Entries>(std::move(entries))) {}
  // Wraps each value.
  explicit SharedFileList(std::vector<T> values) {
    Entries entries;
    entries.reserve(values.size());
    for (T& v : values) entries.push_back(MakeEntry(std::move(v)));
    entries_ = std::make_shared<const Entries>(std::move(entries));
  }

  // The shared entries, to build another list from (e.g. the next snapshot's).
  const Entries& entries() const { return entries_ ? *entries_ : Empty(); }

  size_t size() const { return entries().size(); }
  bool empty() const { return entries().empty(); }
  const_iterator begin() const { return const_iterator(entries().begin()); }
  const_iterator end() const { return const_iterator(entries().end()); }
  const T& operator[](size_t i) const { return entries()[i]->value; }
  const T& at(size_t i) const { return entries().at(i)->value; }
  const T& front() const { return entries().front()->value; }
  const T& back() const { return entries().back()->value; }
  // The memo of entry i.
  const Memo& memo(size_t i) const { return entries()[i]->memo; }

  // A copy of the values.
  std::vector<T> ToVector() const { return std::vector<T>(begin(), end()); }
  operator std::vector<T>() const { return ToVector(); }  // NOLINT: implicit on purpose

  friend bool operator==(const SharedFileList& a, const SharedFileList& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a.entries()[i] != b.entries()[i] && !(a[i] == b[i])) return false;
    }
    return true;
  }

 private:
  static const Entries& Empty() {
    static const Entries* empty = new Entries();
    return *empty;
  }

  std::shared_ptr<const Entries> entries_;
};

}  // namespace sluice::delta
