package slack

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// What a post that got no full answer may have done, as its trace saw it
// on the wire. Go's transport sends a request again itself when the
// connection proved closed before any of it was written (its
// nothingWrittenError); what it hands back as "server closed idle
// connection" was never written to a live connection: both are retried
// as a connection refused. End of file once the request was written —
// also on a kept-alive connection: a proxy that forwarded the post and
// closed looks the same — and any failure once an answer began to arrive
// may have posted.
func TestMayHavePosted(t *testing.T) {
	urlErr := func(err error) error { return fmt.Errorf("Post %q: %w", "https://slack.com/api/chat.postMessage", err) }
	for _, tc := range []struct {
		name            string
		wrote, answered bool
		err             error
		want            bool
	}{
		{name: "nothing written: a connection refused", err: urlErr(errors.New("connect: connection refused")), want: false},
		{name: "the connection closed while idle, before the request was written", wrote: true, err: urlErr(errors.New("http: server closed idle connection")), want: false},
		{name: "end of file after the request was written", wrote: true, err: urlErr(io.EOF), want: true},
		{name: "unexpected end of file after the request was written", wrote: true, err: urlErr(io.ErrUnexpectedEOF), want: true},
		{name: "an answer cut after its status line", wrote: true, answered: true, err: io.ErrUnexpectedEOF, want: true},
		{name: "an answer cut, the write not seen", answered: true, err: io.ErrUnexpectedEOF, want: true},
		{name: "a timeout after the request was written", wrote: true, err: urlErr(errors.New("context deadline exceeded")), want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p postTrace
			p.wrote.Store(tc.wrote)
			p.answered.Store(tc.answered)
			if got := p.mayHavePosted(tc.err); got != tc.want {
				t.Errorf("mayHavePosted(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// A 502 or a 504 leaves a post's outcome unknown, and so does a 503
// without Retry-After; a 503 with one, or another status, does not.
func TestProxyAnswer(t *testing.T) {
	for _, tc := range []struct {
		code       int
		retryAfter bool
		want       bool
	}{
		{http.StatusBadGateway, false, true},
		{http.StatusGatewayTimeout, false, true},
		{http.StatusGatewayTimeout, true, true},
		{http.StatusServiceUnavailable, false, true},
		{http.StatusServiceUnavailable, true, false},
		{http.StatusInternalServerError, false, false},
		{http.StatusForbidden, false, false},
	} {
		var p postTrace
		p.hasRetryAfter.Store(tc.retryAfter)
		if got := proxyAnswer(tc.code, &p); got != tc.want {
			t.Errorf("proxyAnswer(%d, Retry-After %v) = %v, want %v", tc.code, tc.retryAfter, got, tc.want)
		}
	}
}
