# Shared by scripts/bench.sh and scripts/bench-peers.sh (sourced, not run).
#
# router_config PREFIX: the router's config against the local Redis and
# stand-ins, with the README's route tree.
router_config() {
  cat <<EOF
store:
  redis:
    addrs: ["127.0.0.1:$P_REDIS"]
  key_prefix: "$1"
route:
  receiver: slack-triage
  routes:
    - matchers: ['decision="page"']
      receiver: pagerduty
      continue: true
    - matchers: ['decision=~"page|ticket"']
      receiver: slack-triage
receivers:
  - name: pagerduty
    pagerduty_configs:
      - url: http://127.0.0.1:$P_PD/v2/enqueue
        routing_key: 0123456789abcdef0123456789abcdef
  - name: slack-triage
    slack_configs:
      - api_url: http://127.0.0.1:$P_SLACK/api/
        token: xoxb-bench-token
        channel: "#alerts-triage"
EOF
}

# cleanup: kill every process in PIDS, wait for them, remove WORK (the
# scripts' EXIT trap).
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}

# wait_for CMD...: run CMD until it succeeds, at most 10 s.
wait_for() {
  local i
  for i in $(seq 1 100); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  echo "$(basename "$0"): timed out waiting for: $*" >&2
  return 1
}

http_ok() { curl -fsS -o /dev/null --max-time 1 "$1"; }
