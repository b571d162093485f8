package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/oklog/run"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/routing/webhook"
	"github.com/alertrouter/alertrouter/store"
)

// runtime is the running service: the current generation (pipeline, edge
// options and store), swapped whole on reload so a webhook always sees one
// consistent config.
type runtime struct {
	m       *Main
	deps    *deps
	current atomic.Pointer[built]
	mu      sync.Mutex // serializes reloads

	reloadOK   prometheus.Gauge
	reloadTime prometheus.Gauge

	// stopping is set on SIGTERM: /-/ready answers 503 from then on, while
	// the router keeps serving for --web.shutdown-delay.
	stopping atomic.Bool

	// retired counts the Slack clicks answered by generations a reload
	// replaced and still working: the shutdown waits for them too.
	retired sync.WaitGroup

	// storePending is set while the last reload was refused because its
	// new store files could not connect (errStoreKept): it is retried on
	// every secret-file check and store probe tick (retryStoreReload).
	storePending atomic.Bool
	// retries says when a refused store-file reload is tried again, for
	// its error (retryText).
	retries string
}

// clicks waits for the Slack clicks b answered to finish their work; nil
// when b has no Slack triage.
func clicks(b *built) func() {
	if w, ok := b.edge.Interactions.(interface{ Wait() }); ok {
		return w.Wait
	}
	return nil
}

// errShuttingDown is the readiness error of a router told to stop.
var errShuttingDown = errors.New("shutting down: SIGTERM received, serving the --web.shutdown-delay before draining")

// serveOptions are serve's own flags.
type serveOptions struct {
	// shutdownDelay is how long the router stays up, unready, after
	// SIGTERM before it stops accepting connections.
	shutdownDelay time.Duration
	// secretCheck is how often the secret files of the configuration are
	// checked for a new content (0: never).
	secretCheck time.Duration
	// storeProbe is how often the store is pinged as /-/ready pings it,
	// besides /-/ready's own probes (0: never).
	storeProbe time.Duration
}

// changedFiles are the files of the current generation whose content
// changed since it was built, and the sums of all its files now.
func (rt *runtime) changedFiles() ([]string, map[string]string) {
	b := rt.current.Load()
	var out []string
	sums := fileSums(slices.Collect(maps.Keys(b.files)))
	for p, sum := range sums {
		if sum != b.files[p] {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, sums
}

// Current implements webhook.Runtime: one config generation per request.
func (rt *runtime) Current() webhook.Generation {
	b := rt.current.Load()
	return webhook.Generation{Processor: b.pipeline, Options: b.edge}
}

// Console is the operations console of the current generation's store,
// mounted by the edge at /.
func (rt *runtime) Console() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt.current.Load().state.console.ServeHTTP(w, r)
	})
}

// Ready implements webhook.Runtime: not ready once told to stop.
func (rt *runtime) Ready(ctx context.Context) error {
	if rt.stopping.Load() {
		return errShuttingDown
	}
	return rt.deps.ready(ctx, rt.current.Load())
}

// build builds a generation and creates the series of its receivers'
// integrations at zero, so that increase() sees their first event. The
// files of --web.config.file join those the secret-file check watches:
// exporter-toolkit applies that file to every request as it is, so a
// change of it alone (a new bcrypt hash) is checked against the
// configuration again (checkWebConfig, by the reload it triggers) — before,
// a mismatch answered every webhook 401 with nothing saying so.
func (rt *runtime) build(cfg *config.Config, st *state) (*built, error) {
	b, err := rt.deps.build(cfg, st)
	if err != nil {
		return nil, err
	}
	maps.Copy(b.files, fileSums(config.WebConfigFiles(rt.m.webConfigFile())))
	for name, integs := range b.pipeline.Receivers {
		for _, in := range integs {
			b.pipeline.Metrics.InitIntegration(name, in.Name)
		}
	}
	return b, nil
}

// Reload re-reads the config file; a bad config is rejected, logged and
// counted, and the old one keeps serving. Store settings are applied
// whole: a changed store gets a new client, and the old one is closed once
// the webhooks that hold it are done (after webhook.timeout plus a margin).
func (rt *runtime) Reload() error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.settle(rt.reload(), false)
}

