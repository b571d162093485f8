// Package e2e proves the whole alert path with the real clients nobody here
// wrote: a real Prometheus Alertmanager (alone, or an HA pair clustered over
// loopback gossip) posts webhooks to the built router binary, which shares a
// real Redis and notifies the local PagerDuty and Slack stand-ins
// (internal/pdtest, internal/slacktest).
//
// The tests need the Alertmanager binary (`prometheus-alertmanager` from
// Debian, or `alertmanager` on PATH) and `redis-server`; without them they
// skip loudly, and fail when CI is set. Run them with
//
//	go test -race -count=1 ./e2e/
//
// Every wait polls with a deadline; nothing sleeps for a fixed time.
package e2e
