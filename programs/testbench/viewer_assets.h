#pragma once
// The viewer page's files (programs/testbench/viewer/), embedded at build time by
// cmake/embed_files.cmake into viewer_assets.cpp (generated).

#include <span>
#include <string_view>

namespace ks {

struct ViewerAsset {
    const char* name;        // file name in the viewer's directory
    std::string_view bytes;  // its contents
};

std::span<const ViewerAsset> viewer_assets();

}  // namespace ks
