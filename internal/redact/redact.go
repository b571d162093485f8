// Package redact keeps secrets out of what the router prints: URLs with
// credentials, and known secret values inside error messages.
package redact

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Placeholder replaces every hidden value.
const Placeholder = "<secret>"

// URL returns raw with its password (a user without one: the user), its query and the path of an incoming
// webhook (Slack's …/services/…, a Slack-compatible one's …/hooks/…)
// hidden, the way Alertmanager's notify.RedactURL treats a URL in an
// error. A string that does not parse as a URL with a scheme and a host (a
// URL without its scheme, one with a control character) is hidden the
// same way by text: what precedes its last '@' (it could be a
// user:password@host address), what follows /services/ or /hooks/, and
// what follows '?'.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User == nil && cutUserinfo(raw) {
		return unparsed(raw)
	}
	if u.User == nil && u.Port() != "" && strings.Contains(raw, "@") {
		// An "@" in a query or a webhook's path (cutUserinfo leaves
		// those) may end a password that starts with digits and holds a
		// "?" ("user:839201?Kx7@proxy", read as port 839201): the port
		// is hidden with the query and the path (a review).
		if h := u.Hostname(); strings.Contains(h, ":") {
			u.Host = "[" + h + "]:xxxxx"
		} else {
			u.Host = h + ":xxxxx"
		}
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		} else if u.User.Username() != "" {
			// A user without a password, or with an empty one, is the
			// credential itself: an API token written as
			// https://TOKEN@host or https://TOKEN:@host (curl -u KEY:).
			u.User = url.User("xxxxx")
		}
	}
	if u.RawQuery != "" {
		u.RawQuery = "xxxxx"
	}
	// An incoming webhook's path is its credential.
	if i := WebhookSecretStart(u.Path); i >= 0 {
		u.Path, u.RawPath = u.Path[:i]+"xxxxx", ""
	}
	return u.String()
}

// HTTPURL parses raw as an absolute http or https URL (a scheme and a
// host). Its error prints raw through URL (url.Parse's own error would
// print it whole, credentials and all) and, when the host looks like an
// IPv6 address written without brackets ("http://::1:9093", which
// url.Parse refuses for its "port"), says where the brackets go.
func HTTPURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return u, nil
	}
	return nil, fmt.Errorf("%q is not an absolute http(s) URL%s", URL(raw), IPv6Hint(raw))
}

// IPv6Hint is "; an IPv6 address goes in brackets: …" when the host of raw
// (a URL) reads as an IPv6 address written without them, with or without
// a port: two colons or more outside brackets between groups of at most
// four hex digits (the last two may be an IPv4 address or a zone); ""
// otherwise — a host:port:port typo gets no hint.
func IPv6Hint(raw string) string {
	host := raw
	if _, rest, ok := strings.Cut(host, "://"); ok {
		host = rest
	}
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:]
	}
	if strings.Count(host, ":") < 2 || strings.ContainsAny(host, "[]") {
		return ""
	}
	groups := strings.Split(host, ":")
	for i, g := range groups {
		if i >= len(groups)-2 {
			// the last group, or the one before a port: may be an IPv4
			// address or carry a zone (fe80::1%eth0)
			g, _, _ = strings.Cut(g, "%")
			if strings.Count(g, ".") == 3 {
				continue
			}
		}
		if len(g) > 4 || strings.Trim(g, "0123456789abcdefABCDEF") != "" {
			return ""
		}
	}
	return "; an IPv6 address goes in brackets: http://[fd00::1]:9093"
}

// webhookPaths start the path of an incoming webhook, whose rest is the
// webhook's secret: Slack's (/services/T…/B…/…) and Slack-compatible ones
// (Mattermost's /hooks/…).
var webhookPaths = []string{"/services/", "/hooks/"}

