package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/enrich/slolive"
	"github.com/alertrouter/alertrouter/notify/amsilence"
	"github.com/alertrouter/alertrouter/store"
)

// prober is a notifier that can check its way to its service without
// notifying (pagerduty.Notifier, slack.Notifier).
type prober interface {
	Probe(ctx context.Context) (string, error)
}

// probeTimeout bounds each probe.
const probeTimeout = 10 * time.Second

// probeAll is `check-config --probe`: it reaches, without paging anyone,
// every integration that can be checked, the store, Alertmanager and
// Prometheus (prometheus.url: live SLO context), each
// through its own HTTP settings (proxy, TLS), and prints one line each —
// so a wrong CA, an egress proxy refusing, a name that does not resolve or
// a revoked Slack token shows before the first page rather than at it. It
// returns the lines to print and how many failed.
func probeAll(ctx context.Context, cfg *config.Config, b *built) (string, int) {
	failed := 0
	var out strings.Builder
	report := func(what, ok string, err error) {
		if err != nil {
			failed++
			fmt.Fprintf(&out, "probe %s: FAILED: %v\n", what, cfg.Redact(err))
			return
		}
		// An ok line names what it reached: a URL's password hidden as
		// in a failure's (a PagerDuty url with user:password@ showed it).
		fmt.Fprintf(&out, "probe %s: ok: %s\n", what, cfg.RedactString(ok))
	}
	// ctx ends the probes at Ctrl-C (SIGINT) or SIGTERM: each one left
	// fails at once (an audit: an unreachable PagerDuty held the command
	// 20 s past the interrupt).
	run := func(f func(ctx context.Context) (string, error)) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		return f(ctx)
	}
	for _, r := range cfg.Receivers {
		for _, in := range b.pipeline.Receivers[r.Name] {
			if p, ok := in.Notifier.(prober); ok {
				s, err := run(p.Probe)
				report(fmt.Sprintf("receiver %q %s", r.Name, in.Name), s, err)
			}
		}
	}
	if cfg.Store.Redis != nil {
		s, err := run(func(ctx context.Context) (string, error) {
			out := "PING"
			if p, ok := b.state.store.(pingTimer); ok {
				rtt, err := p.PingTime(ctx)
				if err != nil {
					return "", slowStore(ctx, *cfg.Store.Redis, err)
				}
				out = storeRoundTrip(rtt, time.Duration(cfg.Store.Redis.ReadTimeout))
			} else if err := b.state.store.Ping(ctx); err != nil {
				return "", err
			}
			if p, ok := b.state.store.(writeProber); ok {
				if err := p.ProbeWrite(ctx, b.state.cfg.KeyPrefix+"probe"); err != nil {
					return "", slowStore(ctx, *cfg.Store.Redis, err)
				}
			}
			out += ", and a key written under the prefix (with TIME, in a script) and deleted"
			if r, ok := b.state.store.(memoryPolicyReader); ok {
				mp, err := r.MemoryPolicy(ctx)
				switch {
				case err != nil:
					// An ACL user without +info: the probe passed without
					// a word while an evicting Redis failed it through
					// another user (an audit).
					out += fmt.Sprintf("; maxmemory-policy NOT checked (%v): grant the user +info (deploy/README.md section 1), or check that it is noeviction", err)
				case mp.Evicts():
					return "", fmt.Errorf("maxmemory-policy %s evicts keys when full (maxmemory %d bytes): dedup markers and incident state would be deleted and alerts page again; set noeviction (deploy/README.md section 1)", mp.Policy, mp.MaxMemory)
				default:
					out += fmt.Sprintf("; maxmemory-policy %s", mp.Policy)
				}
			}
			return out, nil
		})
		report("store", s, err)
	}
	if cfg.Alertmanager != nil {
		s, err := run(func(ctx context.Context) (string, error) {
			am, err := amsilence.New(*cfg.Alertmanager)
			if err != nil {
				return "", err
			}
			if _, err := am.Fingerprints(ctx, "AlertrouterProbe"); err != nil {
				return "", err
			}
			return "its alerts API (GET /api/v2/alerts) answered", nil
		})
		report("alertmanager", s, err)
	}
	if cfg.Prometheus != nil {
		s, err := run(func(ctx context.Context) (string, error) {
			c, err := slolive.New(*cfg.Prometheus, slolive.Options{})
			if err != nil {
				return "", err
			}
			return c.Probe(ctx)
		})
		report("prometheus", s, err)
	}
	return out.String(), failed
}

// pingTimer is a store that measures its round trip (Redis).
type pingTimer interface {
	PingTime(ctx context.Context) (time.Duration, error)
}

// storeRoundTrip is the probe's word on a round trip of rtt to Redis
// with store.redis.read_timeout rt: a round trip past half of it leaves a
// slower moment (jitter, a busy Redis) counting Redis as down.
func storeRoundTrip(rtt, rt time.Duration) string {
	s := fmt.Sprintf("PING in %s", rtt.Round(time.Microsecond))
	if rtt > rt/2 {
		s += fmt.Sprintf(" — WARNING: over half of store.redis.read_timeout (%s): a slower answer counts Redis as down (fail open or closed); raise read_timeout above the worst round trip (README \"Store latency\")", rt)
	}
	return s
}

// slowStore is the probe's error for err from the store. For a read's
// timeout it asks Redis again with longer (store.SlowAnswer) and says
// which it is: a Redis answering later than store.redis.read_timeout (a
// distant one, which the router counts as down though it answers), one
// silent for a moment (it answered at once when asked again: a slow
// command, a fork, a pause, a failover), or one that answered nothing
// more (stalled or unreachable). A review: an answer within read_timeout
// was reported as too slow.
func slowStore(ctx context.Context, cfg store.RedisConfig, err error) error {
	d, answered := store.SlowAnswer(ctx, cfg, err)
	rt := time.Duration(cfg.ReadTimeout)
	switch {
	case !answered && d > 0:
		return fmt.Errorf("%w — and no answer either in a further %s with no read timeout: Redis is stalled (paused, blocked) or unreachable", err, d.Round(time.Millisecond))
	case !answered:
		return err
	case d <= rt:
		return fmt.Errorf("%w — asked again, Redis answered in %s, within store.redis.read_timeout (%s): it answered nothing for a moment (a slow command, a fork, a pause, a failover), not a round trip too long; probe again, and read its SLOWLOG and LATENCY LATEST", err, d.Round(time.Microsecond), rt)
	default:
		return fmt.Errorf("%w — Redis answers, in %s, later than store.redis.read_timeout (%s): the router counts it as down (fail open or closed) though it answers; raise read_timeout above the worst round trip to it (README \"Store latency\")", err, d.Round(time.Microsecond), rt)
	}
}
