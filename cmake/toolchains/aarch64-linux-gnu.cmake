# Cross-compiling kinesync for 64-bit ARM Linux (AArch64) on a Debian/Ubuntu x86-64 host:
#   dpkg --add-architecture arm64 && apt-get update
#   apt-get install g++-aarch64-linux-gnu qemu-user libsodium-dev:arm64 libzstd-dev:arm64 libgtest-dev:arm64 \
#     libgmock-dev:arm64 libspdlog-dev:arm64 libfmt-dev:arm64 libbenchmark-dev:arm64 zlib1g-dev:arm64
#   cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release
#   cmake --build build-arm64 && ctest --test-dir build-arm64
# The programs and tests run under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR): ctest, gtest discovery
# and the test scripts (through KS_RUN, tests/CMakeLists.txt) prefix them with it. Header-only
# dependencies (FlatBuffers' runtime, Asio, CLI11) are the host's architecture-independent headers in
# /usr/include; flatc is the host's. See docs/PLATFORMS.md.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(KS_CROSS_TRIPLE aarch64-linux-gnu)

set(CMAKE_C_COMPILER ${KS_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${KS_CROSS_TRIPLE}-g++)

# The cross sysroot (the toolchain's libc) and Debian's multiarch arm64 libraries under /usr.
set(CMAKE_FIND_ROOT_PATH /usr/${KS_CROSS_TRIPLE} /usr)
set(CMAKE_LIBRARY_ARCHITECTURE ${KS_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)   # flatc, python3, bash: the host's
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# Package configs: the arm64 ones (lib/aarch64-linux-gnu/cmake) come first; the host's x86-64
# directory is never searched (CMAKE_LIBRARY_ARCHITECTURE), FlatBuffers' config (header-only runtime
# plus flatc) is found through the flatbuffers dir below.
if(EXISTS /usr/lib/x86_64-linux-gnu/cmake/flatbuffers AND NOT DEFINED FlatBuffers_DIR)
  set(FlatBuffers_DIR /usr/lib/x86_64-linux-gnu/cmake/flatbuffers CACHE PATH "FlatBuffers' CMake config (header-only runtime, host flatc)")
endif()

# pkg-config: the arm64 .pc files only.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${KS_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")

# Running what is built: qemu-user with the cross toolchain's loader (-L) and its libc and libstdc++
# first (LD_LIBRARY_PATH in the guest): without that the loader of libc6-arm64-cross would load the
# multiarch libc6:arm64's libc.so.6 (/lib/aarch64-linux-gnu, found through the host's ld.so.cache),
# and a loader and libc of different builds hang in the first pthread_create. The multiarch
# libraries (libsodium, libzstd, spdlog, ...) still come from /usr/lib/aarch64-linux-gnu.
find_program(KS_QEMU_AARCH64 qemu-aarch64)
if(KS_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${KS_QEMU_AARCH64} -L /usr/${KS_CROSS_TRIPLE} -E LD_LIBRARY_PATH=/usr/${KS_CROSS_TRIPLE}/lib)
endif()
