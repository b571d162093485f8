package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/alertrouter/alertrouter/bench"
)

// summary is the part of the router's webhook answer the storm checks.
type summary struct {
	Alerts       int   `json:"alerts"`
	Rejected     []any `json:"rejected"`
	RejectedMore int   `json:"rejected_more"`
	Notified     int   `json:"notified"`
	Deduplicated int   `json:"deduplicated"`
	Suppressed   int   `json:"suppressed"`
	NoAction     int   `json:"no_action"`
	Failed       int   `json:"failed"`
}

// stormPass is what one sending of the storm's webhooks got back.
type stormPass struct {
	Seconds      float64        `json:"seconds"`
	Statuses     map[string]int `json:"statuses"`
	Alerts       int            `json:"alerts"`
	Rejected     int            `json:"rejected"`
	Notified     int            `json:"notified"`
	Deduplicated int            `json:"deduplicated"`
	Suppressed   int            `json:"suppressed"`
	NoAction     int            `json:"no_action"`
	Failed       int            `json:"failed"`
	P50          float64        `json:"p50_ms"`
	P99          float64        `json:"p99_ms"`
	Max          float64        `json:"max_ms"`
}

// stormResult is the storm's figures and checks.
type stormResult struct {
	Webhooks int       `json:"webhooks"`
	Sent     int       `json:"alerts_sent"`
	First    stormPass `json:"first"`
	Repeat   stormPass `json:"repeat"`
	// From the stand-ins (deltas over the storm), when -standins-url is set.
	PDTriggers       int            `json:"pd_triggers"`
	PDIncidents      int            `json:"pd_incidents"`
	PDMaxPerIncident int            `json:"pd_max_triggers_per_incident"`
	PDResolves       int            `json:"pd_resolves"`
	PDRejections     int            `json:"pd_rejections"`
	SlackCalls       map[string]int `json:"slack_calls"`
	SlackParents     int            `json:"slack_parents"`
	SlackMessages    int            `json:"slack_messages"`
	Checks           []check        `json:"checks"`
}

type check struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	Got  string `json:"got"`
}

func storm(o options, corpus *bench.Corpus) (*result, error) {
	if o.stormWebhooks < 1 || o.stormWebhooks > 1000 || o.stormAlerts < 1 || o.stormAlerts > 1000 {
		return nil, fmt.Errorf("-storm-webhooks and -storm-alerts must be within 1..1000")
	}
	ps, err := corpus.Storm(o.stormWebhooks, o.stormAlerts)
	if err != nil {
		return nil, err
	}
	run := uint16(rand.Uint32())
	bodies := make([][]byte, len(ps))
	for i, p := range ps {
		bodies[i] = p.Fresh(nil, run, uint64(i))
	}
	c := newClient(o, true)
	sr := &stormResult{Webhooks: len(bodies), Sent: len(bodies) * o.stormAlerts}
	var before *standinStats
	if o.standinsURL != "" {
		if before, err = fetchStats(c.http, o.standinsURL); err != nil {
			return nil, err
		}
	}
	var lat []sample
	sr.First, lat = stormSend(o, c, bodies)
	sr.Repeat, _ = stormSend(o, c, bodies)
	res := summarize(lat, time.Duration(sr.First.Seconds*float64(time.Second)))
	res.Label, res.Target, res.Mode, res.Alerts, res.Rate, res.Concurrency = o.label, o.target, "storm", o.stormAlerts, o.rate, o.concurrency
	res.Storm = sr
	if o.standinsURL != "" {
		after, err := fetchStats(c.http, o.standinsURL)
		if err != nil {
			return nil, err
		}
		sr.delta(before, after)
	}
	sr.evaluate(o.standinsURL != "")
	return res, nil
}

// stormSend posts every body at o.rate per second with at most
// o.concurrency in flight, and sums the router's answers.
func stormSend(o options, c *client, bodies [][]byte) (stormPass, []sample) {
	interval := time.Second / time.Duration(max(o.rate, 1))
	samples := make([]sample, len(bodies))
	slots := make(chan struct{}, o.concurrency)
	var wg sync.WaitGroup
	start := time.Now()
	for i, b := range bodies {
		at := start.Add(time.Duration(i) * interval)
		if d := time.Until(at); d > 0 {
			time.Sleep(d)
		}
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			st, body := c.send(context.Background(), b)
			samples[i] = sample{latency: time.Since(at), status: st, body: body}
		}()
	}
	wg.Wait()
	pass := stormPass{Seconds: time.Since(start).Seconds(), Statuses: map[string]int{}}
	for _, s := range samples {
		pass.Statuses[s.status]++
		var sum summary
		if json.Unmarshal(s.body, &sum) != nil {
			continue
		}
		pass.Alerts += sum.Alerts
		pass.Rejected += len(sum.Rejected) + sum.RejectedMore
		pass.Notified += sum.Notified
		pass.Deduplicated += sum.Deduplicated
		pass.Suppressed += sum.Suppressed
		pass.NoAction += sum.NoAction
		pass.Failed += sum.Failed
	}
	r := summarize(samples, 0)
	pass.P50, pass.P99, pass.Max = r.P50, r.P99, r.Max
	return pass, samples
}

