package slack

import (
	"reflect"
	"strings"
	"unsafe"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// An operator's title and text templates are Slack mrkdwn: their own
// markup — links (<https://…|Graph>), mentions (<!here>, <@U…>, <#C…>) —
// must reach Slack as written, as in Alertmanager. What the alerts bring
// must not: a label value "<!channel>" would notify a channel, and
// "<https://evil|Runbook>" would draw a link under a trusted name. So those
// templates render over escapedData, a copy of the template data whose
// strings from the alerts and the webhook (label and annotation names and
// values, generator URLs, fingerprints, the external URL, route labels) and
// those the router derives from them (the incident key, the console URL,
// the classification and decision of .Results) are escaped as Slack
// escapes text — "&", "<" and ">" only — and the rendered text is not
// escaped again. Alertmanager escapes nothing. The built-in texts keep
// being escaped whole (Blocks).

// needsEsc reports whether esc changes s. (Three vectorized byte searches:
// strings.ContainsAny was most of the cost of escapedData.)
func needsEsc(s string) bool {
	return strings.IndexByte(s, '<') >= 0 || strings.IndexByte(s, '>') >= 0 || strings.IndexByte(s, '&') >= 0
}

func anyNeedsEsc(ss ...string) bool {
	for _, s := range ss {
		if needsEsc(s) {
			return true
		}
	}
	return false
}

func kvNeedsEsc(kv template.KV) bool {
	for k, v := range kv {
		if needsEsc(k) || needsEsc(v) {
			return true
		}
	}
	return false
}

func alertNeedsEsc(a *template.Alert) bool {
	return anyNeedsEsc(a.Status, a.GeneratorURL, a.Fingerprint) || kvNeedsEsc(a.Labels) || kvNeedsEsc(a.Annotations)
}

// sameAlert reports whether a and b hold the same strings and the same
// label and annotation maps (not copies: the same maps).
func sameAlert(a, b *template.Alert) bool {
	return a.Status == b.Status && a.GeneratorURL == b.GeneratorURL && a.Fingerprint == b.Fingerprint &&
		sameKV(a.Labels, b.Labels) && sameKV(a.Annotations, b.Annotations)
}

func sameKV(a, b template.KV) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func kpisNeedEsc(ks []alert.KPI) bool {
	for _, k := range ks {
		if anyNeedsEsc(k.ID, k.Name) {
			return true
		}
	}
	return false
}

func signalsNeedEsc(ss []alert.Signal) bool {
	for _, s := range ss {
		if anyNeedsEsc(s.Kind, s.Value, s.Sector, s.KPI) {
			return true
		}
	}
	return false
}

func hintsNeedEsc(hs []alert.Hint) bool {
	for _, h := range hs {
		if anyNeedsEsc(h.ID, h.Text) {
			return true
		}
	}
	return false
}

func deliveriesNeedEsc(ds []alert.Delivery) bool {
	for _, d := range ds {
		if anyNeedsEsc(d.Receiver, d.Integration, d.Outcome, d.Error) {
			return true
		}
	}
	return false
}

func liveNeedsEsc(l *alert.LiveSLO) bool {
	if l == nil {
		return false
	}
	if anyNeedsEsc(l.Summary, l.Note, l.Unavailable) {
		return true
	}
	for k, v := range l.Details {
		if needsEsc(k) || needsEsc(v) {
			return true
		}
	}
	return false
}

// restNeedsEsc reports whether a string of r other than its alert's that
// templates can print needs escaping: its classification's and decision's,
// which quote label values (reasons, signals, an SLO identity …). The
// decision's tier and reasons usually do ("1h/5m>14.4").
func restNeedsEsc(r *alert.Result) bool {
	c, d := &r.Classification, &r.Decision
	return anyNeedsEsc(r.Incident, r.SuppressedBy, r.MutedBy, c.Sector, c.SectorName, c.AlertStyle, c.Sensitivity, c.IncidentClass, d.Policy, d.Tier, d.SLO, d.Budget) ||
		anyNeedsEsc(d.Reasons...) || anyNeedsEsc(c.Candidates...) || anyNeedsEsc(r.Receivers...) ||
		kpisNeedEsc(c.KPIs) || signalsNeedEsc(c.Signals) || hintsNeedEsc(c.Hints) || deliveriesNeedEsc(r.Deliveries) ||
		liveNeedsEsc(r.Live) || r.Flap != nil && needsEsc(r.Flap.Reason)
}

// escaper escapes the strings of one notification's data, each distinct
// string once (the alerts of a notification repeat their labels, tiers
// and reasons) and each label set once (.Alerts and .Results share an
// alert's maps). What needs no escaping is kept, not copied.
type escaper struct {
	memo map[string]string
	kvs  map[unsafe.Pointer]template.KV
}

func (e *escaper) str(s string) string {
	if !needsEsc(s) {
		return s
	}
	if r, ok := e.memo[s]; ok {
		return r
	}
	if e.memo == nil {
		e.memo = make(map[string]string)
	}
	r := esc(s)
	e.memo[s] = r
	return r
}

func (e *escaper) strs(ss []string) []string {
	if !anyNeedsEsc(ss...) {
		return ss
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = e.str(s)
	}
	return out
}

// kv returns kv with its names and values escaped: kv itself when none
// needs it (template data is read-only, so it is shared). Each map is
// looked at once.
func (e *escaper) kv(kv template.KV) template.KV {
	if len(kv) == 0 {
		return kv
	}
	id := reflect.ValueOf(kv).UnsafePointer()
	if out, ok := e.kvs[id]; ok {
		return out
	}
	out := kv
	if kvNeedsEsc(kv) {
		out = make(template.KV, len(kv))
		for k, v := range kv {
			out[e.str(k)] = e.str(v)
		}
	}
	if e.kvs == nil {
		e.kvs = make(map[unsafe.Pointer]template.KV)
	}
	e.kvs[id] = out
	return out
}

func (e *escaper) alert(a template.Alert) template.Alert {
	a.Status, a.GeneratorURL, a.Fingerprint = e.str(a.Status), e.str(a.GeneratorURL), e.str(a.Fingerprint)
	a.Labels, a.Annotations = e.kv(a.Labels), e.kv(a.Annotations)
	return a
}

// result returns a copy of r with its alert's strings (when escAlert: its
// alert needs it) and every string restNeedsEsc reads escaped; the parts
// that need none are shared.
func (e *escaper) result(r *alert.Result, escAlert bool) *alert.Result {
	out := *r
	if escAlert {
		a := *r.Alert
		a.Alert = e.alert(a.Alert)
		out.Alert = &a
	}
	out.Incident, out.SuppressedBy, out.MutedBy = e.str(r.Incident), e.str(r.SuppressedBy), e.str(r.MutedBy)
	out.Receivers = e.strs(r.Receivers)

	c := &out.Classification
	c.Sector, c.SectorName, c.AlertStyle, c.Sensitivity, c.IncidentClass = e.str(c.Sector), e.str(c.SectorName), e.str(c.AlertStyle), e.str(c.Sensitivity), e.str(c.IncidentClass)
	c.Candidates = e.strs(c.Candidates)
	if kpisNeedEsc(c.KPIs) {
		c.KPIs = make([]alert.KPI, len(r.Classification.KPIs))
		for i, k := range r.Classification.KPIs {
			c.KPIs[i] = alert.KPI{ID: e.str(k.ID), Name: e.str(k.Name)}
		}
	}
	if signalsNeedEsc(c.Signals) {
		c.Signals = make([]alert.Signal, len(r.Classification.Signals))
		for i, s := range r.Classification.Signals {
			s.Kind, s.Value, s.Sector, s.KPI = e.str(s.Kind), e.str(s.Value), e.str(s.Sector), e.str(s.KPI)
			c.Signals[i] = s
		}
	}
	if hintsNeedEsc(c.Hints) {
		c.Hints = make([]alert.Hint, len(r.Classification.Hints))
		for i, h := range r.Classification.Hints {
			h.ID, h.Text = e.str(h.ID), e.str(h.Text)
			c.Hints[i] = h
		}
	}

	d := &out.Decision
	d.Policy, d.Tier, d.SLO, d.Budget = e.str(d.Policy), e.str(d.Tier), e.str(d.SLO), e.str(d.Budget)
	d.Reasons = e.strs(d.Reasons)

	if deliveriesNeedEsc(r.Deliveries) {
		out.Deliveries = make([]alert.Delivery, len(r.Deliveries))
		for i, dl := range r.Deliveries {
			dl.Receiver, dl.Integration, dl.Outcome, dl.Error = e.str(dl.Receiver), e.str(dl.Integration), e.str(dl.Outcome), e.str(dl.Error)
			out.Deliveries[i] = dl
		}
	}
	if liveNeedsEsc(r.Live) {
		l := *r.Live
		l.Summary, l.Note, l.Unavailable = e.str(l.Summary), e.str(l.Note), e.str(l.Unavailable)
		if len(l.Details) > 0 {
			l.Details = make(map[string]string, len(r.Live.Details))
			for k, v := range r.Live.Details {
				l.Details[e.str(k)] = e.str(v)
			}
		}
		out.Live = &l
	}
	if r.Flap != nil && needsEsc(r.Flap.Reason) {
		f := *r.Flap
		f.Reason = e.str(f.Reason)
		out.Flap = &f
	}
	return &out
}

// escapedData returns the data an operator's title and text render over:
// d with the strings from the alerts and the webhook escaped for Slack's
// mrkdwn. It returns d itself when no string needs it; otherwise only the
// parts that need escaping are copied.
func escapedData(d *notify.Data) *notify.Data {
	td := d.Data
	alerts := false
	for i := range td.Alerts {
		if alertNeedsEsc(&td.Alerts[i]) {
			alerts = true
			break
		}
	}
	// The results' alerts are usually .Alerts, sharing their maps: known
	// clean when those are.
	resultAlertNeedsEsc := func(i int, r *alert.Result) bool {
		if r.Alert == nil {
			return false
		}
		if !alerts && i < len(td.Alerts) && sameAlert(&r.Alert.Alert, &td.Alerts[i]) {
			return false
		}
		return alertNeedsEsc(&r.Alert.Alert)
	}
	// first: the first result that needs escaping; firstAlert: its alert
	// does.
	first, firstAlert := len(d.Results), false
	for i, r := range d.Results {
		an := resultAlertNeedsEsc(i, r)
		if an || restNeedsEsc(r) {
			first, firstAlert = i, an
			break
		}
	}
	results := first < len(d.Results)
	if !alerts && !results && !anyNeedsEsc(d.Incident, d.ConsoleURL, td.Status, td.ExternalURL, td.NotificationReason) &&
		!kvNeedsEsc(td.GroupLabels) && !kvNeedsEsc(td.CommonLabels) && !kvNeedsEsc(td.CommonAnnotations) && !kvNeedsEsc(td.RouteLabels) {
		return d
	}
	var e escaper
	ed := *td
	ed.Status, ed.ExternalURL, ed.NotificationReason = e.str(td.Status), e.str(td.ExternalURL), e.str(td.NotificationReason)
	ed.GroupLabels, ed.CommonLabels, ed.CommonAnnotations, ed.RouteLabels = e.kv(td.GroupLabels), e.kv(td.CommonLabels), e.kv(td.CommonAnnotations), e.kv(td.RouteLabels)
	if alerts {
		ed.Alerts = make(template.Alerts, len(td.Alerts))
		for i, a := range td.Alerts {
			ed.Alerts[i] = e.alert(a)
		}
	}
	out := *d
	out.Data = &ed
	out.Incident, out.ConsoleURL = e.str(d.Incident), e.str(d.ConsoleURL)
	if results {
		out.Results = make([]*alert.Result, len(d.Results))
		copy(out.Results, d.Results[:first])
		out.Results[first] = e.result(d.Results[first], firstAlert)
		for i, r := range d.Results[first+1:] {
			an := resultAlertNeedsEsc(first+1+i, r)
			if an || restNeedsEsc(r) {
				r = e.result(r, an)
			}
			out.Results[first+1+i] = r
		}
	}
	return &out
}
