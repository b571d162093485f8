package routing_test

import (
	"errors"
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
