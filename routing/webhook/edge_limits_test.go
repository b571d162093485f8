package webhook_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/routing/webhook"
)

// A webhook URL that cleans to /webhook (`//webhook` from a base URL ending
// in a slash) is served as /webhook. Behind console.auth it was answered
// the console's 401 — Alertmanager does not retry it, the page was lost —
// while without console.auth the console's redirect served it.
func TestAWebhookPathThatCleansToWebhookIsServed(t *testing.T) {
	srv, rt := startGuarded(t, webhook.EdgeOptions{
		MaxBodyBytes: 1 << 20,
		Auth:         webhook.Auth{BearerToken: "am-bearer-token"},
		ConsoleAuth:  webhook.Auth{Username: "ops", Password: "console-pass"},
	})
	hdr := http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer am-bearer-token"}}
	paths := []string{"//webhook", "/./webhook", "/webhook/../webhook", "/a/../webhook", "/web%68ook"}
	for _, p := range paths {
		if code, body, _ := do(t, http.MethodPost, srv.URL+p, hdr, webhookBody); code != http.StatusOK {
			t.Errorf("POST %s with the webhook's bearer token = %d %s; want 200", p, code, body)
		}
	}
	if n := len(rt.p.processed()); n != len(paths) {
		t.Errorf("%d webhooks processed, want %d", n, len(paths))
	}
	// The webhook's own guard still holds there.
	if code, body, _ := do(t, http.MethodPost, srv.URL+"//webhook", http.Header{"Content-Type": {"application/json"}}, webhookBody); code != http.StatusUnauthorized || !strings.Contains(body, `"missing or invalid credentials"`) {
		t.Errorf("POST //webhook without the bearer token = %d %s; want the webhook's 401", code, body)
	}
	// A trailing slash or another case stays refused, naming POST
	// /webhook — not the console's 401 behind console.auth.
	for _, p := range []string{"/webhook/", "/webhook//", "//webhook/", "/WEBHOOK", "//Webhook", "/Webhooks/"} {
		if code, body, _ := do(t, http.MethodPost, srv.URL+p, hdr, webhookBody); code != http.StatusNotFound || !strings.Contains(body, "POST /webhook") {
			t.Errorf("POST %s = %d %s; want the JSON 404 naming POST /webhook", p, code, body)
		}
	}
}

