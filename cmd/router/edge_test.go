package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"testing"
	"time"
)

const firingPayload = `{"version":"4","status":"firing","receiver":"r","alerts":[{"status":"firing","labels":{"alertname":"A","severity":"critical"},"startsAt":"2026-12-01T10:00:00Z"}]}`

// postWebhook posts a real webhook with a generous client timeout and
// returns its status (0 when it got no answer).
func postWebhook(t *testing.T, base string, header map[string]string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/webhook", strings.NewReader(firingPayload))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		t.Errorf("webhook got no answer: %v", err)
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// A slowloris client (its body at one byte a second) and a flood of 2,000
// idle connections (loopback, bounded) leave a real webhook answered.
func TestSlowClientsAndAConnectionFloodLeaveWebhooksAnswered(t *testing.T) {
	p := writeFile(t, "router.yml", "webhook:\n  timeout: 3s\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	base, _, stop := startServe(t, p)
	defer stop()
	addr := strings.TrimPrefix(base, "http://")

	// Slowloris: headers promise a body that arrives one byte a second.
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fmt.Fprintf(slow, "POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(firingPayload))
	stopSlow := make(chan struct{})
	slowDone := make(chan struct{})
	go func() {
		defer close(slowDone)
		for i := 0; i < len(firingPayload); i++ {
			select {
			case <-stopSlow:
				return
			case <-time.After(time.Second):
			}
			if _, err := slow.Write([]byte{firingPayload[i]}); err != nil {
				return // the server cut it off
			}
		}
	}()
	if code := postWebhook(t, base, nil); code != 200 {
		t.Fatalf("webhook during a slowloris: %d, want 200", code)
	}

	// Flood: 2,000 idle connections.
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < 2000; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("opening flood connection %d: %v", i, err)
		}
		conns = append(conns, c)
	}
	if code := postWebhook(t, base, nil); code != 200 {
		t.Fatalf("webhook during a 2,000-connection flood: %d, want 200", code)
	}
	// The slow body is cut off by the read timeout (webhook.timeout), not
	// held for as long as the client likes.
	_ = slow.SetReadDeadline(time.Now().Add(20 * time.Second))
	line, err := bufio.NewReader(slow).ReadString('\n')
	close(stopSlow)
	<-slowDone
	if err == nil && strings.Contains(line, " 200 ") {
		t.Fatalf("the slowloris request was served: %q", line)
	}
}

func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	p := writeFile(t, "router.yml", "auth:\n  bearer_token: tok3n-value\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	base, _, stop := startServe(t, p)
	defer stop()
	for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
		if code := postWebhook(t, base, map[string]string{"Authorization": scheme + " tok3n-value"}); code != 200 {
			t.Errorf("Authorization: %s …: %d, want 200", scheme, code)
		}
	}
	if code := postWebhook(t, base, map[string]string{"Authorization": "BEARER wrong"}); code != 401 {
		t.Errorf("wrong token: %d, want 401", code)
	}
}

func TestVersionAndTopLevelHelp(t *testing.T) {
	code, out, errs := runMain(t, "--version")
	if code != 0 || !strings.Contains(out+errs, "router, version") {
		t.Errorf("--version: exit %d, %q", code, out+errs)
	}
	code, out, errs = runMain(t, "--help")
	for _, flag := range []string{"--web.listen-address", "web.enable-lifecycle", "--config.file", "check-config", "explain"} {
		if code != 0 || !strings.Contains(out+errs, flag) {
			t.Errorf("--help (exit %d) does not list %s", code, flag)
		}
	}
}

func TestExplainReadsStandardInput(t *testing.T) {
	var out, errb syncBuffer
	m := &Main{Stdin: strings.NewReader(firingPayload), Stdout: &out, Stderr: &errb}
	dir := t.TempDir()
	t.Chdir(dir)
	_ = os.Remove("router.yml")
	if code := m.Run(t.Context(), []string{"explain", "-"}); code != 0 || !strings.Contains(out.String(), `"alertname":"A"`) {
		t.Fatalf("explain -: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// Alertmanager's client keeps an idle connection 5 minutes and reuses it
// for its next webhook; the router closed it after webhook.timeout, and a
// webhook sent on it as it closed failed (EOF, reset: an audit counted
// 3.5 % of attempts). A connection idle longer than the timeout is still
// there for the next webhook.
func TestAKeptAliveConnectionOutlivesTheWebhookTimeout(t *testing.T) {
	p := writeFile(t, "router.yml", "webhook:\n  timeout: 1s\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	base, _, stop := startServe(t, p)
	defer stop()
	client := &http.Client{Transport: &http.Transport{}}
	post := func() (reused bool) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/webhook", strings.NewReader(firingPayload))
		req.Header.Set("Content-Type", "application/json")
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused },
		}))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("webhook: %d", resp.StatusCode)
		}
		return reused
	}
	post()
	time.Sleep(1500 * time.Millisecond) // idle past webhook.timeout
	if !post() {
		t.Fatal("the router closed an idle keep-alive connection after webhook.timeout: Alertmanager reusing it then fails its webhook")
	}
}
