package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/alertrouter/alertrouter/routing/alert"

	gojson "github.com/goccy/go-json"
	"github.com/prometheus/alertmanager/template"
	"github.com/prometheus/common/model"
)

// InputError is a payload that cannot be read as a whole. The webhook edge
// answers it with Status and a JSON body naming Field.
type InputError struct {
	Status int    // HTTP status: 400, 413 or 415
	Field  string // JSON field at fault, "" for the whole body
	Msg    string
}

func (e *InputError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

func badRequest(field, format string, args ...any) *InputError {
	return &InputError{Status: 400, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// The flags set on alerts whose defects were mended at decode time.

// wireEnvelope is the webhook v4 JSON with its alerts decoded as A. Unknown
// fields (notification_reason before v0.32, routeLabels before v0.34,
// anything newer) are ignored, so every Alertmanager release decodes.
type wireEnvelope[A any] struct {
	Version           *string           `json:"version"`
	GroupKey          string            `json:"groupKey"`
	TruncatedAlerts   uint64            `json:"truncatedAlerts"`
	Receiver          string            `json:"receiver"`
	Status            string            `json:"status"`
	NotificationRsn   string            `json:"notification_reason"`
	GroupLabels       map[string]string `json:"groupLabels"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	RouteLabels       map[string]string `json:"routeLabels"`
	ExternalURL       string            `json:"externalURL"`
	Alerts            *[]A              `json:"alerts"`
	// OrgID is Grafana's: its webhook contact point posts Alertmanager's
	// envelope and alerts with more fields, as version "1" with its
	// organisation's id (grafana/alerting receivers/webhook).
	OrgID *int64 `json:"orgId"`
}

// wireMessage is the fast path: every alert decoded in one pass.
type wireMessage = wireEnvelope[wireAlert]

type wireAlert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     string            `json:"startsAt"`
	EndsAt       string            `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
	// DashboardURL is Grafana's (its webhook contact point's): the
	// dashboard of the rule's panel.
	DashboardURL string `json:"dashboardURL"`
}

// slowMessage isolates per-alert defects: each alert is decoded on its own
// so a wrong type inside one alert rejects that alert alone.
type slowMessage = wireEnvelope[json.RawMessage]

// Decode reads an Alertmanager webhook body. It returns an *InputError for a
// payload that cannot be read as a whole; defects inside one alert are
// mended and flagged on that alert, or the alert alone is rejected and
// listed in Message.Rejected. now stands in for missing timestamps.
//
// The common case (valid UTF-8, well-typed, well-formed) costs one pass of
// goccy/go-json, about twice as fast as encoding/json on webhook payloads
// (docs/benchmarks.md). Anything it does not accept is decoded again by
// decodeStd (encoding/json), which finds and reports the defect, so errors,
// mended alerts and rejections are encoding/json's; on what both accept the
// two give the same Message (TestDecodeMatchesEncodingJSON and
// FuzzDecodeMatchesEncodingJSON compare them on every testdata payload and
// the fuzz corpus).
func Decode(body []byte, now time.Time) (*alert.Message, error) {
	// A UTF-8 byte-order mark some senders write first: RFC 8259 §8.1 lets
	// a parser ignore it, and refusing it would drop the page.
	body = bytes.TrimPrefix(body, bom)
	if len(body) <= fastDecodeMax && utf8.Valid(body) {
		var w wireMessage
		if err := gojson.UnmarshalOf(body, &w); err == nil {
			return fromWire(&w, now)
		}
	}
	return decodeStd(body, now)
}

// fastDecodeMax bounds the bodies goccy/go-json decodes: it copies each
// body into a buffer of a decode context it pools and reuses, keeping the
// largest body it saw for as long as webhooks keep arriving (an audit: 24
// MB held after one 20 MB webhook; up to GOMAXPROCS × webhook.max_body_bytes).
// Larger bodies — a few, Alertmanager's max_alerts groups — go to
// encoding/json, which keeps nothing.
const fastDecodeMax = 1 << 20

// bom is the UTF-8 byte-order mark.
var bom = []byte("\xef\xbb\xbf")

// decodeStd is Decode with encoding/json alone: the reference the fast path
// is checked against, and the path of every payload with a defect (a
// second, alert-by-alert pass finds it).
func decodeStd(body []byte, now time.Time) (*alert.Message, error) {
	body = bytes.TrimPrefix(body, bom)
	validUTF8 := utf8.Valid(body)
	var w wireMessage
	err := json.Unmarshal(body, &w)
	if err == nil && validUTF8 {
		return fromWire(&w, now)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return nil, badRequest("", "malformed JSON at byte offset %d: %v", se.Offset, se)
	}
	if err != nil && !isTypeError(err) {
		return nil, badRequest("", "malformed JSON: %v", err)
	}
	return decodeSlow(body, now)
}

// fromWire checks the envelope of a payload decoded in one pass and
// converts its alerts.
func fromWire(w *wireMessage, now time.Time) (*alert.Message, error) {
	if err := checkEnvelope(w); err != nil {
		return nil, err
	}
	msg := newMessage(*w, now, len(*w.Alerts))
	for i := range *w.Alerts {
		addAlert(msg, i, &(*w.Alerts)[i], false)
	}
	mendFingerprintClashes(msg)
	return msg, allRejected(msg)
}

// allRejected is the error of a payload none of whose alerts could be read:
// answered 2xx, it would be a webhook that sent nothing; a 400 naming the
// defects tells Alertmanager's operator instead (a partial payload is
// processed, its rejected alerts listed in the answer).
func allRejected(m *alert.Message) error {
	if len(m.Items) > 0 || len(m.Rejected) == 0 {
		return nil
	}
	reasons := make([]string, 0, 3)
	for _, r := range m.Rejected[:min(len(m.Rejected), 3)] {
		reasons = append(reasons, r.Reason)
	}
	more := ""
	if n := len(m.Rejected) - len(reasons); n > 0 {
		more = fmt.Sprintf("; and %d more", n)
	}
	return badRequest("alerts", "no alert could be read: %s%s", strings.Join(reasons, "; "), more)
}

func isTypeError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}

func decodeSlow(body []byte, now time.Time) (*alert.Message, error) {
	var s slowMessage
	if err := json.Unmarshal(body, &s); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return nil, badRequest("", "expected a JSON object (an Alertmanager webhook), got %s", gotValue(te.Value))
			}
			return nil, badRequest(te.Field, "expected JSON %s, got %s", jsonKind(te.Type), gotValue(te.Value))
		}
		return nil, badRequest("", "malformed JSON: %v", err)
	}
	if s.Alerts == nil {
		return nil, badRequest("alerts", "missing: a webhook must carry an alerts array")
	}
	raws := *s.Alerts
	if err := checkEnvelopeFields(s.Version, s.OrgID != nil, len(raws)); err != nil {
		return nil, err
	}
	msg := newMessage(wireEnvelope[wireAlert]{
		Version: s.Version, GroupKey: s.GroupKey, TruncatedAlerts: s.TruncatedAlerts,
		Receiver: s.Receiver, Status: s.Status, NotificationRsn: s.NotificationRsn,
		GroupLabels: s.GroupLabels, CommonLabels: s.CommonLabels, CommonAnnotations: s.CommonAnnotations,
		RouteLabels: s.RouteLabels, ExternalURL: s.ExternalURL, OrgID: s.OrgID,
	}, now, len(raws))
	for i, raw := range raws {
		var a wireAlert
		err := json.Unmarshal(raw, &a)
		var dropped []string
		if err != nil {
			a, dropped, err = dropMistypedFields(raw, err)
		}
		if err != nil {
			field := "alerts[" + strconv.Itoa(i) + "]"
			reason := "wrong JSON type: " + err.Error()
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				if te.Field != "" {
					field += "." + te.Field
				}
				reason = "expected JSON " + jsonKind(te.Type) + ", got " + gotValue(te.Value)
			}
			msg.Rejected = append(msg.Rejected, alert.Rejection{Index: i, Reason: field + ": " + reason})
			continue
		}
		n := len(msg.Items)
		addAlert(msg, i, &a, !utf8.Valid(raw))
		// addAlert may reject it (no labels): the flags are this alert's
		// only, never the one before's.
		if len(dropped) > 0 && len(msg.Items) > n {
			flagDropped(&msg.Items[n], dropped)
		}
	}
	mendFingerprintClashes(msg)
	// Envelope strings decoded from invalid UTF-8 were replaced by
	// encoding/json already; nothing more to mend there.
	return msg, allRejected(msg)
}

