package bench

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"testing"
	"time"

	commoncfg "github.com/prometheus/common/config"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/webhook"
	"github.com/alertrouter/alertrouter/store"
)

// deliveryConcurrency is the number of webhooks in flight, as in
// `loadgen -concurrency 16`.
const deliveryConcurrency = 16

// deliveringPipeline is pipeline(s) with the real PagerDuty and Slack
// notifiers sending over loopback HTTP to the stand-ins, as cmd/router
// builds them.
func deliveringPipeline(tb testing.TB, s store.Store) (*routing.Pipeline, *pdtest.Server, *slacktest.Server) {
	tb.Helper()
	pd := pdtest.NewServer()
	tb.Cleanup(pd.Close)
	sl := slacktest.NewServer("xoxb-bench-token", "alerts-triage")
	tb.Cleanup(sl.Close)
	nd := notify.Deps{Logger: slog.New(slog.DiscardHandler)}
	pcfg := pagerduty.DefaultConfig()
	pcfg.URL = pd.EnqueueURL()
	pcfg.RoutingKey = commoncfg.Secret("0123456789abcdef0123456789abcdef")
	pn, err := pagerduty.New(&pcfg, "pagerduty", nd)
	if err != nil {
		tb.Fatal(err)
	}
	scfg := slack.DefaultConfig()
	scfg.APIURL = sl.APIURL()
	scfg.Token = "xoxb-bench-token"
	scfg.Channel = "#alerts-triage"
	sn, err := slack.New(&scfg, "slack-triage", nd)
	if err != nil {
		tb.Fatal(err)
	}
	p := pipeline(tb, s)
	p.Receivers = map[string][]routing.Integration{
		"pagerduty":    {{Name: "pagerduty/0", Notifier: pn, SendResolved: true}},
		"slack-triage": {{Name: "slack/0", Notifier: sn, SendResolved: true}},
	}
	return p, pd, sl
}

// BenchmarkFreshDelivery is the fresh path end to end in process: 16
// webhooks in flight (b.RunParallel), each with new fingerprints, decoded,
// evaluated, claimed in real Redis, delivered by the real notifiers over
// loopback HTTP to the PagerDuty and Slack stand-ins, and confirmed. It
// runs with http.DefaultTransport as shipped (2 idle connections per host)
// and tuned (64), to measure what connection reuse is worth:
// new-conn-share is the share of requests that opened a TCP connection
// (httptrace on the webhook's context, which the notifiers pass on to
// their requests). Profile it
// with -cpuprofile, -blockprofile and -mutexprofile.
func BenchmarkFreshDelivery(b *testing.B) {
	_, s := redisStore(b)
	c := corpus(b)
	dt := http.DefaultTransport.(*http.Transport)
	shipped := dt.MaxIdleConnsPerHost
	b.Cleanup(func() { dt.MaxIdleConnsPerHost = shipped })
	for _, idle := range []int{shipped, 64} {
		for _, n := range []int{1, 10, 100} {
			pl := payload(b, c, n)
			b.Run(fmt.Sprintf("idle=%d/alerts=%d", idle, n), func(b *testing.B) {
				dt.MaxIdleConnsPerHost = idle
				dt.CloseIdleConnections()
				p, pd, sl := deliveringPipeline(b, s)
				var seq atomic.Uint64
				run := nextRun()
				b.SetParallelism((deliveryConcurrency + 1) / 2)
				b.ReportAllocs()
				start := time.Now()
				ops := atomic.Int64{}
				var conns, fresh atomic.Int64
				ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
					GotConn: func(i httptrace.GotConnInfo) {
						conns.Add(1)
						if !i.Reused {
							fresh.Add(1)
						}
					},
				})
				b.RunParallel(func(pb *testing.PB) {
					var buf []byte
					for pb.Next() {
						buf = pl.Fresh(buf, run, seq.Add(1))
						m, err := webhook.Decode(buf, time.Now())
						if err != nil {
							b.Error(err)
							return
						}
						sum, err := p.Process(ctx, m)
						if err != nil || sum.Failed > 0 || sum.Deduplicated > 0 {
							b.Errorf("fresh webhook: %v %+v", err, sum)
							return
						}
						ops.Add(1)
					}
				})
				el := time.Since(start)
				if k := ops.Load(); k > 0 {
					b.ReportMetric(float64(k)/el.Seconds(), "webhooks/s")
					b.ReportMetric(float64(pd.Requests()+sl.Calls("chat.postMessage")+sl.Calls("chat.update"))/float64(k), "sends/webhook")
					if c := conns.Load(); c > 0 {
						b.ReportMetric(float64(fresh.Load())/float64(c), "new-conn-share")
					}
				}
			})
		}
	}
}
