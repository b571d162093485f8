// Command router is alertrouter: a webhook receiver behind Prometheus
// Alertmanager that classifies every alert into an infrastructure sector,
// decides page, ticket or none from SLO burn-rate, capacity and regression
// policies, deduplicates through Redis across replicas and notifies
// PagerDuty and Slack.
//
// Subcommands: serve (default), check-config, explain FILE|-, version,
// journal export, dead-letters list|show|replay, simulate.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

func main() {
	fillVersion(debug.ReadBuildInfo())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit((&Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}).Run(ctx, os.Args[1:]))
}
