// Result<T>: a value or an error message a user can act on (data errors are values, see
// docs/ARCHITECTURE.md). Modelled on Jolt's Result<T>; std::expected is C++23.
//
// Thread-safety: value types, not synchronised (as std::variant and std::string).
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace handoff {

/// A data error: what went wrong, naming the file, line, bone or joint concerned.
struct Error {
  std::string message;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : data_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return data_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok() && "Result::value() on an error");
    return std::get<0>(data_);
  }
  const T& value() const& {
    assert(ok() && "Result::value() on an error");
    return std::get<0>(data_);
  }
  T&& value() && {
    assert(ok() && "Result::value() on an error");
    return std::get<0>(std::move(data_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const std::string& error() const {
    assert(!ok() && "Result::error() on a value");
    return std::get<1>(data_).message;
  }

 private:
  std::variant<T, Error> data_;
};

/// Result of an operation without a value.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error.message)), failed_(true) {}  // NOLINT
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const std::string& error() const { return error_; }

 private:
  std::string error_;
  bool failed_ = false;
};

}  // namespace handoff
