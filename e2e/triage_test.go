package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/slacktest"
)

// TestSlackSilenceButtonSilencesInAlertmanager is the whole triage chain:
// Alertmanager sends a ticket to the router, the router posts the incident's
// parent in Slack with a Silence button, a person clicks it (a request
// signed exactly as Slack signs it), and the router creates the silence in
// that same Alertmanager, matching the incident's alerts.
func TestSlackSilenceButtonSilencesInAlertmanager(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	amAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	s.triageAM = "http://" + amAddr
	router := s.startRouter(t, "router")
	am := startAM(t, "alertmanager", router, amOptions{addr: amAddr})

	ticket := scenarioAlerts()[1] // KVCacheUsageHigh: a capacity ticket to the triage channel
	postAlerts(t, []alert{ticket}, am)
	var parent slacktest.Message
	eventually(t, 30*time.Second, "the ticket's parent with a Silence button", func() error {
		for _, m := range s.slack.Parents() {
			if strings.Contains(string(m.Blocks), "alertrouter:silence:1h") {
				parent = m
				return nil
			}
		}
		return fmt.Errorf("no parent with a Silence button among %d parents", len(s.slack.Parents()))
	})

	body, err := s.slack.Interaction(parent, slacktest.Click{ActionID: "alertrouter:silence:1h", User: "U0ONCALL", UserName: "oncall", ActionTS: "1764700000.000100"})
	if err != nil {
		t.Fatal(err)
	}
	req, err := slacktest.NewRequest("http://"+router.addr+"/slack/interactions", slacktest.Sign(signingSecret, time.Now(), body), body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the signed click was answered %d, want 200", resp.StatusCode)
	}

	eventually(t, 20*time.Second, "the silence in Alertmanager", func() error {
		resp, err := http.Get("http://" + amAddr + "/api/v2/silences")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var silences []struct {
			Status    struct{ State string } `json:"status"`
			CreatedBy string                 `json:"createdBy"`
			Matchers  []struct {
				Name, Value string
				IsRegex     bool `json:"isRegex"`
			} `json:"matchers"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&silences); err != nil {
			return err
		}
		for _, sil := range silences {
			if sil.Status.State != "active" || !strings.Contains(sil.CreatedBy, "U0ONCALL") {
				continue
			}
			for _, m := range sil.Matchers {
				if m.Name == "alertname" && m.Value == "KVCacheUsageHigh" && !m.IsRegex {
					return nil
				}
			}
		}
		return fmt.Errorf("no active silence by U0ONCALL matching alertname=KVCacheUsageHigh among %d", len(silences))
	})
	eventually(t, 10*time.Second, "the parent updated with who silenced it", func() error {
		for _, m := range s.slack.Parents() {
			if m.TS == parent.TS && m.Updates > 0 && strings.Contains(string(m.Blocks), "U0ONCALL") {
				return nil
			}
		}
		for _, m := range s.slack.Parents() {
			if m.TS == parent.TS {
				return fmt.Errorf("the parent (%d updates) does not name who silenced it: %.600s", m.Updates, m.Blocks)
			}
		}
		return fmt.Errorf("the parent is gone")
	})
}
