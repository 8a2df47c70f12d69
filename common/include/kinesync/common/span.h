#pragma once
// Span<T>: a pointer and a count, what the animation ops take for arrays (parents, per-joint
// scratch). std::span needs C++20 and the public headers need only C++17, so this is the one
// type on both sides; it converts from std::vector, C arrays and (in C++20) std::span.

#include <cstddef>
#include <type_traits>
#include <vector>
#if __cplusplus >= 202002L
#include <span>
#endif

namespace ks {

template <class T>
class Span {
public:
    using value_type = std::remove_cv_t<T>;

    constexpr Span() = default;
    constexpr Span(T* data, size_t size) : data_(data), size_(size) {}
    template <size_t N>
    constexpr Span(T (&array)[N]) : data_(array), size_(N) {}
    template <class A>
    Span(std::vector<value_type, A>& v) : data_(v.data()), size_(v.size()) {}
    template <class A, class U = T, std::enable_if_t<std::is_const_v<U>, int> = 0>
    Span(const std::vector<value_type, A>& v) : data_(v.data()), size_(v.size()) {}
    // Span<const T> from Span<T>.
    template <class U, std::enable_if_t<std::is_convertible_v<U (*)[], T (*)[]>, int> = 0>
    constexpr Span(Span<U> other) : data_(other.data()), size_(other.size()) {}
#if __cplusplus >= 202002L
    template <class U, size_t E, std::enable_if_t<std::is_convertible_v<U (*)[], T (*)[]>, int> = 0>
    constexpr Span(std::span<U, E> s) : data_(s.data()), size_(s.size()) {}
#endif

    constexpr T* data() const { return data_; }
    constexpr size_t size() const { return size_; }
    constexpr bool empty() const { return size_ == 0; }
    constexpr T& operator[](size_t i) const { return data_[i]; }
    constexpr T* begin() const { return data_; }
    constexpr T* end() const { return data_ + size_; }

private:
    T* data_ = nullptr;
    size_t size_ = 0;
};

}  // namespace ks
