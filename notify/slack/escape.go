package slack

import (
	"maps"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"
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
//
// With link_names on, Slack also links a plain "@channel", "@here",
// "@everyone" or "@name" in the text: one in an alert would notify people.
// Slack documents no escape for "@" (only "&", "<" and ">"), so the alert
// data — the escaped template data, and the data the built-in texts are
// drawn from (mentionSafe) — gets an invisible WORD JOINER (U+2060) after
// each "@": "@\u2060channel" shows as "@channel" and links nothing. A
// string that is a web URL as a whole is left as it is (a link's target,
// which Slack does not scan for names), and so is an "@" within an
// http(s):// address in a longer text (atScan), which Slack links whole:
// an invisible character there would change the address. The operator's
// own mentions, the literal text of title and text, are not data and keep
// working.
//
// The data is walked once: each string is escaped as it is met, and a
// value holding it (a map, a slice, an alert, a result, the data) is copied
// only once one of its strings changed — copy on first change. Nothing is
// checked first and escaped after, and what needs no escaping is shared.

// escIndex returns the index of the first byte of s that Slack escapes
// ("&", "<", ">"), or -1. (Three vectorized byte searches:
// strings.ContainsAny was most of the cost of escapedData.)
func escIndex(s string) int {
	i := strings.IndexByte(s, '<')
	if i == 0 {
		return 0
	}
	if i < 0 {
		i = len(s)
	}
	if j := strings.IndexByte(s[:i], '&'); j >= 0 {
		i = j
	}
	if j := strings.IndexByte(s[:i], '>'); j >= 0 {
		i = j
	}
	if i == len(s) {
		return -1
	}
	return i
}

// escFrom is esc(s) for s whose first byte to escape is at i: the bytes
// before i are copied as they are, the rest escaped in the same pass.
func escFrom(s string, i int) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// wordJoiner follows each "@" of alert data when link_names is on: Slack
// shows "@\u2060here" as "@here" and links no name from it.
const wordJoiner = "\u2060"

// atIndex returns the index of the first "@" of s that could link a name
// when link_names is on, or -1: none in a web URL — s as a whole (a link
// target), or an http(s):// address within s (atScan) — where a word
// joiner would be an invisible character in the address Slack links.
func atIndex(s string) int {
	i := strings.IndexByte(s, '@')
	if i < 0 || notify.WebURL(s) && !strings.ContainsFunc(s, unicode.IsSpace) {
		return -1
	}
	t := tokenStart(s, i)
	sc := atScan{s: s, k: t, tok: t}
	return sc.next()
}

// atScan finds the "@"s of s that could link a name: those not within an
// address Slack links as a whole — a token of s that starts with http://
// or https:// (hasWebScheme; the scheme not preceded by a letter or digit)
// and runs to the "@" without a byte that ends a token (endsToken) — as in
// https://user@host, https://host/@user, https://host/package/@scope/x,
// Kibana's …sort:!(@timestamp,desc)…. It reads s forward, once; only the
// token of the first "@" is read again, walking back to its start
// (tokenStart). So the work is linear in s whatever the number of "@"s:
// link_names must not make a long annotation cost its square.
type atScan struct {
	s     string
	k     int  // the next byte to read
	tok   int  // where the token holding s[k] starts
	inURL bool // the token holds an http(s):// scheme before s[k]
}

// next returns the index of the next "@" that could link a name, or -1.
func (sc *atScan) next() int {
	s := sc.s
	for ; sc.k < len(s); sc.k++ {
		k := sc.k
		switch c := s[k]; {
		case c == '@':
			if !sc.inURL {
				sc.k++
				return k
			}
		case endsToken(s, k):
			sc.tok, sc.inURL = k+1, false
		case c == ':' && !sc.inURL && strings.HasPrefix(s[k:], "://"):
			for _, n := range [...]int{len("https"), len("http")} {
				if b := k - n; b >= sc.tok && hasWebScheme(s[b:]) && (b == sc.tok || !isAlnum(s[b-1])) {
					sc.inURL = true
					break
				}
			}
		}
	}
	return -1
}

// endsToken reports whether s[k] ends an address token: a space, a control
// or non-ASCII character, "<", ">" or "|" (which end a link in mrkdwn), a
// quote ('"', "'", "`"), or a mrkdwn formatting character ("*", "_", "~")
// not followed by a letter or digit — one that could close bold, italics
// or strikethrough around an address, as in "*https://host/*@channel".
// Slack does not document where its URL detection ends an address; these
// end it here, so an "@" after them gets its word joiner.
func endsToken(s string, k int) bool {
	switch c := s[k]; c {
	case '<', '>', '|', '"', '\'', '`':
		return true
	case '*', '_', '~':
		return k+1 == len(s) || !isAlnum(s[k+1])
	default:
		return c <= ' ' || c >= utf8.RuneSelf
	}
}

// tokenStart returns where the token holding s[i] starts (endsToken).
func tokenStart(s string, i int) int {
	for i > 0 && !endsToken(s, i-1) {
		i--
	}
	return i
}

// hasWebScheme reports whether s starts with http:// or https://, in any
// case: an address Slack links whole (atScan), and a link a "<" can start
// (isLinkStart).
func hasWebScheme(s string) bool {
	for _, scheme := range [...]string{"https://", "http://"} {
		if len(s) >= len(scheme) && strings.EqualFold(s[:len(scheme)], scheme) {
			return true
		}
	}
	return false
}

// isLinkStart reports whether s, what follows a "<" in mrkdwn, starts what
// Slack reads as a link or mention: a special mention (<!here>), a user
// (<@U…>), a channel (<#C…>), or a web or mailto address. Any other "<"
// (an operator's "p99 < 500ms") is text.
func isLinkStart(s string) bool {
	if s == "" {
		return false
	}
	switch s[0] {
	case '!', '@', '#':
		return true
	}
	return hasWebScheme(s) || len(s) >= len("mailto:") && strings.EqualFold(s[:len("mailto:")], "mailto:")
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// quietFrom is s with a wordJoiner after each "@" that could link a name
// (atScan: none in a URL), i being the first (atIndex). The scan goes on
// from i, s[:i] is not read again but for i's token.
func quietFrom(s string, i int) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	sc := atScan{s: s, k: i + 1, tok: tokenStart(s, i)}
	last := 0
	for ; i >= 0; i = sc.next() {
		b.WriteString(s[last : i+1])
		b.WriteString(wordJoiner)
		last = i + 1
	}
	b.WriteString(s[last:])
	return b.String()
}

// mentionSafeText is s with a wordJoiner after each "@" (not escaped
// otherwise), for a string of alert data a built-in text prints.
func mentionSafeText(s string) string {
	if i := atIndex(s); i >= 0 {
		return quietFrom(s, i)
	}
	return s
}

// escaper escapes the strings of one notification's data, each distinct
// string that needs it once (the alerts of a notification repeat their
// labels, tiers and reasons) and each label set once (.Alerts and .Results
// share an alert's maps). html escapes "&", "<" and ">"; mentions puts a
// wordJoiner after each "@" (link_names on): one or the other (with both,
// escapedData runs over mentionSafe's data).
type escaper struct {
	html, mentions bool

	memo map[string]string
	kvs  map[unsafe.Pointer]template.KV
}

// str returns s escaped; *changed is set when that differs from s.
func (e *escaper) str(s string, changed *bool) string {
	if e.html && notify.HasBidi(s) {
		// Its bidirectional controls shown (notify.ShowBidi), then escaped.
		*changed = true
		b := notify.ShowBidi(s)
		if i := escIndex(b); i >= 0 {
			return escFrom(b, i)
		}
		return b
	}
	var i int
	if e.mentions {
		i = atIndex(s)
	} else {
		i = escIndex(s)
	}
	if i < 0 {
		return s
	}
	*changed = true
	if r, ok := e.memo[s]; ok {
		return r
	}
	if e.memo == nil {
		e.memo = make(map[string]string)
	}
	var r string
	if e.mentions {
		r = quietFrom(s, i)
	} else {
		r = escFrom(s, i)
	}
	e.memo[s] = r
	return r
}

// url returns s, a URL the alert or Alertmanager gives (generatorURL,
// externalURL), escaped as str does and, for templates, with every "|"
// percent-encoded: a template draws it as a link (`<{{ .GeneratorURL
// }}|Graph>`, the README's example), where a "|" in the value would start
// the label — `https://evil.example/login|Acknowledge in PagerDuty` drew a
// link labelled as the alert wished. A URL holds no literal "|" (RFC
// 3986): %7C is the same address.
func (e *escaper) url(s string, changed *bool) string {
	if e.html && s != "" && !notify.WebURL(s) {
		// An operator's template draws it as a link: only an http(s)
		// one (a javascript: generatorURL ran where clicked: an audit).
		*changed = true
		return ""
	}
	s = e.str(s, changed)
	if e.html && strings.Contains(s, "|") {
		*changed = true
		s = linkSafe(s)
	}
	return s
}

// isURLValue reports whether s, an annotation value, is a web URL
// as a whole (no space in it) holding a "|" that linkSafe encodes. A text
// that only begins with an address keeps its "|".
func isURLValue(s string) bool {
	return hasWebScheme(s) && strings.IndexByte(s, '|') >= 0 && strings.IndexFunc(s, unicode.IsSpace) < 0
}

// linkValue reports whether an annotation (name, v) may be drawn as a link
// by an operator's template: a value of one word, or one under a name that
// holds links (notify.LinkAnnotation: runbook_url, dashboard, …, and names
// ending in url or link) — not a text under a name that only mentions one
// (dashboard_note: a review).
func linkValue(name, v string) bool {
	return strings.IndexFunc(strings.TrimSpace(v), unicode.IsSpace) < 0 || notify.LinkAnnotation(name)
}

// linkSafe percent-encodes every "|" of the URL s: "|" ends a link's URL in
// Slack's mrkdwn, and a URL holds none literally (%7C is the same address).
func linkSafe(s string) string { return strings.ReplaceAll(s, "|", "%7C") }

// strs returns ss with each string escaped: ss itself until one changes,
// then a copy.
func (e *escaper) strs(ss []string, changed *bool) []string {
	return each(ss, changed, func(s *string) bool {
		c := false
		*s = e.str(*s, &c)
		return c
	})
}

// kv returns kv with its names and values escaped: kv itself when none
// changes (template data is read-only, so it is shared), else a copy made
// at the first change, remembered, so a map that .Alerts and .Results share
// is escaped once.
func (e *escaper) kv(kv template.KV, changed *bool) template.KV { return e.kvOf(kv, false, changed) }

// annotations is kv for annotations: a value that is a URL as a whole has
// its "|" percent-encoded (isURLValue). Labels stay as they are: they are
// what silences match (a template's silence link quotes them with
// urlquery), and the router's links to them are built from raw data.
func (e *escaper) annotations(kv template.KV, changed *bool) template.KV {
	return e.kvOf(kv, true, changed)
}

func (e *escaper) kvOf(kv template.KV, urls bool, changed *bool) template.KV {
	if len(kv) == 0 {
		return kv
	}
	id := reflect.ValueOf(kv).UnsafePointer()
	if out, ok := e.kvs[id]; ok {
		*changed = true
		return out
	}
	out := kv
	for k, v := range kv {
		c := false
		ek, ev := e.str(k, &c), e.str(v, &c)
		if urls && e.html && notify.ScriptLink(v) && linkValue(k, v) {
			// A runbook_url of javascript: or data: is no link an
			// operator's template may draw (`<{{ .Annotations.runbook_url }}|Runbook>`):
			// left out, as the built-in links leave it (an audit). A text
			// that only starts like one ("Data: 3 of 5 shards unassigned")
			// stays (a review).
			ev, c = "", true
		}
		if urls && e.html && isURLValue(ev) {
			// A runbook_url or dashboard annotation drawn as an operator's
			// link (`<{{ .Annotations.runbook_url }}|Runbook>`), as url does
			// for generatorURL.
			ev, c = linkSafe(ev), true
		}
		if !c {
			continue
		}
		if sameKV(out, kv) {
			out = maps.Clone(kv)
		}
		if ek != k {
			delete(out, k)
		}
		out[ek] = ev
	}
	if sameKV(out, kv) {
		return kv // not remembered: a clean map met again is walked again, cheaper than a memo of every map
	}
	if e.kvs == nil {
		e.kvs = make(map[unsafe.Pointer]template.KV)
	}
	e.kvs[id] = out
	*changed = true
	return out
}

func sameKV(a, b template.KV) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// alert returns a with its strings escaped and whether any changed.
func (e *escaper) alert(a template.Alert) (template.Alert, bool) {
	c := false
	a.Status, a.GeneratorURL, a.Fingerprint = e.str(a.Status, &c), e.url(a.GeneratorURL, &c), e.str(a.Fingerprint, &c)
	a.Labels, a.Annotations = e.kv(a.Labels, &c), e.annotations(a.Annotations, &c)
	return a, c
}

// sameAlert reports whether a and b hold the same strings and the same
// label and annotation maps (not copies: the same maps).
func sameAlert(a, b *template.Alert) bool {
	return a.Status == b.Status && a.GeneratorURL == b.GeneratorURL && a.Fingerprint == b.Fingerprint &&
		sameKV(a.Labels, b.Labels) && sameKV(a.Annotations, b.Annotations)
}

// each walks a slice of structs: f escapes one element in place and says
// whether it changed; the slice is copied at the first change.
func each[T any](xs []T, changed *bool, f func(x *T) bool) []T {
	var out []T
	for i := range xs {
		x := xs[i]
		if !f(&x) {
			if out != nil {
				out[i] = x
			}
			continue
		}
		if out == nil {
			out = make([]T, len(xs))
			copy(out, xs[:i])
		}
		out[i] = x
	}
	if out == nil {
		return xs
	}
	*changed = true
	return out
}

// result returns r with its strings escaped — its alert's (alertDone:
// already escaped, as escAlert, or known unchanged when escAlert is nil),
// and those of its classification and decision, which quote label values
// (reasons, signals, an SLO identity …; the tier usually holds a ">") —
// and whether any changed. r itself is returned when none did.
func (e *escaper) result(r *alert.Result, alertDone bool, escAlert *template.Alert) (*alert.Result, bool) {
	out := *r
	changed := false
	switch {
	case r.Alert == nil:
	case alertDone:
		if escAlert != nil {
			a := *r.Alert
			a.Alert = *escAlert
			out.Alert, changed = &a, true
		}
	default:
		if ea, c := e.alert(r.Alert.Alert); c {
			a := *r.Alert
			a.Alert = ea
			out.Alert, changed = &a, true
		}
	}
	out.Incident, out.NotifiedIn, out.SuppressedBy, out.MutedBy = e.str(r.Incident, &changed), e.str(r.NotifiedIn, &changed), e.str(r.SuppressedBy, &changed), e.str(r.MutedBy, &changed)
	out.Receivers = e.strs(r.Receivers, &changed)

	c := &out.Classification
	c.Sector, c.SectorName, c.AlertStyle = e.str(c.Sector, &changed), e.str(c.SectorName, &changed), e.str(c.AlertStyle, &changed)
	c.Sensitivity, c.IncidentClass = e.str(c.Sensitivity, &changed), e.str(c.IncidentClass, &changed)
	c.Candidates = e.strs(c.Candidates, &changed)
	c.KPIs = each(c.KPIs, &changed, func(k *alert.KPI) bool {
		ch := false
		k.ID, k.Name = e.str(k.ID, &ch), e.str(k.Name, &ch)
		return ch
	})
	c.Signals = each(c.Signals, &changed, func(s *alert.Signal) bool {
		ch := false
		s.Kind, s.Value, s.Sector, s.KPI = e.str(s.Kind, &ch), e.str(s.Value, &ch), e.str(s.Sector, &ch), e.str(s.KPI, &ch)
		return ch
	})
	c.Hints = each(c.Hints, &changed, func(h *alert.Hint) bool {
		ch := false
		h.ID, h.Text = e.str(h.ID, &ch), e.str(h.Text, &ch)
		return ch
	})

	d := &out.Decision
	d.Policy, d.Tier, d.SLO, d.Budget = e.str(d.Policy, &changed), e.str(d.Tier, &changed), e.str(d.SLO, &changed), e.str(d.Budget, &changed)
	d.Reasons = e.strs(d.Reasons, &changed)

	out.Deliveries = each(r.Deliveries, &changed, func(dl *alert.Delivery) bool {
		ch := false
		dl.Receiver, dl.Integration, dl.Outcome, dl.Error = e.str(dl.Receiver, &ch), e.str(dl.Integration, &ch), e.str(dl.Outcome, &ch), e.str(dl.Error, &ch)
		return ch
	})
	if r.Live != nil {
		l := *r.Live
		ch := false
		l.Summary, l.Note, l.Unavailable = e.str(l.Summary, &ch), e.str(l.Note, &ch), e.str(l.Unavailable, &ch)
		l.Details = e.kv(l.Details, &ch)
		if ch {
			out.Live, changed = &l, true
		}
	}
	if r.Flap != nil {
		f := *r.Flap
		ch := false
		if f.Reason = e.str(f.Reason, &ch); ch {
			out.Flap, changed = &f, true
		}
	}
	if !changed {
		return r, false
	}
	p := new(alert.Result)
	*p = out
	return p, true
}

// escapedData returns the data an operator's title and text render over:
// d with the strings from the alerts and the webhook escaped for Slack's
// mrkdwn. It returns d itself when no string needs it; otherwise only the
// parts that changed are copied.
func escapedData(d *notify.Data) *notify.Data {
	return (&escaper{html: true}).data(d)
}

// mentionSafe returns no and its data d as the built-in texts draw them
// when link_names is on: every string from the alerts and the webhook with
// a wordJoiner after each "@" (and not escaped otherwise: the built-in
// texts are escaped whole as they are drawn). It returns no and d
// themselves when no string has an "@"; only what changed is copied, and
// the notification's own fields (Ref, Receiver …) are kept.
func mentionSafe(no *alert.Notification, d *notify.Data) (*alert.Notification, *notify.Data) {
	q := (&escaper{mentions: true}).data(d)
	if q == d {
		return no, d
	}
	out := *no
	out.Data, out.Results, out.Incident, out.ConsoleURL = q.Data, q.Results, q.Incident, q.ConsoleURL
	return &out, q
}

// data returns d with its strings escaped (escapedData).
func (e *escaper) data(d *notify.Data) *notify.Data {
	td := d.Data
	ed := *td
	changed := false
	ed.Status, ed.ExternalURL, ed.NotificationReason = e.str(td.Status, &changed), e.url(td.ExternalURL, &changed), e.str(td.NotificationReason, &changed)
	ed.GroupLabels, ed.CommonLabels = e.kv(td.GroupLabels, &changed), e.kv(td.CommonLabels, &changed)
	ed.CommonAnnotations, ed.RouteLabels = e.annotations(td.CommonAnnotations, &changed), e.kv(td.RouteLabels, &changed)
	// escAlerts[i] is .Alerts[i] escaped, nil while unchanged: the results'
	// alerts are usually .Alerts, sharing their maps, and take it from here.
	var escAlerts []*template.Alert
	for i := range td.Alerts {
		a, c := e.alert(td.Alerts[i])
		if !c {
			continue
		}
		if escAlerts == nil {
			escAlerts = make([]*template.Alert, len(td.Alerts))
			ed.Alerts = make(template.Alerts, len(td.Alerts))
			copy(ed.Alerts, td.Alerts)
		}
		ed.Alerts[i] = a
		escAlerts[i] = &ed.Alerts[i]
	}
	changed = changed || escAlerts != nil

	incident, consoleURL := e.str(d.Incident, &changed), e.str(d.ConsoleURL, &changed)
	var results []*alert.Result
	for i, r := range d.Results {
		done, escAlert := false, (*template.Alert)(nil)
		if r.Alert != nil && i < len(td.Alerts) && sameAlert(&r.Alert.Alert, &td.Alerts[i]) {
			done = true
			if escAlerts != nil {
				escAlert = escAlerts[i]
			}
		}
		er, c := e.result(r, done, escAlert)
		if !c {
			if results != nil {
				results[i] = r
			}
			continue
		}
		if results == nil {
			results = make([]*alert.Result, len(d.Results))
			copy(results, d.Results[:i])
		}
		results[i] = er
	}
	if !changed && results == nil {
		return d
	}
	out := *d
	out.Data = new(template.Data)
	*out.Data = ed
	out.Incident, out.ConsoleURL = incident, consoleURL
	if results != nil {
		out.Results = results
	}
	return &out
}
