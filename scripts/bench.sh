#!/usr/bin/env bash
# make bench: the router's performance budget in one run, loopback only.
#
#  1. go test -bench ./bench/: every stage and the whole in-process pipeline
#     for 1, 10 and 100 alerts, in memory and against a real redis-server,
#     against the encoding/json floor; plus a CPU profile of the pipeline.
#  2. bin/loadgen against bin/baseline (echo + decode + one Redis round trip)
#     and bin/router (real redis-server, PagerDuty and Slack stand-ins):
#     closed loop (max throughput) and open loop at 1000 webhooks/s, 10-alert
#     payloads, steady state (the same payload repeated: dedup hits); then
#     fresh (new fingerprints in every webhook: every alert a new
#     transition, claimed, sent to the stand-ins and confirmed) for 1, 10
#     and 100 alerts, with the counts the stand-ins received.
#  3. The storm, against a freshly started router: 10,000 distinct alerts in
#     100 webhooks, one incident family plus 10% noise.
#
# It prints the table and saves everything to docs/bench-raw/<date>.txt.
# Every process it starts is killed on exit. Knobs (environment):
# BENCHTIME (go test -benchtime, default 1s), LOAD_DURATION (default 10s),
# CONCURRENCY (closed loop, default 16), RATE (open loop, default 1000),
# ALERTS (steady payload size, default 10), FRESH_ALERTS (fresh payload
# sizes, default "1 10 100"; empty skips the fresh mode).
set -euo pipefail

cd "$(dirname "$0")/.."
# cleanup, wait_for, http_ok, router_config
. scripts/bench-lib.sh
GO=${GO:-go}
BENCHTIME=${BENCHTIME:-1s}
LOAD_DURATION=${LOAD_DURATION:-10s}
CONCURRENCY=${CONCURRENCY:-16}
RATE=${RATE:-1000}
ALERTS=${ALERTS:-10}
FRESH_ALERTS=${FRESH_ALERTS-1 10 100}

mkdir -p bin docs/bench-raw
RAW="docs/bench-raw/$(date -u +%Y-%m-%dT%H%MZ).txt"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/alertrouter-bench.XXXXXX")
PIDS=()

trap cleanup EXIT
trap 'exit 130' INT TERM

exec > >(tee "$RAW") 2>&1

echo "# alertrouter benchmarks — $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "# commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (dirty)')"
echo "# $($GO version); nproc $(nproc); $(awk '/MemTotal/ {printf "memory %.1f GiB", $2/1048576}' /proc/meminfo)"
echo "# cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
echo "# redis: $(redis-server --version)"
echo

echo "## build"
$GO build -o bin/router ./cmd/router
$GO build -o bin/loadgen ./cmd/loadgen
$GO build -o bin/baseline ./cmd/baseline

mapfile -t PORTS < <(bin/loadgen -free-ports 6)
P_REDIS=${PORTS[0]} P_PD=${PORTS[1]} P_SLACK=${PORTS[2]} P_ROUTER=${PORTS[3]} P_BASE=${PORTS[4]} P_STORM=${PORTS[5]}

echo "## in-process benchmarks (go test -bench . -benchmem -benchtime=$BENCHTIME ./bench/)"
$GO test -run '^$' -bench . -benchmem -count=1 -benchtime="$BENCHTIME" -timeout 8m ./bench/ | tee "$WORK/inproc.txt"
echo
echo "## CPU profile: BenchmarkProcessMemory/steady/alerts=10 (go tool pprof -top)"
$GO test -run '^$' -bench 'ProcessMemory/steady/alerts=10$' -benchtime=2s -count=1 \
  -cpuprofile "$WORK/cpu.out" -o "$WORK/bench.test" ./bench/ >/dev/null
$GO tool pprof -top -cum -nodecount=40 "$WORK/bench.test" "$WORK/cpu.out" 2>/dev/null |
  grep -v -E ' (runtime|testing|internal/runtime)\.' | head -45
echo

echo "## processes (loopback): redis :$P_REDIS, stand-ins PagerDuty :$P_PD Slack :$P_SLACK, router :$P_ROUTER, baseline :$P_BASE"
redis-server --port "$P_REDIS" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
  --dir "$WORK" >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
PIDS+=($REDIS_PID)
wait_for redis-cli -h 127.0.0.1 -p "$P_REDIS" ping

bin/loadgen -standins -pd-listen "127.0.0.1:$P_PD" -slack-listen "127.0.0.1:$P_SLACK" \
  -slack-token xoxb-bench-token -slack-channel alerts-triage -lifetime 15m \
  >"$WORK/standins.out" 2>"$WORK/standins.err" &
STANDINS_PID=$!
PIDS+=($STANDINS_PID)
wait_for http_ok "http://127.0.0.1:$P_PD/-/standins/stats"


# start_router PORT PREFIX: start bin/router; its pid is in ROUTER_PID.
start_router() {
  router_config "$2" >"$WORK/router-$1.yml"
  bin/router serve --config.file="$WORK/router-$1.yml" --web.listen-address="127.0.0.1:$1" \
    --log.level=warn >"$WORK/router-$1.stdout" 2>"$WORK/router-$1.log" &
  ROUTER_PID=$!
  PIDS+=("$ROUTER_PID")
  wait_for http_ok "http://127.0.0.1:$1/-/ready"
}

