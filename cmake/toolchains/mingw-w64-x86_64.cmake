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
# Wine keeps its own Windows in a prefix: one inside the build tree (the user's ~/.wine is not
# created or touched), with its diagnostics off (WINEDEBUG; they would fill the build log while
# test discovery runs) and no offer to install Mono or Gecko when it is made.
if(KS_WINE64)
  set(CMAKE_CROSSCOMPILING_EMULATOR /usr/bin/env WINEPREFIX=${CMAKE_BINARY_DIR}/wineprefix WINEDEBUG=-all
      WINEDLLOVERRIDES=mscoree,mshtml= ${KS_WINE64})
endif()
# GoogleTest from Debian's sources (googletest), built with this compiler.
set(KS_GTEST_SOURCE_DIR /usr/src/googletest CACHE PATH "GoogleTest sources")
