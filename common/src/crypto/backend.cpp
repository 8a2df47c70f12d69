#include "common/src/crypto/crypto.h"

namespace ks::crypto {

namespace {

const Backend& default_backend() {
#if defined(KS_CRYPTO_DEFAULT_GCRYPT)
    return gcrypt::backend();
#else
    return sodium::backend();
#endif
}

}  // namespace

const Backend& backend() {
    static const Backend& b = []() -> const Backend& {
        const Backend& d = default_backend();
        d.init();
        return d;
    }();
    return b;
}

const Backend* find_backend(std::string_view name) {
    const Backend* b = nullptr;
#if defined(KS_HAVE_SODIUM)
    if (name == "sodium") b = &sodium::backend();
#endif
#if defined(KS_HAVE_GCRYPT)
    if (name == "gcrypt") b = &gcrypt::backend();
#endif
    if (b) b->init();
    return b;
}

}  // namespace ks::crypto
