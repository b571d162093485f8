package alert

// ReplicaLabels name the replica of a high-availability pair of rule
// evaluators: Prometheus Operator's prometheus_replica (thanos_ruler_replica
// for its ThanosRuler), Thanos' replica and rule_replica, Cortex's and
// Mimir's __replica__. Both replicas of a pair
// evaluate the same rules and send each alert with their own value, and an
// Alertmanager that is not told to drop the label (alert_relabel_configs)
// holds two alerts for one trouble: these labels never tell troubles apart.
var ReplicaLabels = map[string]bool{"prometheus_replica": true, "replica": true, "rule_replica": true, "thanos_ruler_replica": true, "__replica__": true}