// retryStoreReload reloads again while a reload is pending that was
// refused because its new store files could not connect while the
// previous client still could (keepWorkingStore): nothing else retries
// it — the files do not change again when Redis takes the new password or
// certificate, and meanwhile the previous client fails (WRONGPASS once
// Redis drops its connections) until a SIGHUP. The new client is taken as
// soon as it answers. A retry refused again logs nothing (the refusal was
// logged); any other outcome is a reload's.
func (rt *runtime) retryStoreReload() {
	if !rt.storePending.Load() {
		return
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if !rt.storePending.Load() {
		return // a reload in between settled it
	}
	_ = rt.settle(rt.reload(), true)
}

// settle records the outcome err of a reload: the reload metrics, its log,
// and whether a store-file reload is pending (storePending). retry is
// whether it was retryStoreReload's.
func (rt *runtime) settle(err error, retry bool) error {
	kept := errors.Is(err, errStoreKept)
	rt.storePending.Store(kept)
	switch {
	case err == nil:
		if retry {
			rt.m.logger.Info("the reload refused because its new store files could not connect went through on retry: they connect now")
		}
		rt.reloadOK.Set(1)
		rt.reloadTime.SetToCurrentTime()
	case kept && retry:
		rt.m.logger.Debug("store-file reload retried: still refused", "err", err)
	default:
		rt.reloadOK.Set(0)
		rt.m.logger.Error("configuration reload failed; the previous configuration keeps serving", "err", err)
	}
	return err
}

func (rt *runtime) reload() error {
	cfg, err := rt.m.loadConfig()
	if err != nil {
		return err
	}
	if err := rt.m.checkWebConfig(cfg); err != nil {
		return fmt.Errorf("%w (exporter-toolkit applies --web.config.file to every request as the file is now, whatever a reload decides)", err)
	}
	old := rt.current.Load()
	st := old.state
	if !sameStore(old.state.cfg, cfg.Store) || storeFilesChanged(old, cfg.Store) {
		if st, err = rt.deps.openState(cfg.Store, cfg.Console.EnableReplay); err != nil {
			return inConfig(cfg, err)
		}
		if sameStore(old.state.cfg, cfg.Store) {
			if err := keepWorkingStore(old.state, st); err != nil {
				st.close()
				return &storeKeptError{err: inConfig(cfg, err), retries: rt.retries}
			}
		}
		st.markEpoch()
	} else {
		// Same client; fail_closed comes from the new config, and the
		// console offers replays or not as it says. Turning replays on
		// opened a new store: on the embedded memory store that was a
		// new, empty one — the dead letters to replay, the open
		// incidents and the journal gone, and every firing alert paged
		// again (an audit).
		st = &state{cfg: cfg.Store, store: st.store, deferred: st.deferred, journal: st.journal,
			replayer: st.replayer, console: st.console, replay: st.replay}
		if st.replay != cfg.Console.EnableReplay {
			st.replay = cfg.Console.EnableReplay
			st.console = rt.deps.console(st)
		}
	}
	if prev, next := old.state.cfg.KeyPrefix, cfg.Store.KeyPrefix; prev != next {
		rt.m.logger.Warn("this reload changed store.key_prefix: the router now keeps its state under another prefix, and what it kept under the previous one is not read — each alert still firing opens its incident again at Alertmanager's next repeat (PagerDuty folds the trigger into its open incident; Slack gets a second parent, the first stays drawn firing), and the console, the journal and the dead letters show the new prefix's only. Change it with no incident open, on every replica at once",
			"previous", prev, "key_prefix", next)
	}
	b, err := rt.build(cfg, st)
	if err != nil {
		if st.store != old.state.store {
			st.close()
		}
		return err
	}
	if st.store != old.state.store && st.cfg.KeyPrefix == old.state.cfg.KeyPrefix {
		// The same keyspace through a new client: what the old one could
		// not write (an outage, a password it no longer has) is the new
		// one's to write — handed over before the new generation queues
		// writes of its own, so they apply in order.
		old.state.deferred.HandOver(st.deferred)
	}
	rt.current.Store(b)
	// The replaced notifiers' idle connections close now, and those their
	// in-flight sends leave once webhooks started before the swap are
	// done: each would otherwise hold a connection, two goroutines and
	// their buffers per integration it used until the transport's idle
	// timeout (an audit: 300 more connections to each service per reload
	// of 300 receivers).
	// The series of receivers and integrations it removed go too, again
	// once those webhooks are done (a send of theirs may count again) —
	// judged against the configuration in force then: a reload since that
	// put a receiver back holds its series (a review: deleted 30 s after
	// the receivers came back, they were never exported again).
	retire := func() {
		closeIdleConnections(old.pipeline.Receivers)
		rt.deps.forgetRemovedSeries(old.pipeline.Receivers, rt.current.Load().pipeline.Receivers)
	}
	retire()
	time.AfterFunc(old.edge.Timeout+5*time.Second, func() {
		rt.mu.Lock() // not amid a reload: its generation is not current yet
		defer rt.mu.Unlock()
		retire()
	})
	wait := clicks(old)
	if wait != nil {
		rt.retired.Go(wait)
	}
	if st.store != old.state.store {
		rt.deps.storeChanged(cfg.Store.FailClosed)
		drain := old.edge.Timeout + 5*time.Second
		rt.m.logger.Info("store settings changed: new store client in use, the old one closes after in-flight webhooks and Slack clicks", "drain", drain)
		time.AfterFunc(drain, func() {
			if wait != nil {
				wait()
			}
			old.state.close()
		})
	}
	for _, s := range configWarnings(cfg) {
		rt.m.logger.Warn(s)
	}
	if gone := removedIntegrations(old.pipeline.Receivers, b.pipeline.Receivers); len(gone) > 0 {
		rt.m.logger.Warn("this reload removed or renamed receivers or integrations: the incidents they notified that are still open get nothing more through them — a Slack parent stays drawn firing, and a renamed PagerDuty receiver triggers its open incidents again (PagerDuty folds a trigger into an open incident). Keep the old names until their incidents resolve, or resolve those by hand (an integration is named by its place in its receiver: removing one renames those after it)",
			"removed", strings.Join(gone, ", "))
	}
	if moved := movedPagerDutyKeys(old.pipeline.Receivers, b.pipeline.Receivers); len(moved) > 0 {
		rt.m.logger.Warn("this reload changed the routing key or events URL of PagerDuty integrations: incidents triggered before it keep receiving their retriggers, reminders and resolve at the previous key while this process runs, new incidents go to the new one. A replica started after the change knows only the new key: PagerDuty opens a separate incident there for an old incident's next trigger, and its resolve does not close the old one — change every replica by reload, not restart, until the old incidents resolve, or resolve those in PagerDuty by hand",
			"changed", strings.Join(moved, ", "))
	}
	if prev, next := old.pipeline.GroupBy, b.pipeline.GroupBy; !slices.Equal(prev, next) {
		rt.m.logger.Warn("this reload changed incidents.group_by: alerts now form incidents under other keys — the next alert of an incident open before it opens its new key's incident (a second PagerDuty incident, a second Slack parent). Change it with few incidents open, and resolve by hand the old ones left open",
			"previous", strings.Join(prev, ","), "group_by", strings.Join(next, ","))
	}
	if prev, next := routeGroupings(old.pipeline.Routes), routeGroupings(b.pipeline.Routes); prev != next {
		rt.m.logger.Warn("this reload changed the group_by of routes: the alerts they route now form incidents under other keys — the next alert of an incident open before it opens its new key's incident (a second PagerDuty incident, a second Slack parent). Change it with few incidents open, and resolve by hand the old ones left open",
			"previous", prev, "routes", next)
	}
	rt.m.logger.Info("configuration reloaded", append([]any{"config_file", cfg.Source}, leftOff(cfg)...)...)
	return nil
}

// routeGroupings describes the group_by of every route of r that sets
// one, by its place in the tree ("" when none does): a reload that changes
// it warns, as one changing incidents.group_by does (a review). A route
// grouping by nothing names its incident by its matchers: their change
// moves its incidents too, and warns alike (a review); such routes are
// listed by their incidents' keys, sorted, not by their place, so a route
// inserted before one moves no incident and warns nothing (a review).
func routeGroupings(r *routing.Route) string {
	var b strings.Builder
	var all []string
	var walk func(path string, r *routing.Route)
	walk = func(path string, r *routing.Route) {
		if r == nil {
			return
		}
		switch {
		case r.GroupsAll():
			all = append(all, r.GroupKey())
		case r.GroupBy != nil:
			fmt.Fprintf(&b, "%s.group_by=%s ", path, strings.Join(r.GroupBy, ","))
		}
		for i, c := range r.Routes {
			walk(fmt.Sprintf("%s.routes[%d]", path, i), c)
		}
	}
	walk("route", r)
	if len(all) > 0 {
		slices.Sort(all)
		fmt.Fprintf(&b, "group_by=[] incidents %s", strings.Join(slices.Compact(all), " "))
	}
	return strings.TrimSpace(b.String())
}

// movedPagerDutyKeys lists, sorted, the receiver/integration pairs whose
// PagerDuty notifier sends, in now, to another routing key or events URL
// than in old.
func movedPagerDutyKeys(old, now map[string][]routing.Integration) []string {
	var moved []string
	for r, ints := range old {
		for _, in := range ints {
			prev, ok := in.Notifier.(*pagerduty.Notifier)
			if !ok {
				continue
			}
			for _, n := range now[r] {
				if next, ok := n.Notifier.(*pagerduty.Notifier); ok && n.Name == in.Name && pagerduty.RoutingKeyChanged(prev, next) {
					moved = append(moved, r+"/"+in.Name)
				}
			}
		}
	}
	slices.Sort(moved)
	return moved
}

// closeIdleConnections closes the idle outbound connections of every
// integration of receivers that keeps any (PagerDuty's, Slack's).
func closeIdleConnections(receivers map[string][]routing.Integration) {
	for _, ints := range receivers {
		for _, in := range ints {
			if c, ok := in.Notifier.(interface{ CloseIdleConnections() }); ok {
				c.CloseIdleConnections()
			}
		}
	}
}

// forgetRemovedSeries deletes the per-receiver metric series of each
// receiver, and each kind of integration of a receiver, that old has and
// now does not.
func (d *deps) forgetRemovedSeries(old, now map[string][]routing.Integration) {
	kinds := func(ints []routing.Integration) map[string]bool {
		out := map[string]bool{}
		for _, in := range ints {
			out[alert.IntegrationType(in.Name)] = true
		}
		return out
	}
	forget := func(receiver, kind string) {
		d.pipelineMetrics.ForgetIntegration(receiver, kind)
		d.notifyMetrics.ForgetIntegration(receiver, kind)
		d.journalMetrics.ForgetDeadLetters(receiver, kind)
	}
	for r, ints := range old {
		kept, ok := now[r]
		if !ok {
			forget(r, "")
			continue
		}
		have := kinds(kept)
		for k := range kinds(ints) {
			if !have[k] {
				forget(r, k)
			}
		}
	}
}

// removedIntegrations lists, sorted, the receiver/integration pairs of old
// that now does not have.
func removedIntegrations(old, now map[string][]routing.Integration) []string {
	var gone []string
	for r, ints := range old {
		for _, in := range ints {
			if !slices.ContainsFunc(now[r], func(n routing.Integration) bool { return n.Name == in.Name }) {
				gone = append(gone, r+"/"+in.Name)
			}
		}
	}
	slices.Sort(gone)
	return gone
}

// minResolveUnsent is the least alertmanager.resolve_unsent_after that
// outlasts Prometheus' resend of firing alerts (every minute) to an
// Alertmanager restarted without its data, with a margin.
const minResolveUnsent = 3 * time.Minute

// pagerDutyKeyLen is the length of a PagerDuty Events API v2 integration
// (routing) key.
const pagerDutyKeyLen = 32

// configWarnings are what check-config prints and a start or a reload
// logs about a configuration that works but may not do what is meant.
func configWarnings(cfg *config.Config) []string {
	var out []string
	if s := cfg.ShortClaimTTL(); s != "" {
		out = append(out, s)
	}
	out = append(out, cfg.LongSendTimeouts()...)
	if am := cfg.Alertmanager; am != nil && am.ResolveUnsent() > 0 && am.ResolveUnsent() < minResolveUnsent {
		out = append(out, fmt.Sprintf("alertmanager.resolve_unsent_after is %s: an Alertmanager restarted without its data holds no alert until Prometheus sends them again (every minute), and a firing whose webhook was answered 5xx may be resolved on its behalf meanwhile; %s or more, or 0 to turn it off",
			am.ResolveUnsent(), minResolveUnsent))
	}
	for _, r := range cfg.Receivers {
		for i, pd := range r.PagerdutyConfigs {
			// PagerDuty refuses every event whose key is not an Events API
			// v2 integration key (32 characters): 400, dead letters.
			if key, err := notify.ReadSecret(pd.RoutingKey, pd.RoutingKeyFile); err == nil && key != "" && len(key) != pagerDutyKeyLen {
				field := "routing_key"
				if pd.RoutingKeyFile != "" {
					field = "routing_key_file's content"
				}
				out = append(out, fmt.Sprintf("receiver %q pagerduty_configs[%d].%s is %d characters long: a PagerDuty Events API v2 integration key has %d, and PagerDuty refuses every event sent with another (400: Length of 'routing_key' is incorrect)",
					r.Name, i, field, len(key), pagerDutyKeyLen))
			}
		}
	}
	out = append(out, sharedPagerDutyKeys(cfg)...)
	out = append(out, channelLabelsOutsideIncidents(cfg)...)
	quoted := func(path string, names []string) {
		for i, n := range names {
			if len(n) >= 2 && strings.HasPrefix(n, `"`) && strings.HasSuffix(n, `"`) {
				out = append(out, fmt.Sprintf("%s[%d] is %s, a label named with its quotes: write the name bare (%s), as group_by takes names, not matchers; quoted, no alert has it and every alert has the same empty value there", path, i, n, strings.Trim(n, `"`)))
			}
		}
	}
	quoted("incidents.group_by", cfg.Incidents.GroupBy)
	var walk func(path string, r *routing.Route, parent []string)
	walk = func(path string, r *routing.Route, parent []string) {
		// A child without group_by holds its parent's list (inherited,
		// routing.Route): warned of once, where it is written (an audit:
		// one quoted name gave a warning per child, naming group_by paths
		// the file does not have).
		if len(r.GroupBy) == 0 || len(parent) == 0 || &r.GroupBy[0] != &parent[0] {
			quoted(path+".group_by", r.GroupBy)
		}
		for i, c := range r.Routes {
			walk(fmt.Sprintf("%s.routes[%d]", path, i), c, r.GroupBy)
		}
	}
	if cfg.Route != nil {
		walk("route", cfg.Route, nil)
		out = append(out, continueGroupings("route", cfg.Route, cfg.Route.GroupBy)...)
	}
	if cfg.Route != nil && cfg.Route.Blackhole() {
		out = append(out, fmt.Sprintf("the root route's receiver %q has no integrations (a blackhole): every alert no other route matches is recorded as muted, not sent", cfg.Route.Receiver))
	}
	return out
}

// storeFilesChanged reports whether a file the store client of old was
// built from (store.redis.password_file, its TLS files) has changed since:
// a rotated Redis password must reach a new client — the old one, whose
// config names the same path, kept logging in with the old password, every
// webhook failing open (duplicate pages) while the reload said success.
func storeFilesChanged(old *built, c store.Config) bool {
	for p, sum := range fileSums((&config.Config{Store: c}).SecretFiles()) {
		if was, ok := old.files[p]; !ok || was != sum {
			return true
		}
	}
	return false
}

// keepWorkingStore is the check of a reload on which only the store's
// files changed (its password_file, its TLS files: same addresses and
// settings): the new client, next, must answer before it replaces the old
// one, whose connections still work. A CA rotated before Redis' own
// certificate (cert-manager's usual order), or a password file changed
// before Redis' requirepass, built a client that could not connect: every
// store operation failed, webhooks failed open (duplicate pages), while the
// reload said success. An error refuses the reload, keeping old's client,
// when next cannot connect and old's connections still answer (Ping: the
// pooled ones, which serve the webhooks; a client without any, such as
// next, dials); when neither can, next is taken (nil), as a store down
// either way is better served by the files now in force. The refused
// reload is retried (retryStoreReload), and goes through once next
// answers — Redis took the new files — or old no longer does. Each ping is
// bounded by store.redis.dial_timeout plus read_timeout.
func keepWorkingStore(old, next *state) error {
	r := next.cfg.Redis
	if r == nil {
		return nil
	}
	ping := func(s store.Store) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.DialTimeout)+time.Duration(r.ReadTimeout))
		defer cancel()
		if a, ok := s.(interface{ Answers(context.Context) error }); ok {
			return a.Answers(ctx) // not counted as the probe's pings
		}
		return s.Ping(ctx)
	}
	err := ping(next.store)
	if err == nil || ping(old.store) != nil {
		return nil
	}
	return fmt.Errorf("store.redis: the new store files (TLS, password) cannot connect while the previous client still does: %w", err)
}

