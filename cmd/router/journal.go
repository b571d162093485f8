package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/store"
)

// journalCommands are the subcommands that read the decision journal:
// journal export, dead-letters list|show|replay, simulate. They read the
// journal shared in Redis (store.redis); an in-memory journal lives in the
// serving router only (its console exports it).
type journalCommands struct {
	exportSince *model.Duration
	exportKind  *string

	dlSince  *model.Duration
	dlShowID *string
	dlID     *string
	dlAll    *bool
	// dlReplaySince is replay --all's period; dlReplaySinceSet says it was
	// given (it applies to --all only).
	dlReplaySince    *model.Duration
	dlReplaySinceSet bool

	simConfig *string
	simSince  *model.Duration
	// simSinceSet: --since was given (with --from it keeps the file's
	// entries of that period).
	simSinceSet bool
	simFrom     *string
	// simFromSet: --from was given (kingpin hands a lone "-", standard
	// input, over as "").
	simFromSet bool
	simFormat  *string
}

// addJournalCommands registers the journal subcommands on app and returns
// their runners by full command name.
func (m *Main) addJournalCommands(app *kingpin.Application) map[string]func(ctx context.Context) int {
	c := &journalCommands{}
	day, _ := model.ParseDuration("24h")
	week, _ := model.ParseDuration("7d")
	dur := func(f *kingpin.FlagClause, def model.Duration) *model.Duration {
		d := def
		f.Default(def.String()).SetValue(sinceValue{&d})
		return &d
	}

	j := app.Command("journal", "Read the decision journal.")
	export := j.Command("export", "Print the journal as JSON lines (one entry a line), oldest first: router journal export --since 24h > journal.jsonl")
	c.exportSince = dur(export.Flag("since", "How far back to export."), day)
	c.exportKind = export.Flag("kind", "Export only this kind: decision, dead_letter, triage (what a Slack click did) or replay (a dead letter's replay).").Enum(string(journal.KindDecision), string(journal.KindDeadLetter), string(journal.KindTriage), string(journal.KindReplay))

	dl := app.Command("dead-letters", "List, show and replay notifications that failed permanently.")
	list := dl.Command("list", "List dead letters, newest first, with whether each was replayed.")
	c.dlSince = dur(list.Flag("since", "How far back to list."), week)
	show := dl.Command("show", "Print one dead letter as JSON, with whether it was replayed.")
	c.dlShowID = show.Arg("id", "Dead letter id (from list).").Required().String()
	replay := dl.Command("replay", "Send dead letters again through the current configuration, each at most once.")
	c.dlID = replay.Arg("id", "Dead letter id (from list).").String()
	c.dlAll = replay.Flag("all", "Replay every dead letter of the last --since (7d by default) not replayed yet.").Bool()
	c.dlReplaySince = dur(replay.Flag("since", "With --all: how far back to replay.").IsSetByUser(&c.dlReplaySinceSet), week)

	sim := app.Command("simulate", "Decide the journal's alerts again under a candidate configuration and print what would change.")
	c.simConfig = sim.Flag("config", "The candidate configuration file.").Required().String()
	c.simSince = dur(sim.Flag("since", "Simulate the journal entries of this period (read from the shared journal; with --from, the file's entries of this period).").IsSetByUser(&c.simSinceSet), day)
	c.simFrom = sim.Flag("from", "Read the journal from this JSON-lines file (router journal export, or the console's /journal.jsonl; - for standard input) instead of the store.").IsSetByUser(&c.simFromSet).String()
	c.simFormat = sim.Flag("format", "Report format.").Default("markdown").Enum("markdown", "json")

	return map[string]func(ctx context.Context) int{
		"journal export":      func(ctx context.Context) int { return m.journalExport(ctx, c) },
		"dead-letters list":   func(ctx context.Context) int { return m.deadLettersList(ctx, c) },
		"dead-letters show":   func(ctx context.Context) int { return m.deadLettersShow(ctx, c) },
		"dead-letters replay": func(ctx context.Context) int { return m.deadLettersReplay(ctx, c) },
		"simulate":            func(ctx context.Context) int { return m.simulate(ctx, c) },
	}
}

// errNoSharedJournal explains why a memory-store router's journal cannot be
// read from another process.
var errNoSharedJournal = errors.New("store.redis is not configured: the journal is the memory of the running router; read it at its console (GET /journal.jsonl) or configure store.redis")

// openJournal opens the shared journal of the configuration in force.
func (m *Main) openJournal() (*config.Config, *store.Redis, store.Journal, error) {
	cfg, err := m.loadConfig()
	if err != nil {
		return nil, nil, nil, err
	}
	if cfg.Store.Redis == nil {
		return nil, nil, nil, errNoSharedJournal
	}
	r, err := store.NewRedis(*cfg.Store.Redis, nil, m.logger)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("connect to redis: %w", err)
	}
	return cfg, r, r.Journal(journal.StreamKey(cfg.Store.KeyPrefix), store.DefaultJournalRetention, nil), nil
}

