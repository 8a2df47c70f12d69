# Windows (built here with mingw-w64, cmake/toolchains/mingw-w64-x86_64.cmake; MSVC is untested):
# what every target needs. Included by the top-level CMakeLists.txt.

# Windows 10 APIs (SIO_TIMESTAMPING, BCryptGenRandom); no min/max macros from <windows.h>.
add_compile_definitions(_WIN32_WINNT=0x0A00 WIN32_LEAN_AND_MEAN NOMINMAX)
if(MINGW)
  # Everything linked in (libstdc++, libgcc, winpthread, libgcrypt): kinesync.dll and the
  # programs import only Windows' own DLLs (bindings/csharp/Plugins/README.md lists them).
  add_link_options(-static)
  # The AVX2 kernels: GCC cannot align the stack to 32 bytes on Win64, so no aligned AVX move may
  # touch it (GCC bug 54412).
  set(KS_AVX2_EXTRA_FLAGS -Wa,-muse-unaligned-vector-move)
endif()

# The header-only dependencies (Asio, the FlatBuffers runtime) from the build machine's Debian
# packages: a folder of links to just them, since /usr/include as a whole is Linux's.
set(KS_HOST_HEADERS ${PROJECT_BINARY_DIR}/host-headers)
file(MAKE_DIRECTORY ${KS_HOST_HEADERS})
foreach(h asio asio.hpp flatbuffers)
  if(NOT EXISTS /usr/include/${h})
    message(FATAL_ERROR "/usr/include/${h} is missing: ./setup.sh installs libasio-dev and libflatbuffers-dev")
  endif()
  file(CREATE_LINK /usr/include/${h} ${KS_HOST_HEADERS}/${h} SYMBOLIC)
endforeach()
target_include_directories(kinesync_internal SYSTEM INTERFACE ${KS_HOST_HEADERS})
