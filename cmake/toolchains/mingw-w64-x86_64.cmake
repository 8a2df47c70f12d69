# Cross-builds kinesync for 64-bit Windows with Debian's mingw-w64 (g++-mingw-w64-x86-64-posix:
# the POSIX thread model, for std::thread and std::mutex) and runs its tests under wine64:
#   cmake -S . -B build-win64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/mingw-w64-x86_64.cmake
#   cmake --build build-win64 && ctest --test-dir build-win64
# A client-only build (KS_CLIENT_ONLY, on by default for Windows): docs/PLATFORMS.md.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Debian installs wine64 in wine's library folder, not on the PATH.
find_program(KS_WINE64 wine64 PATHS /usr/lib/wine NO_CMAKE_FIND_ROOT_PATH)
if(KS_WINE64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${KS_WINE64})
endif()
# GoogleTest from Debian's sources (googletest), built with this compiler.
set(KS_GTEST_SOURCE_DIR /usr/src/googletest CACHE PATH "GoogleTest sources")
