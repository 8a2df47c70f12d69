# The crypto backends (common/src/crypto/): KS_CRYPTO picks the one the libraries link.
# sodium (the default) needs libsodium; gcrypt (the Windows client build) needs libgcrypt and
# never looks for libsodium. With KS_CRYPTO=sodium and libgcrypt found, the gcrypt backend is
# built too but only into the tests (KS_GCRYPT_BESIDE), which compare the two byte for byte: the
# shipped libraries (libkinesync.so's imports) stay as they were.
# Sets KS_HAVE_SODIUM, KS_HAVE_GCRYPT (linked into the libraries), KS_GCRYPT_BESIDE,
# KS_PC_CRYPTO_REQUIRES (pkg-config names) and KS_GCRYPT_FOUND_DIRS (where libgcrypt was found,
# a hint for kinesyncConfig.cmake).
# Windows (mingw) has libgcrypt and no libsodium package here: gcrypt is its default.
if(WIN32)
  set(KS_CRYPTO_DEFAULT gcrypt)
else()
  set(KS_CRYPTO_DEFAULT sodium)
endif()
set(KS_CRYPTO ${KS_CRYPTO_DEFAULT} CACHE STRING "The libraries' crypto backend: sodium (everything) or gcrypt (client only)")
set_property(CACHE KS_CRYPTO PROPERTY STRINGS sodium gcrypt)
if(NOT KS_CRYPTO MATCHES "^(sodium|gcrypt)$")
  message(FATAL_ERROR "KS_CRYPTO is sodium or gcrypt, not '${KS_CRYPTO}'")
endif()

find_package(PkgConfig REQUIRED)
include(${PROJECT_SOURCE_DIR}/cmake/KsGcrypt.cmake)
set(KS_HAVE_SODIUM OFF)
set(KS_HAVE_GCRYPT OFF)
set(KS_GCRYPT_BESIDE OFF)
set(KS_GCRYPT_FOUND_DIRS "")
if(KS_CRYPTO STREQUAL "sodium")
  pkg_check_modules(SODIUM REQUIRED IMPORTED_TARGET libsodium)
  set(KS_HAVE_SODIUM ON)
  set(KS_PC_CRYPTO_REQUIRES " libsodium")
  if(KsGcrypt_FOUND)
    set(KS_GCRYPT_BESIDE ON)
  endif()
else()
  if(NOT KsGcrypt_FOUND)
    message(FATAL_ERROR "KS_CRYPTO=gcrypt needs libgcrypt and libgpg-error (Debian: libgcrypt20-dev; mingw: "
                        "libgcrypt-mingw-w64-dev), or KS_GCRYPT_LIBRARY, KS_GPG_ERROR_LIBRARY and the include dirs set")
  endif()
  set(KS_HAVE_GCRYPT ON)
  set(KS_PC_CRYPTO_REQUIRES " libgcrypt")
  foreach(f ${KS_GCRYPT_LIBRARY} ${KS_GPG_ERROR_LIBRARY})
    get_filename_component(d ${f} DIRECTORY)
    list(APPEND KS_GCRYPT_FOUND_DIRS ${d})
  endforeach()
  list(APPEND KS_GCRYPT_FOUND_DIRS ${KS_GCRYPT_INCLUDE_DIR} ${KS_GPG_ERROR_INCLUDE_DIR})
  list(REMOVE_DUPLICATES KS_GCRYPT_FOUND_DIRS)
endif()
message(STATUS "kinesync crypto: the libraries use ${KS_CRYPTO}; gcrypt beside it for the tests: ${KS_GCRYPT_BESIDE}")

# Links the build's backend into `tgt` (kinesync_common, the fuzzers), and on Windows the OS
# random source's library.
function(ks_link_crypto tgt)
  if(KS_HAVE_SODIUM)
    target_link_libraries(${tgt} PRIVATE PkgConfig::SODIUM)
    target_compile_definitions(${tgt} PRIVATE KS_HAVE_SODIUM)
  endif()
  if(KS_HAVE_GCRYPT)
    target_link_libraries(${tgt} PRIVATE KsGcrypt::gcrypt)
    target_compile_definitions(${tgt} PRIVATE KS_HAVE_GCRYPT KS_CRYPTO_DEFAULT_GCRYPT)
  endif()
  if(WIN32)
    target_link_libraries(${tgt} PRIVATE bcrypt)
  endif()
endfunction()
