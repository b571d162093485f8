package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/enrich"
	"github.com/alertrouter/alertrouter/enrich/slolive"
	"github.com/alertrouter/alertrouter/internal/logthrottle"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/amsilence"
	"github.com/alertrouter/alertrouter/notify/lognotify"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/console"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/routing/webhook"
	"github.com/alertrouter/alertrouter/store"
)

// deps are the long-lived parts shared by every config generation:
// metrics, the log sink, and the store of the current generation (kept
// across reloads while its settings are unchanged).
type deps struct {
	reg             prometheus.Registerer
	pipelineMetrics *routing.Metrics
	notifyMetrics   *notify.Metrics
	deferredMetrics *dedup.DeferredMetrics
	journalMetrics  *journal.Metrics
	triageMetrics   *slack.TriageMetrics
	logger          *slog.Logger
	stdout          io.Writer
	log             *lognotify.Notifier
	replica         string
	// current returns the generation in force (set by serve): the console
	// explains and the replayer sends under the current configuration.
	current func() *built

	// shared is what the pipelines remember beyond a webhook, kept across
	// reloads (routing.Shared).
	shared routing.Shared
	// probeLogs throttles the failed probes' lines (a kubelet probes every
	// few seconds while Redis is down).
	probeLogs logthrottle.Throttle
	// evict watches the store's maxmemory-policy (evict.go).
	evict *evictionCheck
	// clock is the clock shared state is stamped with (clock.go).
	clock *storeClock
	// life is when the store's current run began (dedup.StoreLife), in
	// Unix milliseconds, 0 unknown: read by the readiness probe.
	life atomic.Int64
	// lifeUnread: the run could not be read once (logged once).
	lifeUnread atomic.Bool
	// lifeRun is Redis' run_id the probe last read with life.
	lifeRun atomic.Pointer[string]

	mu       sync.Mutex // guards answered and failures (readiness)
	answered bool
	failures int

	liveMu sync.Mutex // guards live
	// live is the live SLO client, kept across reloads while the
	// prometheus section is unchanged (its cache and breaker with it).
	live *liveClient
}

// liveClient is a live SLO client and the section it was built from.
type liveClient struct {
	cfg    slolive.Config
	client *slolive.Client
}

// state is the store of one or more generations with what lives on it:
// the background retrier, the decision journal (and its writer), the
// dead-letter replayer and the console. A reload that changes the store
// settings builds a new one and retires the old one once its in-flight
// webhooks are done.
type state struct {
	cfg      store.Config
	store    store.Store
	deferred *dedup.Deferred
	journal  *journal.Writer
	replayer *journal.Replayer
	console  http.Handler
	replay   bool // the console may replay dead letters
	// memory is set by openState on an embedded in-memory store, until
	// the first generation built on it says so (deps.build): a reload
	// that fails after opening it installs nothing, and must not log that
	// the router switched to it.
	memory bool
}

// built is one config generation: what a webhook runs with.
type built struct {
	pipeline *routing.Pipeline
	edge     webhook.EdgeOptions
	state    *state
	// files are the sums of the secret and TLS files the generation was
	// built from (config.Config.SecretFiles): serve reloads when one
	// changes.
	files map[string]string
	// templates are the notification templates the generation's
	// notifiers render with (check-config reads what they redefine).
	templates *notify.Templates
}

func newDeps(reg prometheus.Registerer, logger *slog.Logger, stdout io.Writer) *deps {
	jm, err := journal.NewMetrics(reg)
	if err != nil {
		panic(err) // registered once per process
	}
	replica, _ := os.Hostname()
	d := &deps{
		journalMetrics:  jm,
		replica:         replica,
		reg:             reg,
		pipelineMetrics: routing.NewMetrics(reg),
		notifyMetrics:   notify.NewMetrics(reg),
		deferredMetrics: dedup.NewDeferredMetrics(reg),
		triageMetrics:   slack.NewTriageMetrics(reg),
		evict:           newEvictionCheck(reg),
		clock:           newStoreClock(reg),
		logger:          logger,
		stdout:          stdout,
	}
	d.log = lognotify.New(stdout, lognotify.WithMetrics(d.notifyMetrics))
	return d
}

