package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/enrich"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/lognotify"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/webhook"
	"github.com/alertrouter/alertrouter/store"
)

// deps are the long-lived parts shared by every config generation: the
// store (changing store settings needs a restart), metrics, the log sink.
type deps struct {
	store           store.Store
	storeCfg        store.Config
	pipelineMetrics *routing.Metrics
	notifyMetrics   *notify.Metrics
	logger          *slog.Logger
	stdout          io.Writer
	log             *lognotify.Notifier

	mu       sync.Mutex // guards answered and failures (readiness)
	answered bool
	failures int
}

// built is one config generation: what a webhook runs with.
type built struct {
	pipeline *routing.Pipeline
	edge     webhook.EdgeOptions
}

func newDeps(cfg *config.Config, reg prometheus.Registerer, logger *slog.Logger, stdout io.Writer) (*deps, error) {
	d := &deps{
		storeCfg:        cfg.Store,
		pipelineMetrics: routing.NewMetrics(reg),
		notifyMetrics:   notify.NewMetrics(reg),
		logger:          logger,
		stdout:          stdout,
	}
	d.log = lognotify.New(stdout, lognotify.WithMetrics(d.notifyMetrics))
	if cfg.Store.Redis == nil {
		logger.Warn("no store.redis configured: using the embedded in-memory store — run ONE replica only (replicas would not share dedup state) and expect state to be lost on restart")
		d.store = store.NewMemory()
		return d, nil
	}
	s, err := store.NewRedis(*cfg.Store.Redis, reg, logger)
	if err != nil {
		return nil, fmt.Errorf("connect to redis: %w", err)
	}
	d.store = s
	return d, nil
}

func (d *deps) close() { _ = d.store.Close() }

// ready answers /-/ready. The router is not ready until the store has
// answered once. After that, with fail-open (the default) it stays ready
// while the store is down — it still delivers, and taking every replica out
// of the Service would lose pages — and with fail_closed it turns unready
// only after three consecutive failed probes, so one slow command never
// flaps readiness.
func (d *deps) ready(ctx context.Context) error {
	err := d.store.Ping(ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		d.answered = true
		d.failures = 0
		return nil
	}
	d.failures++
	switch {
	case !d.answered:
		return fmt.Errorf("store has not answered yet: %w", err)
	case d.storeCfg.FailClosed && d.failures >= 3:
		return fmt.Errorf("store failed %d consecutive probes and fail_closed is set: %w", d.failures, err)
	}
	d.logger.Warn("store probe failed; staying ready", "consecutive_failures", d.failures, "fail_closed", d.storeCfg.FailClosed, "err", err)
	return nil
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

func (d *deps) build(cfg *config.Config) (*built, error) {
	p, err := evaluator(cfg)
	if err != nil {
		return nil, err
	}
	tmpl, err := notify.LoadTemplates(cfg.Templates)
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	nd := notify.Deps{
		Store:     d.store,
		KeyPrefix: d.storeCfg.KeyPrefix,
		Templates: tmpl,
		Metrics:   d.notifyMetrics,
		Logger:    d.logger,
	}
	p.Notifiers = map[string]alert.Notifier{}
	for _, r := range cfg.Receivers {
		var fan fanout
		for _, c := range r.PagerdutyConfigs {
			n, err := pagerduty.New(c, r.Name, nd)
			if err != nil {
				return nil, fmt.Errorf("receiver %q: pagerduty: %w", r.Name, err)
			}
			fan = append(fan, n)
		}
		for _, c := range r.SlackConfigs {
			n, err := slack.New(c, r.Name, nd)
			if err != nil {
				return nil, fmt.Errorf("receiver %q: slack: %w", r.Name, err)
			}
			fan = append(fan, n)
		}
		for range r.LogConfigs {
			fan = append(fan, d.log)
		}
		p.Notifiers[r.Name] = fan.notifier()
	}
	p.Store = d.store
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
	edge, err := edgeOptions(cfg)
	if err != nil {
		return nil, err
	}
	return &built{pipeline: p, edge: edge}, nil
}

func edgeOptions(cfg *config.Config) (webhook.EdgeOptions, error) {
	e := webhook.EdgeOptions{MaxBodyBytes: cfg.Webhook.MaxBodyBytes, Timeout: time.Duration(cfg.Webhook.Timeout)}
	tok, err := notify.ReadSecret(cfg.Auth.BearerToken, cfg.Auth.BearerTokenFile)
	if err != nil {
		return e, fmt.Errorf("auth.bearer_token_file: %w", err)
	}
	e.Auth.BearerToken = tok
	if ba := cfg.Auth.BasicAuth; ba != nil {
		pw, err := notify.ReadSecret(ba.Password, ba.PasswordFile)
		if err != nil {
			return e, fmt.Errorf("auth.basic_auth.password_file: %w", err)
		}
		e.Auth.Username, e.Auth.Password = ba.Username, pw
	}
	return e, nil
}

// fanout delivers one notification to every integration of a receiver.
// It fails when any integration fails (retryable if any failure is), so
// Alertmanager retries; an integration that already succeeded may then
// repeat its message once — a duplicate beats a lost page.
type fanout []alert.Notifier

func (f fanout) notifier() alert.Notifier {
	if len(f) == 1 {
		return f[0]
	}
	return f
}

// Notify implements alert.Notifier.
func (f fanout) Notify(ctx context.Context, n *alert.Notification) error {
	var errs []error
	retryable := false
	for _, nf := range f {
		if err := nf.Notify(ctx, n); err != nil {
			errs = append(errs, err)
			retryable = retryable || alert.Retryable(err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	err := errors.Join(errs...)
	if !retryable {
		return alert.Permanent(err)
	}
	return err
}
