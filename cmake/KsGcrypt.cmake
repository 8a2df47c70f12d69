# Finds libgcrypt and libgpg-error (gcrypt.h needs gpg-error.h) as the imported target
# KsGcrypt::gcrypt and sets KsGcrypt_FOUND. Plain find_path/find_library, so a cross-build finds
# the mingw files under its CMAKE_FIND_ROOT_PATH, and a cache variable can name each file
# (KS_GCRYPT_INCLUDE_DIR, KS_GPG_ERROR_INCLUDE_DIR, KS_GCRYPT_LIBRARY, KS_GPG_ERROR_LIBRARY).
# KS_GCRYPT_HINT_DIRS (optional): more places to look first (kinesyncConfig.cmake passes where
# the library was found when kinesync was built). Included by the project and, installed, by
# kinesyncConfig.cmake.
if(TARGET KsGcrypt::gcrypt)
  set(KsGcrypt_FOUND TRUE)
  return()
endif()
find_path(KS_GCRYPT_INCLUDE_DIR gcrypt.h HINTS ${KS_GCRYPT_HINT_DIRS})
find_path(KS_GPG_ERROR_INCLUDE_DIR gpg-error.h HINTS ${KS_GCRYPT_HINT_DIRS})
find_library(KS_GCRYPT_LIBRARY NAMES gcrypt libgcrypt HINTS ${KS_GCRYPT_HINT_DIRS})
find_library(KS_GPG_ERROR_LIBRARY NAMES gpg-error libgpg-error HINTS ${KS_GCRYPT_HINT_DIRS})
if(KS_GCRYPT_INCLUDE_DIR AND KS_GPG_ERROR_INCLUDE_DIR AND KS_GCRYPT_LIBRARY AND KS_GPG_ERROR_LIBRARY)
  add_library(KsGcrypt::gcrypt UNKNOWN IMPORTED)
  set_target_properties(KsGcrypt::gcrypt PROPERTIES IMPORTED_LOCATION ${KS_GCRYPT_LIBRARY}
                        INTERFACE_INCLUDE_DIRECTORIES "${KS_GCRYPT_INCLUDE_DIR};${KS_GPG_ERROR_INCLUDE_DIR}"
                        INTERFACE_LINK_LIBRARIES ${KS_GPG_ERROR_LIBRARY})
  set(KsGcrypt_FOUND TRUE)
else()
  set(KsGcrypt_FOUND FALSE)
endif()
