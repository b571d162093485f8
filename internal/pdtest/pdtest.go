// Package pdtest is a local stand-in for the PagerDuty Events API v2: an
// httptest server that enforces the real API's limits and error shapes,
// records the events it accepts, and fails on demand. Importable by any test
// of the module, end-to-end tests included.
package pdtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// RoutingKey is a routing key the stand-in accepts (any 32 characters do).
const RoutingKey = "0123456789abcdef0123456789abcdef"

// The limits of the real Events API v2.
const (
	MaxSummary  = 1024
	MaxDedupKey = 255
	MaxBody     = 512000 // "512 KB", in bytes as Alertmanager and Grafana read it
)

// Link is one link of an event.
type Link struct {
	Href string `json:"href"`
	Text string `json:"text,omitempty"`
}

// Payload is the payload of a trigger event.
type Payload struct {
	Summary       string          `json:"summary"`
	Source        string          `json:"source"`
	Severity      string          `json:"severity"`
	Timestamp     string          `json:"timestamp,omitempty"`
	Component     string          `json:"component,omitempty"`
	Group         string          `json:"group,omitempty"`
	Class         string          `json:"class,omitempty"`
	CustomDetails json.RawMessage `json:"custom_details,omitempty"`
}

// Event is one event the stand-in accepted.
type Event struct {
	RoutingKey  string   `json:"routing_key"`
	EventAction string   `json:"event_action"`
	DedupKey    string   `json:"dedup_key,omitempty"`
	Client      string   `json:"client,omitempty"`
	ClientURL   string   `json:"client_url,omitempty"`
	Links       []Link   `json:"links,omitempty"`
	Payload     *Payload `json:"payload,omitempty"`
	// Raw is the request body as received.
	Raw []byte `json:"-"`
}

// Fault is one programmed response that replaces the next request's normal
// handling.
type Fault struct {
	// Status is the HTTP status to answer (e.g. 500, 429, 400).
	Status int
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string
	// Hang makes the server answer nothing until the client gives up.
	Hang bool
	// Delay holds the request this long, then handles it as usual (a slow
	// PagerDuty); with no other field set the event is accepted.
	Delay time.Duration
	// Unreadable accepts the event as usual (recorded) but answers 202
	// with a body that is not PagerDuty's JSON: the answer lost on the
	// way, after the event was taken.
	Unreadable bool
}

// Server is the stand-in. Its URL field is the base URL; events go to
// URL + "/v2/enqueue". Safe for concurrent use.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	faults   []Fault
	events   []Event
	requests int
	rejected []string
	seq      int
	closed   chan struct{}
	once     sync.Once
}

// Close releases hanging requests and shuts the server down.
func (s *Server) Close() {
	s.once.Do(func() { close(s.closed) })
	s.Server.Close()
}

// NewServer starts a stand-in; it is closed when the test ends through
// Close.
func NewServer() *Server {
	s := &Server{closed: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// EnqueueURL is the full Events API URL of the stand-in.
func (s *Server) EnqueueURL() string { return s.URL + "/v2/enqueue" }

// Fail programs the next responses, in order.
func (s *Server) Fail(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, faults...)
}

// FailN programs the next n responses with the same fault.
func (s *Server) FailN(n int, f Fault) {
	for range n {
		s.Fail(f)
	}
}

// Events returns the accepted events in arrival order.
func (s *Server) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

// Requests returns how many requests arrived, faulted and rejected ones
// included.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Rejections returns the error texts of the events answered 400.
func (s *Server) Rejections() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.rejected...)
}

// Count returns how many accepted events of action ("trigger", "resolve",
// "acknowledge") carried dedupKey.
func (s *Server) Count(action, dedupKey string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.events {
		if e.EventAction == action && e.DedupKey == dedupKey {
			n++
		}
	}
	return n
}

// Triggers returns the accepted triggers of dedupKey.
func (s *Server) Triggers(dedupKey string) int { return s.Count("trigger", dedupKey) }

