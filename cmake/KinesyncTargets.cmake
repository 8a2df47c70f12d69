# How every kinesync target is built. Included by the top-level CMakeLists.txt.

# Project code: C++20 inside, warnings as errors in every build type. -ffp-contract=off: no a*b+c
# fused into one FMA rounding, whatever the compiler, -O level or -march, so the snapshot codec's
# predictions (common/src/codec/det_math.h) give the same bits on every build; it comes after
# CMAKE_CXX_FLAGS, so a -ffp-contract=fast there does not undo it.
function(ks_project_target tgt)
  set_target_properties(${tgt} PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
  if(MSVC)
    # Untested here (docs/PLATFORMS.md): /fp:precise contracts nothing into FMA.
    target_compile_options(${tgt} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:/W4 /WX /fp:precise /permissive->)
  else()
    target_compile_options(${tgt} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror -ffp-contract=off>)
  endif()
  # Inside the project (never installed): private headers by their path from the repository root
  # ("common/src/net/protocol.h") and the generated schema headers ("schema/protocol_generated.h").
  target_link_libraries(${tgt} PRIVATE $<BUILD_INTERFACE:kinesync_internal>)
endfunction()

# A library a game links: public headers under DIR/include (as <kinesync/...>), C++17 for its
# consumers, hidden symbols, the name kinesync::NAME from add_subdirectory and find_package alike.
function(ks_library name dir)
  add_library(kinesync_${name} STATIC ${ARGN})
  ks_project_target(kinesync_${name})
  target_include_directories(kinesync_${name} PUBLIC $<BUILD_INTERFACE:${dir}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(kinesync_${name} INTERFACE cxx_std_17)
  set_target_properties(kinesync_${name} PROPERTIES EXPORT_NAME ${name} CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  add_library(kinesync::${name} ALIAS kinesync_${name})
  install(TARGETS kinesync_${name} EXPORT kinesyncTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY ${dir}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()