// markEpoch marks when the store's state began (dedup.Epoch), in the
// background: serve does it for each store it opens, and on every readiness
// probe, so a store restarted empty gets an epoch close to its restart.
// Best effort: a resolve reads it too, and marks it when missing. Not done
// by openState: check-config opens the store without writing to it.
func (st *state) markEpoch() {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = dedup.MarkEpoch(ctx, st.store, st.cfg.KeyPrefix, time.Now()) // before a probe measured the store clock
	}()
}

// openState builds the store client of cfg (it connects lazily) and what
// lives on it; replay lets the console re-send dead letters.
func (d *deps) openState(cfg store.Config, replay bool) (*state, error) {
	var s store.Store
	if cfg.Redis == nil {
		s = store.NewMemory()
	} else {
		r, err := store.NewRedis(*cfg.Redis, d.reg, d.logger)
		if err != nil {
			return nil, fmt.Errorf("store.redis: %w", err)
		}
		s = r
	}
	st := &state{cfg: cfg, store: s, deferred: dedup.NewDeferred(s, d.deferredMetrics, d.logger), replay: replay, memory: cfg.Redis == nil}
	j := store.OpenJournal(s, journal.StreamKey(cfg.KeyPrefix), store.DefaultJournalRetention)
	st.journal = journal.NewWriter(j, d.journalMetrics, journal.WriterOptions{Replica: d.replica, Logger: d.logger})
	st.replayer = &journal.Replayer{Journal: j, Claims: s, KeyPrefix: cfg.KeyPrefix, Owner: d.replica, Via: "console", Recorder: st.journal,
		Send: func(ctx context.Context, dl journal.DeadLetter) error {
			return ReplaySender(d.current().pipeline)(ctx, dl)
		}}
	st.console = d.console(st)
	return st, nil
}

// console builds the operations console of st, offering the replay of
// dead letters when st.replay.
func (d *deps) console(st *state) http.Handler {
	s, prefix := st.store, st.cfg.KeyPrefix
	opts := console.Options{Journal: st.replayer.Journal, Logger: d.logger, Sectors: enrich.SectorIDs,
		Evaluate: func(m *alert.Message) []*alert.Result { return d.current().pipeline.Evaluate(m) },
		Began: func(ctx context.Context) (time.Time, error) {
			return dedup.Epoch(ctx, s, prefix, d.clock.Now())
		},
		WriteFailure: st.journal.Failure}
	if st.replay {
		opts.DeadLetters = st.replayer
	}
	return console.New(opts)
}

// sameStore reports whether a and b select the same store client.
func sameStore(a, b store.Config) bool {
	if (a.Redis == nil) != (b.Redis == nil) {
		return false
	}
	// The journal's stream key and the claims follow the key prefix: a new
	// prefix is a new keyspace, opened like a new store.
	return a.KeyPrefix == b.KeyPrefix && (a.Redis == nil || reflect.DeepEqual(*a.Redis, *b.Redis))
}

// close closes s's journal, deferred writes and store, giving what they
// still have to write 5s (closeBy).
func (s *state) close() { s.closeBy(time.Now().Add(stateCloseTime)) }

// stateCloseTime bounds a state's close: the journal's entries and the
// deferred store writes still queued are written within it, or given up.
const stateCloseTime = 5 * time.Second

// closeBy is close with what is still queued written by deadline: the
// journal's entries, then the deferred store writes (their last attempt
// also bounded by dedup's closeFlush).
func (s *state) closeBy(deadline time.Time) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	_ = s.journal.Close(ctx)
	s.deferred.CloseBy(deadline)
	_ = s.store.Close()
}