// mistypedDroppable are the fields of an alert that do not identify it: one
// of the wrong JSON type (`"annotations": []`, PHP's empty map; a numeric
// startsAt) is dropped and flagged, and the alert goes on — rejected, its
// page was lost (answered 2xx, Alertmanager never retries). Labels identify
// the alert: wrong, it is still rejected alone.
var mistypedDroppable = map[string]string{
	"annotations": alert.FlagAnnotationsInvalid, "startsAt": alert.FlagStartsAtInvalid, "endsAt": alert.FlagEndsAtInvalid,
	"status": alert.FlagStatusInvalid, "generatorURL": alert.FlagGeneratorURLInvalid, "fingerprint": alert.FlagFingerprint,
	"dashboardURL": alert.FlagGeneratorURLInvalid,
}

// dropMistypedFields decodes raw again without each field err (and the
// next decodes) finds of the wrong JSON type, as long as it is one of
// mistypedDroppable; it returns the alert, the fields dropped, and the
// error that still stands.
func dropMistypedFields(raw json.RawMessage, err error) (wireAlert, []string, error) {
	var a wireAlert
	var fields map[string]json.RawMessage
	var dropped []string
	for range len(mistypedDroppable) {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return a, dropped, err
		}
		name, _, _ := strings.Cut(te.Field, ".")
		if _, ok := mistypedDroppable[name]; !ok {
			return a, dropped, err
		}
		if fields == nil && json.Unmarshal(raw, &fields) != nil {
			return a, dropped, err
		}
		// encoding/json matches keys case-insensitively ("Annotations").
		for k, v := range fields {
			if !strings.EqualFold(k, name) {
				continue
			}
			var kv map[string]json.RawMessage
			if name == "annotations" && json.Unmarshal(v, &kv) == nil && kv != nil {
				// Annotations of the wrong type (a number) go, the others stay.
				maps.DeleteFunc(kv, func(_ string, v json.RawMessage) bool { return len(v) == 0 || v[0] != '"' })
				fields[k], _ = json.Marshal(kv)
			} else {
				delete(fields, k)
			}
		}
		dropped = append(dropped, name)
		b, merr := json.Marshal(fields)
		if merr != nil {
			return a, dropped, err
		}
		a = wireAlert{}
		if err = json.Unmarshal(b, &a); err == nil {
			return a, dropped, nil
		}
	}
	return a, dropped, err
}

