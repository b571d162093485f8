// Package bench measures the router against its floors: in-process
// benchmarks of every pipeline stage (pipeline_bench_test.go) and the
// realistic Alertmanager webhook payloads shared with cmd/loadgen.
//
// Payloads are built from the repository's testdata (testdata/sectors,
// testdata/policies, testdata/webhook): their alerts are taken in turn and
// varied (instance label, fingerprint) to make as many distinct alerts as a
// payload needs. A Payload records where each fingerprint sits in its body,
// so a caller can stamp fresh fingerprints (new alert transitions) into a
// copy without re-encoding.
package bench

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/alertmanager/template"
	"github.com/prometheus/common/model"
)

// Floor mirrors Alertmanager's webhook v4 body (template.Data plus the
// webhook's own fields): decoding into it with encoding/json is the cost
// floor the router's pipeline is compared with.
type Floor struct {
	template.Data
	Version         string `json:"version"`
	GroupKey        string `json:"groupKey"`
	TruncatedAlerts uint64 `json:"truncatedAlerts"`
}

// Alert is one alert as it travels in a webhook.
type Alert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     string            `json:"startsAt"`
	EndsAt       string            `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
}

type envelope struct {
	Version           string            `json:"version"`
	GroupKey          string            `json:"groupKey"`
	TruncatedAlerts   uint64            `json:"truncatedAlerts"`
	Status            string            `json:"status"`
	Receiver          string            `json:"receiver"`
	GroupLabels       map[string]string `json:"groupLabels"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	ExternalURL       string            `json:"externalURL"`
	Alerts            []Alert           `json:"alerts"`
}

// Corpus is the set of distinct, well-formed alerts found in testdata.
type Corpus struct {
	Alerts []Alert
}

// LoadCorpus reads every webhook fixture under dir/{sectors,policies,webhook}
// and keeps its well-formed alerts (labels present, valid UTF-8, parsable
// startsAt), each label set once, as firing alerts. Fixtures that do not
// decode (the deliberately bad ones) are skipped.
func LoadCorpus(dir string) (*Corpus, error) {
	var files []string
	for _, sub := range []string{"sectors", "policies", "webhook"} {
		m, err := filepath.Glob(filepath.Join(dir, sub, "*.json"))
		if err != nil {
			return nil, fmt.Errorf("list fixtures in %s: %w", sub, err)
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	seen := map[string]bool{}
	c := &Corpus{}
	for _, f := range files {
		if strings.HasSuffix(f, ".bad.json") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read fixture: %w", err)
		}
		if !utf8.Valid(b) {
			continue
		}
		var env envelope
		if err := json.Unmarshal(b, &env); err != nil {
			continue
		}
		for _, a := range env.Alerts {
			if len(a.Labels) == 0 {
				continue
			}
			if _, err := time.Parse(time.RFC3339Nano, a.StartsAt); err != nil {
				continue
			}
			id := labelsID(a.Labels)
			if seen[id] {
				continue
			}
			seen[id] = true
			a.Status = "firing"
			a.EndsAt = "0001-01-01T00:00:00Z"
			if a.Annotations == nil {
				a.Annotations = map[string]string{}
			}
			c.Alerts = append(c.Alerts, a)
		}
	}
	if len(c.Alerts) == 0 {
		return nil, errors.New("no well-formed alert in " + dir)
	}
	return c, nil
}

func labelsID(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(l[k])
		b.WriteByte(0)
	}
	return b.String()
}

// Payload is one encoded webhook and the byte offsets of its alerts'
// 16-hex-digit fingerprints.
type Payload struct {
	Body   []byte
	Alerts int
	fps    []int
}

// clone copies an alert, deep-copying its maps.
func clone(a Alert) Alert {
	a.Labels = maps(a.Labels)
	a.Annotations = maps(a.Annotations)
	return a
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// fingerprint computes Alertmanager's fingerprint of a label set.
func fingerprint(l map[string]string) string {
	ls := make(model.LabelSet, len(l))
	for k, v := range l {
		ls[model.LabelName(k)] = model.LabelValue(v)
	}
	return fmt.Sprintf("%016x", uint64(ls.Fingerprint()))
}

// Build returns a payload of n distinct alerts taken in turn from the
// corpus, starting at alert offset; alerts past the corpus size get a
// varied instance label so that every label set, and so every fingerprint,
// is distinct.
func (c *Corpus) Build(n, offset int) (*Payload, error) {
	alerts := make([]Alert, n)
	for i := range alerts {
		k := offset + i
		a := clone(c.Alerts[k%len(c.Alerts)])
		if round := k / len(c.Alerts); round > 0 {
			a.Labels["instance"] = a.Labels["instance"] + "-r" + strconv.Itoa(round)
		}
		a.Fingerprint = fingerprint(a.Labels)
		alerts[i] = a
	}
	return encode(alerts, "{}:{bench=\"corpus\"}")
}

// encode wraps alerts in a v4 envelope shaped like Alertmanager's (common
// labels computed the same way) and records the fingerprints' offsets.
func encode(alerts []Alert, groupKey string) (*Payload, error) {
	env := envelope{
		Version:           "4",
		GroupKey:          groupKey,
		Status:            "firing",
		Receiver:          "alertrouter",
		GroupLabels:       map[string]string{},
		CommonLabels:      common(alerts, func(a *Alert) map[string]string { return a.Labels }),
		CommonAnnotations: common(alerts, func(a *Alert) map[string]string { return a.Annotations }),
		ExternalURL:       "http://alertmanager-0.monitoring.svc:9093",
		Alerts:            alerts,
	}
	if v, ok := env.CommonLabels["alertname"]; ok {
		env.GroupLabels["alertname"] = v
	}
	body, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("encode payload: %w", err)
	}
	p := &Payload{Body: body, Alerts: len(alerts), fps: make([]int, len(alerts))}
	from := 0
	for i, a := range alerts {
		needle := []byte(`"fingerprint":"` + a.Fingerprint + `"`)
		j := indexFrom(body, needle, from)
		if j < 0 || len(a.Fingerprint) != 16 {
			return nil, fmt.Errorf("fingerprint %q of alert %d not found in the encoded payload", a.Fingerprint, i)
		}
		p.fps[i] = j + len(`"fingerprint":"`)
		from = j + len(needle)
	}
	return p, nil
}