func (m *Main) fail(cmd string, err error) int {
	fmt.Fprintf(m.Stderr, "router %s: %v\n", cmd, err)
	return 1
}

func (m *Main) journalExport(ctx context.Context, c *journalCommands) int {
	_, r, j, err := m.openJournal()
	if err != nil {
		return m.fail("journal export", err)
	}
	defer r.Close()
	entries, err := journal.Read(ctx, j, journal.Query{Since: time.Now().Add(-time.Duration(*c.exportSince)), Kind: journal.Kind(*c.exportKind)})
	if err != nil {
		return m.fail("journal export", err)
	}
	if err := writeJSONLines(m.Stdout, entries); err != nil {
		return m.fail("journal export", err)
	}
	return 0
}

// writeJSONLines writes one entry per line.
func writeJSONLines(w io.Writer, entries []journal.Entry) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range entries {
		if err := enc.Encode(&entries[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// sinceValue is a --since flag's duration: its error names the flag and
// the forms it takes (an audit: `unknown unit "." in duration "1.5h"`
// named neither).
type sinceValue struct{ d *model.Duration }

// Set implements kingpin.Value.
func (v sinceValue) Set(s string) error {
	if err := v.d.Set(s); err != nil {
		return fmt.Errorf("--since %q: want a duration of whole numbers and units ms, s, m, h, d, w, y, such as 90m, 24h, 7d or 1h30m (%w)", s, err)
	}
	return nil
}

// String implements kingpin.Value.
func (v sinceValue) String() string { return v.d.String() }

// readJSONLines reads a journal export.
func (m *Main) readJSONLines(ctx context.Context, path string) ([]journal.Entry, error) {
	b, err := m.readInput(ctx, path)
	if err != nil {
		return nil, err
	}
	if path == "" || path == "-" {
		path = "standard input"
	}
	// A UTF-8 byte-order mark (an editor's, Windows') before the first
	// entry is skipped, as explain skips one before a payload.
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	var out []journal.Entry
	dec := json.NewDecoder(bytes.NewReader(b))
	for line := 1; ; line++ {
		var e journal.Entry
		if err := dec.Decode(&e); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: entry %d: %w", path, line, err)
		}
		if e.Kind == "" || e.Time.IsZero() {
			// A webhook payload or any other JSON decodes into an empty
			// entry: simulated, it said nothing would change (an audit).
			return nil, fmt.Errorf("%s: entry %d is no journal entry (no kind or time): give the output of router journal export or the console's /journal.jsonl", path, line)
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no journal entry: nothing to simulate", path)
	}
	return out, nil
}

// replayer builds the replayer of the configuration in force: it sends
// through the receivers' notifiers as they are configured now.
func (m *Main) replayer(cfg *config.Config, r *store.Redis, j store.Journal) (*journal.Replayer, error) {
	d := newDeps(prometheus.NewRegistry(), m.logger, m.Stdout)
	b, err := d.build(cfg, &state{cfg: cfg.Store, store: r})
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	return &journal.Replayer{Journal: j, Claims: r, KeyPrefix: cfg.Store.KeyPrefix, Owner: "cli@" + host, Via: "cli", Send: ReplaySender(b.pipeline)}, nil
}

// ReplaySender sends a dead letter through the integration that failed, as
// the current configuration has it. A receiver or integration removed from
// the configuration is an error: the dead letter stays replayable.
func ReplaySender(p *routing.Pipeline) journal.SendFunc {
	return func(ctx context.Context, d journal.DeadLetter) error {
		for _, in := range p.Receivers[d.Receiver] {
			if in.Name != d.Integration {
				continue
			}
			n, err := d.Notification()
			if err != nil {
				return err
			}
			sentAt := time.Now()
			if err := in.Notifier.Notify(ctx, n); err != nil {
				return err
			}
			// Sent: a failure to record its opening is no failed replay
			// (sending it again would post twice), only logged.
			if err := p.AdoptReplayedOpening(context.WithoutCancel(ctx), n, d.ResolvedSince); err != nil && p.Logger != nil {
				p.Logger.Warn("dead letter replayed; its incident's parent not recorded: the incident's next notification may post another", "incident", n.Incident, "err", err)
			}
			if err := p.MarkReplayedFirings(context.WithoutCancel(ctx), n, d.ResolvedSince, sentAt); err != nil && p.Logger != nil {
				p.Logger.Warn("dead letter replayed; its alerts not marked notified: Alertmanager's next repeat of them sends them once more", "incident", n.Incident, "err", err)
			}
			return nil
		}
		return fmt.Errorf("integration %s of receiver %q is not in the current configuration", d.Integration, d.Receiver)
	}
}

func (m *Main) deadLettersList(ctx context.Context, c *journalCommands) int {
	cfg, r, j, err := m.openJournal()
	if err != nil {
		return m.fail("dead-letters list", err)
	}
	defer r.Close()
	rp := &journal.Replayer{Journal: j, Claims: r, KeyPrefix: cfg.Store.KeyPrefix}
	letters, err := rp.List(ctx, time.Now().Add(-time.Duration(*c.dlSince)))
	if err != nil {
		return m.fail("dead-letters list", err)
	}
	tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTIME\tRECEIVER\tINTEGRATION\tINCIDENT\tKIND\tREPLAYED\tERROR")
	for _, l := range letters {
		d := l.DeadLetter
		// Alerts' text is printed escaped: an ESC in a label must not drive
		// the terminal, a tab or newline not break the table.
		replayed := strconv.FormatBool(l.Replayed)
		if l.Replaying {
			replayed = "being replayed"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.ID, l.Time.UTC().Format(time.RFC3339), journal.TerminalSafe(d.Receiver),
			journal.TerminalSafe(d.Integration), journal.TerminalSafe(d.Incident), journal.TerminalSafe(string(d.Kind)), replayed, journal.TerminalSafe(d.Error))
	}
	if err := tw.Flush(); err != nil {
		return m.fail("dead-letters list", err)
	}
	return 0
}

// badDeadLetterID is the error of an argument that cannot be a dead
// letter's id (a typo, a pasted fragment), as show and replay say it.
func badDeadLetterID(id string) error {
	return fmt.Errorf("%q is not a dead letter id (see router dead-letters list)", id)
}

func (m *Main) deadLettersShow(ctx context.Context, c *journalCommands) int {
	cfg, r, j, err := m.openJournal()
	if err != nil {
		return m.fail("dead-letters show", err)
	}
	defer r.Close()
	if !journal.ValidID(*c.dlShowID) {
		return m.fail("dead-letters show", badDeadLetterID(*c.dlShowID))
	}
	e, ok, err := journal.Get(ctx, j, *c.dlShowID)
	switch {
	case err != nil:
		return m.fail("dead-letters show", err)
	case !ok || e.Kind != journal.KindDeadLetter:
		return m.fail("dead-letters show", fmt.Errorf("%s: %w", *c.dlShowID, journal.ErrNotFound))
	}
	rp := &journal.Replayer{Journal: j, Claims: r, KeyPrefix: cfg.Store.KeyPrefix}
	replayed, err := rp.Replayed(ctx, []string{e.ID})
	if err != nil {
		return m.fail("dead-letters show", err)
	}
	// The entry as the journal holds it, and whether it was replayed (as
	// list says): someone deciding to replay it by hand needs both.
	shown := struct {
		journal.Entry
		Replayed bool `json:"replayed"`
	}{e, replayed[0]}
	enc := json.NewEncoder(m.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(shown); err != nil {
		return m.fail("dead-letters show", err)
	}
	return 0
}

func (m *Main) deadLettersReplay(ctx context.Context, c *journalCommands) int {
	if (*c.dlID == "") == !*c.dlAll {
		fmt.Fprintln(m.Stderr, "router dead-letters replay: give one ID or --all")
		return 2
	}
	if c.dlReplaySinceSet && !*c.dlAll {
		fmt.Fprintln(m.Stderr, "router dead-letters replay: --since applies to --all only")
		return 2
	}
	if !*c.dlAll && !journal.ValidID(*c.dlID) {
		// As show says it: "no such dead letter" read as a lost one.
		return m.fail("dead-letters replay", badDeadLetterID(*c.dlID))
	}
	cfg, r, j, err := m.openJournal()
	if err != nil {
		return m.fail("dead-letters replay", err)
	}
	defer r.Close()
	rp, err := m.replayer(cfg, r, j)
	if err != nil {
		return m.fail("dead-letters replay", err)
	}
	if *c.dlAll {
		rep, err := rp.ReplayAll(ctx, time.Now().Add(-time.Duration(*c.dlReplaySince)))
		if err != nil {
			return m.fail("dead-letters replay", err)
		}
		for _, e := range rep.Errors {
			fmt.Fprintf(m.Stderr, "router dead-letters replay: %v\n", e)
		}
		fmt.Fprintf(m.Stdout, "sent %d, already replayed %d, delivered since %d, resolved since %d, fired again since %d, being replayed %d, repeated by a later one %d, failed %d\n",
			rep.Sent, rep.AlreadyReplayed, rep.DeliveredSince, rep.ResolvedSince, rep.FiredSince, rep.InFlight, rep.Repeated, rep.Failed)
		if rep.Failed > 0 {
			return 1
		}
		return 0
	}
	sent, err := rp.Replay(ctx, *c.dlID)
	if errors.Is(err, journal.ErrDeliveredSince) || errors.Is(err, journal.ErrResolvedSince) || errors.Is(err, journal.ErrFiredSince) {
		fmt.Fprintln(m.Stdout, err)
		return 0
	}
	if errors.Is(err, journal.ErrInFlight) {
		fmt.Fprintln(m.Stdout, err)
		return 1
	}
	if sent && err != nil {
		fmt.Fprintf(m.Stdout, "%s sent\n", *c.dlID)
		return m.fail("dead-letters replay", err)
	}
	if err != nil {
		return m.fail("dead-letters replay", err)
	}
	if sent {
		fmt.Fprintf(m.Stdout, "%s sent\n", *c.dlID)
	} else {
		fmt.Fprintf(m.Stdout, "%s had already been replayed: nothing sent\n", *c.dlID)
	}
	return 0
}

func (m *Main) simulate(ctx context.Context, c *journalCommands) int {
	candidate, err := config.Load(*c.simConfig)
	if err != nil {
		return m.fail("simulate", fmt.Errorf("candidate config: %w", err))
	}
	p, err := candidatePipeline(candidate)
	if err != nil {
		return m.fail("simulate", fmt.Errorf("candidate config: %w", err))
	}
	// What check-config warns of the candidate (a PagerDuty key PagerDuty
	// refuses, a channel templated on a label its incidents are not grouped
	// by …): the simulation decides as if every send went through, and
	// said nothing of them (a review).
	for _, w := range configWarnings(candidate) {
		fmt.Fprintf(m.Stderr, "router simulate: candidate config warning: %s\n", candidate.RedactString(w))
	}
	var entries []journal.Entry
	if *c.simFrom != "" || c.simFromSet {
		entries, err = m.readJSONLines(ctx, *c.simFrom)
		if err == nil && c.simSinceSet {
			from := time.Now().Add(-time.Duration(*c.simSince))
			entries = slices.DeleteFunc(entries, func(e journal.Entry) bool { return e.Time.Before(from) })
		}
	} else {
		var r *store.Redis
		var j store.Journal
		if _, r, j, err = m.openJournal(); err == nil {
			defer r.Close()
			entries, err = journal.Read(ctx, j, journal.Query{Since: time.Now().Add(-time.Duration(*c.simSince)), Kind: journal.KindDecision})
		}
	}
	if err != nil {
		return m.fail("simulate", err)
	}
	rep := journal.Simulate(entries, evaluateAt(p), simulateOptions(p))
	if *c.simFormat == "json" {
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = rep.Markdown(m.Stdout)
	}
	if err != nil {
		return m.fail("simulate", err)
	}
	return 0
}

// candidatePipeline builds the candidate configuration as check-config
// does — exactly what serve builds: notifiers with their secret files and
// templates, the edge's auth, the store client without connecting — on a
// throwaway registry and a silent logger, so that a candidate serve would
// refuse is refused with the same message. The store is closed at once:
// the pipeline returned is for Evaluate and its Receivers only.
func candidatePipeline(cfg *config.Config) (*routing.Pipeline, error) {
	d := newDeps(prometheus.NewRegistry(), slog.New(slog.DiscardHandler), io.Discard)
	st, err := d.openState(cfg.Store, false)
	if err != nil {
		return nil, inConfig(cfg, err)
	}
	b, err := d.build(cfg, st)
	st.close()
	if err != nil {
		return nil, err
	}
	return b.pipeline, nil
}

// simulateOptions tells the simulator what the candidate pipeline p
// decides beyond Evaluate: its integrations, its flap damping, whether it
// reads live burn rates, and how it routes an alert whose action changed.
func simulateOptions(p *routing.Pipeline) journal.Options {
	opts := journal.Options{Integrations: map[string][]journal.Integration{}, Flap: p.Flap, Live: p.Live != nil}
	for name, integs := range p.Receivers {
		out := make([]journal.Integration, 0, len(integs))
		for _, in := range integs {
			t, _, _ := strings.Cut(in.Name, "/")
			out = append(out, journal.Integration{Type: t, SendResolved: in.SendResolved})
		}
		opts.Integrations[name] = out
	}
	opts.Route = func(r *alert.Result, now time.Time) { p.RouteAt(r, now) }
	return opts
}

// evaluateAt decides each message at the time the router received it, so
// time-dependent policies see the time they saw then. The returned
// evaluator is not safe for concurrent use.
func evaluateAt(p *routing.Pipeline) journal.Evaluator {
	var at time.Time
	p.Now = func() time.Time { return at }
	return func(msg *alert.Message) []*alert.Result {
		at = msg.ReceivedAt
		return p.Evaluate(msg)
	}
}
