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
