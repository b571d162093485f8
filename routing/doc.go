// Package routing is the spine of alertrouter: the webhook edge, the
// vocabulary shared by every stage (Alert, Classification, Decision,
// Incident, Notification), the route tree, and exactly-once delivery through
// a shared Store.
//
// The stages that give alerts their meaning plug in through the small
// interfaces declared here and are wired by cmd/router:
//
//	decode → classify (Classifier) → decide (Decider) → suppress → route (Route)
//	       → incident → dedup (Store) → notify (Notifier) → 2xx / 5xx
//
// Pipeline.Process composes those stages in one function so the order reads
// top to bottom.
package routing
