package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/store"
)

// A TTL that is not positive sets the key without expiry, as the memory
// store does, whatever the key held before. go-redis reads a TTL of -1ns
// as KEEPTTL: passed on as is, a marker written again with it kept the old
// marker's expiry and vanished with it, and the alert's next firing was
// sent again as a new one.
func TestRedisSetWithoutAPositiveTTLLeavesTheKeyWithoutExpiry(t *testing.T) {
	srv := redistest.Start(t)
	s, _ := newRedis(t, redisConfig(srv.Addr()))
	for _, w := range []struct {
		name  string
		write func(ctx context.Context, e store.Entry) error
	}{
		{"Set", func(ctx context.Context, e store.Entry) error { return s.Set(ctx, []store.Entry{e}) }},
		{"SetNXAndSet's also", func(ctx context.Context, e store.Entry) error {
			_, err, alsoErr := s.SetNXAndSet(ctx, nil, []store.Entry{e})
			if err != nil {
				return err
			}
			return alsoErr
		}},
	} {
		for _, ttl := range []time.Duration{0, -1, -time.Second} {
			t.Run(fmt.Sprintf("%s with TTL %v", w.name, ttl), func(t *testing.T) {
				key := fmt.Sprintf("ttl:{%s}:%d", w.name, ttl)
				if err := s.Set(t.Context(), []store.Entry{{Key: key, Value: "old", TTL: time.Hour}}); err != nil {
					t.Fatal(err)
				}
				if err := w.write(t.Context(), store.Entry{Key: key, Value: "new", TTL: ttl}); err != nil {
					t.Fatal(err)
				}
				if pttl, err := redistest.Do(srv.Addr(), "PTTL", key); err != nil || pttl != "-1" {
					t.Errorf("PTTL after the write = %q, %v; want -1 (no expiry)", pttl, err)
				}
				if v, err := redistest.Do(srv.Addr(), "GET", key); err != nil || v != "new" {
					t.Errorf("GET = %q, %v; want the new value", v, err)
				}
			})
		}
	}
}
