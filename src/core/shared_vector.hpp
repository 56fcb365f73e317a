// SharedVector<T>: a std::vector whose copies share one buffer until one of
// them is changed (copy on write).
//
// Why: a training plan repeats the same edge and rank lists many times (a
// stage boundary's pipeline sends once per microbatch and chunk, a DP group's
// collective once per gradient bucket). With plain vectors each repeat was a
// copy: at 131,072 GPUs about a gigabyte of the plan. A copy of a
// SharedVector costs a reference count, and the plan holds each distinct list
// once.
//
// Reading never copies: the const members, and conversion to a const
// std::vector<T>&. Writing through a non-const member (push_back, reserve,
// non-const begin()/end()/operator[], mut()) first gives this object a buffer
// of its own when another one shares it, so no change is ever seen through
// another copy. Take const references for reading a shared list from a
// non-const object (std::as_const), or it is copied needlessly.
//
// Not for lists written by several threads at once: like std::vector, one
// writer at a time; copies may be read from any number of threads.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

namespace podnet {

template <class T>
class SharedVector {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using const_iterator = typename std::vector<T>::const_iterator;
  using iterator = typename std::vector<T>::iterator;
  using const_reference = const T&;
  using reference = T&;

  SharedVector() = default;
  SharedVector(std::initializer_list<T> values) { assign(std::vector<T>(values)); }
  SharedVector(std::vector<T> values) { assign(std::move(values)); }  // NOLINT: as a vector converts
  SharedVector& operator=(std::vector<T> values) {
    assign(std::move(values));
    return *this;
  }
  SharedVector& operator=(std::initializer_list<T> values) {
    assign(std::vector<T>(values));
    return *this;
  }

  // ---- reading (never copies) ----
  size_type size() const { return p_ ? p_->size() : 0; }
  bool empty() const { return size() == 0; }
  const std::vector<T>& vec() const { return p_ ? *p_ : empty_vector(); }
  operator const std::vector<T>&() const { return vec(); }  // NOLINT: reads as a vector
  const_iterator begin() const { return vec().begin(); }
  const_iterator end() const { return vec().end(); }
  const T* data() const { return vec().data(); }
  const T& operator[](size_type i) const { return (*p_)[i]; }
  const T& front() const { return p_->front(); }
  const T& back() const { return p_->back(); }
  bool operator==(const SharedVector& o) const { return p_ == o.p_ || vec() == o.vec(); }
  // Whether this object and `o` share one buffer (tests, memory estimates); two empty lists share none.
  bool shares_with(const SharedVector& o) const { return p_ != nullptr && p_ == o.p_; }
  // The buffer's identity (nullptr when empty): copies share it until one is changed.
  const void* storage() const { return p_.get(); }

  // ---- writing (this object's own buffer first) ----
  std::vector<T>& mut() {
    if (!p_) p_ = std::make_shared<std::vector<T>>();
    else if (p_.use_count() > 1) p_ = std::make_shared<std::vector<T>>(*p_);
    return *p_;
  }
  iterator begin() { return mut().begin(); }
  iterator end() { return mut().end(); }
  T& operator[](size_type i) { return mut()[i]; }
  void push_back(const T& v) { mut().push_back(v); }
  void push_back(T&& v) { mut().push_back(std::move(v)); }
  template <class... A>
  T& emplace_back(A&&... a) {
    return mut().emplace_back(std::forward<A>(a)...);
  }
  void reserve(size_type n) { mut().reserve(n); }
  void resize(size_type n) { mut().resize(n); }
  void clear() { p_.reset(); }
  template <class It>
  iterator insert(const_iterator pos, It first, It last) {
    // pos points into the shared buffer: keep its offset across a detach
    const auto at = pos - vec().begin();
    auto& v = mut();
    return v.insert(v.begin() + at, first, last);
  }
  iterator erase(const_iterator first, const_iterator last) {
    const auto a = first - vec().begin(), b = last - vec().begin();
    auto& v = mut();
    return v.erase(v.begin() + a, v.begin() + b);
  }

 private:
  void assign(std::vector<T>&& values) {
    if (values.empty()) p_.reset();
    else p_ = std::make_shared<std::vector<T>>(std::move(values));
  }
  static const std::vector<T>& empty_vector() {
    static const std::vector<T> e;
    return e;
  }
  std::shared_ptr<std::vector<T>> p_;
};

}  // namespace podnet
