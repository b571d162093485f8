package flap

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v2"

	"github.com/alertrouter/alertrouter/routing/alert"
)

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

// step is one webhook about the alert: its status at a minute after t0, and
// what the policies decided for it.
type step struct {
	min    float64
	firing bool
	want   alert.Action // for firings: the action after damping
	held   bool         // for resolves: whether the resolve is held
}

func run(t *testing.T, cfg Config, policy alert.Action, steps []step) {
	t.Helper()
	var h History
	for i, s := range steps {
		now := t0.Add(time.Duration(s.min * float64(time.Minute)))
		h, _ = h.Record(Transition{At: now, Firing: s.firing}, time.Duration(cfg.Window))
		v := cfg.Damp(policy, h, s.firing, now)
		if v.Action == alert.ActionNone && policy != alert.ActionNone {
			t.Fatalf("step %d (%+v): damped to none: %+v", i, s, v)
		}
		if s.firing {
			if v.Action != s.want {
				t.Errorf("step %d at %vm firing: action %s, want %s (%+v)", i, s.min, v.Action, s.want, v)
			}
			if v.Flapping != (v.Action != policy) && policy == alert.ActionPage {
				t.Errorf("step %d: flapping %v but action %s", i, v.Flapping, v.Action)
			}
			continue
		}
		if got := !v.HoldResolveUntil.IsZero(); got != s.held {
			t.Errorf("step %d at %vm resolve: held %v, want %v (%+v)", i, s.min, got, s.held, v)
		}
		if s.held && !v.HoldResolveUntil.Equal(now.Add(time.Duration(cfg.CoolDown))) {
			t.Errorf("step %d: held until %s, want now + cool_down", i, v.HoldResolveUntil)
		}
	}
}

func TestDamp(t *testing.T) {
	def := DefaultConfig()
	low := DefaultConfig()
	low.Threshold = 2
	P, T, N := alert.ActionPage, alert.ActionTicket, alert.ActionNone
	cases := []struct {
		name   string
		cfg    Config
		policy alert.Action
		steps  []step
	}{
		{"five fire/resolve cycles in 10 minutes: page until the 5th transition, then tickets, resolves held", def, P, []step{
			{0, true, P, false}, {1, false, "", false}, // 1, 2 transitions
			{2, true, P, false}, {3, false, "", false}, // 3, 4
			{4, true, T, false}, {5, false, "", true}, // 5: flapping
			{6, true, T, false}, {7, false, "", true},
			{8, true, T, false}, {9, false, "", true},
		}},
		{"with threshold 2 only the first firing pages", low, P, []step{
			{0, true, P, false}, {1, false, "", false},
			{2, true, T, false}, {3, false, "", true},
			{4, true, T, false}, {5, false, "", true},
			{6, true, T, false}, {7, false, "", true},
			{8, true, T, false}, {9, false, "", true},
		}},
		{"stable for the window after flapping: pages again", def, P, []step{
			{0, true, P, false}, {1, false, "", false}, {2, true, P, false}, {3, false, "", false},
			{4, true, T, false}, {5, false, "", true},
			{65.5, true, P, false}, // every earlier transition is out of the 1h window
		}},
		{"not yet stable a minute before the window has passed", def, P, []step{
			{0, true, P, false}, {1, false, "", false}, {2, true, P, false}, {3, false, "", false},
			{4, true, T, false}, {5, false, "", true},
			{50, true, T, false}, // 1,2,3,4,5 at 0..5m still inside (−10m, 50m]: 6 transitions
		}},
		{"a flapping ticket stays a ticket", def, T, []step{
			{0, true, T, false}, {1, false, "", false}, {2, true, T, false}, {3, false, "", false},
			{4, true, T, false}, {5, false, "", true},
		}},
		{"none is never raised", def, N, []step{
			{0, true, N, false}, {1, false, "", false}, {2, true, N, false}, {3, false, "", false},
			{4, true, N, false},
		}},
		{"repeated firing reports are not transitions", def, P, []step{
			{0, true, P, false}, {1, true, P, false}, {2, true, P, false}, {3, true, P, false},
			{4, true, P, false}, {5, true, P, false}, {6, false, "", false},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { run(t, c.cfg, c.policy, c.steps) })
	}
}

func TestReasonQuotesTheNumbers(t *testing.T) {
	cfg := DefaultConfig()
	var h History
	for i := range 5 {
		h, _ = h.Record(Transition{At: t0.Add(time.Duration(i) * time.Minute), Firing: i%2 == 0}, time.Hour)
	}
	now := t0.Add(4 * time.Minute)
	v := cfg.Damp(alert.ActionPage, h, true, now)
	if want := "flapping: 5 transitions in 1h: page downgraded to ticket"; v.Reason != want {
		t.Errorf("reason %q, want %q", v.Reason, want)
	}
	if want := now.Add(time.Hour); !v.StableAt.Equal(want) {
		t.Errorf("stable at %s, want %s", v.StableAt, want)
	}
	h, _ = h.Record(Transition{At: t0.Add(5 * time.Minute)}, time.Hour)
	v = cfg.Damp(alert.ActionPage, h, false, t0.Add(5*time.Minute))
	if want := "flapping: 6 transitions in 1h: resolve held until 2026-12-02T10:15:00Z"; v.Reason != want {
		t.Errorf("reason %q, want %q", v.Reason, want)
	}
}

func TestHistoryEncoding(t *testing.T) {
	var h History
	for i := range 4 {
		h, _ = h.Record(Transition{At: t0.Add(time.Duration(i) * time.Minute), Firing: i%2 == 0}, time.Hour)
	}
	s := h.String()
	if want := "f1796205600,r1796205660,f1796205720,r1796205780"; s != want {
		t.Fatalf("String() = %q, want %q", s, want)
	}
	for _, in := range [][]string{{s}, h.Strings()} {
		got, err := Parse(in...)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if got.String() != s {
			t.Errorf("round trip of %q gave %q", in, got.String())
		}
	}
	// A list appended to blindly reads as transitions.
	got, err := Parse("f100", "f160", "r200", "r260", "f300")
	if err != nil || got.String() != "f100,r200,f300" {
		t.Errorf("Parse of repeats = %q, %v; want f100,r200,f300", got.String(), err)
	}
	// Entries pushed by replicas whose clocks differ keep their order.
	if got, err := Parse("f200", "r100"); err != nil || got.String() != "f200,r200" {
		t.Errorf("Parse of out-of-order entries = %q, %v; want f200,r200", got.String(), err)
	}
	if got, err := Parse(); err != nil || len(got) != 0 {
		t.Errorf("Parse() = %v, %v; want empty", got, err)
	}
}

func TestParseRejectsGarbage(t *testing.T) {
	for _, in := range []string{"x100", "f", "f-1", "f1e3", "r12a", "f99999999999999999999"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) accepted garbage", in)
		} else if !strings.Contains(err.Error(), "flap transition") {
			t.Errorf("Parse(%q) error %q does not name what it read", in, err)
		}
	}
}

