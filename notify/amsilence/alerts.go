package amsilence

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	amlabels "github.com/prometheus/alertmanager/pkg/labels"
	"github.com/prometheus/common/model"
)

// Alert is an alert as Alertmanager's GET /api/v2/alerts returns it
// (GettableAlert), the parts a silence is judged by.
type Alert struct {
	Fingerprint string            `json:"fingerprint"`
	Labels      map[string]string `json:"labels"`
	Status      struct {
		// State is "active", "suppressed" (silenced or inhibited) or
		// "unprocessed".
		State string `json:"state"`
	} `json:"status"`
}

// Alerts returns the alerts Alertmanager holds now that a silence with
// matchers ms would match: active, silenced, inhibited and unprocessed
// ones (GET /api/v2/alerts?filter=…). Resolved alerts are not listed.
// Alertmanager filters them; each is checked again with Matches.
func (c *Client) Alerts(ctx context.Context, ms []Matcher) ([]Alert, error) {
	q := url.Values{}
	for _, k := range []string{"active", "silenced", "inhibited", "unprocessed"} {
		q.Set(k, "true")
	}
	for _, m := range ms {
		q.Add("filter", filterText(m))
	}
	var out []Alert
	if err := c.do(ctx, "GET", "/alerts?"+q.Encode(), nil, &out); err != nil {
		return nil, fmt.Errorf("list the alerts %s matches: %w", Text(ms), err)
	}
	kept := out[:0]
	matches := Compile(ms)
	for _, a := range out {
		if matches(a.Labels) {
			kept = append(kept, a)
		}
	}
	return kept, nil
}

// Fingerprints returns the fingerprints of the alerts named alertname that
// Alertmanager holds now: active, silenced, inhibited or unprocessed —
// not resolved (routing.Pipeline.FiringAlerts).
func (c *Client) Fingerprints(ctx context.Context, alertname string) (map[string]bool, error) {
	return c.fingerprints(ctx, []Matcher{{Name: "alertname", Value: alertname, IsEqual: true}})
}

// AllFingerprints returns the fingerprints of every alert Alertmanager
// holds now, as Fingerprints (routing.Pipeline.HeldAlerts).
func (c *Client) AllFingerprints(ctx context.Context) (map[string]bool, error) {
	return c.fingerprints(ctx, nil)
}

// fingerprints returns the fingerprints of the alerts ms match (Alerts).
func (c *Client) fingerprints(ctx context.Context, ms []Matcher) (map[string]bool, error) {
	alerts, err := c.Alerts(ctx, ms)
	if err != nil {
		return nil, err
	}
	held := make(map[string]bool, len(alerts))
	for _, a := range alerts {
		held[a.Fingerprint] = true
	}
	return held, nil
}

// filterText writes m in the matcher syntax of Alertmanager's filter
// parameter: name, operator, and the value double-quoted with only \\, \"
// and \n escaped — what both Alertmanager's classic parser (0.25) and its
// UTF-8 one (0.27 and later) read back as the value; any other character
// is written as is. A name that is not a classic label name (a UTF-8 one of
// Alertmanager 0.27 and later: "my label", service.name) is quoted the
// same way, as that parser requires; a classic one stays bare for 0.25's.
func filterText(m Matcher) string {
	return quoteName(m.Name) + m.operator() + quoteValue(m.Value)
}

// valueQuote escapes what Alertmanager's matcher parser unescapes in a
// double-quoted string.
var valueQuote = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func quoteValue(v string) string { return `"` + valueQuote.Replace(v) + `"` }

// quoteName writes a label name as Alertmanager's matchers need it: bare
// when classic ([a-zA-Z_][a-zA-Z0-9_]*), double-quoted otherwise.
func quoteName(name string) string {
	if model.LegacyValidation.IsValidLabelName(name) {
		return name
	}
	return quoteValue(name)
}

// operator is m's operator as Alertmanager writes it: =, !=, =~ or !~.
func (m Matcher) operator() string { return m.matchType().String() }

