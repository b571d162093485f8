#!/usr/bin/env bash
# scripts/bench-peers.sh: the router beside peer Alertmanager webhook
# receivers, in one run, loopback only. It fetches and builds nothing: pass
# the paths of peer binaries you already have (none is required).
#
#   CALERT=/path/to/calert MSTEAMS=/path/to/prometheus-msteams \
#   MSTEAMS_TEMPLATE=/path/to/default-message-card.tmpl \
#   CALERT_TEMPLATE=/path/to/calert/static/message.tmpl scripts/bench-peers.sh
#
# calert reads its message template from the provider's "template" (a path
# relative to its working directory unless absolute): give CALERT_TEMPLATE
# when the binary was built outside its source tree.
#
# For each payload size (SIZES, default "1 10 100") and mode (steady: one
# payload repeated; fresh: new fingerprints in every webhook) it runs
# bin/loadgen closed loop (CONCURRENCY workers, LOAD_DURATION) against:
#   floor    bin/baseline: echo + encoding/json decode + one Redis round trip
#   router   bin/router with real redis-server and the PagerDuty and Slack
#            stand-ins (delivered counts read from the stand-ins)
#   calert   (if CALERT is set) delivering to a loopback sink (loadgen -sink)
#   msteams  (if MSTEAMS is set) delivering to a loopback sink
#   router-sink  (unless ROUTER_SINK=0) the same router build delivering to
#            that sink too, like the peers: the stand-ins check every
#            request against Slack's and PagerDuty's rules and cost the
#            machine far more CPU per request than the sink
# ROUNDS times, interleaved (round 1 of every target, then round 2, ...),
# and prints the median webhooks/s and p99 of each cell and the ratios
# router/floor and router/best peer, then router/best peer round by round
# and the median of those ratios. A peer that dies is restarted for the
# next cell and reported as "crashed". After each cell it waits until the sink
# is quiet, so that a receiver still delivering its queue after answering
# (calert) does not slow the next cell. Everything is saved to
# docs/bench-raw/peers-<date>.txt; every process it starts is killed on exit.
# A second table splits the machine's CPU per webhook between the target,
# redis-server, the stand-ins, the sink, the load generator and the rest:
# on a saturated machine the ratio of two targets' machine CPU per webhook
# is the ratio of their throughputs, and the split shows what a target
# costs besides its own process.
set -euo pipefail

cd "$(dirname "$0")/.."
# cleanup, wait_for, http_ok, router_config
. scripts/bench-lib.sh
GO=${GO:-go}
LOAD_DURATION=${LOAD_DURATION:-15s}
CONCURRENCY=${CONCURRENCY:-16}
ROUNDS=${ROUNDS:-3}
SIZES=${SIZES:-1 10 100}
MODES=${MODES:-steady fresh}
CALERT=${CALERT:-}
MSTEAMS=${MSTEAMS:-}
MSTEAMS_TEMPLATE=${MSTEAMS_TEMPLATE:-}
CALERT_TEMPLATE=${CALERT_TEMPLATE:-}
ROUTER_SINK=${ROUTER_SINK:-1}

for p in "$CALERT" "$MSTEAMS"; do
  if [ -n "$p" ] && [ ! -x "$p" ]; then
    echo "bench-peers: $p is not an executable file" >&2
    exit 2
  fi
done

mkdir -p bin docs/bench-raw
RAW="docs/bench-raw/peers-$(date -u +%Y-%m-%dT%H%MZ).txt"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/alertrouter-peers.XXXXXX")
PIDS=()
trap cleanup EXIT
trap 'exit 130' INT TERM
exec > >(tee "$RAW") 2>&1

# port_open PORT: something accepts TCP connections on 127.0.0.1:PORT.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

echo "# alertrouter peer comparison — $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "# commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (dirty)')"
echo "# $($GO version); nproc $(nproc); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# calert: ${CALERT:-(not given)}; prometheus-msteams: ${MSTEAMS:-(not given)}"
echo "# closed loop, concurrency $CONCURRENCY, $LOAD_DURATION per cell, $ROUNDS rounds interleaved"
echo

$GO build -o bin/router ./cmd/router
$GO build -o bin/loadgen ./cmd/loadgen
$GO build -o bin/baseline ./cmd/baseline