func indexFrom(b, needle []byte, from int) int {
	j := strings.Index(string(b[from:]), string(needle))
	if j < 0 {
		return -1
	}
	return from + j
}

// common returns the key/value pairs every alert shares, as Alertmanager
// computes commonLabels and commonAnnotations.
func common(alerts []Alert, get func(*Alert) map[string]string) map[string]string {
	out := map[string]string{}
	if len(alerts) == 0 {
		return out
	}
	for k, v := range get(&alerts[0]) {
		out[k] = v
	}
	for i := 1; i < len(alerts); i++ {
		m := get(&alerts[i])
		for k, v := range out {
			if m[k] != v {
				delete(out, k)
			}
		}
	}
	return out
}

// Fresh copies the payload into dst (grown as needed) with every
// fingerprint replaced by one derived from run and seq, so that the copy's
// alerts are transitions no store has seen: alert i gets
// hex(run<<48 | (seq*alerts+i) mod 2^48). Use a distinct run per process.
func (p *Payload) Fresh(dst []byte, run uint16, seq uint64) []byte {
	dst = append(dst[:0], p.Body...)
	var raw [8]byte
	var hexed [16]byte
	for i, off := range p.fps {
		v := uint64(run)<<48 | (seq*uint64(p.Alerts)+uint64(i))&(1<<48-1)
		binary.BigEndian.PutUint64(raw[:], v)
		hex.Encode(hexed[:], raw[:])
		copy(dst[off:off+16], hexed[:])
	}
	return dst
}

// StormFamily describes the one incident family of the storm scenario.
var StormFamily = map[string]string{
	"sector":  "llm-inference-gpu",
	"service": "chat-completions",
	"kpi":     "TTFT",
	"slo":     "chat-ttft-p95",
}

// Storm returns the storm scenario: webhooks payloads of perWebhook
// distinct alerts each, 90% of one incident family (StormFamily: same
// sector, service, KPI and SLO; one in five at warning, the rest critical)
// and 10% noise taken from the corpus. Every alert of the storm is distinct.
func (c *Corpus) Storm(webhooks, perWebhook int) ([]*Payload, error) {
	out := make([]*Payload, webhooks)
	noiseEvery := 10
	k := 0
	for w := range out {
		alerts := make([]Alert, perWebhook)
		for i := range alerts {
			k++
			var a Alert
			if k%noiseEvery == 0 {
				a = clone(c.Alerts[(k/noiseEvery)%len(c.Alerts)])
				a.Labels["instance"] = a.Labels["instance"] + "-storm" + strconv.Itoa(k)
			} else {
				a = stormAlert(k)
			}
			a.Fingerprint = fingerprint(a.Labels)
			alerts[i] = a
		}
		p, err := encode(alerts, fmt.Sprintf("{}:{storm=\"%d\"}", w))
		if err != nil {
			return nil, err
		}
		out[w] = p
	}
	return out, nil
}

func stormAlert(k int) Alert {
	l := maps(StormFamily)
	node := k % 512
	l["alertname"] = "VLLMTimeToFirstTokenHigh"
	l["job"] = "vllm"
	l["namespace"] = "inference"
	l["model_name"] = "llama-3.1-70b-instruct"
	l["instance"] = fmt.Sprintf("gpu-node-%03d.inference.svc:8000", node)
	l["pod"] = fmt.Sprintf("vllm-%d", k)
	l["severity"] = "critical"
	if k%5 == 0 {
		l["severity"] = "warning"
	}
	return Alert{
		Status: "firing",
		Labels: l,
		Annotations: map[string]string{
			"summary":              "p95 TTFT of llama-3.1-70b-instruct above 2s on " + l["instance"],
			"description":          "histogram_quantile(0.95) of vllm:time_to_first_token_seconds is 3.4s (SLO 2s).",
			"queue_time_seconds":   "2.8",
			"compute_time_seconds": "0.6",
			"runbook_url":          "https://runbooks.example.com/llm/ttft",
		},
		StartsAt:     "2025-03-14T09:26:53.589Z",
		EndsAt:       "0001-01-01T00:00:00Z",
		GeneratorURL: "http://prometheus-0.monitoring.svc:9090/graph?g0.expr=histogram_quantile%280.95%2C+sum+by+%28le%2C+instance%29+%28rate%28vllm%3Atime_to_first_token_seconds_bucket%7Bjob%3D%22vllm%22%7D%5B5m%5D%29%29%29+%3E+2&g0.tab=1",
	}
}
