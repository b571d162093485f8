package slacktest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// responsePath is where the stand-in's response_url answers arrive.
const responsePath = "/response/"

// Response is one message posted to a response_url (an ephemeral answer to
// the user who clicked).
type Response struct {
	// ID is the response_url's id (the click's ActionTS).
	ID              string
	Text            string `json:"text"`
	ResponseType    string `json:"response_type"`
	ReplaceOriginal bool   `json:"replace_original"`
}

// Responses returns the response_url answers, in arrival order.
func (s *Server) Responses() []Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Response(nil), s.answers...)
}

func (s *Server) respond(w http.ResponseWriter, r *http.Request) {
	var resp Response
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&resp); err != nil {
		http.Error(w, "invalid_payload", http.StatusBadRequest)
		return
	}
	resp.ID = strings.TrimPrefix(r.URL.Path, responsePath)
	s.mu.Lock()
	s.answers = append(s.answers, resp)
	s.mu.Unlock()
	_, _ = io.WriteString(w, "ok")
}

// SetUserGroup makes usergroups.users.list answer members for group id.
func (s *Server) SetUserGroup(id string, members ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups == nil {
		s.groups = map[string][]string{}
	}
	s.groups[id] = members
}

func (s *Server) groupMembers(w http.ResponseWriter, v url.Values) {
	s.mu.Lock()
	members, ok := s.groups[v.Get("usergroup")]
	s.mu.Unlock()
	if !ok {
		reply(w, response{Error: "no_such_subteam"})
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "users": members})
}

// Click is one button press as Slack reports it.
type Click struct {
	// User is the clicking user's id (U…); UserName their handle.
	User, UserName string
	// ActionID picks the button in the message's actions blocks.
	ActionID string
	// ActionTS is Slack's action_ts; two clicks have two of them, a retry
	// of one request keeps it.
	ActionTS string
	// Value replaces the button's value when set (a forged or stale one).
	Value string
}

// Interaction builds the body of the block_actions interaction request
// Slack sends when c presses a button of m (as last posted or updated):
// "payload=<JSON>", form-encoded, with the message's blocks, the
// container, the team and a response_url on this server. It fails when m
// has no button with that action_id and c.Value is empty.
func (s *Server) Interaction(m Message, c Click) ([]byte, error) {
	var blocks []struct {
		Type     string            `json:"type"`
		BlockID  string            `json:"block_id"`
		Elements []json.RawMessage `json:"elements"`
	}
	if len(m.Blocks) > 0 {
		if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
			return nil, fmt.Errorf("message blocks: %w", err)
		}
	}
	// A forged click keeps a block_id: slack-go tells block actions from
	// legacy attachment actions by it.
	action := map[string]any{"action_id": c.ActionID, "block_id": "forged", "type": "button", "action_ts": c.ActionTS}
	found := false
	for _, b := range blocks {
		if b.Type != "actions" {
			continue
		}
		for _, raw := range b.Elements {
			var e struct {
				ActionID string          `json:"action_id"`
				Value    string          `json:"value"`
				Text     json.RawMessage `json:"text"`
			}
			if json.Unmarshal(raw, &e) == nil && e.ActionID == c.ActionID {
				action["block_id"], action["value"], action["text"] = b.BlockID, e.Value, e.Text
				found = true
			}
		}
	}
	if c.Value != "" {
		action["value"] = c.Value
		found = true
	}
	if !found {
		return nil, fmt.Errorf("message %s has no button %q", m.TS, c.ActionID)
	}
	payload := map[string]any{
		"type":       "block_actions",
		"user":       map[string]any{"id": c.User, "username": c.UserName, "name": c.UserName, "team_id": "T0001"},
		"api_app_id": "A0001",
		"token":      "verification-token-unused",
		"container":  map[string]any{"type": "message", "message_ts": m.TS, "channel_id": m.Channel, "is_ephemeral": false},
		"trigger_id": "1.2.3",
		"team":       map[string]any{"id": "T0001", "domain": "acme"},
		"channel":    map[string]any{"id": m.Channel, "name": "triage"},
		"message": map[string]any{
			"type": "message", "text": m.Text, "ts": m.TS, "user": "U0001", "bot_id": "B0001",
			"blocks": json.RawMessage(orEmpty(m.Blocks)),
		},
		"response_url": s.URL + responsePath + c.ActionTS,
		"actions":      []any{action},
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	return []byte("payload=" + url.QueryEscape(string(b))), nil
}

func orEmpty(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("[]")
	}
	return b
}

// Sign returns the headers Slack signs a request body with at ts: the v0
// HMAC-SHA256 of "v0:<unix ts>:<body>" keyed with the signing secret.
func Sign(secret string, ts time.Time, body []byte) http.Header {
	stamp := strconv.FormatInt(ts.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	_, _ = io.WriteString(mac, "v0:"+stamp+":")
	_, _ = mac.Write(body)
	h := http.Header{}
	h.Set("X-Slack-Request-Timestamp", stamp)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	return h
}

// NewRequest builds the POST of body to target with headers h (from Sign),
// as Slack sends interaction requests.
func NewRequest(target string, h http.Header, body []byte) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	return req, nil
}

// SlashCommand is one invocation of a slash command as Slack reports it.
type SlashCommand struct {
	// Command is the command ("/alertrouter"), Text what follows it.
	Command, Text string
	// User is the invoking user's id, UserName their handle.
	User, UserName string
	// Channel is the channel id it was invoked in.
	Channel string
	// TriggerID identifies the invocation (and names its response_url).
	TriggerID string
}

// Command builds the form body of the slash command request Slack sends
// for c, with a response_url on this server named after c.TriggerID.
func (s *Server) Command(c SlashCommand) []byte {
	v := url.Values{}
	v.Set("token", "verification-token-unused")
	v.Set("team_id", "T0001")
	v.Set("team_domain", "acme")
	v.Set("channel_id", c.Channel)
	v.Set("channel_name", "triage")
	v.Set("user_id", c.User)
	v.Set("user_name", c.UserName)
	v.Set("command", c.Command)
	v.Set("text", c.Text)
	v.Set("api_app_id", "A0001")
	v.Set("response_url", s.URL+responsePath+c.TriggerID)
	v.Set("trigger_id", c.TriggerID)
	return []byte(v.Encode())
}
