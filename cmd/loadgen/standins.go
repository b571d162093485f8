package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
)

// statsPath answers the stand-ins' counters on both listeners.
const statsPath = "/-/standins/stats"

// standinStats are the counters of the two stand-ins.
type standinStats struct {
	PagerDuty struct {
		Requests   int            `json:"requests"`
		Rejections int            `json:"rejections"`
		Triggers   map[string]int `json:"triggers"` // per dedup_key
		Resolves   map[string]int `json:"resolves"`
	} `json:"pagerduty"`
	Slack struct {
		Calls    map[string]int `json:"calls"` // per Web API method
		Messages int            `json:"messages"`
		Parents  int            `json:"parents"`
	} `json:"slack"`
	// Sink counts what a -sink process received (peer benchmarks).
	Sink struct {
		Requests int `json:"requests"`
	} `json:"sink"`
}

// slackMethods are the Web API methods whose calls are counted.
var slackMethods = []string{"auth.test", "chat.postMessage", "chat.update", "conversations.list", "conversations.info"}

func collect(pd *pdtest.Server, sl *slacktest.Server) *standinStats {
	st := &standinStats{}
	st.PagerDuty.Requests = pd.Requests()
	st.PagerDuty.Rejections = len(pd.Rejections())
	st.PagerDuty.Triggers = map[string]int{}
	st.PagerDuty.Resolves = map[string]int{}
	for _, e := range pd.Events() {
		switch e.EventAction {
		case "trigger":
			st.PagerDuty.Triggers[e.DedupKey]++
		case "resolve":
			st.PagerDuty.Resolves[e.DedupKey]++
		}
	}
	st.Slack.Calls = map[string]int{}
	for _, m := range slackMethods {
		if n := sl.Calls(m); n > 0 {
			st.Slack.Calls[m] = n
		}
	}
	st.Slack.Messages = len(sl.Messages())
	st.Slack.Parents = len(sl.Parents())
	return st
}

// serveStandins runs the PagerDuty and Slack stand-ins on fixed loopback
// addresses until SIGINT/SIGTERM or the lifetime, then prints their
// counters as JSON on stdout. The stand-ins' own httptest listeners (on
// random ports) stay idle: their handlers are served on ours.
func serveStandins(o options) error {
	for _, a := range []string{o.pdListen, o.slackListen} {
		if err := loopbackHost(a); err != nil {
			return err
		}
	}
	if o.lifetime <= 0 || o.lifetime > time.Hour {
		return fmt.Errorf("-lifetime %v is outside (0, 1h]", o.lifetime)
	}
	pd := pdtest.NewServer()
	defer pd.Close()
	sl := slacktest.NewServer(o.slackToken, o.slackChan)
	defer sl.Close()

	withStats := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == statsPath {
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(collect(pd, sl))
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	errc := make(chan error, 2)
	var servers []*http.Server
	for _, s := range []struct {
		addr string
		h    http.Handler
	}{{o.pdListen, pd.Config.Handler}, {o.slackListen, sl.Config.Handler}} {
		ln, err := net.Listen("tcp", s.addr)
		if err != nil {
			return fmt.Errorf("listen for stand-in: %w", err)
		}
		srv := &http.Server{Handler: withStats(s.h), ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, srv)
		go func() { errc <- srv.Serve(ln) }()
	}
	fmt.Fprintf(os.Stderr, "stand-ins: PagerDuty http://%s/v2/enqueue, Slack http://%s/api/ (token %q, channel #%s)\n",
		o.pdListen, o.slackListen, o.slackToken, o.slackChan)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	var err error
	select {
	case <-sig:
	case <-time.After(o.lifetime):
	case err = <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
	}
	for _, srv := range servers {
		_ = srv.Close()
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(collect(pd, sl))
	return err
}

// fetchStats reads the counters of a running -standins process.
func fetchStats(c *http.Client, base string) (*standinStats, error) {
	if err := checkLoopback(base); err != nil {
		return nil, err
	}
	res, err := c.Get(base + statsPath)
	if err != nil {
		return nil, fmt.Errorf("read stand-in counters: %w", err)
	}
	defer res.Body.Close()
	var st standinStats
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		return nil, fmt.Errorf("decode stand-in counters: %w", err)
	}
	return &st, nil
}

// serveSink runs a loopback HTTP sink on -sink-listen until SIGINT/SIGTERM
// or the lifetime: it answers every request with a small JSON object that
// each API takes for success — 202 for PagerDuty's /v2/enqueue, 200 with
// Slack's and the chat webhooks' (Google Chat, Teams) fields for any other
// path — and counts them, checking nothing; statsPath answers the count.
// The peers of scripts/bench-peers.sh deliver to it, and so does the
// router in its "router-sink" target (like for like with the peers).
func serveSink(o options) error {
	if err := loopbackHost(o.sinkListen); err != nil {
		return err
	}
	if o.lifetime <= 0 || o.lifetime > time.Hour {
		return fmt.Errorf("-lifetime %v is outside (0, 1h]", o.lifetime)
	}
	var n atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == statsPath {
			st := &standinStats{}
			st.Sink.Requests = int(n.Load())
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(st)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/v2/enqueue") {
			// PagerDuty Events API v2 answers 202.
			w.WriteHeader(http.StatusAccepted)
			_, _ = io.WriteString(w, `{"status":"success","message":"Event processed","dedup_key":"sink"}`)
			return
		}
		// One object every chat API accepts as success: Google Chat's and
		// Teams' webhooks (name, thread) and Slack's Web API (ok, channel, ts).
		_, _ = io.WriteString(w, `{"ok":true,"channel":"CSINK","ts":"1700000000.000100","name":"spaces/sink/messages/1","thread":{"name":"spaces/sink/threads/1"}}`)
	})
	ln, err := net.Listen("tcp", o.sinkListen)
	if err != nil {
		return fmt.Errorf("listen for sink: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "sink: http://%s/ (any path)\n", o.sinkListen)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-sig:
	case <-time.After(o.lifetime):
	case err = <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
	}
	_ = srv.Close()
	fmt.Printf("{\"sink\":{\"requests\":%d}}\n", n.Load())
	return err
}

// delivered is what the stand-ins (or the sink) received during one run.
type delivered struct {
	PDEvents     int `json:"pagerduty_events"`
	PDTriggers   int `json:"pagerduty_triggers"`
	SlackPosts   int `json:"slack_post_message"`
	SlackUpdates int `json:"slack_update"`
	Sink         int `json:"sink_requests"`
}

func deliveredBetween(before, after *standinStats) *delivered {
	d := &delivered{
		PDEvents:     after.PagerDuty.Requests - before.PagerDuty.Requests,
		SlackPosts:   after.Slack.Calls["chat.postMessage"] - before.Slack.Calls["chat.postMessage"],
		SlackUpdates: after.Slack.Calls["chat.update"] - before.Slack.Calls["chat.update"],
		Sink:         after.Sink.Requests - before.Sink.Requests,
	}
	for key, n := range after.PagerDuty.Triggers {
		d.PDTriggers += n - before.PagerDuty.Triggers[key]
	}
	return d
}