func TestRecordTrimsAndBounds(t *testing.T) {
	var h History
	for i := range 200 {
		h, _ = h.Record(Transition{At: t0.Add(time.Duration(i) * time.Second), Firing: i%2 == 0}, time.Hour)
	}
	if len(h) != MaxEntries {
		t.Errorf("history of 200 transitions in a minute kept %d, want %d", len(h), MaxEntries)
	}
	h, _ = h.Record(Transition{At: t0.Add(3 * time.Hour), Firing: true}, time.Hour)
	if len(h) != MinKept {
		t.Errorf("after 3h, kept %d transitions (%s), want the newest %d", len(h), h, MinKept)
	}
	c := Config{Threshold: 1, Window: model.Duration(time.Hour)}
	if v := c.Damp(alert.ActionPage, h, true, t0.Add(3*time.Hour)); v.Transitions != 1 || v.Flapping {
		t.Errorf("after 3h, the old transitions kept counted: %+v, want 1 transition, not flapping", v)
	}
	if _, c := h.Record(Transition{At: t0.Add(4 * time.Hour), Firing: true}, time.Hour); c != Unchanged {
		t.Error("a repeated firing report counted as a transition")
	}
}

func TestConfig(t *testing.T) {
	var c Config
	if err := yaml.UnmarshalStrict([]byte("threshold: 6\n"), &c); err != nil {
		t.Fatal(err)
	}
	if c.Threshold != 6 || c.Window != DefaultConfig().Window || c.CoolDown != DefaultConfig().CoolDown {
		t.Errorf("defaults not kept: %+v", c)
	}
	if c.TTL() != 70*time.Minute {
		t.Errorf("TTL %s, want 1h10m", c.TTL())
	}
	bad := []struct{ in, want string }{
		{"threshold: 0\n", "flap.threshold: must be at least 1, got 0"},
		{"threshold: 64\n", "flap.threshold: must be below 64"},
		{"window: 0s\n", "flap.window: must be positive"},
		{"cool_down: 2h\n", "flap.cool_down: 2h must not be longer than flap.window 1h"},
		{"treshold: 3\n", "field treshold not found"},
	}
	for _, b := range bad {
		var c Config
		err := yaml.UnmarshalStrict([]byte(b.in), &c)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: error %v, want %q", b.in, err, b.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("f1764669600,r1764669660")
	f.Add("r0,f1,")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := Parse(s)
		if err != nil {
			return
		}
		// What parses re-encodes to something that parses the same.
		again, err := Parse(h.String())
		if err != nil || again.String() != h.String() {
			t.Fatalf("re-parse of %q: %q, %v", h.String(), again.String(), err)
		}
		for i := 1; i < len(h); i++ {
			if h[i].Firing == h[i-1].Firing || h[i].At.Before(h[i-1].At) {
				t.Fatalf("Parse(%q) returned non-transitions %s", s, h)
			}
		}
	})
}
