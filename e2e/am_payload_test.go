package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/amtest"
	"github.com/prometheus/alertmanager/template"
)

var updateAMPayload = flag.Bool("update.am-payload", false, "rewrite testdata/am-<version>-firing.json with the webhook the installed Alertmanager sends")

// capture is a webhook receiver that records every request.
type capture struct {
	mu   sync.Mutex
	reqs []captured
}

type captured struct {
	auth, contentType string
	body              []byte
}

func (c *capture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.reqs = append(c.reqs, captured{r.Header.Get("Authorization"), r.Header.Get("Content-Type"), b})
	c.mu.Unlock()
}

// withStatus returns the first recorded webhook whose status is status.
func (c *capture) withStatus(status string) (captured, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.reqs {
		var m struct{ Status string }
		if json.Unmarshal(r.body, &m) == nil && m.Status == status {
			return r, true
		}
	}
	return captured{}, false
}

// webhookMessage is Alertmanager's webhook body (notify/webhook.Message).
type webhookMessage struct {
	*template.Data
	Version         string `json:"version"`
	GroupKey        string `json:"groupKey"`
	TruncatedAlerts uint64 `json:"truncatedAlerts"`
}

func decodeStrict(t *testing.T, b []byte) webhookMessage {
	t.Helper()
	var m webhookMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode webhook strictly: %v\n%s", err, b)
	}
	return m
}

var errNotYetSent = errors.New("not received yet")

var amVersionRe = regexp.MustCompile(`version (\d+\.\d+)\.`)

// normalize replaces what differs between runs (Alertmanager's URL, the
// alert's start time) so a payload compares with the recorded one.
func normalize(t *testing.T, b []byte) string {
	t.Helper()
	var m map[string]interface{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["externalURL"] = "EXTERNAL_URL"
	for _, a := range m["alerts"].([]interface{}) {
		a.(map[string]interface{})["startsAt"] = "STARTS_AT"
	}
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestAlertmanagerSendsVersion4WebhooksForFiringAndResolved(t *testing.T) {
	bin := amtest.Binary(t)
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v: %s", bin, err, out)
	}
	mv := amVersionRe.FindStringSubmatch(string(out))
	if mv == nil {
		t.Fatalf("%s --version printed no version: %s", bin, out)
	}

	rec := &capture{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	// startAM only needs the receiver's address.
	am := startAM(t, "alertmanager", &proc{name: "receiver", addr: strings.TrimPrefix(srv.URL, "http://")}, amOptions{})

	firing := []alert{{
		Labels: map[string]string{
			"alertname": "LLMInferenceTTFTBudgetBurn", "service": "llm-inference", "slo": "llm-inference-ttft",
			"sloth_id": "llm-inference-ttft", "sloth_severity": "page", "sector": "llm-inference-gpu", "kpi": "TTFT",
		},
		Annotations: map[string]string{
			"summary": "High TTFT error budget burn", "burn_rate_1h": "20.00", "burn_rate_5m": "20.00",
			"runbook_url": "https://runbooks.example.com/llm-inference/ttft-slo",
		},
		StartsAt:     time.Now().UTC().Add(-time.Minute).Truncate(time.Second),
		GeneratorURL: `http://prometheus.example:9090/graph?g0.expr=slo%3Asli_error%3Aratio_rate1h+%3E+0.144&g0.tab=1`,
	}}
	postAlerts(t, firing, am)

	var got captured
	eventually(t, 15*time.Second, "a firing webhook", func() error {
		var ok bool
		if got, ok = rec.withStatus("firing"); !ok {
			return errNotYetSent
		}
		return nil
	})
	m := decodeStrict(t, got.body)
	switch {
	case m.Version != "4":
		t.Errorf("version = %q, want 4", m.Version)
	case m.Receiver != "router" || len(m.Alerts) != 1:
		t.Errorf("receiver %q with %d alerts, want router with 1", m.Receiver, len(m.Alerts))
	case m.Alerts[0].Fingerprint == "" || m.Alerts[0].Labels["sloth_severity"] != "page" || m.Alerts[0].Annotations["burn_rate_1h"] != "20.00":
		t.Errorf("alert lost its fingerprint, labels or annotations: %+v", m.Alerts[0])
	case !m.Alerts[0].StartsAt.Equal(firing[0].StartsAt) || !m.Alerts[0].EndsAt.IsZero():
		t.Errorf("firing alert startsAt %v endsAt %v, want %v and zero", m.Alerts[0].StartsAt, m.Alerts[0].EndsAt, firing[0].StartsAt)
	case m.GroupLabels["slo"] != "llm-inference-ttft":
		t.Errorf("groupLabels = %v, want the group_by labels", m.GroupLabels)
	}
	if got.auth != "Bearer "+webhookToken || !strings.HasPrefix(got.contentType, "application/json") {
		t.Errorf("Authorization %q, Content-Type %q: want the bearer token and JSON", got.auth, got.contentType)
	}

	golden := filepath.Join("testdata", "am-"+mv[1]+"-firing.json")
	if *updateAMPayload {
		if err := os.WriteFile(golden, append(bytes.TrimSpace(got.body), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want, err := os.ReadFile(golden); err == nil {
		if g, w := normalize(t, got.body), normalize(t, want); g != w {
			t.Errorf("Alertmanager %s's webhook differs from %s (rerun with -update.am-payload if the change is expected):\ngot:\n%s\nwant:\n%s", mv[1], golden, g, w)
		}
	} else {
		t.Logf("no recorded payload for Alertmanager %s (%v); record one with -update.am-payload", mv[1], err)
	}

	postAlerts(t, resolved(firing), am)
	eventually(t, 15*time.Second, "a resolved webhook", func() error {
		var ok bool
		if got, ok = rec.withStatus("resolved"); !ok {
			return errNotYetSent
		}
		return nil
	})
	r := decodeStrict(t, got.body)
	if r.Version != "4" || len(r.Alerts) != 1 || r.Alerts[0].Status != "resolved" || r.Alerts[0].EndsAt.IsZero() ||
		r.Alerts[0].Fingerprint != m.Alerts[0].Fingerprint || !r.Alerts[0].StartsAt.Equal(m.Alerts[0].StartsAt) {
		t.Errorf("resolved webhook: want the same alert (fingerprint, startsAt) resolved with an endsAt, got %+v", r.Alerts)
	}
}
