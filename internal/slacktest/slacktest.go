// Package slacktest is a local stand-in for the Slack Web API methods
// alertrouter uses (chat.postMessage, chat.update, auth.test,
// usergroups.users.list) and of Slack's side of interactivity (signed
// interaction requests, response_url answers): an httptest
// server that enforces Slack's auth, channel, thread and Block Kit limits
// with Slack's error codes, records messages and threads, and fails on
// demand. Importable by any test of the module.
package slacktest

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"unicode/utf8"
)

// The Block Kit limits Slack enforces.
const (
	MaxBlocks      = 50
	MaxHeaderText  = 150
	MaxSectionText = 3000
	// MaxContextElements bounds a context block's elements, each of at
	// most MaxSectionText characters.
	MaxContextElements = 10
	// MaxMessageText is the text of all blocks of one message above which
	// Slack answers msg_blocks_too_long: undocumented, reported at about
	// 13,200 characters.
	MaxMessageText = 13200
	// MaxText bounds chat.postMessage's and chat.update's text argument:
	// "msg_too_long: Message text is too long" (Slack's chat.postMessage
	// reference: text is truncated past 40,000 characters, and refused
	// with msg_too_long when far over; the stand-in refuses past it).
	MaxText = 40000
	// MaxBlockID bounds a block's block_id (Block Kit reference: "Maximum
	// length for this field is 255 characters").
	MaxBlockID = 255
	// MaxActionsElements bounds an actions block's elements (Block Kit
	// reference, actions block: "There is a maximum of 25 elements").
	MaxActionsElements = 25
	// MaxButtonText, MaxButtonValue, MaxActionID and MaxButtonURL are the
	// button element's limits (Block Kit reference, button element: text
	// "Maximum length for the text in this field is 75 characters", value
	// 2000, action_id 255, url 3000).
	MaxButtonText  = 75
	MaxButtonValue = 2000
	MaxActionID    = 255
	MaxButtonURL   = 3000
)

// Message is one message as the stand-in holds it.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string
	Text     string
	// Blocks is the blocks JSON as last posted or updated.
	Blocks json.RawMessage
	// Updates counts chat.update calls on the message.
	Updates int
	// Username, IconEmoji and IconURL are the poster's name and icon the
	// post asked for (chat.postMessage's username, icon_emoji, icon_url).
	Username, IconEmoji, IconURL string
	// LinkNames is true when the post asked Slack to link names
	// (chat.postMessage's link_names: "true" or "1").
	LinkNames bool
}

// Fault is one programmed response replacing the next request's handling.
type Fault struct {
	// Status is the HTTP status (429 for rate limiting, 500 …); 0 with Error
	// set answers 200 with {"ok":false,"error":Error}.
	Status int
	// RetryAfter is sent as the Retry-After header.
	RetryAfter string
	// Error is the Slack error code of an ok:false answer.
	Error string
	// Hang makes the server answer nothing until the client gives up.
	Hang bool
	// Method, when set, makes the fault answer the next call of that Web
	// API method ("chat.update") only; calls of other methods pass it by.
	Method string
	// HTML answers with an HTML page at Status (200 when 0), as a proxy's
	// error page, a captive portal or a wrong api_url does.
	HTML bool
	// Body, when set, is answered as is with 200 (`{}`: no ok, no error).
	Body string
	// Applied makes the call take effect before the fault answers it, as
	// Slack documents of fatal_error and internal_error: "some aspect of
	// the operation [may have] succeeded before the error was raised".
	Applied bool
}

// Server is the stand-in. Point slack-go at it with
// slack.OptionAPIURL(s.APIURL()). Safe for concurrent use.
type Server struct {
	*httptest.Server
	token string

	mu       sync.Mutex
	channels map[string]string // name and id → id
	archived map[string]bool   // ids of archived channels (Archive)
	faults   []Fault
	messages []*Message
	// byTS indexes messages by channel and ts (msgKey): a reply or an
	// update finds its message without scanning every message posted,
	// which under a load run made each post cost the stand-in more the
	// longer it ran.
	byTS    map[msgKey]*Message
	calls   map[string]int
	seq     int
	groups  map[string][]string
	answers []Response
	closed  chan struct{}
	once    sync.Once
}

