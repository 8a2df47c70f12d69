#include "common/src/codec/range_coder.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

namespace ks {

void RangeEncoder::shift_low() {
    if (uint32_t(low_) < 0xFF000000u || (low_ >> 32) != 0) {
        const uint8_t carry = uint8_t(low_ >> 32);
        uint8_t temp = cache_;
        do {
            if (first_) first_ = false;  // the LZMA stream's first byte is always 0: not stored
            else out_.push_back(uint8_t(temp + carry));
            temp = 0xFF;
        } while (--cache_size_ != 0);
        cache_ = uint8_t(low_ >> 24);
    }
    ++cache_size_;
    low_ = (low_ & 0x00FFFFFFu) << 8;
}

void RangeEncoder::encode_bit(uint32_t p0, int bit) {
    const uint32_t bound = (range_ >> kProbBits) * usable_probability(p0);
    if (bit == 0) {
        range_ = bound;
    } else {
        low_ += bound;
        range_ -= bound;
    }
    while (range_ < (1u << 24)) {
        range_ <<= 8;
        shift_low();
        ++shifts_;
    }
}

void RangeEncoder::encode_bypass(uint32_t value, int nbits) {
    for (int i = nbits - 1; i >= 0; --i) encode_bit(kProbOne / 2, int((value >> i) & 1u));
}

void RangeEncoder::finish() {
    // Any value in [low, low + range) decodes the same; pick the one with the most trailing zero
    // bytes, emit it, and drop trailing zeros (the decoder substitutes zeros past the end).
    for (int shift = 32; shift >= 0; shift -= 8) {
        const uint64_t mask = shift >= 32 ? 0xFFFFFFFFull : ((1ull << shift) - 1);
        const uint64_t v = (low_ + mask) & ~mask;
        if (v >= low_ && v < low_ + range_) {
            low_ = v;
            break;
        }
    }
    const size_t before_flush = out_.size();
    for (int i = 0; i < 5; ++i) shift_low();
    // Only the flushed bytes may go, and no more than the decoder may substitute: a carry can turn
    // pending 0xFF bytes into zeros that come out with the flush.
    const uint64_t reads = 4 + shifts_;
    while (out_.size() > before_flush && out_.back() == 0 && uint64_t(out_.size() - start_) + kMaxImpliedBytes > reads) out_.pop_back();
}

RangeDecoder::RangeDecoder(std::span<const uint8_t> in) : in_(in) {
    for (int i = 0; i < 4; ++i) code_ = (code_ << 8) | next_byte();
}

uint32_t RangeDecoder::decode_bypass(int nbits) {
    uint32_t v = 0;
    for (int i = 0; i < nbits; ++i) v = (v << 1) | uint32_t(decode_bit(kProbOne / 2));
    return v;
}

namespace {

uint16_t to_prob(double p) { return uint16_t(std::clamp(std::lround(p * kProbOne), 1l, long(kProbOne) - 1)); }

// Bucket i = 8 k + m covers sigma in [2^(k-4) (1 + m/8), 2^(k-4) (1 + (m+1)/8)), from kSigmaMin =
// 1/16: the float's exponent and its top three mantissa bits, so a sigma's bucket is a shift of
// its bits (no search, no log), the same on every machine. Its model is made for the bucket's
// geometric middle.
constexpr float kSigmaMin = 0.0625f;
constexpr uint32_t kMinKey = 123u << 3;  // the bits of 2^-4 shifted right by 20: exponent 123, mantissa 0

uint32_t float_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

double bucket_lower(int i) { return std::ldexp(1.0 + double(i % 8) / 8.0, i / 8 - 4); }

struct ModelTable {
    std::array<LaplaceModel, kLaplaceBuckets> models{};
    std::array<float, kLaplaceBuckets> middle{};
};

const ModelTable& model_table() {
    static const ModelTable table = [] {
        ModelTable t;
        for (int i = 0; i < kLaplaceBuckets; ++i) {
            const double sigma = std::sqrt(bucket_lower(i) * bucket_lower(i + 1));
            t.middle[size_t(i)] = float(sigma);
            // Two-sided geometric with mean |q| = sigma: P(q) = (1-t)/(1+t) t^|q|, E|q| = 2t/(1-t^2).
            // Solve 2t/(1-t^2) = sigma for t.
            const double t_ = (std::sqrt(1.0 + sigma * sigma) - 1.0) / sigma;
            t.models[size_t(i)] = {to_prob((1.0 - t_) / (1.0 + t_)), to_prob(1.0 - t_)};
        }
        return t;
    }();
    return table;
}

constexpr int kUnaryLimit = 24;

}  // namespace

int laplace_bucket(float sigma) {
    if (!(sigma >= kSigmaMin)) return 0;  // below the grid, and NaN
    const uint32_t key = float_bits(sigma) >> 20;  // sign 0: exponent and the top three mantissa bits
    return int(std::min<uint32_t>(key - kMinKey, kLaplaceBuckets - 1));  // infinity lands on the last
}

float laplace_bucket_sigma(int bucket) { return model_table().middle[size_t(std::clamp(bucket, 0, kLaplaceBuckets - 1))]; }

LaplaceModel laplace_model(float sigma) { return model_table().models[size_t(laplace_bucket(sigma))]; }

void encode_exp_golomb(RangeEncoder& enc, uint32_t v, int k) {
    const uint64_t x = uint64_t(v) + (1ull << k);
    int nbits = 0;
    while ((x >> nbits) > 1) ++nbits;  // floor(log2 x)
    for (int i = k; i < nbits; ++i) enc.encode_bit(kProbOne / 2, 1);
    enc.encode_bit(kProbOne / 2, 0);
    for (int i = nbits - 1; i >= 0; --i) enc.encode_bit(kProbOne / 2, int((x >> i) & 1));
}

uint32_t decode_exp_golomb(RangeDecoder& dec, int k) {
    int nbits = k;
    while (dec.decode_bit(kProbOne / 2) == 1) {
        if (++nbits > 32) return 0;  // malformed: caller detects via range checks
    }
    uint64_t x = 0;
    for (int i = nbits - 1; i >= 0; --i) x = (x << 1) | uint64_t(dec.decode_bit(kProbOne / 2));
    x |= (1ull << nbits);
    return uint32_t(x - (1ull << k));
}

void encode_laplace(RangeEncoder& enc, int32_t q, const LaplaceModel& m) {
    enc.encode_bit(m.p_zero, q != 0);
    if (q == 0) return;
    enc.encode_bit(kProbOne / 2, q < 0);
    const uint32_t mag = q < 0 ? uint32_t(-(int64_t(q))) : uint32_t(q);
    // |q| - 1 in unary with P(stop) = p_stop, then an escape.
    uint32_t k = 1;
    for (; k < mag && k <= kUnaryLimit; ++k) enc.encode_bit(m.p_stop, 1);
    if (k <= kUnaryLimit) {
        enc.encode_bit(m.p_stop, 0);
        return;
    }
    encode_exp_golomb(enc, mag - kUnaryLimit - 1, 2);
}

int32_t decode_laplace(RangeDecoder& dec, const LaplaceModel& m) {
    if (dec.decode_bit(m.p_zero) == 0) return 0;
    const bool neg = dec.decode_bit(kProbOne / 2) != 0;
    uint64_t mag = 1;
    while (true) {
        if (mag > kUnaryLimit) {
            mag = uint64_t(kUnaryLimit) + 1 + decode_exp_golomb(dec, 2);
            break;
        }
        if (dec.decode_bit(m.p_stop) == 0) break;
        ++mag;
    }
    mag = std::min<uint64_t>(mag, INT32_MAX);
    return neg ? -int32_t(mag) : int32_t(mag);
}

}  // namespace ks