// errStoreKept marks the error of a reload refused by keepWorkingStore
// (storeKeptError).
var errStoreKept = errors.New("the whole reload is refused")

// storeKeptError is a reload refused because its new store files could
// not connect while the previous client still does: the whole reload,
// routing and every other change of it included, since one generation
// carries them all with its store client.
type storeKeptError struct {
	err     error
	retries string // retryText
}

func (e *storeKeptError) Error() string {
	retries := e.retries
	if retries == "" { // a runtime built without serve's flags (tests)
		retries = retryText(serveOptions{})
	}
	return e.err.Error() + " — " + errStoreKept.Error() + ", routing and every other change in it included, and the previous configuration and store client keep serving; " + retries
}

func (e *storeKeptError) Unwrap() []error { return []error{e.err, errStoreKept} }

// retryText says when a reload refused by keepWorkingStore is tried
// again, from serve's flags.
func retryText(o serveOptions) string {
	var every []string
	if o.secretCheck > 0 {
		every = append(every, fmt.Sprintf("every %s (--config.secret-files-check-interval)", o.secretCheck))
	}
	if o.storeProbe > 0 {
		every = append(every, fmt.Sprintf("every %s (--store.probe-interval)", o.storeProbe))
	}
	if len(every) == 0 {
		return "it is not retried (--config.secret-files-check-interval and --store.probe-interval are 0): reload again (SIGHUP, POST /-/reload) once Redis takes the new files"
	}
	return "it is retried automatically, " + strings.Join(every, " and ") + ", and goes through as soon as the new files connect (Redis took them) or the previous client no longer does"
}

