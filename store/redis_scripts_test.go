package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/alertrouter/alertrouter/internal/redistest"
)

// scriptAppearsMidPipeline is a go-redis hook that, once, sends a pipeline
// of several EVALSHA in two parts and loads every script through another
// connection in between: what Redis does when another client's EVAL runs
// while a large pipeline is still arriving (replicas meeting a restarted
// Redis at once). The first part meets NOSCRIPT, the rest finds the script.
type scriptAppearsMidPipeline struct {
	load func(ctx context.Context)
	done bool
}

func (h *scriptAppearsMidPipeline) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *scriptAppearsMidPipeline) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}

func (h *scriptAppearsMidPipeline) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var evals []int
		for i, c := range cmds {
			if strings.EqualFold(c.Name(), "evalsha") {
				evals = append(evals, i)
			}
		}
		if h.done || len(evals) < 2 {
			return next(ctx, cmds)
		}
		h.done = true
		split := evals[1]
		err := next(ctx, cmds[:split])
		h.load(ctx)
		return errors.Join(err, next(ctx, cmds[split:]))
	}
}

// interleaved are 3n steps over n incidents, the incidents interleaved:
// every incident joined by "a<i>", then by "b<i>" (busy), then opened by
// "a<i>" with the ref "ref<i>"; more than one call carries (incidentBatch).
func interleaved(n int) []IncidentOp {
	var ops []IncidentOp
	for _, phase := range []string{"a", "b", "opened"} {
		for i := range n {
			key := Key("t:", "inc", fmt.Sprint("i", i), "slack/0")
			op := IncidentOp{Key: key, Step: StepJoin, Token: fmt.Sprint(phase, i), Lease: time.Hour, TTL: time.Hour,
				Members: []Member{{Fingerprint: fmt.Sprint("fp-", phase, i), StartsAt: "1"}}}
			if phase == "opened" {
				op = IncidentOp{Key: key, Step: StepOpened, Token: fmt.Sprint("a", i), Ref: fmt.Sprint("ref", i), TTL: time.Hour}
			}
			ops = append(ops, op)
		}
	}
	return ops
}

// A webhook's steps of one incident keep their order when the incident
// script appears between two calls of its pipeline: the first call meets
// NOSCRIPT and is sent again after the others ran, so no incident may have
// steps in two calls. With steps split at a fixed count, incident 0's
// opening ran before its first join and its opener found it busy.
func TestRedisStepsKeepTheirOrderWhenTheScriptAppearsMidPipeline(t *testing.T) {
	srv := redistest.Start(t)
	cfg := DefaultRedisConfig()
	cfg.Addrs = []string{srv.Addr()}
	for _, via := range []string{"Write", "Incidents"} {
		t.Run(via, func(t *testing.T) {
			r, err := NewRedis(cfg, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = r.Close() })
			other := redis.NewClient(&redis.Options{Addr: srv.Addr()})
			t.Cleanup(func() { _ = other.Close() })
			ctx := t.Context()
			if err := other.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if err := other.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			hook := &scriptAppearsMidPipeline{load: func(ctx context.Context) {
				if err := incidentScript.Load(ctx, other).Err(); err != nil {
					t.Error(err)
				}
			}}
			r.client.AddHook(hook)
			const n = 70
			ops := interleaved(n)
			if via == "Write" {
				err = Write(ctx, r, Writes{Incidents: ops}).Err()
			} else {
				_, err = r.Incidents(ctx, ops)
			}
			if err != nil {
				t.Fatalf("%s of %d steps: %v", via, len(ops), err)
			}
			if !hook.done {
				t.Fatal("the steps went in one call: nothing was split")
			}
			for i := range n {
				res, err := r.Incidents(ctx, []IncidentOp{{Key: ops[i].Key, Step: StepJoin, Token: "later", TTL: time.Hour, Members: ops[i].Members}})
				if err != nil {
					t.Fatal(err)
				}
				if res[0].Outcome != OutcomeOpen || res[0].Ref != fmt.Sprint("ref", i) {
					t.Fatalf("incident %d afterwards: %+v; want open with ref%d (its steps ran out of order)", i, res[0], i)
				}
			}
		})
	}
}

// On a Cluster every call holds one incident, all of its steps in order;
// on a single node calls hold whole incidents, at least incidentBatch steps
// each but the last; and every step is answered once.
func TestIncidentCallsHoldWholeIncidents(t *testing.T) {
	single := &Redis{client: redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})}
	cluster := &Redis{client: redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})}
	t.Cleanup(func() { _ = single.client.Close(); _ = cluster.client.Close() })
	for _, tc := range []struct {
		name string
		r    *Redis
		n    int
	}{{"single node", single, 70}, {"single node, one call", single, 20}, {"cluster", cluster, 70}, {"no steps", single, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			ops := interleaved(tc.n)
			calls := tc.r.incidentCalls(ops)
			callOf := map[string]int{}
			var answered []int
			for ci, c := range calls {
				incidents := map[string]bool{}
				last := map[string]int{}
				for _, i := range c.ops {
					key := ops[i].Key
					if prev, ok := last[key]; ok && prev > i {
						t.Fatalf("call %d answers %v: incident %s's steps out of order", ci, c.ops, key)
					}
					last[key] = i
					if prev, ok := callOf[key]; ok && prev != ci {
						t.Fatalf("incident %s has steps in calls %d and %d", key, prev, ci)
					}
					callOf[key] = ci
					incidents[key] = true
				}
				if tc.r.cluster() && len(incidents) != 1 {
					t.Fatalf("cluster call %d holds %d incidents, want 1", ci, len(incidents))
				}
				if !tc.r.cluster() && ci < len(calls)-1 && len(c.ops) < incidentBatch {
					t.Fatalf("call %d holds %d steps, want at least %d", ci, len(c.ops), incidentBatch)
				}
				answered = append(answered, c.ops...)
			}
			if tc.n == 0 {
				if len(calls) != 0 {
					t.Fatalf("%d calls for no steps, want none", len(calls))
				}
				return
			}
			slices.Sort(answered)
			if len(answered) != len(ops) || answered[0] != 0 || answered[len(answered)-1] != len(ops)-1 || len(slices.Compact(answered)) != len(ops) {
				t.Fatalf("calls answer %d steps %v, want each of the %d once", len(answered), answered, len(ops))
			}
			if want := (tc.n*3 + incidentBatch - 1) / incidentBatch; !tc.r.cluster() && len(calls) > want {
				t.Fatalf("%d calls, want at most %d", len(calls), want)
			}
		})
	}
}