mapfile -t PORTS < <(bin/loadgen -free-ports 9)
P_REDIS=${PORTS[0]} P_PD=${PORTS[1]} P_SLACK=${PORTS[2]} P_ROUTER=${PORTS[3]} P_BASE=${PORTS[4]}
P_SINK=${PORTS[5]} P_CALERT=${PORTS[6]} P_MSTEAMS=${PORTS[7]} P_ROUTER_SINK=${PORTS[8]}

redis-server --port "$P_REDIS" --bind 127.0.0.1 --save '' --appendonly no --daemonize no --dir "$WORK" \
  >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
PIDS+=($REDIS_PID)
wait_for redis-cli -h 127.0.0.1 -p "$P_REDIS" ping
bin/loadgen -standins -pd-listen "127.0.0.1:$P_PD" -slack-listen "127.0.0.1:$P_SLACK" \
  -slack-token xoxb-bench-token -slack-channel alerts-triage -lifetime 1h >"$WORK/standins.out" 2>&1 &
STANDINS_PID=$!
PIDS+=($STANDINS_PID)
bin/loadgen -sink -sink-listen "127.0.0.1:$P_SINK" -lifetime 1h >"$WORK/sink.out" 2>&1 &
SINK_PID=$!
PIDS+=($SINK_PID)
# Every cell charges the machine's CPU to its webhooks: the target's, these
# three processes', the load generator's own and the rest.
CPU_OF=(-cpu-of "redis-server=$REDIS_PID" -cpu-of "stand-ins=$STANDINS_PID" -cpu-of "sink=$SINK_PID")
wait_for http_ok "http://127.0.0.1:$P_PD/-/standins/stats"
wait_for http_ok "http://127.0.0.1:$P_SINK/-/standins/stats"

router_config "peers:" >"$WORK/router.yml"
P_PD=$P_SINK P_SLACK=$P_SINK router_config "peers-sink:" >"$WORK/router-sink.yml"

# calert picks its provider by the webhook's receiver ("alertrouter" in the
# loadgen payloads).
cat >"$WORK/calert.toml" <<TOML
[app]
address = "127.0.0.1:$P_CALERT"
server_timeout = "30s"
enable_request_logs = false
log = "info"

[providers.alertrouter]
type = "google_chat"
endpoint = "http://127.0.0.1:$P_SINK/v1/spaces/bench/messages"
max_idle_conns = 64
timeout = "30s"
thread_ttl = "12h"
TOML
if [ -n "$CALERT_TEMPLATE" ]; then
  echo "template = \"$CALERT_TEMPLATE\"" >>"$WORK/calert.toml"
fi

declare -A URL PID START
start_target() {
  local t=$1
  case $t in
  floor)
    bin/baseline -listen "127.0.0.1:$P_BASE" -redis "127.0.0.1:$P_REDIS" 2>>"$WORK/baseline.log" &
    PID[$t]=$!; URL[$t]="http://127.0.0.1:$P_BASE/webhook"
    wait_for http_ok "http://127.0.0.1:$P_BASE/-/healthy" ;;
  router)
    bin/router serve --config.file="$WORK/router.yml" --web.listen-address="127.0.0.1:$P_ROUTER" \
      --log.level=warn >>"$WORK/router.log" 2>&1 &
    PID[$t]=$!; URL[$t]="http://127.0.0.1:$P_ROUTER/webhook"
    wait_for http_ok "http://127.0.0.1:$P_ROUTER/-/ready" ;;
  router-sink)
    bin/router serve --config.file="$WORK/router-sink.yml" --web.listen-address="127.0.0.1:$P_ROUTER_SINK" \
      --log.level=warn >>"$WORK/router-sink.log" 2>&1 &
    PID[$t]=$!; URL[$t]="http://127.0.0.1:$P_ROUTER_SINK/webhook"
    wait_for http_ok "http://127.0.0.1:$P_ROUTER_SINK/-/ready" ;;
  calert)
    (cd "$WORK" && exec "$CALERT" --config "$WORK/calert.toml") >>"$WORK/calert.log" 2>&1 &
    PID[$t]=$!; URL[$t]="http://127.0.0.1:$P_CALERT/dispatch"
    wait_for port_open "$P_CALERT" ;;
  msteams)
    local tmpl=()
    if [ -n "$MSTEAMS_TEMPLATE" ]; then tmpl=(-template-file "$MSTEAMS_TEMPLATE"); fi
    (cd "$WORK" && exec "$MSTEAMS" -http-addr "127.0.0.1:$P_MSTEAMS" -teams-request-uri alertmanager \
      -teams-incoming-webhook-url "http://127.0.0.1:$P_SINK/webhookb2/bench" "${tmpl[@]}") >>"$WORK/msteams.log" 2>&1 &
    PID[$t]=$!; URL[$t]="http://127.0.0.1:$P_MSTEAMS/alertmanager"
    wait_for port_open "$P_MSTEAMS" ;;
  esac
  PIDS+=("${PID[$t]}")
  START[$t]=1
}
alive() { kill -0 "${PID[$1]}" 2>/dev/null; }