// flagDropped flags a the fields dropped for their wrong JSON type: a
// startsAt dropped is invalid, not missing.
func flagDropped(a *alert.Alert, dropped []string) {
	for _, name := range dropped {
		flag := mistypedDroppable[name]
		if name == "startsAt" {
			a.Flags = slices.DeleteFunc(a.Flags, func(f string) bool { return f == alert.FlagStartsAtMissing })
		}
		if !slices.Contains(a.Flags, flag) {
			a.Flags = append(a.Flags, flag)
		}
	}
}

// jsonKind names the JSON type a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "value"
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Name() == "RawMessage" {
			return "value"
		}
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "non-negative integer"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "integer"
	default:
		return "number"
	}
}

// gotValue is encoding/json's description of a value of the wrong type
// ("number -1", "string"), cut so that an answer never echoes a huge
// literal back.
func gotValue(v string) string {
	const most = 48
	if len(v) <= most {
		return v
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut] + "…"
}

func checkEnvelope(w *wireMessage) error {
	if w.Alerts == nil {
		return badRequest("alerts", "missing: a webhook must carry an alerts array")
	}
	return checkEnvelopeFields(w.Version, w.OrgID != nil, len(*w.Alerts))
}

// grafanaVersion is the version Grafana's webhook contact point writes,
// with orgId beside it.
const grafanaVersion = "1"