// continueGroupings warns of a route with continue whose group_by differs
// from a later sibling's: an alert belongs to one incident (one PagerDuty
// dedup key, one Slack thread per receiver), grouped by the first route it
// matches, so an alert matching both gets the continue route's grouping at
// every receiver — unlike Alertmanager, where each route groups its own.
// Siblings no alert can match both of (routing.Route.Disjoint), and a later
// sibling that sends nothing (a blackhole, its routes too), are left alone. eff is r's
// group_by, inherited where unset. Pairs of routes alike (the same two
// groupings) make one warning naming the first and how many more: a configuration of 300 teams gave 43
// warnings of 388 characters, the same but for the route index, at every
// start and reload (an audit).
func continueGroupings(path string, r *routing.Route, eff []string) []string {
	type pair struct{ first, second string }
	var kinds []string // the groupings of each kind of pair, in order
	pairs := map[string][]pair{}
	var walk func(path string, r *routing.Route, eff []string)
	walk = func(path string, r *routing.Route, eff []string) {
		effOf := func(c *routing.Route) []string {
			if c.GroupBy != nil {
				return c.GroupBy
			}
			return eff
		}
		for i, c := range r.Routes {
			if c == nil {
				continue
			}
			if c.Continue {
				for j := i + 1; j < len(r.Routes); j++ {
					if d := r.Routes[j]; d != nil && !sendsNothing(d) && !c.Disjoint(d) && incidentsOf(c, effOf(c)) != incidentsOf(d, effOf(d)) {
						kind := groupByText(effOf(c)) + "\x00" + groupByText(effOf(d))
						if pairs[kind] == nil {
							kinds = append(kinds, kind)
						}
						pairs[kind] = append(pairs[kind], pair{fmt.Sprintf("%s.routes[%d]", path, i), fmt.Sprintf("%s.routes[%d]", path, j)})
						break
					}
				}
			}
			walk(fmt.Sprintf("%s.routes[%d]", path, i), c, effOf(c))
		}
	}
	walk(path, r, eff)
	out := make([]string, 0, len(kinds))
	for _, kind := range kinds {
		cg, dg, _ := strings.Cut(kind, "\x00")
		ps := pairs[kind]
		w := fmt.Sprintf("%s has continue: true and group_by %s, %s group_by %s: an alert both match is one incident grouped by the first route it matches (%s's) at every receiver, %s's included — Alertmanager would group it per route. Give them the same group_by, or accept the first route's grouping",
			ps[0].first, cg, ps[0].second, dg, ps[0].first, ps[0].second)
		if more := ps[1:]; len(more) > 0 {
			names := make([]string, len(more))
			for i, p := range more {
				names[i] = p.first + " with " + p.second
			}
			w += fmt.Sprintf(" (so do %d more pairs of routes with these groupings: %s)", len(more), listSome(names, 5))
		}
		out = append(out, w)
	}
	return out
}

