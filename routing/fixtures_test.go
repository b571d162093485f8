package routing_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// update rewrites the generated fixtures of testdata/webhook.
var update = flag.Bool("update", false, "rewrite the generated files of testdata/webhook")

// webhookDir holds the webhook fixtures shared with the other packages.
const webhookDir = "../testdata/webhook"

// wAlert and wMessage are the webhook v4 JSON as Alertmanager writes it
// (notify/webhook: template.Data plus version, groupKey, truncatedAlerts).
// Pointer and omitempty fields let fixtures model older releases.
type wAlert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     string            `json:"startsAt"`
	EndsAt       string            `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
}

type wMessage struct {
	Receiver           string            `json:"receiver"`
	Status             string            `json:"status"`
	Alerts             []wAlert          `json:"alerts"`
	GroupLabels        map[string]string `json:"groupLabels"`
	CommonLabels       map[string]string `json:"commonLabels"`
	CommonAnnotations  map[string]string `json:"commonAnnotations"`
	ExternalURL        string            `json:"externalURL"`
	Version            string            `json:"version"`
	GroupKey           string            `json:"groupKey"`
	TruncatedAlerts    uint64            `json:"truncatedAlerts"`
	NotificationReason string            `json:"notification_reason,omitempty"`
	RouteLabels        map[string]string `json:"routeLabels,omitempty"`
}

var fixtureStart = time.Date(2025, 3, 14, 9, 26, 53, 589_000_000, time.UTC)

const zeroTime = "0001-01-01T00:00:00Z"

func fingerprint(labels map[string]string) string {
	ls := make(model.LabelSet, len(labels))
	for k, v := range labels {
		ls[model.LabelName(k)] = model.LabelValue(v)
	}
	return ls.Fingerprint().String()
}

func generatorURL(expr string) string {
	return "http://prometheus-0.monitoring.svc:9090/graph?g0.expr=" + url.QueryEscape(expr) + "&g0.tab=1"
}

// mkAlert builds one alert the way Alertmanager renders it: a firing alert
// has the zero endsAt, a resolved one the time it ended.
func mkAlert(status string, labels, annotations map[string]string, expr string, startsAt time.Time) wAlert {
	a := wAlert{
		Status:       status,
		Labels:       labels,
		Annotations:  annotations,
		StartsAt:     startsAt.Format(time.RFC3339Nano),
		EndsAt:       zeroTime,
		GeneratorURL: generatorURL(expr),
		Fingerprint:  fingerprint(labels),
	}
	if status == "resolved" {
		a.EndsAt = startsAt.Add(17 * time.Minute).Format(time.RFC3339Nano)
	}
	return a
}

func ttftAlert(status, instance string) wAlert {
	return mkAlert(status,
		map[string]string{
			"alertname": "VLLMTimeToFirstTokenHigh", "service": "chat-completions", "job": "vllm",
			"instance": instance, "severity": "critical", "sector": "llm-inference-gpu", "kpi": "TTFT",
			"namespace": "inference", "model_name": "llama-3.1-70b-instruct",
		},
		map[string]string{
			"summary":            "p95 TTFT of llama-3.1-70b-instruct above 2s on " + instance,
			"description":        "histogram_quantile(0.95) of vllm:time_to_first_token_seconds is 3.4s (SLO 2s).",
			"runbook_url":        "https://runbooks.example.com/llm/ttft",
			"queue_time_seconds": "2.8", "compute_time_seconds": "0.6",
		},
		`histogram_quantile(0.95, sum by (le, instance) (rate(vllm:time_to_first_token_seconds_bucket{job="vllm"}[5m]))) > 2`,
		fixtureStart)
}

func nodeAlert(status, instance string) wAlert {
	return mkAlert(status,
		map[string]string{
			"alertname": "NodeFilesystemAlmostFull", "job": "node-exporter", "instance": instance,
			"severity": "warning", "mountpoint": "/var/lib/kafka", "device": "/dev/nvme1n1",
		},
		map[string]string{
			"summary":     "Filesystem /var/lib/kafka on " + instance + " is 91% full",
			"description": "Only 9% of the filesystem is left.",
			"utilization": "0.91",
		},
		`(node_filesystem_avail_bytes{job="node-exporter",fstype!=""} / node_filesystem_size_bytes{job="node-exporter",fstype!=""}) < 0.10`,
		fixtureStart.Add(-3*time.Hour))
}

func sloAlert(status string, long, short, severity string) wAlert {
	return mkAlert(status,
		map[string]string{
			"alertname": "APIErrorBudgetBurn", "service": "gateway", "job": "envoy",
			"severity": severity, "sloth_id": "gateway-availability", "sloth_service": "gateway",
			"sloth_slo": "availability", "sloth_severity": map[string]string{"critical": "page", "warning": "ticket"}[severity],
			"long": long, "short": short,
		},
		map[string]string{
			"summary": "gateway availability error budget burning",
			"title":   "(" + severity + ") gateway availability SLO error budget burn rate is too fast.",
		},
		`(slo:sli_error:ratio_rate`+short+`{sloth_id="gateway-availability"} > (14.4 * 0.001)) and ignoring (sloth_window) (slo:sli_error:ratio_rate`+long+`{sloth_id="gateway-availability"} > (14.4 * 0.001))`,
		fixtureStart.Add(-20*time.Minute))
}

func message(status string, alerts ...wAlert) wMessage {
	m := wMessage{
		Receiver:          "alertrouter",
		Status:            status,
		Alerts:            alerts,
		GroupLabels:       map[string]string{"alertname": alerts[0].Labels["alertname"]},
		CommonLabels:      commonOf(alerts, func(a wAlert) map[string]string { return a.Labels }),
		CommonAnnotations: commonOf(alerts, func(a wAlert) map[string]string { return a.Annotations }),
		ExternalURL:       "http://alertmanager-0.monitoring.svc:9093",
		Version:           "4",
		GroupKey:          `{}/{severity=~"critical|warning"}:{alertname="` + alerts[0].Labels["alertname"] + `"}`,
	}
	return m
}

func commonOf(alerts []wAlert, get func(wAlert) map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range get(alerts[0]) {
		out[k] = v
	}
	for _, a := range alerts[1:] {
		for k, v := range out {
			if get(a)[k] != v {
				delete(out, k)
			}
		}
	}
	return out
}

func hundredAlerts() []wAlert {
	alerts := make([]wAlert, 0, 100)
	for i := range 100 {
		inst := fmt.Sprintf("gpu-node-%03d.inference.svc:8000", i)
		status := "firing"
		if i%10 == 9 {
			status = "resolved"
		}
		alerts = append(alerts, ttftAlert(status, inst))
	}
	return alerts
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// fixtures returns every generated file of testdata/webhook by name.
func fixtures(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	put := func(name string, v any) { out[name] = mustJSON(t, v) }

	put("firing.json", message("firing",
		ttftAlert("firing", "gpu-node-007.inference.svc:8000"),
		ttftAlert("firing", "gpu-node-011.inference.svc:8000")))
	put("resolved.json", message("resolved",
		ttftAlert("resolved", "gpu-node-007.inference.svc:8000"),
		ttftAlert("resolved", "gpu-node-011.inference.svc:8000")))
	put("mixed.json", message("firing",
		ttftAlert("firing", "gpu-node-007.inference.svc:8000"),
		ttftAlert("resolved", "gpu-node-011.inference.svc:8000"),
		nodeAlert("firing", "kafka-broker-2.data.svc:9100"),
		sloAlert("firing", "1h", "5m", "critical"),
		sloAlert("firing", "3d", "6h", "warning")))
	trunc := message("firing", hundredAlerts()[:5]...)
	trunc.TruncatedAlerts = 5
	put("truncated.json", trunc)
	put("hundred.json", message("firing", hundredAlerts()...))

	old := message("firing", nodeAlert("firing", "kafka-broker-2.data.svc:9100"))
	put("am-v0.25.json", old)
	modern := message("firing", nodeAlert("firing", "kafka-broker-2.data.svc:9100"), nodeAlert("resolved", "kafka-broker-3.data.svc:9100"))
	modern.NotificationReason = "alert_group_changed"
	modern.RouteLabels = map[string]string{"team": "storage", "severity": "warning"}
	put("am-v0.34.json", modern)

	// Payloads that cannot be read as a whole.
	good := mustJSON(t, message("firing", ttftAlert("firing", "gpu-node-007.inference.svc:8000")))
	out["malformed.bad.json"] = good[:len(good)/2]
	var generic map[string]any
	if err := json.Unmarshal(good, &generic); err != nil {
		t.Fatal(err)
	}
	withField := func(k string, v any) []byte {
		m := map[string]any{}
		for k2, v2 := range generic {
			m[k2] = v2
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return mustJSON(t, m)
	}
	out["wrong-types.bad.json"] = withField("alerts", "x")
	out["version-3.bad.json"] = withField("version", "3")
	out["no-alerts.bad.json"] = withField("alerts", nil)

	// Payloads with a defect inside one alert.
	utf := message("firing", ttftAlert("firing", "gpu-node-007.inference.svc:8000"), ttftAlert("firing", "gpu-node-011.inference.svc:8000"))
	utf.Alerts[1].Annotations["summary"] = "p95 TTFT above 2s on gpu-node-011 INVALIDBYTE"
	b := mustJSON(t, utf)
	out["invalid-utf8.json"] = bytes.Replace(b, []byte("INVALIDBYTE"), []byte{'\xff', 'x'}, 1)

	ts := message("firing", ttftAlert("firing", "gpu-node-007.inference.svc:8000"), ttftAlert("firing", "gpu-node-011.inference.svc:8000"), nodeAlert("firing", "kafka-broker-2.data.svc:9100"))
	ts.Alerts[0].StartsAt = "yesterday at noon"
	ts.Alerts[2].StartsAt = ""
	put("bad-timestamp.json", ts)

	nl := message("firing", ttftAlert("firing", "gpu-node-007.inference.svc:8000"), nodeAlert("firing", "kafka-broker-2.data.svc:9100"), ttftAlert("firing", "gpu-node-011.inference.svc:8000"))
	nl.Alerts[1].Labels = map[string]string{}
	nl.Alerts[1].Fingerprint = fingerprint(nil)
	put("no-labels.json", nl)

	wt := message("firing", ttftAlert("firing", "gpu-node-007.inference.svc:8000"), ttftAlert("firing", "gpu-node-011.inference.svc:8000"), nodeAlert("firing", "kafka-broker-2.data.svc:9100"))
	b = mustJSON(t, wt)
	// Alert 1's labels become a number.
	i := bytes.Index(b, []byte(`"gpu-node-011`))
	j := bytes.LastIndex(b[:i], []byte(`"labels": {`))
	k := j + bytes.IndexByte(b[j:], '}')
	out["alert-wrong-type.json"] = append(append(append([]byte{}, b[:j]...), []byte(`"labels": 42`)...), b[k+1:]...)
	return out
}

// TestFixturesAreCurrent keeps testdata/webhook in step with the generator
// above; run `go test ./routing -run TestFixturesAreCurrent -update` after
// changing it.
func TestFixturesAreCurrent(t *testing.T) {
	for name, want := range fixtures(t) {
		path := filepath.Join(webhookDir, name)
		if *update {
			if err := os.MkdirAll(webhookDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("read fixture (run with -update to create it): %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go test ./routing -run TestFixturesAreCurrent -update", name)
		}
	}
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(webhookDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