// matchType is m's operator as Alertmanager's labels package types it.
func (m Matcher) matchType() amlabels.MatchType {
	switch {
	case m.IsRegex && m.IsEqual:
		return amlabels.MatchRegexp
	case m.IsRegex:
		return amlabels.MatchNotRegexp
	case !m.IsEqual:
		return amlabels.MatchNotEqual
	}
	return amlabels.MatchEqual
}

// Matches reports whether a silence with matchers ms matches an alert with
// labels, as Alertmanager decides it: every matcher must match, an absent
// label reads as "" (so name="" matches an alert without the label), and
// regexes are anchored at both ends. A matcher whose regex does not compile
// is taken to match: the safe side when asking which alerts a silence
// may mute. To test many alerts, Compile ms once.
func Matches(ms []Matcher, labels map[string]string) bool {
	return Compile(ms)(labels)
}

// Compile returns Matches for ms, its matchers compiled once: a silence of
// one regex of thousands of values tested on as many alerts compiled it
// once per alert (an audit: 2,000 instances took 36 s).
func Compile(ms []Matcher) func(labels map[string]string) bool {
	ams := make([]*amlabels.Matcher, 0, len(ms))
	for _, m := range ms {
		if am, err := amlabels.NewMatcher(m.matchType(), m.Name, m.Value); err == nil {
			ams = append(ams, am)
		}
	}
	return func(labels map[string]string) bool {
		for _, am := range ams {
			if !am.Matches(labels[am.Name]) {
				return false
			}
		}
		return true
	}
}

// Absent returns the matchers name="" of names: Alertmanager reads an
// absent label as "", so they match only alerts without those labels.
func Absent(names []string) []Matcher {
	out := make([]Matcher, len(names))
	for i, n := range names {
		out[i] = Matcher{Name: n, Value: "", IsEqual: true}
	}
	return out
}

// GroupAlert is an alert of one of Alertmanager's aggregation groups as
// GET /api/v2/alerts/groups lists it, what a webhook carries of it.
type GroupAlert struct {
	Fingerprint  string            `json:"fingerprint"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     string            `json:"startsAt"`
	GeneratorURL string            `json:"generatorURL"`
}

// alertGroup is an AlertGroup of GET /api/v2/alerts/groups.
type alertGroup struct {
	Labels   map[string]string `json:"labels"`
	Receiver struct {
		Name string `json:"name"`
	} `json:"receiver"`
	Alerts []GroupAlert `json:"alerts"`
}

// Group returns the alerts Alertmanager notifies now in the aggregation
// group of receiver whose group labels are exactly labels: the active
// ones — firing, neither silenced nor inhibited (GET /api/v2/alerts/groups).
// It is what a webhook Alertmanager truncated (max_alerts) left out; none
// when Alertmanager lists no such group with an active alert (all its
// alerts resolved or muted, or the group another Alertmanager's).
func (c *Client) Group(ctx context.Context, receiver string, labels map[string]string) ([]GroupAlert, error) {
	q := url.Values{}
	q.Set("active", "true")
	q.Set("silenced", "false")
	q.Set("inhibited", "false")
	// Alertmanager anchors the receiver regex.
	q.Set("receiver", regexp.QuoteMeta(receiver))
	for _, name := range slices.Sorted(maps.Keys(labels)) {
		q.Add("filter", filterText(Matcher{Name: name, Value: labels[name], IsEqual: true}))
	}
	var groups []alertGroup
	if err := c.do(ctx, "GET", "/alerts/groups?"+q.Encode(), nil, &groups); err != nil {
		return nil, fmt.Errorf("read the alert group of receiver %q: %w", receiver, err)
	}
	var alerts []GroupAlert
	for _, g := range groups {
		if g.Receiver.Name == receiver && maps.Equal(g.Labels, labels) {
			alerts = append(alerts, g.Alerts...)
		}
	}
	return alerts, nil
}
