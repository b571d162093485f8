package store_test

import (
	"testing"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/store"
	"github.com/alertrouter/alertrouter/store/storetest"
)

func TestMemoryJournalConformance(t *testing.T) {
	storetest.RunJournal(t, func(t *testing.T, ret store.JournalRetention, clock *storetest.Clock) func() store.Journal {
		j := store.NewMemoryJournal(ret, store.WithClock(clock.Now))
		return func() store.Journal { return j }
	})
}

func TestRedisJournalConformance(t *testing.T) {
	srv := redistest.Start(t)
	storetest.RunJournal(t, func(t *testing.T, ret store.JournalRetention, clock *storetest.Clock) func() store.Journal {
		key := "journal:" + t.Name()
		return func() store.Journal {
			s, _ := newRedis(t, redisConfig(srv.Addr()))
			return s.Journal(key, ret, clock.Now)
		}
	})
}

func TestRedisClusterJournalConformance(t *testing.T) {
	cluster := redistest.StartCluster(t)
	storetest.RunJournal(t, func(t *testing.T, ret store.JournalRetention, clock *storetest.Clock) func() store.Journal {
		key := "journal:{" + t.Name() + "}"
		return func() store.Journal {
			s, _ := newRedis(t, redisConfig(cluster.Addrs()...))
			return s.Journal(key, ret, clock.Now)
		}
	})
}
