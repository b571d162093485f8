// Package deploy holds the deployment artifacts of the router — the
// container image (Dockerfile), the Kubernetes kustomize base, the
// Alertmanager receiver snippet, example Prometheus rules and the Grafana
// dashboard — and the tests that validate them with the real tools
// (kubectl kustomize, amtool, promtool) and the real config loader.
//
// It has no Go API; see README.md for the walkthrough.
package deploy
