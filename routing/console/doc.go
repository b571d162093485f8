// Package console is the router's operations console, served at `/` by the
// router's own HTTP server (behind console.auth, checked by routing/webhook,
// and --web.config.file's TLS):
// open incidents with their alerts, decisions and reasons, hints, receivers
// and delivery state; recent decisions filtered by query parameters; a
// sector × hour heat map and page/ticket/none counts over 24 hours as inline
// SVG; delivery health and dead letters; and an Explain page that decides a
// pasted webhook payload without sending anything.
//
// Pages are rendered on the server with html/template from assets embedded
// in the binary; nothing is loaded from another host and every page reads
// without JavaScript (a small script only offers live refresh). The console
// reads the decision journal and never writes, except the dead-letter replay
// button, which posts to a handler that calls the injected replay function.
//
// The console is meant to be opened during an incident storm, in the
// router's process and memory limit: pages read the journal newest first,
// a page of records at a time, keeping only what they show (scan.go); at
// most Options.MaxRenders are built at once, the others wait briefly and
// are answered 503 with Retry-After; the overview is built once for the
// viewers who ask while it is being built and shared for Options.CacheTTL
// (limits.go).
package console