func (s *stormResult) delta(before, after *standinStats) {
	for key, n := range after.PagerDuty.Triggers {
		d := n - before.PagerDuty.Triggers[key]
		if d <= 0 {
			continue
		}
		s.PDTriggers += d
		s.PDIncidents++
		s.PDMaxPerIncident = max(s.PDMaxPerIncident, d)
	}
	for key, n := range after.PagerDuty.Resolves {
		s.PDResolves += n - before.PagerDuty.Resolves[key]
	}
	s.PDRejections = after.PagerDuty.Rejections - before.PagerDuty.Rejections
	s.SlackCalls = map[string]int{}
	for m, n := range after.Slack.Calls {
		if d := n - before.Slack.Calls[m]; d > 0 {
			s.SlackCalls[m] = d
		}
	}
	s.SlackParents = after.Slack.Parents - before.Slack.Parents
	s.SlackMessages = after.Slack.Messages - before.Slack.Messages
}

func fiveXX(st map[string]int) int {
	n := 0
	for code, c := range st {
		if strings.HasPrefix(code, "5") || code == "transport" {
			n += c
		}
	}
	return n
}

// evaluate records the storm's pass/fail checks (the targets that
// the storm can see; peak RSS is checked by the report, which has it).
func (s *stormResult) evaluate(withStandins bool) {
	add := func(name string, ok bool, format string, args ...any) {
		s.Checks = append(s.Checks, check{Name: name, OK: ok, Got: fmt.Sprintf(format, args...)})
	}
	decided := s.First.Alerts - s.First.Rejected
	add("all alerts decided", decided == s.Sent && s.First.Statuses["200"] == s.Webhooks,
		"%d of %d alerts decided, %d of %d webhooks answered 200", decided, s.Sent, s.First.Statuses["200"], s.Webhooks)
	add("repeat fully deduplicated", s.Repeat.Notified == 0 && s.Repeat.Failed == 0 && s.Repeat.Statuses["200"] == s.Webhooks,
		"repeat pass: %d notified, %d deduplicated, %d suppressed, %d no action, %d failed",
		s.Repeat.Notified, s.Repeat.Deduplicated, s.Repeat.Suppressed, s.Repeat.NoAction, s.Repeat.Failed)
	add("no 5xx", fiveXX(s.First.Statuses)+fiveXX(s.Repeat.Statuses) == 0, "first %v, repeat %v", s.First.Statuses, s.Repeat.Statuses)
	if !withStandins {
		return
	}
	add("<= 1 PagerDuty trigger per incident", s.PDMaxPerIncident <= 1,
		"%d triggers for %d incidents (max %d per incident), %d rejected", s.PDTriggers, s.PDIncidents, s.PDMaxPerIncident, s.PDRejections)
	calls := 0
	for _, n := range s.SlackCalls {
		calls += n
	}
	incidents := max(s.SlackParents, s.PDIncidents, 1)
	// Bounded by incidents, not alerts: at most one parent plus one update
	// per incident and webhook would still be far below one per alert.
	add("Slack calls bounded by incidents", calls <= incidents*s.Webhooks && calls < s.Sent/10,
		"%d calls (%s) for %d incidents (%d parents), %d webhooks, %d alerts", calls, fmtCalls(s.SlackCalls), incidents, s.SlackParents, s.Webhooks, s.Sent)
}

func fmtCalls(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}

func printStorm(w io.Writer, s *stormResult) {
	for _, p := range []struct {
		name string
		p    stormPass
	}{{"first", s.First}, {"repeat", s.Repeat}} {
		fmt.Fprintf(w, "storm %s pass: %.2fs statuses=%v alerts=%d rejected=%d notified=%d deduplicated=%d suppressed=%d no_action=%d failed=%d p50=%.1fms p99=%.1fms max=%.1fms\n",
			p.name, p.p.Seconds, p.p.Statuses, p.p.Alerts, p.p.Rejected, p.p.Notified, p.p.Deduplicated, p.p.Suppressed, p.p.NoAction, p.p.Failed, p.p.P50, p.p.P99, p.p.Max)
	}
	for _, c := range s.Checks {
		mark := "PASS"
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  [%s] %s: %s\n", mark, c.Name, c.Got)
	}
}
