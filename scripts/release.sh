#!/usr/bin/env bash
# Builds release archives of the router: one tarball per platform and a
# SHA-256 sums file, under $DIST (default dist/, gitignored). `make release`
# runs it.
#
#   VERSION=v0.2.0 scripts/release.sh
#   VERSION=v0.2.0 PLATFORMS=linux/amd64 DIST=/tmp/out scripts/release.sh
#
# Each archive is router-<version>.<os>-<arch>.tar.gz holding
# router-<version>.<os>-<arch>/{router,LICENSE,README.md,CHANGELOG.md}.
# The binary is static (CGO_ENABLED=0), -trimpath, and stamped through
# github.com/prometheus/common/version with the version, the commit, the
# branch and the commit's time as build date.
#
# -buildvcs=false: the ldflags carry the revision, so the archive does not
# depend on whether the checkout is a clone or a worktree.
#
# Reproducible: the same commit and Go version give byte-identical
# archives. The build date and every file's modification time come from
# SOURCE_DATE_EPOCH (default: the commit time), tar entries are sorted with
# fixed owner and modes, and gzip stores no name or time.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
PLATFORMS=${PLATFORMS:-linux/amd64 linux/arm64 darwin/arm64}
DIST=${DIST:-dist}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
REVISION=${REVISION:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
BRANCH=${BRANCH:-$(git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)}
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
export SOURCE_DATE_EPOCH
BUILD_DATE=$(date -u -d "@${SOURCE_DATE_EPOCH}" +%Y%m%d-%H:%M:%S)

case "$VERSION" in
  *[!A-Za-z0-9._+-]*|"") echo "release: VERSION ${VERSION@Q} has characters outside [A-Za-z0-9._+-]" >&2; exit 2 ;;
esac

pkg=github.com/prometheus/common/version
ldflags="-s -w -buildid= -X ${pkg}.Version=${VERSION} -X ${pkg}.Revision=${REVISION} -X ${pkg}.Branch=${BRANCH} -X ${pkg}.BuildDate=${BUILD_DATE}"

mkdir -p "$DIST"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

archives=()
for platform in $PLATFORMS; do
  goos=${platform%/*}
  goarch=${platform#*/}
  name="router-${VERSION}.${goos}-${goarch}"
  dir="${work}/${name}"
  mkdir -p "$dir"
  echo "release: building ${name}" >&2
  CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch "$GO" build -trimpath -buildvcs=false -ldflags "$ldflags" -o "${dir}/router" ./cmd/router
  cp LICENSE README.md CHANGELOG.md "$dir/"
  # Sorted entries, numeric root owner, normalized modes and one mtime;
  # gzip -n leaves out the name and time it would otherwise record.
  tar --sort=name --format=ustar --owner=0 --group=0 --numeric-owner \
      --mode='u+rwX,go+rX,go-w' --mtime="@${SOURCE_DATE_EPOCH}" \
      -C "$work" -cf - "$name" | gzip -n -9 > "${DIST}/${name}.tar.gz"
  archives+=("${name}.tar.gz")
done

(cd "$DIST" && sha256sum "${archives[@]}" > sha256sums.txt && cat sha256sums.txt)
