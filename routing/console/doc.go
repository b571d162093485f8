// Package console is the router's operations console, served at `/` by the
// router's own HTTP server (so --web.config.file basic auth and TLS apply):
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
package console
