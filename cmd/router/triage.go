package main

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/notify/amsilence"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing"
)

// triage builds the Slack interactions and slash command handler of a
// generation from the notifiers the pipeline p was built with (and the
// journal of st) (nil when no slack_configs entry
// offers actions). Its background work is bounded by webhook.timeout, so it
// ends before a store replaced by a reload is closed.
func (d *deps) triage(cfg *config.Config, p *routing.Pipeline, st *state) (http.Handler, error) {
	o := slack.TriageOptions{
		Store:     p.Store,
		KeyPrefix: cfg.Store.KeyPrefix,
		Metrics:   d.triageMetrics,
		Logger:    d.logger.With("component", "slack-triage"),
		Timeout:   time.Duration(cfg.Webhook.Timeout),
		Now:       d.clock.Now,
	}
	if st.replayer != nil {
		o.Journal = st.replayer.Journal
	}
	if st.journal != nil {
		// What a click did is journaled for the console (a second
		// engineer sees the page acknowledged, escalated, silenced).
		o.Recorder = st.journal
	}
	if cfg.Alertmanager != nil {
		am, err := amsilence.New(*cfg.Alertmanager)
		if err != nil {
			return nil, err
		}
		o.Silences = am
	}
	t := slack.NewTriage(o)
	for _, r := range cfg.Receivers {
		pager, pagerName := firstPager(p.Receivers[r.Name])
		t.AddPager(r.Name, pagerOrNil(pager))
		t.PagesAt(r.Name, pagerName)
		for _, in := range p.Receivers[r.Name] {
			n, ok := in.Notifier.(*slack.Notifier)
			if !ok || !strings.HasPrefix(in.Name, "slack/") {
				continue
			}
			var escalation slack.Pager
			// Acknowledge and Resolve act on the receiver's own PagerDuty,
			// else on escalate_to's (slack.Triage.Add): where the dispatch
			// core keeps the state of the incident's page.
			pagedBy, pagedName := r.Name, pagerName
			idx, err := strconv.Atoi(strings.TrimPrefix(in.Name, "slack/"))
			if err == nil && idx < len(r.SlackConfigs) && r.SlackConfigs[idx].EscalateTo != "" {
				to := r.SlackConfigs[idx].EscalateTo
				if e, name := firstPager(p.Receivers[to]); e != nil {
					escalation = e
					if pager == nil {
						pagedBy, pagedName = to, name
					}
				}
			}
			if err := t.Add(r.Name, in.Name, n, pagerOrNil(pager), escalation); err != nil {
				return nil, err
			}
			t.PagedThrough(r.Name, in.Name, pagedBy, pagedName)
		}
	}
	if !t.Enabled() {
		return nil, nil
	}
	return t, nil
}

// firstPager is the first PagerDuty integration of integs, and its name
// (nil, "": none).
func firstPager(integs []routing.Integration) (*pagerduty.Notifier, string) {
	for _, in := range integs {
		if n, ok := in.Notifier.(*pagerduty.Notifier); ok {
			return n, in.Name
		}
	}
	return nil, ""
}

// pagerOrNil keeps a missing PagerDuty a nil interface (not a typed nil).
func pagerOrNil(n *pagerduty.Notifier) slack.Pager {
	if n == nil {
		return nil
	}
	return n
}
