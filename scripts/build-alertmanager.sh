#!/usr/bin/env bash
# Builds the Alertmanager release go.mod requires (github.com/prometheus/
# alertmanager, v0.35.0 today) from its Go module into $GOBIN (default
# $GOPATH/bin) as alertmanager-<version>, for `make am-current`: the tests
# that talk to a real Alertmanager run once more against it, as Debian's
# 0.25 is what `make deps` installs and users run current releases (0.28
# and later write UTF-8 matchers into groupKey and answer an unknown
# silence's expiry 404: an audit found both broke the router there).
# The module ships the web UI's sources, not its built assets, which the
# binary embeds: a placeholder page stands in (the APIs the router calls
# are all there). Prints the binary's path. It fetches the release's own
# dependencies through the Go module proxy (some at versions the router's
# go.sum does not hold), as `go install` would.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(go list -m -f '{{.Version}}' github.com/prometheus/alertmanager)
gobin=$(go env GOBIN)
[ -n "$gobin" ] || gobin="$(go env GOPATH | cut -d: -f1)/bin"
bin="$gobin/alertmanager-$version"
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
echo "build-alertmanager: building Alertmanager $version into $bin" >&2
src=$(go mod download -json "github.com/prometheus/alertmanager@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "build-alertmanager: no module source for $version" >&2; exit 1; }
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work" "${tmp:-}"' EXIT
cp -r "$src/." "$work/"
chmod -R u+w "$work"
for d in "$work/ui/app/dist" "$work/ui/app/dist/elm" "$work/ui/app/dist/mantine"; do
  mkdir -p "$d"
  [ -n "$(ls -A "$d" 2>/dev/null)" ] || echo '<html><body>Alertmanager web UI not built (alertrouter test build)</body></html>' > "$d/index.html"
done
mkdir -p "$gobin"
tmp=$(mktemp "$bin.XXXXXX")
(cd "$work" && go build -trimpath -o "$tmp" \
  -ldflags "-X github.com/prometheus/common/version.Version=${version#v} -X github.com/prometheus/common/version.Branch=module" \
  ./cmd/alertmanager)
chmod 755 "$tmp"
mv "$tmp" "$bin"
echo "$bin"