func checkEnvelopeFields(version *string, grafana bool, n int) error {
	if version == nil {
		return badRequest("version", `missing: expected "4" (Alertmanager webhook v4)`)
	}
	if *version != "4" && !(grafana && *version == grafanaVersion) {
		return badRequest("version", "unsupported version %q: expected \"4\" (Alertmanager webhook v4), or \"1\" with orgId (Grafana's webhook contact point)", *version)
	}
	if n == 0 {
		return badRequest("alerts", "empty: a webhook must carry at least one alert")
	}
	return nil
}

func newMessage(w wireMessage, now time.Time, n int) *alert.Message {
	if w.OrgID != nil && *w.Version == grafanaVersion {
		// Grafana's externalURL is Grafana's own root, not an
		// Alertmanager's: the links built on it (Alertmanager's silence
		// form, its alert list) would lead nowhere. Its alerts' links
		// (generatorURL: the rule) stay.
		w.ExternalURL = ""
	}
	return &alert.Message{
		Data: template.Data{
			Receiver:           w.Receiver,
			Status:             w.Status,
			NotificationReason: w.NotificationRsn,
			GroupLabels:        w.GroupLabels,
			CommonLabels:       w.CommonLabels,
			CommonAnnotations:  w.CommonAnnotations,
			RouteLabels:        w.RouteLabels,
			ExternalURL:        w.ExternalURL,
		},
		Version:         *w.Version,
		GroupKey:        w.GroupKey,
		TruncatedAlerts: w.TruncatedAlerts,
		Items:           make([]alert.Alert, 0, n),
		ReceivedAt:      now,
	}
}

// textFallbacks fills the summary and description annotations, when an
// alert has none, from the names other rule files write them under:
// summary from title (GitLab's) or message (kubernetes-mixin's before it
// split message into summary and description, OpenShift's), description
// from message — so the on-call reads the rule's text in PagerDuty and
// Slack, as Alertmanager's default PagerDuty details listed every
// annotation. The annotations of those names stay as they are.
func textFallbacks(an template.KV) {
	if an["summary"] == "" {
		switch {
		case an["title"] != "":
			an["summary"] = an["title"]
		case an["message"] != "":
			an["summary"] = an["message"]
		}
	}
	if an["description"] == "" && an["message"] != "" && an["message"] != an["summary"] {
		an["description"] = an["message"]
	}
}