// sendsNothing reports whether r and every route below it are blackholes.
func sendsNothing(r *routing.Route) bool {
	if !r.Blackhole() {
		return false
	}
	for _, c := range r.Routes {
		if c != nil && !sendsNothing(c) {
			return false
		}
	}
	return true
}

// groupByText writes a group_by for a warning; unset is the default grouping.
func groupByText(g []string) string {
	switch {
	case g == nil:
		return "(unset: the default grouping)"
	case len(g) == 0:
		return "[] (every alert of the route one incident)"
	}
	return "[" + strings.Join(g, ", ") + "]"
}

// incidentsOf names the incidents route r forms, eff its group_by
// (inherited where unset): two routes form the same ones when the names
// are equal. Unset (incidents.group_by) is not `[]` (no label), though
// both are empty, and a `[]` route's one incident is its own, named by its
// matchers (routing.Route.GroupKey): two routes of the same matchers share
// it, two of others do not.
func incidentsOf(r *routing.Route, eff []string) string {
	switch {
	case eff == nil:
		return "\x00unset"
	case len(eff) == 0:
		return "\x00route " + r.GroupKey()
	}
	return strings.Join(eff, "\x00")
}

// checkWebConfig returns what keeps cfg from serving with the web
// configuration of --web.config.file, read now (exporter-toolkit reads it
// on every request): config.Config.CheckWebConfig.
func (m *Main) checkWebConfig(cfg *config.Config) error {
	w, err := config.LoadWebConfig(m.webConfigFile())
	if err != nil {
		return err
	}
	return cfg.Redact(cfg.CheckWebConfig(w))
}

// webConfigFile is the path of --web.config.file, "" without one (a Main
// built without its flags, in tests, has none).
func (m *Main) webConfigFile() string {
	if m.webFlags != nil && m.webFlags.WebConfigFile != nil {
		return *m.webFlags.WebConfigFile
	}
	return ""
}

// checkListenAddresses refuses a --web.listen-address that is not
// host:port, saying how an IPv6 address is written ("::1:9095" failed at
// bind with Go's "too many colons", and check-config took anything: an
// audit). Socket activation and vsock:// addresses are exporter-toolkit's.
func (m *Main) checkListenAddresses() error {
	if m.webFlags == nil || m.webFlags.WebListenAddresses == nil ||
		m.webFlags.WebSystemdSocket != nil && *m.webFlags.WebSystemdSocket {
		return nil
	}
	for _, a := range *m.webFlags.WebListenAddresses {
		if strings.HasPrefix(a, "vsock://") {
			continue
		}
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("--web.listen-address %q is not host:port (:9095 listens on every address; IPv6: [::1]:9095): %w", a, err)
		}
	}
	return nil
}