start_router "$P_ROUTER" "bench:"
bin/baseline -listen "127.0.0.1:$P_BASE" -redis "127.0.0.1:$P_REDIS" 2>"$WORK/baseline.log" &
BASE_PID=$!
PIDS+=("$BASE_PID")
wait_for http_ok "http://127.0.0.1:$P_BASE/-/healthy"

RESULTS="$WORK/results.jsonl"
# Each run also splits the machine's CPU per webhook: target, Redis, stand-ins, loadgen, the rest.
lg() {
  bin/loadgen -testdata testdata -results "$RESULTS" -cpu-of "redis-server=$REDIS_PID" \
    -cpu-of "stand-ins=$STANDINS_PID" "$@"
  echo
}

echo
echo "## HTTP load, $ALERTS-alert payloads, steady state (same payload repeated)"
lg -label baseline/closed -mode closed -concurrency "$CONCURRENCY" -duration "$LOAD_DURATION" -alerts "$ALERTS" \
  -target "http://127.0.0.1:$P_BASE/webhook" -pid "$BASE_PID"
lg -label router/closed -mode closed -concurrency "$CONCURRENCY" -duration "$LOAD_DURATION" -alerts "$ALERTS" \
  -target "http://127.0.0.1:$P_ROUTER/webhook" -pid "$ROUTER_PID"
lg -label baseline/open -mode open -rate "$RATE" -concurrency 512 -duration "$LOAD_DURATION" -alerts "$ALERTS" \
  -target "http://127.0.0.1:$P_BASE/webhook" -pid "$BASE_PID"
lg -label router/open -mode open -rate "$RATE" -concurrency 512 -duration "$LOAD_DURATION" -alerts "$ALERTS" \
  -target "http://127.0.0.1:$P_ROUTER/webhook" -pid "$ROUTER_PID"

for n in $FRESH_ALERTS; do
  echo "## HTTP load, $n-alert payloads, fresh (new fingerprints in every webhook)"
  lg -label "baseline/fresh-$n" -mode closed -distinct -concurrency "$CONCURRENCY" -duration "$LOAD_DURATION" -alerts "$n" \
    -target "http://127.0.0.1:$P_BASE/webhook" -pid "$BASE_PID"
  lg -label "router/fresh-$n" -mode closed -distinct -concurrency "$CONCURRENCY" -duration "$LOAD_DURATION" -alerts "$n" \
    -target "http://127.0.0.1:$P_ROUTER/webhook" -pid "$ROUTER_PID" -standins-url "http://127.0.0.1:$P_PD"
done
echo "router log (warnings and errors, first 20 lines):"
head -20 "$WORK/router-$P_ROUTER.log" || true
kill "$ROUTER_PID" 2>/dev/null || true
wait "$ROUTER_PID" 2>/dev/null || true

echo
echo "## storm: fresh router, 100 webhooks x 100 distinct alerts at 50 webhooks/s"
start_router "$P_STORM" "storm:"
lg -label router/storm -mode storm -rate 50 -concurrency 16 -storm-webhooks 100 -storm-alerts 100 \
  -target "http://127.0.0.1:$P_STORM/webhook" -pid "$ROUTER_PID" -standins-url "http://127.0.0.1:$P_PD"
echo "router log (warnings and errors, first 20 lines):"
head -20 "$WORK/router-$P_STORM.log" || true

echo
echo "## results"
echo "in-process, ratio to the encoding/json floor (BenchmarkJSONFloor) of the same payload; target for 10 alerts: <= 1.5x and <= 100 allocs/alert"
awk '
  /^Benchmark/ {
    name = $1; sub(/-[0-9]+$/, "", name); ns[name] = $3
    for (i = 4; i < NF; i++) if ($(i+1) == "allocs/alert") pa[name] = $i
  }
  END {
    printf "  %-34s %12s %12s %8s %14s\n", "benchmark", "ns/op", "floor ns/op", "ratio", "allocs/alert"
    split("1 10 100", sizes, " ")
    split("Decode Evaluate ProcessMemory/steady ProcessMemory/fresh ProcessRedis/steady ProcessRedis/fresh", stages, " ")
    for (s = 1; s <= 6; s++) for (z = 1; z <= 3; z++) {
      n = "Benchmark" stages[s] "/alerts=" sizes[z]; f = "BenchmarkJSONFloor/alerts=" sizes[z]
      if ((n in ns) && (f in ns) && ns[f] > 0)
        printf "  %-34s %12d %12d %7.2fx %14s\n", substr(n, 10), ns[n], ns[f], ns[n] / ns[f], pa[n]
    }
  }' "$WORK/inproc.txt"
echo
echo "interleaved with the floor (BenchmarkVsFloor: median of per-iteration ratios; robust on a busy machine); targets: steady <= 1.0x at 10 and 100 alerts"
awk '/^BenchmarkVsFloor/ {
    name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkVsFloor\//, "", name)
    for (i = 2; i < NF; i++) { if ($(i+1) == "x-floor") x = $i; if ($(i+1) == "x-floor-sum") xs = $i }
    printf "  %-24s %8.2fx median %8.2fx sum\n", name, x, xs
  }' "$WORK/inproc.txt"
echo "fresh delivery in process (BenchmarkFreshDelivery: 16 webhooks in flight, real notifiers, stand-ins, real Redis):"
grep '^BenchmarkFreshDelivery' "$WORK/inproc.txt" | sed 's/^/  /'
echo
echo "over HTTP and the storm:"
bin/loadgen -report -results "$RESULTS"
echo
echo "raw output saved to $RAW"
