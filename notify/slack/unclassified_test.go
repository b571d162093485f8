package slack_test

import (
	"strings"
	"testing"

	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// The card says nothing of a sector or class no rule identified: it read
// "Sector: unknown" and "Class: unknown" for every alert no sector matched,
// while the title and PagerDuty's summary leave the sector out.
func TestTheCardLeavesOutWhatWasNotClassified(t *testing.T) {
	for _, tc := range []struct {
		name          string
		sector, class string
		want, notWant []string
	}{
		{"a sector and class identified", "llm-inference-gpu", "latency", []string{"*Sector:* LLM Inference", "*Class:* latency"}, nil},
		{"no sector matched", alert.Unknown, alert.Unknown, nil, []string{"*Sector:*", "*Class:*", "unknown"}},
		{"a sector without a class", "llm-inference-gpu", alert.Unknown, []string{"*Sector:* LLM Inference"}, []string{"*Class:*", "unknown"}},
		{"no classification at all", "", "", nil, []string{"*Sector:*", "*Class:*"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := notifytest.Result("CheckoutErrorsHigh", "aaa", "firing", alert.ActionTicket)
			r.Classification.Sector, r.Classification.IncidentClass = tc.sector, tc.class
			if tc.sector != "llm-inference-gpu" {
				r.Classification.SectorName, r.Classification.KPIs = "", nil
			}
			no := notifytest.Notification("triage", alert.KindFiring, alert.ActionTicket, r)
			blocks := slack.Blocks(no, notify.NewData(no), "", "", "")
			card := blocks[1].(*sl.SectionBlock).Text.Text
			for _, w := range tc.want {
				if !strings.Contains(card, w) {
					t.Errorf("the card lacks %q:\n%s", w, card)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(card, w) {
					t.Errorf("the card has %q:\n%s", w, card)
				}
			}
			if !strings.Contains(card, "*Decision:* ticket") || !strings.Contains(card, "*Incident:*") {
				t.Errorf("the card lost its decision or incident:\n%s", card)
			}
		})
	}
}

// A resolve is drawn as its firings were notified (alert.Notification's
// NotifiedTier, through ShownAction): a capacity page resolving at 85 %
// is decided ticket (capacity, warn) again, and the card said so of a page
// that woke someone (a review).
func TestAResolvedCardSaysHowItsFiringWasNotified(t *testing.T) {
	r := notifytest.Result("KVCacheFull", "aaa", "resolved", alert.ActionTicket)
	r.Decision.Policy, r.Decision.Tier = "capacity", "warn"
	no := notifytest.Notification("triage", alert.KindResolved, alert.ActionTicket, r)
	no.NotifiedTier = "page:capacity:critical"
	card := slack.Blocks(no, notify.NewData(no), "", "", "")[1].(*sl.SectionBlock).Text.Text
	if !strings.Contains(card, "*Decision:* page (capacity, critical)") {
		t.Errorf("the resolved card does not say how its firing was notified:\n%s", card)
	}
}

// The card shows an incident key holding a backtick in one code span, the
// backtick as ˋ: Slack closed the span at it and read the rest as mrkdwn.
func TestTheCardShowsAKeyWithABacktickInOneCodeSpan(t *testing.T) {
	r := notifytest.Result("CheckoutErrorsHigh", "aaa", "firing", alert.ActionTicket)
	no := notifytest.Notification("triage", alert.KindFiring, alert.ActionTicket, r)
	no.Incident = "route/note=~\"a`b|c_d*e\""
	card := slack.Blocks(no, notify.NewData(no), "", "", "")[1].(*sl.SectionBlock).Text.Text
	if !strings.Contains(card, "*Incident:* `route/note=~\"aˋb|c_d*e\"`") {
		t.Errorf("the card does not show the key in one code span:\n%s", card)
	}
}