// listenHosts returns the hosts of the --web.listen-address values as
// webhook.KnownHost compares them: state-changing console requests are
// accepted for them (IP addresses and an empty host are anyway).
func listenHosts(addrs []string) []string {
	hosts := make([]string, len(addrs))
	for i, a := range addrs {
		hosts[i] = webhook.HostName(a)
	}
	return hosts
}

// serverTimeouts bounds every phase of a connection from the webhook
// timeout, so a slow or idle client holds a connection no longer than a
// webhook may take: headers within min(timeout, 10s), the whole request
// within the timeout, the answer within the timeout plus
// webhook.WriteGrace (processing is bounded by the timeout itself). An
// idle keep-alive connection is kept idleKeepAlive: longer than the
// 5 minutes Alertmanager's client (prometheus/common) keeps one, so the
// client closes it first — kept for the webhook timeout, the router closed
// connections Alertmanager was reusing at that moment, and those webhooks
// failed (EOF, connection reset: an audit counted 3.5 % of attempts with a
// group_interval equal to the timeout). They are taken at
// start; the webhook edge sets each webhook's read and write deadlines
// from the configuration it runs with, so a reload's webhook.timeout
// applies to the webhooks after it.
func serverTimeouts(srv *http.Server, timeout time.Duration) {
	srv.ReadHeaderTimeout = min(timeout, 10*time.Second)
	srv.ReadTimeout = timeout
	srv.WriteTimeout = timeout + webhook.WriteGrace
	srv.IdleTimeout = max(timeout, idleKeepAlive)
}

// idleKeepAlive is how long the server keeps an idle keep-alive
// connection (serverTimeouts).
const idleKeepAlive = 6 * time.Minute

// terminated reports whether ctx was cancelled by a SIGTERM: through the
// signal.NotifyContext of main (its cause names the signal), or on term,
// where serve receives SIGTERM itself.
func terminated(ctx context.Context, term <-chan os.Signal) bool {
	select {
	case <-term:
		return true
	default:
	}
	cause := context.Cause(ctx)
	return cause != nil && strings.Contains(cause.Error(), syscall.SIGTERM.String())
}