// add converts one wire alert, mending what it can. badUTF8 says the raw
// alert held invalid UTF-8, which encoding/json has replaced by U+FFFD.
func addAlert(m *alert.Message, i int, w *wireAlert, badUTF8 bool) {
	if len(w.Labels) == 0 {
		m.Rejected = append(m.Rejected, alert.Rejection{Index: i, Reason: "alerts[" + strconv.Itoa(i) + "].labels: an alert without labels cannot be identified"})
		return
	}
	a := alert.Alert{Alert: template.Alert{
		Status:       w.Status,
		Labels:       w.Labels,
		Annotations:  w.Annotations,
		GeneratorURL: w.GeneratorURL,
		Fingerprint:  w.Fingerprint,
	}}
	if a.Annotations == nil {
		a.Annotations = template.KV{}
	}
	textFallbacks(a.Annotations)
	if w.DashboardURL != "" && a.Annotations["dashboard_url"] == "" {
		a.Annotations["dashboard_url"] = w.DashboardURL
	}
	if badUTF8 {
		a.Flags = append(a.Flags, alert.FlagInvalidUTF8)
	}
	var start time.Time
	var startErr error
	if w.StartsAt != "" {
		start, startErr = parseTime(w.StartsAt)
	}
	switch {
	case w.StartsAt == "" || (startErr == nil && start.IsZero()):
		// Go's zero time (0001-01-01T00:00:00Z) is how a Go sender says
		// "no start": taken as missing, not shown as year 1.
		a.StartsAt = m.ReceivedAt
		a.Flags = append(a.Flags, alert.FlagStartsAtMissing)
	case startErr != nil:
		a.StartsAt = m.ReceivedAt
		a.Flags = append(a.Flags, alert.FlagStartsAtInvalid)
	default:
		a.StartsAt = start
	}
	if w.EndsAt != "" {
		t, err := parseTime(w.EndsAt)
		switch {
		case err != nil:
			a.Flags = append(a.Flags, alert.FlagEndsAtInvalid)
		case !t.IsZero() && !a.IdentityStart().IsZero() && t.Before(a.StartsAt):
			// An end before the alert's own start (Alertmanager refuses
			// such alerts; another sender's defect) would read as the late
			// resolve of an earlier instance and close nothing: dropped,
			// so a resolve goes by its fingerprint, as one without endsAt.
			a.Flags = append(a.Flags, alert.FlagEndsAtInvalid)
		default:
			a.EndsAt = t
		}
	}
	if a.Status != "firing" && a.Status != "resolved" {
		a.Status = "firing"
		if !a.EndsAt.IsZero() && !a.EndsAt.After(m.ReceivedAt) {
			a.Status = "resolved"
		}
		a.Flags = append(a.Flags, alert.FlagStatusInvalid)
	}
	if a.Fingerprint == "" {
		a.Fingerprint = labelsFingerprint(a.Labels)
		a.Flags = append(a.Flags, alert.FlagFingerprint)
	}
	m.Items = append(m.Items, a)
}

// parseTime reads an RFC 3339 time. Go's parser takes a zone offset of
// +24:00 or +23:60, which RFC 3339 does not allow and which time's own
// JSON encoding then refuses: such a time, kept, made the journal frame
// and the dead letter holding the alert unwritable (and with them the
// records of every other alert in the frame). It is unparsable.
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, err
	}
	if _, off := t.Zone(); off <= -24*60*60 || off >= 24*60*60 {
		return time.Time{}, fmt.Errorf("time %q: zone offset out of range", s)
	}
	return t, nil
}

// labelsFingerprint is Alertmanager's fingerprint of labels.
func labelsFingerprint(labels template.KV) string {
	ls := make(model.LabelSet, len(labels))
	for k, v := range labels {
		ls[model.LabelName(k)] = model.LabelValue(v)
	}
	return ls.Fingerprint().String()
}

// mendFingerprintClashes gives every alert of a fingerprint that the
// payload carries with different labels the fingerprint of its own labels,
// flagged FlagFingerprint. Alertmanager derives a fingerprint from the
// labels, so such a payload comes from another sender's defect; taken as
// one alert repeated, only the first would be notified. The same alert
// twice (same labels) stays as sent — unless its copies differ in status
// (keepLatest).
func mendFingerprintClashes(msg *alert.Message) {
	items := msg.Items
	clashing := map[string]bool{} // fingerprints carried with different labels
	repeated := false
	eachRepeat(items, func(i, j int) {
		repeated = true
		if !maps.Equal(items[i].Labels, items[j].Labels) {
			clashing[items[j].Fingerprint] = true
		}
	})
	if !repeated {
		return
	}
	for k := range items {
		a := &items[k]
		if !clashing[a.Fingerprint] {
			continue
		}
		if fp := labelsFingerprint(a.Labels); fp != a.Fingerprint {
			a.Fingerprint = fp
			if !slices.Contains(a.Flags, alert.FlagFingerprint) {
				a.Flags = append(a.Flags, alert.FlagFingerprint)
			}
		}
	}
	// Under the fingerprints as mended: copies of one alert with another
	// status.
	conflicting := map[string]bool{}
	eachRepeat(items, func(i, j int) {
		if items[i].Status != items[j].Status && maps.Equal(items[i].Labels, items[j].Labels) {
			conflicting[items[j].Fingerprint] = true
		}
	})
	if len(conflicting) > 0 {
		keepLatest(msg, conflicting)
	}
}