// One webhook of many unreadable alerts logs the first few rejections, then
// one line: 200,000 of them logged 200,000 lines (an audit).
func TestManyRejectedAlertsAreLoggedAsOneLine(t *testing.T) {
	var logs notifytest.SyncBuffer
	s := startEdgeWith(t, webhook.EdgeOptions{MaxBodyBytes: 1 << 20}, slog.New(slog.NewTextHandler(&logs, nil)), 0)
	p := s.p
	body := `{"version":"4","status":"firing","receiver":"r","alerts":[` + strings.Repeat(`{"labels":{}},`, 200) +
		`{"status":"firing","labels":{"alertname":"A"},"startsAt":"2026-12-01T10:00:00Z"}]}`
	resp, err := http.Post(s.url+"/webhook", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(p.processed()) != 1 || len(p.processed()[0].Items) != 1 {
		t.Fatalf("answer %d %s; want 200 with the readable alert processed", resp.StatusCode, b)
	}
	if n := strings.Count(logs.String(), "alert rejected alone"); n != 5 {
		t.Errorf("%d rejections logged one by one, want 5", n)
	}
	if !strings.Contains(logs.String(), "more alerts of this webhook rejected alone") || !strings.Contains(logs.String(), "more=195 rejected=200") {
		t.Errorf("the other rejections are not logged as one line:\n%s", logs.String())
	}
	// Alertmanager's retries and repeats of the group log them once per
	// interval (an audit: each resend logged them again); another
	// group's are logged at once. Every webhook is still processed
	// (the pipeline counts the rejected alerts).
	post := func(body string) {
		t.Helper()
		resp, err := http.Post(s.url+"/webhook", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("answer %d; want 200", resp.StatusCode)
		}
	}
	post(body)
	post(body)
	if n := strings.Count(logs.String(), "alert rejected alone"); n != 5 {
		t.Errorf("the same group resent twice: %d rejections logged in all, want the first webhook's 5", n)
	}
	post(strings.Replace(body, `"receiver":"r"`, `"receiver":"r","groupKey":"{}:{alertname=\"B\"}"`, 1))
	if n := strings.Count(logs.String(), "alert rejected alone"); n != 10 {
		t.Errorf("another group's rejections: %d logged in all, want 10", n)
	}
	if n := len(p.processed()); n != 4 {
		t.Errorf("%d webhooks processed, want all 4", n)
	}
}

// A body's memory is held from before it is read: uploads still arriving
// count against twice webhook.max_concurrent bodies of max_body_bytes (room
// for the pages let in past the cap), and one that does not fit is answered
// 503 before any of it is read (read first, 20 trickled 30 MB bodies held
// 1.5 GB beyond every cap). A body of undeclared length counts as its bytes
// arrive: reserving the limit up front, one trickling chunked upload
// refused every webhook, pages included (a review).
func TestBodiesBeingReadCountAgainstTheCap(t *testing.T) {
	s := startEdgeWith(t, webhook.EdgeOptions{MaxBodyBytes: 1000, MaxConcurrent: 1}, slog.New(slog.DiscardHandler), 0)
	url := s.url + "/webhook"
	post := func() (int, string) {
		t.Helper()
		resp, err := http.Post(url, "application/json", strings.NewReader(webhookBody))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	dial := func(head, part string) net.Conn {
		t.Helper()
		conn, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		fmt.Fprint(conn, "POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"+head+"\r\n"+part)
		return conn
	}
	// Chunked uploads trickling in hold what they sent, not the limit.
	var chunked []net.Conn
	for range 2 {
		chunked = append(chunked, dial("Transfer-Encoding: chunked\r\n", "10\r\n{\"version\":\"4\",\"\r\n"))
	}
	// Two uploads declaring 950 bytes each, half sent, and waiting.
	body := webhookBody + strings.Repeat(" ", 950-len(webhookBody))
	var slow []net.Conn
	for range 2 {
		slow = append(slow, dial(fmt.Sprintf("Content-Length: %d\r\n", len(body)), body[:400]))
	}
	var code int
	var answer string
	for range 200 { // until both are being read
		if code, answer = post(); code != http.StatusOK {
			break
		}
	}
	if code != http.StatusServiceUnavailable || !strings.Contains(answer, "webhook bodies in flight") {
		t.Fatalf("a body beyond twice max_concurrent × max_body_bytes while two are read = %d %s; want 503", code, answer)
	}
	for _, conn := range slow {
		fmt.Fprint(conn, body[400:])
		if resp, text := rawAnswer(t, conn); resp.StatusCode != http.StatusOK {
			t.Fatalf("a slow upload, completed = %d %s; want 200", resp.StatusCode, text)
		}
	}
	// The chunked uploads still trickle: a webhook is let in.
	if code, answer := post(); code != http.StatusOK {
		t.Errorf("a webhook while chunked uploads trickle = %d %s; want 200 (the memory held is what arrived)", code, answer)
	}
	rest := `alerts":[{"status":"firing","labels":{"alertname":"A"}}]}`
	for _, conn := range chunked {
		fmt.Fprintf(conn, "%x\r\n%s\r\n0\r\n\r\n", len(rest), rest)
		if resp, text := rawAnswer(t, conn); resp.StatusCode != http.StatusOK {
			t.Fatalf("a chunked upload, completed = %d %s; want 200", resp.StatusCode, text)
		}
	}
}

// A gzipped body counts decompressed, as it grows in memory (counted as
// sent, 40 slow uploads of 8 KB inflated to 357 MB), and a declared length
// past what readBody reads into a buffer of that size counts as it arrives
// (reserved up front, two uploads declaring 8 MB and sending a byte refused
// every page for webhook.timeout) — both reviews.
func TestGzipAndLargeDeclaredBodiesCountWhatTheyHold(t *testing.T) {
	t.Run("gzip, decompressed", func(t *testing.T) {
		s := startEdgeWith(t, webhook.EdgeOptions{MaxBodyBytes: 4000, MaxConcurrent: 1}, slog.New(slog.DiscardHandler), 0)
		// The whole JSON in a flushed deflate block, then the final block
		// and the trailer: sent up to the flush, all of it inflates.
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write([]byte(webhookBody + strings.Repeat(" ", 3900-len(webhookBody))))
		if err := zw.Flush(); err != nil {
			t.Fatal(err)
		}
		flushed := buf.Len()
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		body := buf.Bytes()
		upload := func() net.Conn {
			conn, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			fmt.Fprintf(conn, "POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n", len(body))
			_, _ = conn.Write(body[:flushed])
			return conn
		}
		held := []net.Conn{upload(), upload()}
		time.Sleep(100 * time.Millisecond) // both inflated
		third := upload()                  // 3 × ~3,900 bytes inflated: past 2 × 1 × 4,000
		if resp, text := rawAnswer(t, third); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(text, "webhook bodies in flight") {
			t.Fatalf("a third slow gzip upload = %d %s; want 503 (the bodies counted inflated)", resp.StatusCode, text)
		}
		for _, conn := range held {
			_, _ = conn.Write(body[flushed:])
			if resp, text := rawAnswer(t, conn); resp.StatusCode != http.StatusOK {
				t.Fatalf("a held gzip upload, completed = %d %s; want 200", resp.StatusCode, text)
			}
		}
	})
	t.Run("a large declared length, barely sent", func(t *testing.T) {
		const limit = 4 << 20 // past readBody's one-buffer size
		s := startEdgeWith(t, webhook.EdgeOptions{MaxBodyBytes: limit, MaxConcurrent: 1}, slog.New(slog.DiscardHandler), 0)
		for range 2 {
			conn, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			fmt.Fprintf(conn, "POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", limit)
		}
		time.Sleep(100 * time.Millisecond) // both being read
		resp, err := http.Post(s.url+"/webhook", "application/json", strings.NewReader(webhookBody))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("a webhook while two uploads declare the limit and send a byte = %d %s; want 200", resp.StatusCode, b)
		}
	})
}

// A group Alertmanager truncates (max_alerts) is truncated on every resend:
// its 900-character warning is logged once per interval for the group, and
// at once for another group.
func TestATruncatedGroupIsLoggedOncePerInterval(t *testing.T) {
	var logs notifytest.SyncBuffer
	s := startEdgeWith(t, webhook.EdgeOptions{MaxBodyBytes: 1 << 20}, slog.New(slog.NewTextHandler(&logs, nil)), 0)
	body := func(group string) string {
		return `{"version":"4","status":"firing","receiver":"r","groupKey":"{}:{alertname=\"` + group + `\"}","truncatedAlerts":7,"alerts":[{"status":"firing","labels":{"alertname":"` + group + `"},"startsAt":"2026-12-01T10:00:00Z"}]}`
	}
	for _, g := range []string{"A", "A", "A", "B"} {
		resp, err := http.Post(s.url+"/webhook", "application/json", strings.NewReader(body(g)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("answer %d; want 200", resp.StatusCode)
		}
	}
	if n := strings.Count(logs.String(), "Alertmanager truncated this webhook"); n != 2 {
		t.Errorf("group A sent three times, then B: %d truncation lines, want 2 (one each):\n%s", n, logs.String())
	}
	if n := len(s.p.processed()); n != 4 {
		t.Errorf("%d webhooks processed, want all 4", n)
	}
}
