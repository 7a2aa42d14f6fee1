// History<T>: a bounded ring of records with sequence numbers. What a character keeps
// for the game (events, handoff records, recoveries, flights, landings, joint breaks, prop
// releases) lives in one: the newest `capacity` items stay readable, older ones are overwritten in
// place, so a character that runs for hours keeps constant memory and, once every slot has been
// written, records without allocating (a slot's vectors and strings keep their capacity).
//
// Sequence numbers: the n-th item ever pushed has sequence number n (from 0); total() is the next
// one. A reader that keeps the number it has read up to drains what is new with readSince() and
// learns how many items it missed (overwritten before it read them).
//
// Thread-safety: none (a character's histories are written by its own preStep / postStep / API
// calls; read them between steps, on the thread that steps the character).
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

namespace handoff {

template <class T>
class History {
 public:
  /// A forward iterator over retained items, oldest first.
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;
    const_iterator() = default;
    const_iterator(const History* history, std::uint64_t seq) : history_(history), seq_(seq) {}
    reference operator*() const { return history_->at(seq_); }
    pointer operator->() const { return &history_->at(seq_); }
    const_iterator& operator++() {
      ++seq_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++seq_;
      return old;
    }
    bool operator==(const const_iterator& other) const { return seq_ == other.seq_; }
    /// The item's sequence number.
    std::uint64_t sequence() const { return seq_; }

   private:
    const History* history_ = nullptr;
    std::uint64_t seq_ = 0;
  };
  using iterator = const_iterator;
  using value_type = T;

  /// What readSince() returns: the retained items from a sequence number on (iterable), how many
  /// after it were overwritten before being read, and the number to pass next time.
  struct Range {
    const_iterator first, last;
    std::uint64_t missed = 0;  ///< Items after the requested number already overwritten.
    std::uint64_t next = 0;    ///< Pass this to the next readSince() (total() now).
    const_iterator begin() const { return first; }
    const_iterator end() const { return last; }
    std::size_t size() const { return static_cast<std::size_t>(last.sequence() - first.sequence()); }
    bool empty() const { return first == last; }
  };

  /// Keeps the newest `capacity` items [>= 1]; every slot is allocated now, a copy of `prototype`
  /// (give one whose vectors have their working size, and writing into a slot allocates nothing).
  explicit History(std::size_t capacity = 1, const T& prototype = T{})
      : slots_(capacity < 1 ? 1 : capacity, prototype) {}

  std::size_t capacity() const { return slots_.size(); }
  /// Items readable now: min(total(), capacity()).
  std::size_t size() const {
    return static_cast<std::size_t>(total_ < slots_.size() ? total_ : slots_.size());
  }
  bool empty() const { return total_ == 0; }
  /// Items ever pushed (the next sequence number).
  std::uint64_t total() const { return total_; }
  /// Sequence number of the oldest readable item.
  std::uint64_t firstSequence() const { return total_ - size(); }

  /// The slot of a new item (the newest from now on), for the caller to fill in place: it still
  /// holds the overwritten item's contents (assign every field, reuse its vectors). Never
  /// allocates.
  T& push() {
    T& slot = slots_[static_cast<std::size_t>(total_ % slots_.size())];
    ++total_;
    return slot;
  }
  /// Copies `item` into a new slot (copy assignment: a slot's vectors keep their capacity).
  T& push(const T& item) { return push() = item; }

  /// The i-th readable item, oldest first. [0, size())
  const T& operator[](std::size_t i) const { return at(firstSequence() + i); }
  T& operator[](std::size_t i) { return atMutable(firstSequence() + i); }
  const T& front() const { return (*this)[0]; }
  /// The newest item (latest()). Requires !empty().
  const T& back() const { return at(total_ - 1); }
  T& back() { return atMutable(total_ - 1); }
  const T& latest() const { return back(); }
  /// The item with sequence number `seq`. [firstSequence(), total())
  const T& at(std::uint64_t seq) const {
    assert(seq >= firstSequence() && seq < total_);
    return slots_[static_cast<std::size_t>(seq % slots_.size())];
  }
  T& atMutable(std::uint64_t seq) {
    assert(seq >= firstSequence() && seq < total_);
    return slots_[static_cast<std::size_t>(seq % slots_.size())];
  }
  /// Whether item `seq` is still readable.
  bool retained(std::uint64_t seq) const { return seq >= firstSequence() && seq < total_; }

  const_iterator begin() const { return {this, firstSequence()}; }
  const_iterator end() const { return {this, total_}; }

  /// The items with sequence numbers >= `seq` still readable, and how many of those after `seq`
  /// were overwritten. Never allocates.
  Range readSince(std::uint64_t seq) const {
    const std::uint64_t first = seq < firstSequence() ? firstSequence() : (seq > total_ ? total_ : seq);
    return Range{{this, first}, {this, total_}, first - (seq < first ? seq : first), total_};
  }

 private:
  std::vector<T> slots_;
  std::uint64_t total_ = 0;
};

}  // namespace handoff
