package webhook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
)

var equivNow = time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC)

// equivalencePayloads are every testdata/webhook payload and every
// testdata/corpus payload (the "payload" object of each file, and the file
// itself, which is not a webhook and must be refused alike), plus edge
// cases the two decoders could read differently.
func equivalencePayloads(tb testing.TB) map[string][]byte {
	tb.Helper()
	out := map[string][]byte{}
	webhooks, err := filepath.Glob(filepath.Join(webhooktest.Dir, "*.json"))
	if err != nil {
		tb.Fatal(err)
	}
	corpus, err := filepath.Glob(filepath.Join(webhooktest.Dir, "..", "corpus", "*.json"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(webhooks) == 0 || len(corpus) == 0 {
		tb.Fatalf("no testdata payloads found (%d webhook, %d corpus)", len(webhooks), len(corpus))
	}
	for _, name := range append(webhooks, corpus...) {
		b, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		out[filepath.Base(name)] = b
		var f struct{ Payload json.RawMessage }
		if json.Unmarshal(b, &f) == nil && len(f.Payload) > 0 {
			out[filepath.Base(name)+"#payload"] = f.Payload
		}
	}
	for name, body := range equivalenceEdgeCases {
		out[name] = []byte(body)
	}
	return out
}

// equivalenceEdgeCases are the shapes where JSON decoders are known to
// differ: key case, duplicate keys, nulls, escapes, numbers, trailing data.
var equivalenceEdgeCases = map[string]string{
	"key case":               `{"VERSION":"4","Alerts":[{"LABELS":{"a":"b"},"Status":"firing"}]}`,
	"duplicate labels":       `{"version":"4","alerts":[{"labels":{"a":"b"},"labels":{"c":"d"}}]}`,
	"duplicate label key":    `{"version":"4","alerts":[{"labels":{"a":"b","a":"c"}}]}`,
	"duplicate version":      `{"version":"3","version":"4","alerts":[{"labels":{"a":"b"}}]}`,
	"null labels":            `{"version":"4","alerts":[{"labels":null}]}`,
	"null alert":             `{"version":"4","alerts":[null,{"labels":{"a":"b"}}]}`,
	"null strings":           `{"version":"4","receiver":null,"alerts":[{"labels":{"a":"b"},"status":null,"startsAt":null}]}`,
	"null version":           `{"version":null,"alerts":[{"labels":{"a":"b"}}]}`,
	"escapes":                `{"version":"4","alerts":[{"labels":{"a\u0041":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}}]}`,
	"lone surrogate":         `{"version":"4","alerts":[{"labels":{"a":"\ud800x"}}]}`,
	"bad escape":             `{"version":"4","alerts":[{"labels":{"a":"\q"}}]}`,
	"control character":      "{\"version\":\"4\",\"alerts\":[{\"labels\":{\"a\":\"x\ty\"}}]}",
	"truncated float":        `{"version":"4","truncatedAlerts":1e2,"alerts":[{"labels":{"a":"b"}}]}`,
	"truncated negative":     `{"version":"4","truncatedAlerts":-1,"alerts":[{"labels":{"a":"b"}}]}`,
	"truncated huge":         `{"version":"4","truncatedAlerts":18446744073709551616,"alerts":[{"labels":{"a":"b"}}]}`,
	"truncated string":       `{"version":"4","truncatedAlerts":"3","alerts":[{"labels":{"a":"b"}}]}`,
	"trailing data":          `{"version":"4","alerts":[{"labels":{"a":"b"}}]} {}`,
	"trailing comma":         `{"version":"4","alerts":[{"labels":{"a":"b"}},]}`,
	"number label":           `{"version":"4","alerts":[{"labels":{"a":1}},{"labels":{"a":"b"}}]}`,
	"object status":          `{"version":"4","alerts":[{"labels":{"a":"b"},"status":{}}]}`,
	"alerts object":          `{"version":"4","alerts":{}}`,
	"top-level array":        `[{"version":"4"}]`,
	"whitespace":             " \n\t{ \"version\" : \"4\" , \"alerts\" : [ { \"labels\" : { \"a\" : \"b\" } } ] } \n",
	"unknown fields":         `{"version":"4","x":{"y":[1,2,{"z":null}]},"alerts":[{"labels":{"a":"b"},"extra":[true,false]}]}`,
	"empty object":           `{}`,
	"empty":                  ``,
	"bom":                    "\xef\xbb\xbf{\"version\":\"4\",\"alerts\":[{\"labels\":{\"a\":\"b\"}}]}",
	"invalid utf8 in key":    "{\"version\":\"4\",\"alerts\":[{\"labels\":{\"\xff\":\"b\"}}]}",
	"nested depth":           `{"version":"4","x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],"alerts":[{"labels":{"a":"b"}}]}`,
	"common labels dup":      `{"version":"4","commonLabels":{"a":"1"},"commonLabels":{"b":"2"},"alerts":[{"labels":{"a":"b"}}]}`,
	"annotations wrong":      `{"version":"4","alerts":[{"labels":{"a":"b"},"annotations":[]}]}`,
	"mistyped and no labels": `{"version":"4","alerts":[{"labels":{"a":"b"}},{"labels":{},"annotations":[]}]}`,
	"fingerprint number":     `{"version":"4","alerts":[{"labels":{"a":"b"},"fingerprint":12}]}`,
	"case folded key kelvin": "{\"version\":\"4\",\"alerts\":[{\"labels\":{\"a\":\"b\"},\"\u212aey\":1}]}",
	"case folded labels":     "{\"version\":\"4\",\"alerts\":[{\"\u017fabels\":{\"a\":\"b\"}}]}",
}

// checkSameDecode fails when Decode and decodeStd (encoding/json alone)
// differ on body: same error text and status, or deeply equal messages.
func checkSameDecode(t *testing.T, name string, body []byte) {
	t.Helper()
	got, gotErr := Decode(body, equivNow)
	want, wantErr := decodeStd(body, equivNow)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%s: Decode error %v, encoding/json error %v", name, gotErr, wantErr)
	}
	if gotErr != nil {
		if !reflect.DeepEqual(gotErr, wantErr) {
			t.Fatalf("%s: Decode error %#v, encoding/json error %#v", name, gotErr, wantErr)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: Decode and encoding/json differ:\n got  %+v\n want %+v", name, got, want)
	}
}

// TestDecodeMatchesEncodingJSON checks that the fast decoder gives exactly
// encoding/json's result on every testdata payload and the edge cases.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	payloads := equivalencePayloads(t)
	for name, body := range payloads {
		checkSameDecode(t, name, body)
	}
	t.Logf("%d payloads decoded alike", len(payloads))
}

// FuzzDecodeMatchesEncodingJSON checks the same on the fuzz corpus: seeds
// are every testdata payload (small enough) and the edge cases.
func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	for _, body := range equivalencePayloads(f) {
		if len(body) < 16<<10 {
			f.Add(body)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkSameDecode(t, "fuzz input", body)
	})
}

// TestDecodedStringsDoNotAliasTheBody checks that the fast decoder copies
// what it decodes: the edge may reuse the body's buffer once Decode
// returns.
func TestDecodedStringsDoNotAliasTheBody(t *testing.T) {
	body := []byte(`{"version":"4","receiver":"r","alerts":[{"status":"firing","labels":{"alertname":"Disk","instance":"a:1"},"annotations":{"summary":"full"},"fingerprint":"0123456789abcdef"}]}`)
	m, err := Decode(body, equivNow)
	if err != nil {
		t.Fatal(err)
	}
	for i := range body {
		body[i] = 'x'
	}
	a := m.Items[0]
	if m.Receiver != "r" || a.Labels["alertname"] != "Disk" || a.Labels["instance"] != "a:1" || a.Annotations["summary"] != "full" || a.Fingerprint != "0123456789abcdef" {
		t.Fatalf("decoded values changed with the body: %+v %+v", m.Data, a)
	}
}