// ready answers /-/ready for the current generation. The router is not
// ready until the store has answered once. After that, with fail-open (the
// default) it stays ready while the store is down — it still delivers, and
// taking every replica out of the Service would lose pages — and with
// fail_closed it turns unready only after three consecutive failed probes,
// so one slow command never flaps readiness. A store configured wrong
// (store.ErrMisconfigured: a Redis Cluster node named as a single node)
// never answers, so a replica starting with it stays unready (the rollout
// stops); reloaded into it, a replica stays ready as for any other store
// (every replica reloading at once would leave no endpoint) and answers
// each webhook 5xx naming what to set.
func (d *deps) ready(ctx context.Context, b *built) error {
	err := b.state.store.Ping(ctx)
	if err == nil {
		// Whenever Redis answers, its writes refused or not: full under
		// noeviction it refuses the probe's write, and a policy put right
		// while it was full read as evicting still — the alert fired on,
		// telling on-call to set what they had set (an audit).
		d.evict.check(ctx, b.state.store, d.logger)
	}
	if p, ok := b.state.store.(writeProber); ok && err == nil {
		err = p.ProbeWrite(ctx, b.state.cfg.KeyPrefix+"probe")
	}
	if err == nil {
		d.clock.check(ctx, b.state.store, d.logger)
		_ = dedup.MarkEpoch(ctx, b.state.store, b.state.cfg.KeyPrefix, d.clock.Now())
		d.checkLife(ctx, b)
		d.checkNewConnections(ctx, b)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		if d.failures > 0 {
			d.logger.Info("store answering again", "failed_probes", d.failures)
		}
		d.answered = true
		d.failures = 0
		return nil
	}
	d.failures++
	switch {
	case !d.answered && errors.Is(err, store.ErrMisconfigured):
		return fmt.Errorf("store misconfigured (every webhook is answered 5xx until it is fixed): %w", err)
	case !d.answered:
		return fmt.Errorf("store has not answered yet: %w", err)
	case b.state.cfg.FailClosed && d.failures >= 3:
		return fmt.Errorf("store failed %d consecutive probes and fail_closed is set: %w", d.failures, err)
	}
	msg := "store probe failed; staying ready"
	if refused(err) {
		msg = "store probe failed: Redis refuses the router's commands — a read-only replica, or an ACL user lacking scripting, TIME or the key prefix (deploy/README.md section 1): every webhook fails open meanwhile; staying ready"
	}
	d.probeLogs.Log(ctx, d.logger, slog.LevelWarn, msg+logthrottle.ErrorClass(err), msg, "consecutive_failures", d.failures, "fail_closed", b.state.cfg.FailClosed, "err", err)
	return nil
}

// checkNewConnections pings the store on a fresh connection
// (store.Redis.PingNewConnection) once its pooled ping passed, and warns
// (throttled as the probe's lines) when that fails: a Redis refusing new
// connections — a server certificate expired or re-signed without the
// CA, a password changed on one side, maxclients — fails every webhook
// that needs one (fail-open: sent without deduplication; fail_closed:
// 503) while the pooled connections serve the rest. Readiness does not
// follow it: the pooled connections still work, and every replica
// sharing that Redis going unready left the Service without endpoints
// (alertrouter_store_errors_total{operation="new_conn"} and
// AlertrouterStoreRefusesNewConnections report it).
func (d *deps) checkNewConnections(ctx context.Context, b *built) {
	p, ok := b.state.store.(newConnPinger)
	if !ok {
		return
	}
	err := p.PingNewConnection(ctx)
	if err == nil || ctx.Err() != nil {
		return
	}
	msg := "store refuses new connections while the pooled ones answer: every webhook that needs a new connection fails (fail-open: sent without deduplication; fail_closed: 503) — a server certificate expired or re-signed without the CA store.redis.tls trusts, a password changed on one side only, or Redis' maxclients reached; staying ready"
	d.probeLogs.Log(ctx, d.logger, slog.LevelWarn, "new_conn"+logthrottle.ErrorClass(err), msg, "fail_closed", b.state.cfg.FailClosed, "err", err)
}

