package slack

import (
	"reflect"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// notEscaped are the string fields escapedData leaves as they are, by the
// end of their path: from the configuration (the router's receiver), the
// router's own words (kind, action, a delivery's kind), or kept for the
// router (an alert's flags); a decision's action is the router's word too.
var notEscaped = []string{"Data.Data.Receiver", "Data.Kind", "Data.Action", "Deliveries[].Kind", "Decision.Action", "Alert.Flags[]"}

func escapes(path string) bool {
	for _, p := range notEscaped {
		if strings.HasSuffix(path, p) {
			return false
		}
	}
	return true
}

// dirtyData returns the data of a notification of two alerts (the second
// also in a second .Results entry whose alert is not .Alerts') with every
// string prefixed by prefix.
func dirtyData(prefix string) *notify.Data {
	rs := []*alert.Result{
		notifytest.Result("TTFTHigh", "fp0", "firing", alert.ActionTicket),
		notifytest.Result("TTFTHigh", "fp1", "firing", alert.ActionTicket),
	}
	for _, r := range rs {
		r.SuppressedBy, r.MutedBy = "slo", "interval"
		r.Classification.Candidates = []string{"a", "b"}
		r.Decision.SLO, r.Decision.Budget = "slo", "budget"
		r.Deliveries = []alert.Delivery{{Receiver: "r", Integration: "slack/0", Outcome: "sent", Error: "e"}}
		r.Live = &alert.LiveSLO{Summary: "s", Note: "n", Unavailable: "u", Details: map[string]string{"k": "v"}}
		r.Flap = &alert.Flap{Reason: "flapping"}
	}
	no := notifytest.Notification("triage", alert.KindFiring, alert.ActionTicket, rs...)
	no.ConsoleURL = "https://console.example/i"
	no.Data.NotificationReason, no.Data.RouteLabels = "reason", map[string]string{"team": "x"}
	d := notify.NewData(no)
	extra := *rs[1]
	extra.Alert = &alert.Alert{Alert: rs[1].Alert.Alert}
	extra.Alert.Labels = map[string]string{"alertname": "Other"}
	d.Results = append(d.Results, &extra)
	if prefix != "" {
		prefixStrings(reflect.ValueOf(d).Elem(), prefix, map[uintptr]bool{})
	}
	return d
}

// prefixStrings prefixes every string reachable from v (map keys too),
// each map once.
func prefixStrings(v reflect.Value, prefix string, seen map[uintptr]bool) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(prefix + v.String())
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			prefixStrings(v.Elem(), prefix, seen)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				prefixStrings(v.Field(i), prefix, seen)
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			prefixStrings(v.Index(i), prefix, seen)
		}
	case reflect.Map:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		if v.Type().Key().Kind() != reflect.String || v.Type().Elem().Kind() != reflect.String {
			return
		}
		for _, k := range v.MapKeys() {
			val := v.MapIndex(k)
			v.SetMapIndex(k, reflect.Value{})
			v.SetMapIndex(reflect.ValueOf(prefix+k.String()).Convert(k.Type()), reflect.ValueOf(prefix+val.String()).Convert(val.Type()))
		}
	}
}

// checkEscaped fails t unless every string of out is esc of the string of
// in at the same place (notEscaped fields: equal).
func checkEscaped(t *testing.T, path string, in, out reflect.Value, escape bool) {
	t.Helper()
	switch in.Kind() {
	case reflect.String:
		want := in.String()
		if escape && escapes(path) {
			want = esc(want)
		}
		if escape && (strings.HasSuffix(path, ".GeneratorURL") || strings.HasSuffix(path, ".ExternalURL")) && !notify.WebURL(in.String()) {
			want = "" // drawn as a link: an http(s) URL or nothing
		}
		if out.String() != want {
			t.Errorf("%s = %q, want %q", path, out.String(), want)
		}
	case reflect.Pointer, reflect.Interface:
		if in.IsNil() != out.IsNil() {
			t.Errorf("%s: nil %v, want %v", path, out.IsNil(), in.IsNil())
		} else if !in.IsNil() {
			checkEscaped(t, path, in.Elem(), out.Elem(), escape)
		}
	case reflect.Struct:
		for i := range in.NumField() {
			f := in.Type().Field(i)
			if f.IsExported() {
				checkEscaped(t, path+"."+f.Name, in.Field(i), out.Field(i), escape)
			}
		}
	case reflect.Slice:
		if in.Len() != out.Len() {
			t.Errorf("%s: %d elements, want %d", path, out.Len(), in.Len())
			return
		}
		for i := range in.Len() {
			checkEscaped(t, path+"[]", in.Index(i), out.Index(i), escape)
		}
	case reflect.Map:
		if in.Len() != out.Len() {
			t.Errorf("%s: %d entries, want %d", path, out.Len(), in.Len())
			return
		}
		for _, k := range in.MapKeys() {
			ek := reflect.ValueOf(esc(k.String())).Convert(k.Type())
			if !out.MapIndex(ek).IsValid() {
				t.Errorf("%s: no key %q", path, ek)
				continue
			}
			checkEscaped(t, path+"["+k.String()+"]", in.MapIndex(k), out.MapIndex(ek), escape)
		}
	}
}

// escapedData escapes every string an operator's template can print from
// the alerts, the webhook and the router's view of them, in one pass, and
// changes nothing in the data it was given.
func TestEscapedDataEscapesEveryStringOnce(t *testing.T) {
	d := dirtyData("<!channel> & ")
	out := escapedData(d)
	if out == d {
		t.Fatal("escapedData returned the dirty data itself")
	}
	checkEscaped(t, "Data", reflect.ValueOf(d).Elem(), reflect.ValueOf(out).Elem(), true)
	if !reflect.DeepEqual(d, dirtyData("<!channel> & ")) {
		t.Error("escapedData changed the data it was given")
	}
	if a, b := out.Results[0].Alert.Labels, out.Alerts[0].Labels; reflect.ValueOf(a).UnsafePointer() != reflect.ValueOf(b).UnsafePointer() {
		t.Error("a result's alert and .Alerts share their label map, escaped once: escaped twice")
	}

	// Clean data is returned as it is, and so are the parts of dirty data
	// that need nothing.
	clean := dirtyData("")
	for _, r := range clean.Results {
		r.Decision.Tier, r.Decision.Reasons = "1h/5m", []string{"burn rate 15.2 over 1h"} // the fixture's hold a ">"
	}
	if escapedData(clean) != clean {
		t.Error("escapedData copied data that needs no escaping")
	}
	clean.Results[2].Alert.Annotations = map[string]string{"summary": "a < b"}
	out = escapedData(clean)
	if out.Results[0] != clean.Results[0] || out.Results[1] != clean.Results[1] || out.Data.Alerts[0].Labels == nil ||
		reflect.ValueOf(out.Alerts[0].Labels).UnsafePointer() != reflect.ValueOf(clean.Alerts[0].Labels).UnsafePointer() {
		t.Error("escapedData copied the results that need no escaping")
	}
	if got := out.Results[2].Alert.Annotations["summary"]; got != "a &lt; b" {
		t.Errorf("the last result's summary = %q", got)
	}
	if strings.Contains(clean.Results[2].Alert.Annotations["summary"], "&lt;") {
		t.Error("escapedData changed the data it was given")
	}
}
