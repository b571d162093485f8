// Command baseline is the bare floor the router's HTTP figures are divided
// by: an echo server whose POST /webhook reads the body, decodes it with
// encoding/json into the same struct as the in-process floor (bench.Floor,
// Alertmanager's template.Data plus the v4 fields) and makes exactly one
// Redis round trip — a pipelined GET of one key per alert — then answers
// 200. Nothing else: no validation, classification, policy or notification.
//
// The round trip goes through store.Redis (one Store.Get call for all the
// alert keys, which go-redis sends as one pipeline) rather than go-redis
// directly, because package store is the only importer of go-redis in this
// repository. It is the same client, pool and pipelining the router uses,
// so the baseline measures the network floor, not a different client.
//
// It listens on loopback only.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/alertrouter/alertrouter/bench"
	"github.com/alertrouter/alertrouter/store"
)

func main() { os.Exit(run()) }

func run() int {
	listen := flag.String("listen", "127.0.0.1:9096", "loopback host:port to serve on")
	redisAddr := flag.String("redis", "127.0.0.1:6379", "Redis host:port")
	maxBody := flag.Int64("max-body-bytes", 64<<20, "largest body accepted")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := loopback(*listen); err != nil {
		logger.Error("refusing to listen", "err", err)
		return 2
	}
	cfg := store.DefaultRedisConfig()
	cfg.Addrs = []string{*redisAddr}
	s, err := store.NewRedis(cfg, nil, logger)
	if err != nil {
		logger.Error("connect to redis", "err", err)
		return 1
	}
	defer s.Close()

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.POST("/webhook", func(c echo.Context) error {
		body, err := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, *maxBody))
		if err != nil {
			return c.JSON(http.StatusBadRequest, map[string]string{"error": "read body: " + err.Error()})
		}
		var f bench.Floor
		if err := json.Unmarshal(body, &f); err != nil {
			return c.JSON(http.StatusBadRequest, map[string]string{"error": "decode: " + err.Error()})
		}
		keys := make([]string, len(f.Alerts))
		for i, a := range f.Alerts {
			keys[i] = store.Key("baseline:", "n", a.Labels["alertname"], a.Fingerprint)
		}
		_, found, err := s.Get(c.Request().Context(), keys)
		if err != nil {
			return c.JSON(http.StatusServiceUnavailable, map[string]string{"error": "redis: " + err.Error()})
		}
		seen := 0
		for _, ok := range found {
			if ok {
				seen++
			}
		}
		return c.JSON(http.StatusOK, map[string]int{"alerts": len(f.Alerts), "seen": seen})
	})
	e.GET("/-/healthy", func(c echo.Context) error { return c.String(http.StatusOK, "OK\n") })

	srv := &http.Server{Addr: *listen, Handler: e, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	logger.Info("baseline serving", "listen", *listen, "redis", *redisAddr)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			logger.Error("serve", "err", err)
			return 1
		}
	case <-sig:
		_ = srv.Close()
	}
	return 0
}

// loopback refuses any listen address that is not a loopback IP.
func loopback(hostport string) error {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", hostport, err)
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("listen address %q is not a loopback IP", hostport)
	}
	return nil
}