# sink_count: the requests the sink has received so far.
sink_count() {
  curl -fsS --max-time 1 "http://127.0.0.1:$P_SINK/-/standins/stats" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["sink"]["requests"])'
}

# quiesce T: a receiver that answers Alertmanager before delivering (calert
# queues its messages) goes on sending after its run ends, and that work
# would be charged to the next cell. Wait until the sink has received
# nothing for a second (at most 120 s) and report what arrived after the run.
quiesce() {
  local before now i
  before=$(sink_count) || return 0
  now=$before
  for i in $(seq 1 120); do
    sleep 1
    now=$(sink_count) || return 0
    if [ "$now" = "$before" ]; then break; fi
    before=$now
  done
  if [ "$i" -gt 1 ]; then
    echo "-- $1 kept delivering to the sink for about ${i} s after its run"
  fi
}

TARGETS=(floor router)
[ "$ROUTER_SINK" != 0 ] && TARGETS+=(router-sink)
[ -n "$CALERT" ] && TARGETS+=(calert)
[ -n "$MSTEAMS" ] && TARGETS+=(msteams)
for t in "${TARGETS[@]}"; do start_target "$t"; done

RESULTS="$WORK/results.jsonl"
for round in $(seq 1 "$ROUNDS"); do
  for mode in $MODES; do
    for n in $SIZES; do
      for t in "${TARGETS[@]}"; do
        if ! alive "$t"; then
          echo "!! $t is not running: restarting it"
          start_target "$t" || { echo "!! $t did not come back"; continue; }
        fi
        extra=()
        [ "$mode" = fresh ] && extra+=(-distinct)
        case $t in
        router) extra+=(-standins-url "http://127.0.0.1:$P_PD") ;;
        calert | msteams | router-sink) extra+=(-standins-url "http://127.0.0.1:$P_SINK") ;;
        esac
        echo "### round $round: $t $mode $n alerts"
        if ! bin/loadgen -testdata testdata -results "$RESULTS" -label "$t/$mode-$n/r$round" -mode closed \
          -concurrency "$CONCURRENCY" -duration "$LOAD_DURATION" -alerts "$n" -warmup 5 -timeout 10s \
          -target "${URL[$t]}" -pid "${PID[$t]}" "${CPU_OF[@]}" "${extra[@]}"; then
          echo "!! $t $mode $n: loadgen failed (target crashed or refused)"
        fi
        if ! alive "$t"; then
          echo "!! $t crashed during $mode $n (round $round)"
          echo "{\"label\":\"$t/$mode-$n/r$round\",\"crashed\":true}" >>"$RESULTS"
        fi
        quiesce "$t"
      done
    done
  done
done

echo
echo "## medians over $ROUNDS rounds (closed loop, c=$CONCURRENCY; webhooks/s counts 200 answers only)"
python3 - "$RESULTS" "$SIZES" "$MODES" "${TARGETS[*]}" <<'PY'
import json, statistics, sys
path, sizes, modes, targets = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4].split()
cells = {}
for line in open(path):
    r = json.loads(line)
    t, scen, _ = r["label"].split("/")
    cells.setdefault((t, scen), []).append(r)
