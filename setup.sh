#!/usr/bin/env bash
# Installs every Debian package kinesync needs to build, test and benchmark (and the replay
# viewer: three.js from libjs-three, Chromium for its browser test; Mono for the C# binding's tests),
# and to cross-build and test the other platforms: clang with libc++, Windows (mingw-w64, wine64,
# libgcrypt's Windows build), ARM64 (aarch64 g++, qemu-user, the arm64 libraries).
# Safe to run again. Uses sudo when not root.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# The other platforms' builds (docs/PLATFORMS.md): ARM64 libraries through multiarch.
if ! dpkg --print-foreign-architectures | grep -qx arm64; then $SUDO dpkg --add-architecture arm64; fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build pkg-config clang \
  libgtest-dev libgmock-dev libbenchmark-dev googletest \
  libasio-dev flatbuffers-compiler libflatbuffers-dev \
  libspdlog-dev libfmt-dev libcli11-dev libzstd-dev libsodium-dev libgcrypt20-dev zlib1g-dev \
  libjs-three chromium fonts-dejavu-core \
  mono-devel \
  libc++-dev libc++abi-dev \
  g++-mingw-w64-x86-64-posix binutils-mingw-w64-x86-64 libgcrypt-mingw-w64-dev wine64 \
  g++-aarch64-linux-gnu qemu-user \
  libsodium-dev:arm64 libzstd-dev:arm64 libgtest-dev:arm64 libgmock-dev:arm64 libspdlog-dev:arm64 \
  libfmt-dev:arm64 libbenchmark-dev:arm64 zlib1g-dev:arm64