// Close releases hanging requests and shuts the server down.
func (s *Server) Close() {
	s.once.Do(func() { close(s.closed) })
	s.Server.Close()
}

// NewServer starts a stand-in that accepts token and knows channels (names
// without "#"); channel i gets the id "C%04d" (C0001, …).
func NewServer(token string, channels ...string) *Server {
	s := &Server{token: token, channels: map[string]string{}, archived: map[string]bool{}, byTS: map[msgKey]*Message{}, calls: map[string]int{}, closed: make(chan struct{})}
	for i, c := range channels {
		id := fmt.Sprintf("C%04d", i+1)
		s.channels[c], s.channels["#"+c], s.channels[id] = id, id, id
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// APIURL is the base URL for slack.OptionAPIURL (with the trailing slash).
func (s *Server) APIURL() string { return s.URL + "/api/" }

// ChannelID returns the id of a channel name.
func (s *Server) ChannelID(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.channels[name]
}

// Fail programs the next responses, in order.
func (s *Server) Fail(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, faults...)
}

// Calls returns how many requests named method ("chat.postMessage") arrived,
// faulted and rejected ones included.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Messages returns copies of every message, in posting order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, len(s.messages))
	for i, m := range s.messages {
		out[i] = *m
	}
	return out
}

// Parents returns the messages that are not thread replies.
func (s *Server) Parents() []Message {
	var out []Message
	for _, m := range s.Messages() {
		if m.ThreadTS == "" {
			out = append(out, m)
		}
	}
	return out
}

// Thread returns the replies in the thread of parent ts.
func (s *Server) Thread(ts string) []Message {
	var out []Message
	for _, m := range s.Messages() {
		if m.ThreadTS == ts {
			out = append(out, m)
		}
	}
	return out
}

type response struct {
	OK      bool            `json:"ok"`
	Error   string          `json:"error,omitempty"`
	Channel string          `json:"channel,omitempty"`
	TS      string          `json:"ts,omitempty"`
	Message json.RawMessage `json:"message,omitempty"`
	// auth.test
	URL    string `json:"url,omitempty"`
	Team   string `json:"team,omitempty"`
	User   string `json:"user,omitempty"`
	TeamID string `json:"team_id,omitempty"`
	UserID string `json:"user_id,omitempty"`
}

func reply(w http.ResponseWriter, r response) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(r)
}

// params reads a request's parameters from a form or a JSON body, as
// slack-go sends the former for chat.* and the latter for some methods.
func params(r *http.Request) (url.Values, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
		if err != nil {
			return nil, err
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, err
		}
		v := url.Values{}
		for k, raw := range m {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				v.Set(k, s)
			} else {
				v.Set(k, string(raw))
			}
		}
		return v, nil
	}
	if err := r.ParseForm(); err != nil {
		return nil, err
	}
	return r.PostForm, nil
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, responsePath) {
		s.respond(w, r)
		return
	}
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	s.mu.Lock()
	s.calls[method]++
	var fault *Fault
	for i, f := range s.faults {
		if f.Method != "" && f.Method != method {
			continue // waits for its method; the faults before it apply first
		}
		s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
		fault = &f
		break
	}
	s.mu.Unlock()

	if fault != nil && fault.Applied {
		s.call(httptest.NewRecorder(), r, method)
		reply(w, response{Error: fault.Error})
		return
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
		if fault.Body != "" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, fault.Body)
			return
		}
		if fault.HTML {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(max(fault.Status, http.StatusOK))
			_, _ = io.WriteString(w, "<!DOCTYPE html><html><head><title>Access denied</title></head><body>Blocked by policy</body></html>")
			return
		}
		if fault.Status != 0 && fault.Status != http.StatusOK {
			http.Error(w, http.StatusText(fault.Status), fault.Status)
			return
		}
		reply(w, response{Error: fault.Error})
		return
	}
	s.call(w, r, method)
}

