// SharedFileList<T>: the live files (or tombstones) of a snapshot, an immutable sequence of T
// whose elements and whose whole sequence are shared between snapshots, so that the snapshot
// after a commit reuses its predecessor's entries instead of copying them (snapshot.h).
//
//   for (const AddFile& f : snapshot.files) ...        // iterates as const T&
//   snapshot.files.size(), [i], at(i), front(), back()
//   std::vector<AddFile> mine = snapshot.files;        // a copy of the values, when needed
//
// Copying a SharedFileList is O(1) (one shared pointer); a list is built once from its entries
// and never changed afterwards. Elements keep their addresses for the life of every list that
// holds them.
//
// Thread safety: immutable after construction; any number of threads may read one list.
#pragma once

#include <compare>
#include <cstddef>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

namespace sluice::delta {

template <typename T>
class SharedFileList {
 public:
  using Entry = std::shared_ptr<const T>;
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
    reference operator*() const { return **it_; }
    pointer operator->() const { return it_->get(); }
    reference operator[](difference_type n) const { return *it_[n]; }
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

  SharedFileList() = default;
  // Takes the entries (none may be null).
  explicit SharedFileList(Entries entries)
      : entries_(std::make_shared<const Entries>(std::move(entries))) {}
  // Wraps each value.
  explicit SharedFileList(std::vector<T> values) {
    Entries entries;
    entries.reserve(values.size());
    for (T& v : values) entries.push_back(std::make_shared<const T>(std::move(v)));
    entries_ = std::make_shared<const Entries>(std::move(entries));
  }

  // The shared entries, to build another list from (e.g. the next snapshot's).
  const Entries& entries() const { return entries_ ? *entries_ : Empty(); }

  size_t size() const { return entries().size(); }
  bool empty() const { return entries().empty(); }
  const_iterator begin() const { return const_iterator(entries().begin()); }
  const_iterator end() const { return const_iterator(entries().end()); }
  const T& operator[](size_t i) const { return *entries()[i]; }
  const T& at(size_t i) const { return *entries().at(i); }
  const T& front() const { return *entries().front(); }
  const T& back() const { return *entries().back(); }

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