// WebhookSecretStart is where the secret of an incoming webhook's path (or
// of a text holding one) starts: after its first /services/ or /hooks/;
// -1 when it has neither.
func WebhookSecretStart(path string) int {
	for _, p := range webhookPaths {
		if i := strings.Index(path, p); i >= 0 {
			return i + len(p)
		}
	}
	return -1
}

// cutUserinfo reports whether raw, which url.Parse read without a user,
// holds a "user:password@" that a "/", "?" or "#" of the password cut
// short: "http://svc:2024/Summer@proxy:3128" parses as host svc, port
// 2024 and a path holding the rest of the password (a review).
// An "@" after a "?" (a query's value, PromQL's @ modifier) or within an
// incoming webhook's path is not one: hiding up to it showed the rest of
// a query's secret or a webhook's token (a review), which URL hides.
func cutUserinfo(raw string) bool {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return false
	}
	at := strings.LastIndexByte(rest, '@')
	if at < 0 || !strings.ContainsRune(rest[:at], ':') || strings.ContainsRune(rest[:at], '?') {
		return false
	}
	return WebhookSecretStart(rest[:at]) < 0
}

// unparsed hides the credentials of a URL that url.Parse refused or that
// has no host, by text.
func unparsed(raw string) string {
	s := raw
	prefix := ""
	if i := strings.LastIndex(s, "@"); i >= 0 {
		prefix, s = Placeholder, s[i:]
	} else if i := strings.Index(s, "://"); i >= 0 {
		// No "@": a URL cut at a "#" or "/" of its password
		// ("http://user:pass" of "http://user:pass#word@host") has what
		// reads as a port that is no number — hidden.
		auth := s[i+3:]
		if j := strings.IndexAny(auth, "/?#"); j >= 0 {
			auth = auth[:j]
		}
		if k := strings.LastIndexByte(auth, ':'); k >= 0 && strings.Trim(auth[k+1:], "0123456789") != "" {
			s = s[:i+3+k+1] + "xxxxx" + s[i+3+len(auth):]
		}
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s = s[:i+1] + "xxxxx"
	}
	if i := WebhookSecretStart(s); i >= 0 {
		s = s[:i] + "xxxxx"
	}
	return prefix + s
}

var (
	// quotedURL is a Go-quoted string (%q) that holds a URL: how net/url's
	// parse errors and most of ours print the URL they refuse.
	quotedURL = regexp.MustCompile(`"[A-Za-z][A-Za-z0-9+.-]*://(?:[^"\\]|\\.)*"`)
	// userinfo is the user:password@ of a URL written bare in text.
	// The password runs to the last "@" before a space, a quote or a "?":
	// it may hold "/" or "#". An "@" after a "?" is a query's (an e-mail
	// address, PromQL's @): swallowed, it left the query's secret shown
	// (a review); a password holding "?" is left to bareURL.
	userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@"'\x60:]*:)[^\s"'\x60?]+@`)
	// bareURL is a URL written bare in text, up to a space, a quote or
	// Slack's link syntax (<url|text>).
	bareURL = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'\x60<>|]+`)
	// badPort is net/url's error about a port that is not a number: a
	// password holding "/", "?" or "#" ends the authority early, and what
	// net/url then reads as the port is the password's start.
	badPort = regexp.MustCompile(`invalid port "(?:[^"\\]|\\.)*" after host`)
)