// call answers one Web API call to method.
func (s *Server) call(w http.ResponseWriter, r *http.Request, method string) {
	v, err := params(r)
	if err != nil {
		reply(w, response{Error: "invalid_form_data"})
		return
	}
	token := v.Get("token")
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		token = strings.TrimPrefix(h, "Bearer ")
	}
	if token == "" {
		reply(w, response{Error: "not_authed"})
		return
	}
	if token != s.token {
		reply(w, response{Error: "invalid_auth"})
		return
	}
	switch method {
	case "auth.test":
		reply(w, response{OK: true, URL: s.URL + "/", Team: "test", User: "alertrouter", TeamID: "T0001", UserID: "U0001"})
	case "chat.postMessage":
		s.post(w, v)
	case "chat.update":
		s.update(w, v)
	case "usergroups.users.list":
		s.groupMembers(w, v)
	default:
		reply(w, response{Error: "unknown_method"})
	}
}

// checkBlocks enforces Slack's Block Kit limits on a blocks parameter.
func checkBlocks(raw string) string {
	if raw == "" {
		return ""
	}
	var blocks []struct {
		Type    string `json:"type"`
		BlockID string `json:"block_id"`
		Text    *struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"text"`
		Fields []struct {
			Text string `json:"text"`
		} `json:"fields"`
		Elements []json.RawMessage `json:"elements"`
	}
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		return "invalid_blocks_format"
	}
	if len(blocks) > MaxBlocks {
		return "invalid_blocks"
	}
	total := 0
	ids := map[string]bool{}
	for _, b := range blocks {
		if utf8.RuneCountInString(b.BlockID) > MaxBlockID {
			return "invalid_blocks"
		}
		if b.Type == "actions" && checkActions(b.Elements) != "" {
			return "invalid_blocks"
		}
		if b.BlockID != "" {
			if ids[b.BlockID] {
				return "invalid_blocks" // block_id must be unique in a message
			}
			ids[b.BlockID] = true
		}
		if b.Text != nil {
			total += utf8.RuneCountInString(b.Text.Text)
		}
		for _, f := range b.Fields {
			total += utf8.RuneCountInString(f.Text)
		}
		if b.Type == "context" {
			if len(b.Elements) == 0 || len(b.Elements) > MaxContextElements {
				return "invalid_blocks"
			}
			for _, raw := range b.Elements {
				var e struct {
					Text string `json:"text"`
				}
				if err := json.Unmarshal(raw, &e); err != nil {
					return "invalid_blocks"
				}
				if utf8.RuneCountInString(e.Text) > MaxSectionText {
					return "invalid_blocks"
				}
				total += utf8.RuneCountInString(e.Text)
			}
		}
		switch b.Type {
		case "header":
			if b.Text == nil || b.Text.Type != "plain_text" || b.Text.Text == "" || utf8.RuneCountInString(b.Text.Text) > MaxHeaderText {
				return "invalid_blocks"
			}
		case "section":
			if b.Text == nil && len(b.Fields) == 0 {
				return "invalid_blocks"
			}
			if b.Text != nil && (b.Text.Text == "" || utf8.RuneCountInString(b.Text.Text) > MaxSectionText) {
				return "invalid_blocks"
			}
			for _, f := range b.Fields {
				if utf8.RuneCountInString(f.Text) > 2000 {
					return "invalid_blocks"
				}
			}
		case "context", "divider", "actions", "image", "rich_text", "markdown":
		default:
			return "invalid_blocks"
		}
	}
	if total > MaxMessageText {
		return "msg_blocks_too_long"
	}
	return ""
}

// checkActions enforces the actions block's and the button element's
// limits (MaxActionsElements, MaxButtonText …).
func checkActions(elements []json.RawMessage) string {
	if len(elements) == 0 || len(elements) > MaxActionsElements {
		return "invalid_blocks"
	}
	ids := map[string]bool{}
	for _, raw := range elements {
		var e struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
			URL      string `json:"url"`
			Text     *struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"text"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			return "invalid_blocks"
		}
		if e.Type != "button" {
			continue
		}
		if e.Text == nil || e.Text.Type != "plain_text" || e.Text.Text == "" || utf8.RuneCountInString(e.Text.Text) > MaxButtonText ||
			utf8.RuneCountInString(e.Value) > MaxButtonValue || utf8.RuneCountInString(e.ActionID) > MaxActionID ||
			utf8.RuneCountInString(e.URL) > MaxButtonURL {
			return "invalid_blocks"
		}
		if e.ActionID != "" {
			if ids[e.ActionID] {
				return "invalid_blocks" // action_id must be unique in a block
			}
			ids[e.ActionID] = true
		}
	}
	return ""
}

// ButtonValue is the value of m's button whose action_id is actionID, and
// whether m has one.
func (m Message) ButtonValue(actionID string) (string, bool) {
	var blocks []struct {
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"elements"`
	}
	if json.Unmarshal(m.Blocks, &blocks) != nil {
		return "", false
	}
	for _, b := range blocks {
		for _, el := range b.Elements {
			if el.ActionID == actionID {
				return el.Value, true
			}
		}
	}
	return "", false
}

