#!/usr/bin/env bash
# Installs the system packages the test suite runs for real: redis-server
# (dedup tests, Redis Cluster tests), prometheus-alertmanager (end-to-end
# tests), prometheus (promtool, to check the example rules and backfill
# TSDB blocks; the prometheus server itself, which internal/promtest starts
# for the live SLO context tests in enrich/slolive) and chromium (the
# operations console's browser tests in routing/console). Only what is
# missing is installed; on systems without apt-get it says what to install.
# It also builds helm from its Go module (below). kubectl is not needed:
# the deploy tests render the kustomize base through deploy/kubecheck,
# which embeds the kustomize library kubectl uses (a Go module, fetched by
# go build like the rest).
set -euo pipefail
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || need+=(redis-tools)
command -v prometheus-alertmanager >/dev/null 2>&1 || command -v alertmanager >/dev/null 2>&1 || need+=(prometheus-alertmanager)
if ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; then
  need+=(prometheus)
fi
# Headless Chromium drives the console's browser tests (routing/console).
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# helm, for the Helm chart tests (deploy/helm_test.go): no Debian package,
# so built from its Go module into $GOBIN (default $GOPATH/bin), where the
# tests also look. The first build takes minutes; later ones hit the cache.
helm_version=v4.3.2
gobin=$(go env GOBIN)
[ -n "$gobin" ] || gobin="$(go env GOPATH | cut -d: -f1)/bin"
if ! command -v helm >/dev/null 2>&1 && [ ! -x "$gobin/helm" ]; then
  echo "install-deps: building helm ${helm_version} into $gobin (go install)" >&2
  go install "helm.sh/helm/v4/cmd/helm@${helm_version}"
fi
[ ${#need[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: please install: ${need[*]} (no apt-get here)" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "install-deps: installing ${need[*]}" >&2
$sudo apt-get update -qq
# Debian's packages start their services on install; the tests start their
# own instances on free ports, so stop those to leave the default ports free.
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
for svc in redis-server prometheus-alertmanager prometheus; do
  $sudo systemctl stop "$svc" >/dev/null 2>&1 || $sudo service "$svc" stop >/dev/null 2>&1 || true
done