// newConnPinger is a store whose probe can dial it anew (store.Redis).
type newConnPinger interface {
	PingNewConnection(ctx context.Context) error
}

// checkLife reads when the store's current run began (dedup.StoreLife) for
// the pipelines' retriggers, and says when Redis started a new run.
func (d *deps) checkLife(ctx context.Context, b *built) {
	l, err := dedup.ReadStoreLife(ctx, b.state.store, b.state.cfg.KeyPrefix, d.clock.Now())
	if err != nil && ctx.Err() == nil && d.lifeUnread.CompareAndSwap(false, true) {
		d.logger.Warn("cannot tell Redis' runs apart (INFO server refused, or the life key not written): a Redis restored older or failed over is not noticed, so an incident it holds open again is not retriggered (deploy/README.md section 1: the ACL user needs +info)", "err", err)
	}
	if err != nil || l.Began.IsZero() {
		return
	}
	life := l.Began
	prevRun := d.lifeRun.Swap(&l.Run)
	if old := d.life.Swap(life.UnixMilli()); old != 0 && old != life.UnixMilli() {
		d.logger.Warn(newRunMessage(prevRun != nil && *prevRun == l.Run, b.pipeline.RetriggerInterval > 0), "run_began", life.UTC().Format(time.RFC3339), "run_id", l.Run)
	}
}

// newRunMessage is what checkLife says when the store's run began anew:
// Redis restarted or failed over (a new run_id), or — sameRun — the
// router's record of the run (dedup.LifeKey) was lost while Redis ran on:
// deleted, evicted (a maxmemory-policy other than noeviction) or flushed,
// and the router's other keys may have gone with it (an audit: an evicted
// record was reported as a restart nobody could find). retrigger: the
// incidents' retrigger_interval is set.
func newRunMessage(sameRun, retrigger bool) string {
	retriggers := ", so for incidents.retrigger_interval every incident triggered before now triggers PagerDuty again on its next new alert (folded by PagerDuty while its incident is open)"
	if sameRun {
		msg := "the router's record of Redis' run (key life) is gone though Redis did not restart — deleted, evicted (is maxmemory-policy noeviction?) or flushed: the router's other keys may be gone too, and alerts already notified sent again (PagerDuty folds a trigger into its open incident)"
		if retrigger {
			msg += retriggers
		}
		return msg
	}
	msg := "Redis started a new run (restarted or failed over): its data may be older than what was written last"
	if !retrigger {
		return msg + " — an incident resolved since may read open again, and with incidents.retrigger_interval 0 its next new alert does not page; check PagerDuty's open incidents"
	}
	return msg + retriggers
}

// storeLife is when the store's current run began, as the probe last read
// it (the zero time: unknown); the pipelines' StoreLife.
func (d *deps) storeLife() time.Time {
	if ms := d.life.Load(); ms != 0 {
		return time.UnixMilli(ms)
	}
	return time.Time{}
}

// writeProber is a store that can check it takes the router's writes and
// scripts (store.Redis).
type writeProber interface {
	ProbeWrite(ctx context.Context, key string) error
}