def cell(t, scen):
    rs = cells.get((t, scen), [])
    ok = [r for r in rs if not r.get("crashed") and r.get("requests")]
    if not rs:
        return None, "-"
    if len(ok) < len(rs) and not ok:
        return None, "crashed (%d/%d runs)" % (len(rs), len(rs))
    thr = statistics.median(r["webhooks_per_s"] for r in ok)
    p99 = statistics.median(r["p99_ms"] for r in ok)
    non200 = sum(r["requests"] - r["ok"] for r in ok)
    note = ""
    if len(ok) < len(rs):
        note += " crashed %d/%d" % (len(rs) - len(ok), len(rs))
    if non200:
        note += " non-200 %d" % non200
    d = [r.get("delivered") or {} for r in ok]
    sent = sum(x.get("pagerduty_events", 0) + x.get("slack_post_message", 0) + x.get("slack_update", 0) + x.get("sink_requests", 0) for x in d)
    if d and sent:
        note += " delivered %d" % sent
    cpu = [r.get("cpu_ms_per_webhook", 0) for r in ok if r.get("cpu_ms_per_webhook")]
    if cpu:
        note += " cpu %.2f ms/wh" % statistics.median(cpu)
    return thr, "%.0f/s p99 %.1f ms%s" % (thr, p99, note)
hdr = ["alerts", "mode"] + targets + ["router/floor", "router/best peer"]
if "router-sink" in targets:
    hdr.append("router-sink/best peer")
print("| " + " | ".join(hdr) + " |")
print("|" + "---|" * len(hdr))
for mode in modes:
    for n in sizes:
        scen = "%s-%s" % (mode, n)
        row, vals = [n, mode], {}
        for t in targets:
            v, s = cell(t, scen)
            vals[t] = v
            row.append(s)
        r, f = vals.get("router"), vals.get("floor")
        row.append("%.2f" % (r / f) if r and f else "-")
        peers = [vals[t] for t in targets if t not in ("router", "router-sink", "floor") and vals[t]]
        row.append("%.2fx" % (r / max(peers)) if r and peers else "-")
        if "router-sink" in targets:
            rs = vals.get("router-sink")
            row.append("%.2fx" % (rs / max(peers)) if rs and peers else "-")
        print("| " + " | ".join(row) + " |")

print()
print("## router / best peer round by round (the targets of a round run back to back, so they share the")
print("## machine's state more closely than the medians of the table above do); median of the rounds' ratios")
peer_ts = [t for t in targets if t not in ("router", "router-sink", "floor")]
if peer_ts:
    print("| alerts | mode | rounds | median |")
    print("|---|---|---|---|")
    for mode in modes:
        for n in sizes:
            scen = "%s-%s" % (mode, n)
            by_round = {}
            for t in ["router"] + peer_ts:
                for r in cells.get((t, scen), []):
                    if not r.get("crashed") and r.get("requests"):
                        by_round.setdefault(r["label"].split("/")[2], {})[t] = r["webhooks_per_s"]
            ratios = []
            for rnd in sorted(by_round):
                v = by_round[rnd]
                best = max((v[t] for t in peer_ts if v.get(t)), default=0)
                if v.get("router") and best:
                    ratios.append(v["router"] / best)
            if ratios:
                print("| %s | %s | %s | %.2fx |" % (n, mode, " / ".join("%.2fx" % x for x in ratios), statistics.median(ratios)))

print()
print("## where the machine's CPU went, ms per webhook answered 200 (medians)")
names = ["target", "redis-server", "stand-ins", "sink", "loadgen", "other"]
print("| alerts | mode | target | machine | busy | " + " | ".join(names) + " |")
print("|" + "---|" * (5 + len(names)))
for mode in modes:
    for n in sizes:
        scen = "%s-%s" % (mode, n)
        for t in targets:
            ms = [r["machine_cpu"] for r in cells.get((t, scen), []) if not r.get("crashed") and r.get("machine_cpu")]
            if not ms:
                continue
            med = lambda xs: statistics.median(xs) if xs else 0
            shares = [med([next((s["ms_per_webhook"] for s in m["shares"] if s["name"] == nm), 0) for m in ms]) for nm in names]
            print("| %s | %s | %s | %.3f | %.0f%% | %s |" % (n, mode, t, med([m["ms_per_webhook"] for m in ms]),
                  100 * med([m["busy"] for m in ms]), " | ".join("%.3f" % v for v in shares)))
PY
echo
echo "raw output saved to $RAW"
