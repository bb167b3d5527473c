#!/usr/bin/env bash
# Builds hcompile on the lent GPU machine (the `device` tool: Python 3.12, no network) from files
# carried in the ignored folder .dev/ of the repository root:
#   .dev/halide312.tar.xz  the cp312 `halide==21.0.0` wheel's halide/ folder (tar | xz: the wheel
#                          itself is over the carry limit)
#   .dev/whl/*.whl         pure-Python wheels missing there (bytecode; pytest-xdist and execnet, for
#                          the differential suite in parallel: `pip download --no-deps --only-binary=:all:
#                          --python-version 3.12 -d .dev/whl bytecode pytest-xdist execnet`)
#   .dev/deb/*.deb         Debian 12's libspdlog-dev, libspdlog1.10, libfmt-dev, libfmt9,
#                          libsqlite3-dev, libsqlite3-0 (`cd .dev/deb && apt-get download ...`)
# Then `. /tmp/env.sh` gives a shell where `import hcompile` works from the source tree.
set -euo pipefail
# The image's default CXX (/opt/gcc/bin/g++) is a wrapper that mixes GCC 13 headers into the build;
# objects built with it crashed inside std::ostream against libHalide. The plain compiler works.
unset LDFLAGS CXXFLAGS CFLAGS CPPFLAGS
export CXX=/usr/bin/g++ CC=/usr/bin/gcc
ROOT=$(pwd)
mkdir -p /tmp/sys /tmp/site
for f in .dev/deb/*.deb; do dpkg -x "$f" /tmp/sys; done
tar -xJf .dev/halide312.tar.xz -C /tmp/site
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .dev/whl/*.whl
export PYTHONPATH=/tmp/site
export LD_LIBRARY_PATH=/tmp/sys/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DHCOMPILE_BUILD_TESTS=OFF \
  -DCMAKE_PREFIX_PATH=/tmp/sys/usr -DPython_EXECUTABLE="$(command -v python3)" > /tmp/cmake.log 2>&1 \
  || { cat /tmp/cmake.log; exit 1; }
cmake --build /tmp/b -j"$(nproc)" > /tmp/build.log 2>&1 || { tail -50 /tmp/build.log; exit 1; }
cp /tmp/b/_C*.so frontend/hcompile/
echo "export PYTHONPATH=/tmp/site:$ROOT/frontend:$ROOT LD_LIBRARY_PATH=$LD_LIBRARY_PATH" > /tmp/env.sh