func (m *Main) serveWith(ctx context.Context, o serveOptions) error {
	cfg, err := m.loadConfig()
	if err != nil {
		return err
	}
	// Taken at start: a reload that moves the state into or out of Redis
	// keeps the GC target of the store the router started with.
	set, err := applyGoRuntime(m.runtime, gcTarget(cfg.Store), memlimit.FromCgroup, m.logger)
	if err != nil {
		return err
	}
	if len(set) > 0 {
		m.logger.Info("Go runtime tuned (GOGC and GOMEMLIMIT in the environment take precedence)", set...)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		versioncollector.NewCollector("alertrouter"),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if cfg.Source == "embedded defaults" {
		m.logger.Warn("no configuration file: running on the embedded defaults — in-memory dedup store (one replica only, state lost on restart), the seed's default policies, and the `log` receiver printing each notification to stdout",
			"how_to_configure", "write router.yml (see README: store.redis for Redis/Sentinel/Cluster, receivers with pagerduty_configs and slack_configs) and pass --config.file=router.yml")
	}
	// A combination with the web configuration that cannot serve (its
	// basic auth in front of Slack triage or a bearer webhook, a replaying
	// console nothing protects) stops the router here, loudly, rather than
	// have it start and answer 401 to every Slack click or webhook.
	if err := m.checkWebConfig(cfg); err != nil {
		return fmt.Errorf("refusing to start: %w", err)
	}
	for _, s := range configWarnings(cfg) {
		m.logger.Warn(s)
	}
	d := newDeps(reg, m.logger, m.Stdout)
	var rt *runtime
	d.current = func() *built { return rt.current.Load() }
	st, err := d.openState(cfg.Store, cfg.Console.EnableReplay)
	if err != nil {
		return inConfig(cfg, err)
	}
	if r := cfg.Store.Redis; r != nil {
		m.logger.Info("using redis store", "mode", r.Mode(), "addrs", strings.Join(r.Addrs, ","), "tls", r.TLS != nil)
	}
	st.markEpoch()
	if off := leftOff(cfg); len(off) > 0 {
		m.logger.Info("settings left off", off...)
	}
	rt = &runtime{m: m, deps: d, retries: retryText(o),
		reloadOK:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "alertrouter_config_last_reload_successful", Help: "Whether the last configuration reload succeeded."}),
		reloadTime: prometheus.NewGauge(prometheus.GaugeOpts{Name: "alertrouter_config_last_reload_success_timestamp_seconds", Help: "Time of the last successful configuration reload."}),
	}
	reg.MustRegister(rt.reloadOK, rt.reloadTime)
	b, err := rt.build(cfg, st)
	if err != nil {
		st.close()
		return err
	}
	rt.current.Store(b)
	// drainEnd is when the shutdown's drain of in-flight webhooks had to
	// end (unix ns; 0: no drain began — the router stops on an error).
	var drainEnd atomic.Int64
	defer func() {
		b := rt.current.Load()
		// A Slack click answered before the shutdown finishes its work
		// (bounded by its timeout) before the store closes: cut short, it
		// would leave the action undone and its claim behind. Those of
		// generations a reload replaced too.
		if wait := clicks(b); wait != nil {
			wait()
		}
		rt.retired.Wait()
		b.state.closeBy(closeDeadline(time.Now(), drainEnd.Load()))
	}()
	rt.reloadOK.Set(1)
	rt.reloadTime.SetToCurrentTime()

	// POST /-/quit (with --web.enable-lifecycle) cancels the same context
	// SIGTERM does: one graceful shutdown path.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// drainNow: SIGINT or POST /-/quit while the shutdown delay runs ends
	// it (an operator asking twice wants the router gone, not 5s later).
	drainNow := make(chan struct{})
	var drainOnce sync.Once
	quit := func() {
		cancel()
		drainOnce.Do(func() { close(drainNow) })
	}
	opts := []webhook.Option{webhook.WithKnownHosts(listenHosts(*m.webFlags.WebListenAddresses)...)}
	if m.lifecycle {
		opts = append(opts, webhook.WithLifecycle(quit))
	}
	srv := &http.Server{Handler: webhook.NewServer(rt, reg, webhook.NewMetrics(reg), m.logger, opts...)}
	serverTimeouts(srv, b.edge.Timeout)
	srv.ErrorLog = slog.NewLogLogger(m.logger.Handler(), slog.LevelWarn)
	var g run.Group
	// Signals: SIGTERM/SIGINT (ctx) end the group; everything else stops.
	// SIGTERM (a Kubernetes pod being deleted) first turns /-/ready to 503
	// and keeps serving for --web.shutdown-delay, while the endpoints of
	// the Service drop the pod: webhooks sent meanwhile are still
	// answered instead of refused. SIGINT (Ctrl-C) and POST /-/quit drain
	// at once, also when they come during the delay.
	{
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		intr := make(chan os.Signal, 1)
		signal.Notify(intr, os.Interrupt)
		stop := make(chan struct{})
		g.Add(func() error {
			defer signal.Stop(term)
			defer signal.Stop(intr)
			select {
			case <-ctx.Done():
				if !terminated(ctx, term) {
					m.logger.Info("shutting down: draining in-flight webhooks")
					return nil
				}
			case <-term:
			case <-stop:
				return nil
			}
			rt.stopping.Store(true)
			if o.shutdownDelay > 0 {
				m.logger.Info("SIGTERM: not ready from now on; serving until the shutdown delay has passed, then draining", "shutdown_delay", o.shutdownDelay)
				t := time.NewTimer(o.shutdownDelay)
				defer t.Stop()
				select {
				case <-t.C:
				case <-intr:
					m.logger.Info("SIGINT during the shutdown delay: draining now")
				case <-drainNow:
					m.logger.Info("POST /-/quit during the shutdown delay: draining now")
				case <-stop:
					return nil
				}
			}
			m.logger.Info("shutting down: draining in-flight webhooks")
			return nil
		}, func(error) { close(stop) })
	}
	// SIGHUP reloads the configuration, and so does a rotated secret file
	// (a Kubernetes Secret's new value appears in its mounted file): the
	// files a generation was built from are checked every
	// --config.secret-files-check-interval.
	{
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		stop := make(chan struct{})
		var tick <-chan time.Time
		if o.secretCheck > 0 {
			t := time.NewTicker(o.secretCheck)
			defer t.Stop()
			tick = t.C
		}
		g.Add(func() error {
			// failed: the files' sums a reload failed with. Files in the
			// middle of a rotation (one deleted, or not yet readable) fail
			// the reload once and are tried again when they change again,
			// not every interval with the same error.
			var failed map[string]string
			for {
				select {
				case <-hup:
					if rt.Reload() == nil {
						failed = nil
					}
				case <-tick:
					if rt.storePending.Load() {
						// A reload refused as its new store files could
						// not connect yet: retried until they do (the
						// files are not expected to change again).
						rt.retryStoreReload()
						continue
					}
					changed, sums := rt.changedFiles()
					if maps.Equal(sums, failed) || (len(changed) == 0 && failed == nil) {
						continue // as a reload failed with them (once), or as in force
					}
					if len(changed) == 0 {
						// The files are back to those the running
						// configuration was built from (a rotation undone,
						// a deleted file restored): reload them, so that
						// alertrouter_config_last_reload_successful does
						// not keep reporting a failure of files that no
						// longer exist.
						m.logger.Info("secret files are back to those the configuration was built from: reloading to clear the failed reload")
					} else {
						m.logger.Info("secret files changed: reloading the configuration", "files", strings.Join(changed, ","))
					}
					failed = nil
					if err := rt.Reload(); err != nil && !errors.Is(err, errStoreKept) {
						failed = sums
					}
				case <-stop:
					return nil
				}
			}
		}, func(error) { signal.Stop(hup); close(stop) })
	}
	// Store probe: the readiness probe's ping, at start and every
	// --store.probe-interval, so the store's health (alertrouter_store_errors_total{operation=
	// "ping"}, AlertrouterStoreDown) and readiness follow the store where
	// nothing probes /-/ready (docker run, a bare binary). The one at start
	// also reads when the store's run began (dedup.StoreLife) before the
	// first webhooks open incidents: read a probe interval later, a fresh
	// store's run began after them, and each of those incidents triggered
	// PagerDuty again on its next new alert.
	if o.storeProbe > 0 {
		stop := make(chan struct{})
		g.Add(func() error {
			probe := func() {
				pctx, cancel := context.WithTimeout(context.Background(), min(o.storeProbe, 5*time.Second))
				_ = rt.deps.ready(pctx, rt.current.Load())
				cancel()
				rt.retryStoreReload()
			}
			probe()
			t := time.NewTicker(o.storeProbe)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return nil
				case <-t.C:
					probe()
				}
			}
		}, func(error) { close(stop) })
	}
	// Unsent resolves: the webhooks answered 5xx whose alerts Alertmanager
	// stopped retrying and no longer holds are resolved on its behalf
	// (webhook.Orphans), one replica a sweep.
	{
		sweepCtx, stop := context.WithCancel(context.Background()) // a stop ends a sweep under way too
		holder := dedup.NewToken()                                 // this process's sweeps: one holder while it lives
		g.Add(func() error {
			for {
				b := rt.current.Load()
				every := sweepInterval(b.edge.Orphans)
				select {
				case <-sweepCtx.Done():
					return nil
				case <-time.After(every):
				}
				if o := b.edge.Orphans; o != nil && rt.current.Load() == b {
					ctx, cancel := context.WithTimeout(sweepCtx, every+time.Duration(b.edge.Timeout))
					o.Refresh(ctx) // every replica: a 2xx that sent nothing forgets its group
					if sweeps(ctx, b.state.store, b.state.cfg.KeyPrefix+"orphan-sweep", holder, 3*every) {
						o.Sweep(ctx, b.pipeline, time.Duration(b.edge.Timeout))
					}
					cancel()
				}
			}
		}, func(error) { stop() })
	}
	// HTTP: stops accepting on shutdown, then waits for in-flight webhooks
	// (bounded by their own timeout plus a margin) before the store closes.
	{
		g.Add(func() error {
			err := m.listenAndServe(srv, cfg.Source)
			if errors.Is(err, http.ErrServerClosed) {
				return nil
			}
			return err
		}, func(error) {
			drain := time.Duration(rt.current.Load().edge.Timeout) + 5*time.Second
			drainEnd.Store(time.Now().Add(drain).UnixNano())
			ctx, cancel := context.WithTimeout(context.Background(), drain)
			defer cancel()
			if err := srv.Shutdown(ctx); err != nil {
				m.logger.Warn("drain timed out; remaining webhooks were cut off and Alertmanager will retry them", "err", err)
			}
		})
	}
	return g.Run()
}