// Text hides the credentials of every URL written in text, wherever it comes
// from (a library's error about a URL it refused: prometheus/common's
// proxy_url, net/url's parse errors): each quoted URL is replaced by its
// URL redaction; of a bare URL, the password of its user:password@ (a user
// without a password: the user), its query and an incoming webhook's path
// are replaced by xxxxx.
// Text without "://" is returned unchanged.
func Text(text string) string {
	text = badPort.ReplaceAllString(text, `invalid port ":xxxxx" after host`)
	if !strings.Contains(text, "://") {
		return text
	}
	text = quotedURL.ReplaceAllStringFunc(text, func(q string) string {
		raw, err := strconv.Unquote(q)
		if err != nil {
			return q // left to the bare-URL pass below
		}
		return strconv.Quote(URL(raw))
	})
	text = userinfo.ReplaceAllString(text, "${1}xxxxx@")
	// Then each bare URL as URL hides a quoted one: a user without a
	// password (or with an empty one), the query, an incoming webhook's
	// path. Punctuation after it (a sentence's, "url: 404") stays.
	return bareURL.ReplaceAllStringFunc(text, func(raw string) string {
		u := strings.TrimRight(raw, ".,;:)]}")
		red := URL(u)
		if sameUnescaped(red, u) {
			// Nothing hidden: the URL as written (URL's re-encoding
			// turned https://例え.jp/パス into %-escapes, a review).
			return raw
		}
		return red + raw[len(u):]
	})
}

// sameUnescaped reports whether a and b read alike once %-escapes are
// undone: URL changed only how b is encoded, not what it shows.
func sameUnescaped(a, b string) bool {
	if a == b {
		return true
	}
	ua, err1 := url.PathUnescape(a)
	ub, err2 := url.PathUnescape(b)
	return err1 == nil && err2 == nil && ua == ub
}

// Secrets hides known secret values in text.
type Secrets struct {
	values []string
}

// Add records values to hide; empty and very short ones (under 4 bytes,
// which would blank out ordinary words) are ignored.
func (s *Secrets) Add(values ...string) {
	for _, v := range values {
		if len(v) >= 4 {
			s.values = append(s.values, v)
		}
	}
	// Longest first, so a secret containing another is hidden whole.
	sort.Slice(s.values, func(i, j int) bool { return len(s.values[i]) > len(s.values[j]) })
}

// Empty reports whether no value is recorded.
func (s *Secrets) Empty() bool { return s == nil || len(s.values) == 0 }

// String hides every recorded value in text, and every back-quoted
// fragment (the way YAML decoders quote a value in a type error, cut to its
// first characters) that is part of a recorded value.
func (s *Secrets) String(text string) string {
	if s.Empty() {
		return text
	}
	for _, v := range s.values {
		text = strings.ReplaceAll(text, v, Placeholder)
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(text, '`')
		if i < 0 {
			break
		}
		j := strings.IndexByte(text[i+1:], '`')
		if j < 0 {
			break
		}
		frag := text[i+1 : i+1+j]
		b.WriteString(text[:i+1])
		if s.partOf(strings.TrimSuffix(frag, "...")) {
			b.WriteString(Placeholder)
		} else {
			b.WriteString(frag)
		}
		b.WriteByte('`')
		text = text[i+2+j:]
	}
	b.WriteString(text)
	return b.String()
}

func (s *Secrets) partOf(frag string) bool {
	frag = strings.TrimSpace(frag)
	if len(frag) < 3 {
		return false
	}
	for _, v := range s.values {
		if strings.Contains(v, frag) {
			return true
		}
	}
	return false
}

// Error returns err with every recorded value hidden from its message; nil
// stays nil. The result keeps no reference to err's text, so no caller can
// unwrap its way back to a secret.
func (s *Secrets) Error(err error) error {
	if err == nil || s.Empty() {
		return err
	}
	return errors.New(s.String(err.Error()))
}

// Values returns text with each of values hidden (Placeholder), the
// longest first, those under 4 bytes left alone as Secrets.Add leaves them:
// for what a server answered, quoted in an error — a proxy's or a
// firewall's error page may echo the request, and with it the routing key
// or the webhook's path that the request carried. Only whole values are
// hidden (not Secrets.String's back-quoted fragments: a proxy's
// "`127.0.0.1` denied" is no part of a secret).
func Values(text string, values ...string) string {
	var s Secrets
	s.Add(values...)
	for _, v := range s.values {
		text = strings.ReplaceAll(text, v, Placeholder)
	}
	return text
}
