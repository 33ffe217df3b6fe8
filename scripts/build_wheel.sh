#!/usr/bin/env bash
# Packages a built tree as a wheel: scripts/build_wheel.sh BUILD_DIR OUT_DIR [PYTHON]
#
# BUILD_DIR is a CMake build tree in which the `crescent` binary and the Python
# module (targets crescent, _crescent, _node) are built; OUT_DIR receives
# crescent-<version>-<python tag>-<platform>.whl. The package is staged in
# BUILD_DIR/wheel: every file CMake laid out in BUILD_DIR/python/crescent (the
# pure-Python modules, whichever there are, and the extensions), the binary as
# crescent/bin/crescent, and python/wheel's metadata. PYTHON (default
# /usr/bin/python3, the interpreter the extensions are built for) runs Debian's
# `python3 -m build` with setuptools, offline (--no-isolation).
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR OUT_DIR [PYTHON]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
python=${3:-/usr/bin/python3}
root=$(cd "$(dirname "$0")/.." && pwd)

pkg=$build/python/crescent
missing=()
for f in "$build/bin/crescent" "$pkg/__init__.py" "$pkg/libcrescent_pyclient.so"; do
  [ -e "$f" ] || missing+=("$f")
done
for ext in _crescent _node; do
  compgen -G "$pkg/$ext.*.so" >/dev/null || missing+=("$pkg/$ext.*.so")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "build_wheel: not built: ${missing[*]} (make wheel builds them)" >&2
  exit 1
fi

version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
if [ -z "$version" ]; then
  echo "build_wheel: no project version in $build/CMakeCache.txt" >&2
  exit 1
fi

stage=$build/wheel
rm -rf "$stage"
mkdir -p "$stage/crescent/bin"
# The whole package directory, less bytecode caches.
(cd "$pkg" && find . -name __pycache__ -prune -o -type f -print | while read -r f; do
  mkdir -p "$stage/crescent/$(dirname "$f")"
  cp -p "$f" "$stage/crescent/$f"
done)
install -m 0755 "$build/bin/crescent" "$stage/crescent/bin/crescent"
sed "s/@VERSION@/$version/" "$root/python/wheel/pyproject.toml.in" >"$stage/pyproject.toml"
cp "$root/python/wheel/setup.py" "$stage/setup.py"
cp "$root/README.md" "$stage/README.md"

"$python" -m build --wheel --no-isolation --outdir "$out" "$stage" >"$stage/build.log" 2>&1 || {
  cat "$stage/build.log" >&2
  echo "build_wheel: python3 -m build failed (log above, also in $stage/build.log)" >&2
  exit 1
}
wheel=$(sed -n 's/^Successfully built //p' "$stage/build.log" | tail -1)
echo "$out/$wheel"
