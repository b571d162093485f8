package routing_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/store"
)

// Redis refusing the router's connections — a password rotated on the
// Redis side first, a db out of range — is an outage: fail open delivers.
// The claim round trip's error was read as an answer (no reply: every
// claim "lost to another replica"), so a fail-open router sent nothing and
// answered every webhook 503 "being sent by another replica", on every
// replica, until the password was fixed.
func TestPipelineFailsOpenWhenRedisRefusesItsPassword(t *testing.T) {
	for name, cfg := range map[string]func(*store.RedisConfig){
		"wrong password": func(c *store.RedisConfig) { c.Password = "rotated-away" },
		"db out of range": func(c *store.RedisConfig) {
			c.Password = "right"
			c.DB = 99
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := redistest.Start(t, "--requirepass", "right")
			c := store.DefaultRedisConfig()
			c.Addrs = []string{srv.Addr()}
			c.MaxRetries = -1
			c.DialTimeout = model.Duration(200 * time.Millisecond)
			cfg(&c)
			st, err := store.NewRedis(c, prometheus.NewRegistry(), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			if _, err := st.SetNX(t.Context(), []store.Entry{{Key: "k", Value: "v", TTL: time.Minute}}); !errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("SetNX: %v; want store.ErrUnavailable", err)
			}
			e := newEnv(t)
			e.store = st
			sum := mustProcess(t, e.pipeline(), tAlert("TTFTHigh", "firing", "page"))
			if n := len(e.pd.notifications()); n != 1 || sum.Notified != 1 {
				t.Fatalf("fail open: %d PagerDuty notifications, summary %+v; want the page delivered", n, sum)
			}
		})
	}
}

// A Redis outage met by every webhook: each step's failure is logged once
// (then at most every 30 s, saying how many were left out), not on every
// webhook — the router logged about 40 lines per webhook, burying
// everything else — while alertrouter_dedup_store_errors_total counts
// every one.
func TestStoreOutageLogsEachFailureOnceWhileTheMetricCountsAll(t *testing.T) {
	srv := redistest.Start(t)
	srv.Kill() // an address where Redis was and is no more
	c := store.DefaultRedisConfig()
	c.Addrs = []string{srv.Addr()}
	c.MaxRetries = -1
	c.DialTimeout = model.Duration(200 * time.Millisecond)
	st, err := store.NewRedis(c, prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e := newEnv(t)
	e.store = st
	p := e.pipeline()
	var logs lockedBuffer
	p.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	const webhooks = 5
	for i := range webhooks {
		sum := mustProcess(t, p, tAlert(fmt.Sprint("TTFTHigh", i), "firing", "page"))
		if sum.Notified != 1 {
			t.Fatalf("webhook %d with the store down: summary %+v; want the page delivered (fail open)", i, sum)
		}
	}
	ops := map[string]int{}
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "store failed") || strings.Contains(line, "store write after delivery failed") {
			_, op, _ := strings.Cut(line, " op=")
			op, _, _ = strings.Cut(op, " ")
			ops[op]++
		}
	}
	if len(ops) == 0 {
		t.Fatalf("no store failure logged:\n%s", logs.String())
	}
	for op, n := range ops {
		if n != 1 {
			t.Errorf("store failure op=%s logged %d times over %d webhooks, want once:\n%s", op, n, webhooks, logs.String())
		}
	}
	if got := metric(t, e.reg, "alertrouter_dedup_store_errors_total", ""); got < webhooks {
		t.Errorf("alertrouter_dedup_store_errors_total = %v after %d webhooks with the store down; want every failure counted", got, webhooks)
	}
}

// lockedBuffer is a bytes.Buffer safe for the pipeline's concurrent logging.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
