// Package webhooktest builds Alertmanager webhook (version 4) payloads the
// way Alertmanager writes them, and owns the generated fixtures of
// testdata/webhook that every package's tests read.
package webhooktest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// Dir is the absolute path of testdata/webhook, found from this file so
// tests of any package can read the fixtures.
var Dir = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "webhook")
}()

// Alert and Message are the webhook v4 JSON as Alertmanager writes it
// (notify/webhook: template.Data plus version, groupKey, truncatedAlerts).
// Pointer and omitempty fields let fixtures model older releases.
type Alert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     string            `json:"startsAt"`
	EndsAt       string            `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
}

type Message struct {
	Receiver           string            `json:"receiver"`
	Status             string            `json:"status"`
	Alerts             []Alert           `json:"alerts"`
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

// Start is the startsAt of the fixtures' alerts.
var Start = time.Date(2025, 3, 14, 9, 26, 53, 589_000_000, time.UTC)

// ZeroTime is how Alertmanager renders an unset endsAt.
const ZeroTime = "0001-01-01T00:00:00Z"

// Fingerprint is Alertmanager's fingerprint of a label set.
func Fingerprint(labels map[string]string) string {
	ls := make(model.LabelSet, len(labels))
	for k, v := range labels {
		ls[model.LabelName(k)] = model.LabelValue(v)
	}
	return ls.Fingerprint().String()
}

// GeneratorURL is the Prometheus graph link of expr, as Prometheus sets it.
func GeneratorURL(expr string) string {
	return "http://prometheus-0.monitoring.svc:9090/graph?g0.expr=" + url.QueryEscape(expr) + "&g0.tab=1"
}

// MkAlert builds one alert the way Alertmanager renders it: a firing alert
// has the zero endsAt, a resolved one the time it ended.
func MkAlert(status string, labels, annotations map[string]string, expr string, startsAt time.Time) Alert {
	a := Alert{
		Status:       status,
		Labels:       labels,
		Annotations:  annotations,
		StartsAt:     startsAt.Format(time.RFC3339Nano),
		EndsAt:       ZeroTime,
		GeneratorURL: GeneratorURL(expr),
		Fingerprint:  Fingerprint(labels),
	}
	if status == "resolved" {
		a.EndsAt = startsAt.Add(17 * time.Minute).Format(time.RFC3339Nano)
	}
	return a
}

// TTFTAlert is a vLLM TTFT alert (llm-inference-gpu) of one instance.
func TTFTAlert(status, instance string) Alert {
	return MkAlert(status,
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
		Start)
}

// NodeAlert is a node_exporter filesystem alert (no sector label).
func NodeAlert(status, instance string) Alert {
	return MkAlert(status,
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
		Start.Add(-3*time.Hour))
}

// SLOAlert is a Sloth burn-rate alert of the gateway availability SLO.
func SLOAlert(status string, long, short, severity string) Alert {
	return MkAlert(status,
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
		Start.Add(-20*time.Minute))
}

// Msg wraps alerts in a webhook as Alertmanager renders it.
func Msg(status string, alerts ...Alert) Message {
	m := Message{
		Receiver:          "alertrouter",
		Status:            status,
		Alerts:            alerts,
		GroupLabels:       map[string]string{"alertname": alerts[0].Labels["alertname"]},
		CommonLabels:      commonOf(alerts, func(a Alert) map[string]string { return a.Labels }),
		CommonAnnotations: commonOf(alerts, func(a Alert) map[string]string { return a.Annotations }),
		ExternalURL:       "http://alertmanager-0.monitoring.svc:9093",
		Version:           "4",
		GroupKey:          `{}/{severity=~"critical|warning"}:{alertname="` + alerts[0].Labels["alertname"] + `"}`,
	}
	return m
}

func commonOf(alerts []Alert, get func(Alert) map[string]string) map[string]string {
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

// HundredAlerts are 100 TTFT alerts, every tenth resolved.
func HundredAlerts() []Alert {
	alerts := make([]Alert, 0, 100)
	for i := range 100 {
		inst := fmt.Sprintf("gpu-node-%03d.inference.svc:8000", i)
		status := "firing"
		if i%10 == 9 {
			status = "resolved"
		}
		alerts = append(alerts, TTFTAlert(status, inst))
	}
	return alerts
}

// MustJSON renders v as indented JSON with a final newline.
func MustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// Fixtures returns every generated file of testdata/webhook by name.
func Fixtures(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	put := func(name string, v any) { out[name] = MustJSON(t, v) }

	put("firing.json", Msg("firing",
		TTFTAlert("firing", "gpu-node-007.inference.svc:8000"),
		TTFTAlert("firing", "gpu-node-011.inference.svc:8000")))
	put("resolved.json", Msg("resolved",
		TTFTAlert("resolved", "gpu-node-007.inference.svc:8000"),
		TTFTAlert("resolved", "gpu-node-011.inference.svc:8000")))
	put("mixed.json", Msg("firing",
		TTFTAlert("firing", "gpu-node-007.inference.svc:8000"),
		TTFTAlert("resolved", "gpu-node-011.inference.svc:8000"),
		NodeAlert("firing", "kafka-broker-2.data.svc:9100"),
		SLOAlert("firing", "1h", "5m", "critical"),
		SLOAlert("firing", "3d", "6h", "warning")))
	trunc := Msg("firing", HundredAlerts()[:5]...)
	trunc.TruncatedAlerts = 5
	put("truncated.json", trunc)
	put("hundred.json", Msg("firing", HundredAlerts()...))

	old := Msg("firing", NodeAlert("firing", "kafka-broker-2.data.svc:9100"))
	put("am-v0.25.json", old)
	modern := Msg("firing", NodeAlert("firing", "kafka-broker-2.data.svc:9100"), NodeAlert("resolved", "kafka-broker-3.data.svc:9100"))
	modern.NotificationReason = "alert_group_changed"
	modern.RouteLabels = map[string]string{"team": "storage", "severity": "warning"}
	put("am-v0.34.json", modern)

	// Payloads that cannot be read as a whole.
	good := MustJSON(t, Msg("firing", TTFTAlert("firing", "gpu-node-007.inference.svc:8000")))
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
		return MustJSON(t, m)
	}
	out["wrong-types.bad.json"] = withField("alerts", "x")
	out["version-3.bad.json"] = withField("version", "3")
	out["no-alerts.bad.json"] = withField("alerts", nil)

	// Payloads with a defect inside one alert.
	utf := Msg("firing", TTFTAlert("firing", "gpu-node-007.inference.svc:8000"), TTFTAlert("firing", "gpu-node-011.inference.svc:8000"))
	utf.Alerts[1].Annotations["summary"] = "p95 TTFT above 2s on gpu-node-011 INVALIDBYTE"
	b := MustJSON(t, utf)
	out["invalid-utf8.json"] = bytes.Replace(b, []byte("INVALIDBYTE"), []byte{'\xff', 'x'}, 1)

	ts := Msg("firing", TTFTAlert("firing", "gpu-node-007.inference.svc:8000"), TTFTAlert("firing", "gpu-node-011.inference.svc:8000"), NodeAlert("firing", "kafka-broker-2.data.svc:9100"))
	ts.Alerts[0].StartsAt = "yesterday at noon"
	ts.Alerts[2].StartsAt = ""
	put("bad-timestamp.json", ts)

	nl := Msg("firing", TTFTAlert("firing", "gpu-node-007.inference.svc:8000"), NodeAlert("firing", "kafka-broker-2.data.svc:9100"), TTFTAlert("firing", "gpu-node-011.inference.svc:8000"))
	nl.Alerts[1].Labels = map[string]string{}
	nl.Alerts[1].Fingerprint = Fingerprint(nil)
	put("no-labels.json", nl)

	wt := Msg("firing", TTFTAlert("firing", "gpu-node-007.inference.svc:8000"), TTFTAlert("firing", "gpu-node-011.inference.svc:8000"), NodeAlert("firing", "kafka-broker-2.data.svc:9100"))
	b = MustJSON(t, wt)
	// Alert 1's labels become a number.
	i := bytes.Index(b, []byte(`"gpu-node-011`))
	j := bytes.LastIndex(b[:i], []byte(`"labels": {`))
	k := j + bytes.IndexByte(b[j:], '}')
	out["alert-wrong-type.json"] = append(append(append([]byte{}, b[:j]...), []byte(`"labels": 42`)...), b[k+1:]...)
	return out
}

// ReadFixture returns the named file of testdata/webhook.
func ReadFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