// refused reports whether err is Redis refusing a command rather than
// being out of reach.
func refused(err error) bool {
	for _, s := range []string{"NOPERM", "READONLY", "unknown command", "NOSCRIPT"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// storeChanged resets readiness when a reload switches stores and
// fail_closed is set: the new one must answer before the router says ready
// again, since it delivers nothing until then. A fail-open router keeps its
// readiness (its failures are counted afresh): it delivers while the new
// store is down, and every replica reloading the same config (a typo in
// the address) would otherwise leave the Service without an endpoint and
// Alertmanager with nowhere to deliver.
func (d *deps) storeChanged(failClosed bool) {
	d.mu.Lock()
	if failClosed {
		d.answered = false
	}
	d.failures = 0
	d.mu.Unlock()
}

// evaluator builds the pure stages only (classify, decide, route): what
// explain and check-config need. It opens no connection.
func evaluator(cfg *config.Config) (*routing.Pipeline, error) {
	cls, err := enrich.New(cfg.Classifier)
	if err != nil {
		return nil, fmt.Errorf("classifier: %w", err)
	}
	dec, err := policies.New(cfg.Policies)
	if err != nil {
		return nil, fmt.Errorf("policies: %w", err)
	}
	if _, err := notify.LoadTemplates(cfg.Templates); err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	return &routing.Pipeline{
		Classifier: cls,
		Decider:    dec,
		Routes:     cfg.Route,
		GroupBy:    cfg.Incidents.GroupBy,
		Logger:     slog.New(slog.DiscardHandler),
	}, nil
}

// inConfig names the file of cfg in err, as config.Load names it in its
// errors — what fails to build (a secret or TLS file missing, a template)
// is a mistake in that file —, with cfg's secrets hidden (cfg.Redact).
func inConfig(cfg *config.Config, err error) error {
	err = cfg.Redact(err)
	if err == nil || cfg.Source == "" {
		return err
	}
	return fmt.Errorf("config %q: %w", cfg.Source, err)
}

// build builds a generation from cfg on st (the store to use, from
// openState or the previous generation). Its errors name the config file
// and hide its secrets (inConfig). The first generation built on an
// embedded in-memory store warns of it: the store a router starts with,
// or switches to by a reload, since nothing after build fails.
func (d *deps) build(cfg *config.Config, st *state) (*built, error) {
	b, err := d.buildGeneration(cfg, st)
	if err != nil {
		return nil, inConfig(cfg, err)
	}
	if st.memory {
		st.memory = false
		d.logger.Warn("no store.redis configured: using the embedded in-memory store — run ONE replica only (replicas would not share dedup state) and expect state to be lost on restart")
	}
	return b, nil
}

func (d *deps) buildGeneration(cfg *config.Config, st *state) (*built, error) {
	p, err := evaluator(cfg)
	if err != nil {
		return nil, err
	}
	tmpl, err := notify.LoadTemplates(cfg.Templates)
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	nd := notify.Deps{Templates: tmpl, Metrics: d.notifyMetrics, Logger: d.logger}
	p.Receivers = map[string][]routing.Integration{}
	var errs []error
	for ri, r := range cfg.Receivers {
		var integs []routing.Integration
		for i, c := range r.PagerdutyConfigs {
			n, err := pagerduty.New(c, r.Name, nd)
			if err != nil {
				errs = append(errs, atPath(fmt.Sprintf("receivers[%d].pagerduty_configs[%d]", ri, i), err))
				continue
			}
			integs = append(integs, routing.Integration{Name: fmt.Sprintf("pagerduty/%d", i), Notifier: n, SendResolved: c.Resolved()})
		}
		for i, c := range r.SlackConfigs {
			n, err := slack.New(c, r.Name, nd)
			if err != nil {
				errs = append(errs, atPath(fmt.Sprintf("receivers[%d].slack_configs[%d]", ri, i), err))
				continue
			}
			integs = append(integs, routing.Integration{Name: fmt.Sprintf("slack/%d", i), Notifier: n, SendResolved: c.Resolved()})
		}
		for i := range r.LogConfigs {
			integs = append(integs, routing.Integration{Name: fmt.Sprintf("log/%d", i), Notifier: d.log, SendResolved: true})
		}
		p.Receivers[r.Name] = integs
	}
	errs = append(errs, sectionFiles(cfg)...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	p.Store = st.store
	p.Deferred = st.deferred
	p.Shared = &d.shared
	if cfg.Alertmanager != nil {
		am, err := amsilence.New(*cfg.Alertmanager)
		if err != nil {
			return nil, fmt.Errorf("alertmanager: %w", err)
		}
		p.FiringAlerts = am.Fingerprints
		p.HeldAlerts = am.AllFingerprints
		p.CompleteTruncated = completeFrom(am)
	}
	if base := strings.TrimSuffix(cfg.Console.ExternalURL, "/"); base != "" {
		p.ConsoleURL = func(incident string) string { return base + console.IncidentPath(incident) }
	}
	if st.journal != nil {
		p.Recorder = st.journal
		p.DeadLetters = st.journal
	}
	for name, integs := range p.Receivers {
		for _, in := range integs {
			d.journalMetrics.InitDeadLetters(name, in.Name)
		}
	}
	p.Metrics = d.pipelineMetrics
	p.Logger = d.logger
	p.Dedup = routing.DedupOptions{
		ClaimTTL:       time.Duration(cfg.Dedup.ClaimTTL),
		NotifiedTTL:    time.Duration(cfg.Dedup.NotifiedTTL),
		RepeatInterval: time.Duration(cfg.Dedup.RepeatInterval),
		InFlightWait:   time.Duration(cfg.Dedup.InFlightWait),
		FailClosed:     cfg.Store.FailClosed,
		KeyPrefix:      cfg.Store.KeyPrefix,
	}
	fl := cfg.Flap
	p.Flap = &fl
	p.UpdateWindow = time.Duration(cfg.Incidents.UpdateWindow)
	p.RetriggerInterval = time.Duration(cfg.Incidents.RetriggerInterval)
	p.StoreLife = d.storeLife
	p.Now = d.clock.Now // shared stamps on Redis' clock
	p.DecideNow = time.Now
	if p.Live, err = d.liveLookup(cfg); err != nil {
		return nil, err // prometheus/common's errors may print a URL whole: build redacts
	}
	edge, err := edgeOptions(cfg)
	if err != nil {
		return nil, err
	}
	if edge.Interactions, err = d.triage(cfg, p, st); err != nil {
		return nil, err
	}
	if am := cfg.Alertmanager; am != nil && am.ResolveUnsent() > 0 {
		edge.Orphans = &webhook.Orphans{Store: p.Store, Prefix: cfg.Store.KeyPrefix, Held: p.FiringAlerts,
			After: am.ResolveUnsent(), Logger: d.logger.With("component", "unsent-resolves")}
		p.ForgetsUnsent = true
	}
	return &built{pipeline: p, edge: edge, state: st, files: fileSums(cfg.SecretFiles()), templates: tmpl}, nil
}

// sectionFiles reads the secret and TLS files of the sections outside the
// receivers (whose notifiers read their own): the http_config of
// alertmanager and prometheus (notify.CheckHTTPFiles) and
// store.redis.password_file. A file missing, unreadable or empty is an
// error at its YAML path, at check-config, at start and at every reload
// alike (a reload that keeps the store client reads them too).
func sectionFiles(cfg *config.Config) []error {
	var errs []error
	if am := cfg.Alertmanager; am != nil {
		if err := notify.CheckHTTPFiles(&am.HTTPConfig); err != nil {
			errs = append(errs, atPath("alertmanager", err))
		}
	}
	if pc := cfg.Prometheus; pc != nil {
		if err := notify.CheckHTTPFiles(&pc.HTTPConfig); err != nil {
			errs = append(errs, atPath("prometheus", err))
		}
	}
	if r := cfg.Store.Redis; r != nil && r.PasswordFile != "" {
		if _, err := notify.ReadSecret("", r.PasswordFile); err != nil {
			errs = append(errs, fmt.Errorf("store.redis.password_file: %w", err))
		}
	}
	return errs
}

// atPath prefixes every error joined in err with the YAML path of the
// entry it belongs to, so each names its path once.
func atPath(path string, err error) error {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			errs = append(errs, atPath(path, e))
		}
		return errors.Join(errs...)
	}
	return fmt.Errorf("%s.%w", path, err)
}

func edgeOptions(cfg *config.Config) (webhook.EdgeOptions, error) {
	e := webhook.EdgeOptions{MaxBodyBytes: cfg.Webhook.MaxBodyBytes, Timeout: time.Duration(cfg.Webhook.Timeout), MaxConcurrent: cfg.Webhook.MaxConcurrent}
	var err error
	if e.Auth, err = readAuth("auth", cfg.Auth); err != nil {
		return e, err
	}
	if a := cfg.Console.Auth; a != nil {
		if e.ConsoleAuth, err = readAuth("console.auth", *a); err != nil {
			return e, err
		}
	}
	if h := cfg.Console.ExternalHost(); h != "" {
		e.ConsoleHosts = []string{webhook.HostName(h)}
	}
	return e, nil
}

// readAuth reads the secrets of the auth block at YAML path path. An empty
// secret file is refused (notify.ReadSecret): it would leave the webhook or
// the console open (no token) or open to an empty password.
func readAuth(path string, a config.AuthConfig) (webhook.Auth, error) {
	var out webhook.Auth
	tok, err := notify.ReadSecret(a.BearerToken, a.BearerTokenFile)
	if err != nil {
		return out, fmt.Errorf("%s.bearer_token_file: %w", path, err)
	}
	out.BearerToken = tok
	if ba := a.BasicAuth; ba != nil {
		pw, err := notify.ReadSecret(ba.Password, ba.PasswordFile)
		if err != nil {
			return out, fmt.Errorf("%s.basic_auth.password_file: %w", path, err)
		}
		out.Username, out.Password = ba.Username, pw
	}
	return out, nil
}

// liveLookup returns the live SLO lookup of cfg's generation (nil without a
// prometheus section). The client is built once and kept across reloads
// while the section is unchanged; the burn-rate tiers, which say whether
// the live burn is below every tier, come from each generation's policies.
func (d *deps) liveLookup(cfg *config.Config) (routing.LiveLookup, error) {
	if cfg.Prometheus == nil {
		return nil, nil
	}
	d.liveMu.Lock()
	defer d.liveMu.Unlock()
	if d.live == nil || !reflect.DeepEqual(d.live.cfg, *cfg.Prometheus) {
		var reg prometheus.Registerer
		if d.reg != nil {
			reg = replacing{d.reg}
		}
		c, err := slolive.New(*cfg.Prometheus, slolive.Options{Registerer: reg, Logger: d.logger})
		if err != nil {
			return nil, fmt.Errorf("prometheus: %w", err)
		}
		d.live = &liveClient{cfg: *cfg.Prometheus, client: c}
	}
	return routing.SLOLive(d.live.client, cfg.Policies.BurnRate.Tiers), nil
}

// replacing is a Registerer whose Register replaces a collector already
// registered under the same descriptors: a reload that changes the
// prometheus section builds a new client whose metrics take over from the
// old one's (the counters restart, which rate() absorbs).
type replacing struct{ prometheus.Registerer }

// Register registers c, unregistering first what it collides with.
func (r replacing) Register(c prometheus.Collector) error {
	err := r.Registerer.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		r.Registerer.Unregister(are.ExistingCollector)
		return r.Registerer.Register(c)
	}
	return err
}

// MustRegister registers each collector and panics on an error other than
// a collision.
func (r replacing) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// completeFrom completes a truncated webhook with its group's firing
// alerts as the Alertmanager at alertmanager.url holds them
// (routing.Pipeline.CompleteTruncated, webhook.Complete): a listing that
// is not of the webhook's group leaves it as it came.
func completeFrom(am *amsilence.Client) func(ctx context.Context, msg *alert.Message) (int, error) {
	return func(ctx context.Context, msg *alert.Message) (int, error) {
		alerts, err := am.Group(ctx, msg.Receiver, msg.GroupLabels)
		if err != nil {
			return 0, err
		}
		left := make([]webhook.LeftOut, len(alerts))
		for i, a := range alerts {
			left[i] = webhook.LeftOut{Fingerprint: a.Fingerprint, Labels: a.Labels, Annotations: a.Annotations, StartsAt: a.StartsAt, GeneratorURL: a.GeneratorURL}
		}
		added, _ := webhook.Complete(msg, left)
		return added, nil
	}
}