// Archive archives a channel (name or id) as a person archiving it in
// Slack does: posts, replies and updates in it answer is_archived.
func (s *Server) Archive(channel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.archived[s.channels[channel]] = true
}

// Delete removes a message as a person deleting it in Slack does: a reply
// in its thread then answers thread_not_found, an update
// message_not_found.
func (s *Server) Delete(channel, ts string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.byTS[msgKey{channel, ts}]
	if m == nil {
		return
	}
	delete(s.byTS, msgKey{channel, ts})
	for i, x := range s.messages {
		if x == m {
			s.messages = append(s.messages[:i], s.messages[i+1:]...)
			break
		}
	}
}

func (s *Server) post(w http.ResponseWriter, v url.Values) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.channels[v.Get("channel")]
	if !ok {
		reply(w, response{Error: "channel_not_found"})
		return
	}
	if s.archived[ch] {
		reply(w, response{Error: "is_archived"})
		return
	}
	if v.Get("text") == "" && v.Get("blocks") == "" {
		reply(w, response{Error: "no_text"})
		return
	}
	if utf8.RuneCountInString(v.Get("text")) > MaxText {
		reply(w, response{Error: "msg_too_long"})
		return
	}
	if e := checkBlocks(v.Get("blocks")); e != "" {
		reply(w, response{Error: e})
		return
	}
	thread := v.Get("thread_ts")
	if thread != "" && s.find(ch, thread) == nil {
		reply(w, response{Error: "thread_not_found"})
		return
	}
	s.seq++
	m := &Message{Channel: ch, TS: fmt.Sprintf("1700000000.%06d", s.seq), ThreadTS: thread, Text: v.Get("text"), Blocks: json.RawMessage(v.Get("blocks")),
		Username: v.Get("username"), IconEmoji: v.Get("icon_emoji"), IconURL: v.Get("icon_url"),
		LinkNames: v.Get("link_names") == "true" || v.Get("link_names") == "1"}
	s.messages = append(s.messages, m)
	s.byTS[msgKey{ch, m.TS}] = m
	reply(w, response{OK: true, Channel: ch, TS: m.TS, Message: json.RawMessage(`{"type":"message"}`)})
}

func (s *Server) update(w http.ResponseWriter, v url.Values) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.channels[v.Get("channel")]
	if !ok {
		reply(w, response{Error: "channel_not_found"})
		return
	}
	if s.archived[ch] {
		reply(w, response{Error: "is_archived"})
		return
	}
	m := s.find(ch, v.Get("ts"))
	if m == nil {
		reply(w, response{Error: "message_not_found"})
		return
	}
	if utf8.RuneCountInString(v.Get("text")) > MaxText {
		reply(w, response{Error: "msg_too_long"})
		return
	}
	if e := checkBlocks(v.Get("blocks")); e != "" {
		reply(w, response{Error: e})
		return
	}
	m.Text, m.Blocks = v.Get("text"), json.RawMessage(v.Get("blocks"))
	m.Updates++
	reply(w, response{OK: true, Channel: ch, TS: m.TS, Message: json.RawMessage(`{"type":"message"}`)})
}

func (s *Server) find(channel, ts string) *Message {
	return s.byTS[msgKey{channel, ts}]
}

// msgKey identifies a message: its channel's id and its ts.
type msgKey struct{ channel, ts string }
