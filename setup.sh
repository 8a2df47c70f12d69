#!/usr/bin/env bash
# Installs every Debian package kinesync needs to build, test and benchmark (and the replay
# viewer: three.js from libjs-three, Chromium for its browser test; Mono for the C# binding's tests).
# Safe to run again. Uses sudo when not root.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build pkg-config clang \
  libgtest-dev libgmock-dev libbenchmark-dev \
  libasio-dev flatbuffers-compiler libflatbuffers-dev \
  libspdlog-dev libfmt-dev libcli11-dev libzstd-dev libsodium-dev zlib1g-dev \
  libjs-three chromium fonts-dejavu-core \
  mono-devel
