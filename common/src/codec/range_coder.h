#pragma once
// A binary range coder (the LZMA construction: 32-bit range, carry propagation through a cached
// byte) with explicit 12-bit probabilities, and a Laplace-model integer coder on top of it.
//
// The encoder strips the always-zero first byte and finishes on the shortest tail; the decoder
// reads zeros past the end of its input (so a truncated or hostile payload decodes to something
// and is rejected by the caller's checks) and counts how many bytes it had to invent: a complete
// payload never needs more than kMaxImpliedBytes.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ks {

constexpr uint32_t kProbBits = 12;
constexpr uint32_t kProbOne = 1u << kProbBits;
constexpr size_t kMaxImpliedBytes = 5;

// A probability of 0 or kProbOne would leave no room for one of the two symbols (the encoder's
// range would reach 0 and never renormalise): both ends keep every probability within 1..4095.
constexpr uint32_t usable_probability(uint32_t p0) { return p0 < 1 ? 1 : p0 > kProbOne - 1 ? kProbOne - 1 : p0; }

class RangeEncoder {
public:
    explicit RangeEncoder(std::vector<uint8_t>& out) : out_(out), start_(out.size()) {}
    // Codes `bit` where p0 (1..kProbOne-1) is the probability, in 1/4096, that the bit is 0.
    void encode_bit(uint32_t p0, int bit);
    void encode_bypass(uint32_t value, int nbits);  // equiprobable bits, most significant first
    // Finishes the stream; the encoder must not be used afterwards.
    void finish();
    // At least the bytes this stream would take were it finished now: what is out, the byte held
    // back with the 0xFF bytes pending behind it, and the four of `low` that finish() flushes.
    size_t size_bound() const { return out_.size() - start_ + size_t(cache_size_) + 4; }

private:
    void shift_low();
    std::vector<uint8_t>& out_;
    size_t start_;        // where this stream's bytes begin in out_
    uint64_t shifts_ = 0; // renormalisations: the decoder reads 4 bytes, then one per shift
    uint64_t low_ = 0;
    uint32_t range_ = 0xFFFFFFFFu;
    uint8_t cache_ = 0;
    uint64_t cache_size_ = 1;
    bool first_ = true;
};

class RangeDecoder {
public:
    explicit RangeDecoder(std::span<const uint8_t> in);
    // In the header: every decoded symbol goes through it (about 40 % of decoding a skeleton's
    // joints when it was out of line).
    int decode_bit(uint32_t p0) {
        const uint32_t bound = (range_ >> kProbBits) * usable_probability(p0);
        int bit;
        if (code_ < bound) {
            range_ = bound;
            bit = 0;
        } else {
            code_ -= bound;
            range_ -= bound;
            bit = 1;
        }
        while (range_ < (1u << 24)) {
            range_ <<= 8;
            code_ = (code_ << 8) | next_byte();
        }
        return bit;
    }
    uint32_t decode_bypass(int nbits);
    // Bytes read beyond the end of the input (zeros were substituted).
    size_t overrun() const { return overrun_; }
    size_t consumed() const { return pos_; }

private:
    uint8_t next_byte() {
        if (pos_ < in_.size()) return in_[pos_++];
        ++overrun_;
        return 0;
    }
    std::span<const uint8_t> in_;
    size_t pos_ = 0;
    size_t overrun_ = 0;
    uint32_t range_ = 0xFFFFFFFFu;
    uint32_t code_ = 0;
};

// Signed integers under a two-sided geometric (discrete Laplace) model of scale sigma (mean
// absolute value, in quantization steps): a zero flag, a sign, then the magnitude in unary with
// the geometric stop probability, escaping to Exp-Golomb after 24 steps. Ideal for the model up to
// the 12-bit probability resolution. sigma is bucketed on a log grid so encoder and decoder derive
// identical probabilities from a table (a NaN sigma takes the narrowest model, an infinite one the
// widest).
struct LaplaceModel {
    uint16_t p_zero;  // P(q == 0) in 1/4096
    uint16_t p_stop;  // P(|q| == m | |q| >= m) in 1/4096
};
LaplaceModel laplace_model(float sigma);
// The log grid the models sit on: sigma's bucket (0..kLaplaceBuckets - 1, an eighth of an
// octave each from 1/16 to 2^14.5), and a bucket's middle sigma. Scales mixed on this grid need no
// logarithm (no libm).
constexpr int kLaplaceBuckets = 148;
int laplace_bucket(float sigma);
float laplace_bucket_sigma(int bucket);
void encode_laplace(RangeEncoder& enc, int32_t q, const LaplaceModel& m);
int32_t decode_laplace(RangeDecoder& dec, const LaplaceModel& m);

// Unsigned Exp-Golomb with bypass bits (for headers and escapes).
void encode_exp_golomb(RangeEncoder& enc, uint32_t v, int k = 0);
uint32_t decode_exp_golomb(RangeDecoder& dec, int k = 0);

}  // namespace ks
