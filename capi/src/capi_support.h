#pragma once
// Shared by the C API's implementation files: the per-thread last error, the guard that turns
// every C++ exception into a ks_result, and kform conversions. Not installed.

#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

#include <kinesync/common/errors.h>
#include <kinesync/kinesync.h>
#include <kinesync/common/anim/pose.h>

namespace ks::capi {

// This thread's last error, in a fixed buffer: nothing thread_local with a destructor
// (tests/thread_exit_test.sh says why).
constexpr size_t kLastErrorCapacity = 2048;
void set_last_error(std::string_view why);  // cut at a character's start, ending in "...", if longer
const char* last_error();
const char*& current_function();  // the C function this thread is in (for messages)

template <class T>
T fail(T r, const std::string& why) {
    set_last_error(why);
    return r;
}

// For the functions that return a value rather than a ks_result, given a NULL handle: the
// sentinel their header names, and the reason in ks_last_error().
template <class T>
T null_handle(const char* fn, T sentinel) {
    set_last_error(std::string(fn) + ": NULL handle");
    return sentinel;
}

// Runs f (returning ks_result) for the C function `fn`; no exception leaves. A ks::Error gives
// its own code (ks::Errc and ks_result share their values), other exceptions a general one.
template <class F>
ks_result guarded(const char* fn, F&& f) noexcept {
    try {
        set_last_error({});
        current_function() = fn;
        return f();
    } catch (const Error& e) {
        const std::string what = e.what();
        return fail(ks_result(int(e.code())), what.rfind(fn, 0) == 0 ? what : std::string(fn) + ": " + what);
    } catch (const std::out_of_range& e) {
        return fail(KS_ERROR_INTERNAL, std::string(fn) + ": " + e.what());
    } catch (const std::length_error& e) {
        return fail(KS_ERROR_INTERNAL, std::string(fn) + ": " + e.what());
    } catch (const std::invalid_argument& e) {
        return fail(KS_ERROR_INVALID_ARGUMENT, e.what());
    } catch (const std::logic_error& e) {
        return fail(KS_ERROR_STATE, e.what());
    } catch (const std::bad_alloc&) {
        return fail(KS_ERROR_INTERNAL, "out of memory");
    } catch (const std::exception& e) {
        return fail(KS_ERROR_INTERNAL, e.what());
    } catch (...) {
        return fail(KS_ERROR_INTERNAL, "unknown error");
    }
}

// For the functions that return a value rather than a ks_result: f's value, or `fallback` (and
// the reason in ks_last_error()) if it throws; no exception leaves.
template <class T, class F>
T value_or(const char* fn, T fallback, F&& f) noexcept {
    T out = fallback;
    guarded(fn, [&] {
        out = f();
        return KS_OK;
    });
    return out;
}

inline kform from_c(const ks_kform& k) {
    kform o;
    o.pos = {k.pos[0], k.pos[1], k.pos[2]};
    o.rot = {k.rot[0], k.rot[1], k.rot[2], k.rot[3]};
    o.scl = {k.scl[0], k.scl[1], k.scl[2]};
    o.vel = {k.vel[0], k.vel[1], k.vel[2]};
    o.ang = {k.ang[0], k.ang[1], k.ang[2]};
    o.svl = {k.svl[0], k.svl[1], k.svl[2]};
    return o;
}

inline ks_kform to_c(const kform& k) {
    return {{k.pos.x, k.pos.y, k.pos.z}, {k.rot.w, k.rot.x, k.rot.y, k.rot.z}, {k.scl.x, k.scl.y, k.scl.z},
            {k.vel.x, k.vel.y, k.vel.z}, {k.ang.x, k.ang.y, k.ang.z}, {k.svl.x, k.svl.y, k.svl.z}};
}

}  // namespace ks::capi