// closeDeadline is when the state's close must end at a shutdown, from
// now and the drain's end (unix ns; 0: no drain): within the drain's
// budget of webhook.timeout + 5s, so the process exits within the grace
// period deploy/ sizes for it — shutdown delay + timeout + 6s, this
// close's closeMinimum included (an audit: with the store stalled, the
// journal's 5s and the deferred writes' 2s after a full drain took it 7s
// past) —, but at most stateCloseTime and
// at least closeMinimum from now, for one last attempt at what is still
// to be written.
func closeDeadline(now time.Time, drainEnd int64) time.Time {
	end := now.Add(stateCloseTime)
	if d := time.Unix(0, drainEnd); drainEnd != 0 && d.Before(end) {
		end = d
	}
	if least := now.Add(closeMinimum); end.Before(least) {
		return least
	}
	return end
}

// closeMinimum is the least a shutdown's close gets after a drain that
// took its whole budget: a store that answers takes the last writes in
// milliseconds.
const closeMinimum = time.Second

// listenAndServe binds every --web.listen-address, says "router listening"
// once they are bound (a port in use fails before it, with nothing saying
// the router listened), and serves them through exporter-toolkit, TLS and
// basic auth of --web.config.file included. Systemd socket activation and
// vsock addresses are left to exporter-toolkit's ListenAndServe.
func (m *Main) listenAndServe(srv *http.Server, source string) error {
	addrs := *m.webFlags.WebListenAddresses
	if (m.webFlags.WebSystemdSocket != nil && *m.webFlags.WebSystemdSocket) ||
		slices.ContainsFunc(addrs, func(a string) bool { return strings.HasPrefix(a, "vsock://") }) {
		m.logger.Info("router starting", "addresses", fmt.Sprint(addrs), "config", source)
		return web.ListenAndServe(srv, m.webFlags, m.logger)
	}
	if err := m.checkListenAddresses(); err != nil {
		return err
	}
	listeners := make([]net.Listener, 0, len(addrs))
	for _, a := range addrs {
		l, err := net.Listen("tcp", a)
		if err != nil {
			for _, l := range listeners {
				_ = l.Close()
			}
			return fmt.Errorf("--web.listen-address %s: %w", a, err)
		}
		listeners = append(listeners, l)
	}
	bound := make([]string, len(listeners))
	for i, l := range listeners {
		bound[i] = l.Addr().String()
	}
	m.logger.Info("router listening", "addresses", fmt.Sprint(bound), "config", source)
	return web.ServeMultiple(listeners, srv, m.webFlags, m.logger)
}

// sweepInterval is how often the unsent resolves are swept
// (webhook.Orphans.Every; 30 s when off: the next reload may turn it on).
func sweepInterval(o *webhook.Orphans) time.Duration {
	if o == nil {
		return 30 * time.Second
	}
	return o.Every()
}

// sweeps reports whether holder holds the lease key of the unsent
// resolves' sweeps, taking it when free and keeping it ttl more: one
// process sweeps while it lives, so the absences its sweeps saw are all of
// them (webhook.Orphans).
func sweeps(ctx context.Context, st store.Store, key, holder string, ttl time.Duration) bool {
	lease := []store.Entry{{Key: key, Value: holder, TTL: ttl}}
	won, err := st.SetNX(ctx, lease)
	if err != nil || !won[0] {
		return false
	}
	return st.ExpireIfEqual(ctx, lease) == nil
}

// leftOff names, for the start's and a reload's log line, the settings
// cfg leaves unset that take a capability with them (an audit: the start
// said version, address, configuration and store, but not that Slack's
// Silence had no Alertmanager to create silences in).
func leftOff(cfg *config.Config) []any {
	var off []any
	if cfg.Alertmanager == nil {
		off = append(off, "alertmanager_url", "unset: no silences from Slack, and Alertmanager is not asked for what a webhook left out (truncated groups, resolves it gave up, a lagging HA peer's copies)")
	}
	if cfg.Prometheus == nil {
		off = append(off, "prometheus_url", "unset: no live SLO context on pages")
	}
	return off
}