// eachRepeat calls fn(i, j) for items j whose fingerprint an earlier item
// i carries: every such earlier item for a few items, the first one for
// many (a map, allocated only then).
func eachRepeat(items []alert.Alert, fn func(i, j int)) {
	if len(items) <= 16 {
		for j := 1; j < len(items); j++ {
			for i := range j {
				if items[i].Fingerprint == items[j].Fingerprint {
					fn(i, j)
				}
			}
		}
		return
	}
	first := make(map[string]int, len(items))
	for j := range items {
		if i, seen := first[items[j].Fingerprint]; !seen {
			first[items[j].Fingerprint] = j
		} else {
			fn(i, j)
		}
	}
}

// keepLatest keeps, of an alert the payload carries twice or more with
// the same labels and different status (Alertmanager never does; a
// sender merging or replaying payloads may), the copies of its latest
// state — a firing that started after the resolved copy ended, else the
// resolve — and rejects the others alone, each naming the copy kept.
// Taken as sent, the first copy was notified and the second answered as
// its duplicate: [firing, resolved] left the page open, [resolved,
// firing] sent only the resolve.
func keepLatest(msg *alert.Message, fps map[string]bool) {
	// The payload index of each item: the indexes not rejected, in order.
	index := make([]int, 0, len(msg.Items))
	r := 0
	for i := 0; len(index) < len(msg.Items); i++ {
		if r < len(msg.Rejected) && msg.Rejected[r].Index == i {
			r++
			continue
		}
		index = append(index, i)
	}
	at := func(a *alert.Alert) time.Time {
		if a.Status == "resolved" && !a.EndsAt.IsZero() {
			return a.EndsAt
		}
		return a.StartsAt
	}
	// The items of each fingerprint of fps, in payload order (one pass:
	// scanning the payload for each made 40,000 such pairs take 10 s).
	copies := make(map[string][]int, len(fps))
	var order []string
	for k := range msg.Items {
		if fp := msg.Items[k].Fingerprint; fps[fp] {
			if copies[fp] == nil {
				order = append(order, fp)
			}
			copies[fp] = append(copies[fp], k)
		}
	}
	drop := make([]bool, len(msg.Items))
	for _, fp := range order {
		kept := -1
		for _, k := range copies[fp] {
			a := &msg.Items[k]
			if kept < 0 {
				kept = k
				continue
			}
			w := &msg.Items[kept]
			if t, tw := at(a), at(w); t.After(tw) || t.Equal(tw) && a.Status == "resolved" && w.Status != "resolved" {
				kept = k
			}
		}
		if kept < 0 {
			continue
		}
		w := &msg.Items[kept]
		for _, k := range copies[fp] {
			a := &msg.Items[k]
			if a.Status == w.Status || !maps.Equal(a.Labels, w.Labels) {
				continue
			}
			drop[k] = true
			msg.Rejected = append(msg.Rejected, alert.Rejection{Index: index[k], Reason: fmt.Sprintf(
				"alerts[%d]: the same alert as alerts[%d] (fingerprint %s, the same labels) with status %s where that one is %s: one payload cannot say both; the later state (%s) was kept",
				index[k], index[kept], fp, a.Status, w.Status, w.Status)})
		}
	}
	items := msg.Items[:0]
	for k := range msg.Items {
		if !drop[k] {
			items = append(items, msg.Items[k])
		}
	}
	clear(msg.Items[len(items):])
	msg.Items = items
	slices.SortFunc(msg.Rejected, func(a, b alert.Rejection) int { return a.Index - b.Index })
}

// IsJSONContentType reports whether a Content-Type header names JSON
// ("application/json", optionally with parameters, or a +json type).
func IsJSONContentType(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}
