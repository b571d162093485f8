package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// replyLost is a go-redis hook that sends the first pipeline holding a SET
// twice, as go-redis's retry does when the first replies are lost (a read
// timeout while Redis was paused, a reset connection): the commands ran,
// and the caller reads the replies of their second run.
type replyLost struct{ done bool }

func (h *replyLost) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *replyLost) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *replyLost) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.done || !strings.EqualFold(cmds[0].Name(), "set") {
			return next(ctx, cmds)
		}
		h.done = true
		_ = next(ctx, cmds)
		return next(ctx, cmds)
	}
}

// A claim whose first reply was lost and that go-redis sent again is still
// the caller's: before, the retry found the key its first run had set and
// read as lost, so the webhook waited for "another replica" (itself) until
// claim_ttl and answered 503 meanwhile.
func TestAClaimRetriedAfterALostReplyIsWon(t *testing.T) {
	r := startRedis(t)
	hook := &replyLost{}
	r.client.AddHook(hook)
	claims := []Entry{{Key: "t:claim:{a}:x", Value: "token-1", TTL: time.Minute}, {Key: "t:claim:{b}:x", Value: "token-1", TTL: time.Minute}}
	won, err := r.SetNX(t.Context(), claims)
	if err != nil {
		t.Fatal(err)
	}
	if !hook.done {
		t.Fatal("the pipeline was not sent twice")
	}
	if !won[0] || !won[1] {
		t.Fatalf("claims sent twice = %v, want both won (the key holds this claim's own token)", won)
	}
	// Another token still loses.
	won, err = r.SetNX(t.Context(), []Entry{{Key: claims[0].Key, Value: "token-2", TTL: time.Minute}})
	if err != nil || won[0] {
		t.Fatalf("another claimant = %v, %v; want lost", won, err)
	}
}