// Resolves returns the accepted resolves of dedupKey.
func (s *Server) Resolves(dedupKey string) int { return s.Count("resolve", dedupKey) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

type errorBody struct {
	Status  string   `json:"status"`
	Message string   `json:"message"`
	Errors  []string `json:"errors,omitempty"`
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	var fault *Fault
	if len(s.faults) > 0 {
		f := s.faults[0]
		s.faults = s.faults[1:]
		fault = &f
	}
	s.mu.Unlock()

	if fault != nil && fault.Delay > 0 {
		select {
		case <-time.After(fault.Delay):
		case <-s.closed:
		}
		if *fault == (Fault{Delay: fault.Delay}) {
			fault = nil
		}
	}
	unreadable := fault != nil && fault.Unreadable
	if unreadable {
		fault = nil
	}
	if fault != nil {
		if fault.Hang {
			// The server notices a client hanging up only once the body is read.
			_, _ = io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-s.closed:
			}
			return
		}
		if fault.RetryAfter != "" {
			w.Header().Set("Retry-After", fault.RetryAfter)
		}
		switch fault.Status {
		case http.StatusTooManyRequests:
			writeJSON(w, fault.Status, errorBody{Status: "throttle event", Message: "Requests for this service are arriving too quickly.  Please retry later."})
		case http.StatusBadRequest:
			writeJSON(w, fault.Status, errorBody{Status: "invalid event", Message: "Event object is invalid", Errors: []string{"programmed fault"}})
		default:
			http.Error(w, http.StatusText(fault.Status), fault.Status)
		}
		return
	}

	if r.Method != http.MethodPost || r.URL.Path != "/v2/enqueue" {
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		http.Error(w, "read body", http.StatusBadRequest)
		return
	}
	if len(body) > MaxBody {
		s.reject(w, "Event object exceeds the maximum size of 512 KB")
		return
	}
	var e Event
	if err := json.Unmarshal(body, &e); err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody{Status: "invalid event", Message: "Event object is invalid", Errors: []string{"Malformed JSON: " + err.Error()}})
		return
	}
	e.Raw = body
	if errs := validate(&e); len(errs) > 0 {
		s.reject(w, errs...)
		return
	}
	s.mu.Lock()
	if e.DedupKey == "" {
		s.seq++
		e.DedupKey = fmt.Sprintf("generated-%d", s.seq)
	}
	s.events = append(s.events, e)
	s.mu.Unlock()
	if unreadable {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, "accepted")
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "success", "message": "Event processed", "dedup_key": e.DedupKey})
}

func (s *Server) reject(w http.ResponseWriter, errs ...string) {
	s.mu.Lock()
	s.rejected = append(s.rejected, strings.Join(errs, "; "))
	s.mu.Unlock()
	writeJSON(w, http.StatusBadRequest, errorBody{Status: "invalid event", Message: "Event object is invalid", Errors: errs})
}

func validate(e *Event) []string {
	var errs []string
	if len(e.RoutingKey) != 32 {
		errs = append(errs, "Length of 'routing_key' is incorrect (should be 32 characters)")
	}
	switch e.EventAction {
	case "trigger":
		if e.Payload == nil {
			errs = append(errs, "'payload' is missing or blank")
			break
		}
		p := e.Payload
		if p.Summary == "" {
			errs = append(errs, "'payload.summary' is missing or blank")
		}
		if utf8.RuneCountInString(p.Summary) > MaxSummary {
			errs = append(errs, "'payload.summary' is longer than 1024 characters")
		}
		if p.Source == "" {
			errs = append(errs, "'payload.source' is missing or blank")
		}
		switch p.Severity {
		case "critical", "error", "warning", "info":
		default:
			errs = append(errs, "'payload.severity' is invalid (must be one of the following: 'critical', 'warning', 'error' or 'info')")
		}
	case "acknowledge", "resolve":
		if e.DedupKey == "" {
			errs = append(errs, "'dedup_key' is missing or blank")
		}
	default:
		errs = append(errs, "'event_action' is invalid (must be one of the following: 'trigger', 'acknowledge' or 'resolve')")
	}
	if utf8.RuneCountInString(e.DedupKey) > MaxDedupKey {
		errs = append(errs, "'dedup_key' is longer than 255 characters")
	}
	return errs
}
