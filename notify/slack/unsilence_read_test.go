package slack_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/amsilence"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
)

// readLog is a store that records the keys of every Get.
type readLog struct {
	store.Store
	mu   sync.Mutex
	gets [][]string
}

func (r *readLog) Get(ctx context.Context, keys []string) ([]string, []bool, error) {
	r.mu.Lock()
	r.gets = append(r.gets, append([]string(nil), keys...))
	r.mu.Unlock()
	return r.Store.Get(ctx, keys)
}

func (r *readLog) take() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.gets
	r.gets = nil
	return g
}

// fakeSilencer makes silence s1 and expires silences; at the first
// expiry it takes the reads of log made so far.
type fakeSilencer struct {
	mu      sync.Mutex
	expired []string
	log     *readLog
	before  [][]string
}

func (f *fakeSilencer) Create(context.Context, amsilence.Silence) (string, error) { return "s1", nil }

// Alerts says Alertmanager holds no alert.
func (f *fakeSilencer) Alerts(context.Context, []amsilence.Matcher) ([]amsilence.Alert, error) {
	return nil, nil
}

func (f *fakeSilencer) Expire(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expired = append(f.expired, id)
	if len(f.expired) == 1 {
		f.before = f.log.take()
	}
	return nil
}

// Unsilence reads who made the message's silence from the silence's key
// alone: it read the message's five state keys (acknowledge, escalate,
// resolve, silence, escalation resolved) for the one it uses.
func TestUnsilenceReadsOnlyTheSilencesKey(t *testing.T) {
	rl := &readLog{Store: store.NewMemory()}
	e := newTriageEnv(t, alert.ActionTicket, rl)
	sil := &fakeSilencer{log: rl}
	tr := slack.NewTriage(slack.TriageOptions{Store: rl, Silences: sil})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:1h", ActionTS: "1700000910.000001"}, signingSecret, e.now(), nil)
	m := e.current(t)
	rl.take()
	sil.mu.Lock()
	sil.expired = nil
	sil.mu.Unlock()
	e.click(t, tr, m, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:unsilence", ActionTS: "1700000910.000002"}, signingSecret, e.now(), nil)
	if len(sil.expired) != 1 {
		t.Fatalf("expired %v, want the silence (answers %+v)", sil.expired, e.h.srv.Responses())
	}
	// Before the expiry: the click's checks, and silencedBy.
	reads := 0
	for _, keys := range sil.before {
		var states []string
		for _, k := range keys {
			if strings.Contains(k, "slack-triage:") {
				states = append(states, k[strings.LastIndex(k, ":")+1:])
			}
		}
		if len(states) > 1 && strings.Contains(strings.Join(states, " "), "silence") {
			reads++
			t.Logf("read %v", states)
		}
	}
	if reads > 0 {
		t.Errorf("before expiring the silence, the unsilence read the message's whole state %d times: silencedBy reads the silence's key alone", reads)
	}
}
